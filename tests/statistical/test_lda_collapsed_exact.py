"""Exactness of the collapsed Gibbs sampler for LDA on an enumerable posterior.

1. Deterministic: the sweep transition matrix built from the exposed full
   conditional leaves the enumerated posterior invariant (pi P = pi).
2. Stochastic: the compiled kernel, started from exact draws of pi, ends one
   sweep later in states whose histogram passes a chi-square test against pi.
3. Negative controls: a conditional / kernel that forgets to remove the
   token's own counts (off-by-one) fails both tests.

Suite budget: each chi-square uses alpha = 1e-4 (fixed seed, no retries).
"""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit
from scipy import stats

from harmonium._kernels import lda_sparse
from harmonium._kernels.categorical import draw_unnormalised
from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs

from ._lda_tiny import MODEL, TOKENS, exact_posterior, one_sweep_from_exact, sweep_matrix

ALPHA = 1e-4
# 200k chains: at 40k the sparse sampler's test drew p < 1e-4 at this seed while 300k-chain
# runs at two seeds gave p = 0.69 and 0.95 (no bias); the larger sample keeps power and calibration.
N_CHAINS = 200_000


def broken_conditional(state, tokens, model, i):
    """Off-by-one: the token's own assignment is left in the counts."""
    d = int(np.searchsorted(tokens.doc_ptr, i, side="right") - 1)
    w = int(tokens.words[i])
    p = (state.n_dk[d] + model.alpha) * (state.n_wk[w] + model.beta) / (state.n_k + model.n_words * model.beta)
    return p / p.sum()


@njit
def broken_sweep(rng, doc_ptr, words, z, n_dk, n_wk, n_k, alpha, beta, p, d_lo, d_hi):
    """The same off-by-one in a compiled sweep: counts are not decremented before the draw."""
    v_beta = beta * n_wk.shape[0]
    K = n_k.shape[0]
    for d in range(d_lo, d_hi):
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            w = words[i]
            old = z[i]
            for k in range(K):
                p[k] = (n_dk[d, k] + alpha[k]) * (n_wk[w, k] + beta) / (n_k[k] + v_beta)
            new = draw_unnormalised(rng, p, K)
            z[i] = new
            n_dk[d, old] -= 1
            n_wk[w, old] -= 1
            n_k[old] -= 1
            n_dk[d, new] += 1
            n_wk[w, new] += 1
            n_k[new] += 1
    return 0


@pytest.fixture(scope="module")
def pi():
    return exact_posterior()


def test_exposed_conditional_is_the_posterior_conditional(pi):
    # p(z_i | z_-i) from the conditional equals pi(z) / sum_k pi(z with z_i = k)
    from ._lda_tiny import STATES, state_index

    for s in (0, 13, 42, 63):
        z = STATES[s]
        st = cgs.state_from_assignments(TOKENS, MODEL, z)
        for i in range(len(z)):
            q = cgs.conditional(st, TOKENS, MODEL, i)
            joint = []
            for k in range(MODEL.n_topics):
                z2 = z.copy()
                z2[i] = k
                joint.append(pi[state_index(z2)])
            np.testing.assert_allclose(q, np.array(joint) / sum(joint), rtol=1e-12)


def test_conditional_without_doc_table_is_the_same(pi):
    # a state without n_dk (rows rebuilt from z) has the same exposed conditional
    from ._lda_tiny import STATES

    for s in (0, 13, 42, 63):
        dense = cgs.state_from_assignments(TOKENS, MODEL, STATES[s])
        free = cgs.state_from_assignments(TOKENS, MODEL, STATES[s], doc_counts=False)
        assert free.n_dk is None
        for i in range(len(STATES[s])):
            np.testing.assert_array_equal(cgs.conditional(free, TOKENS, MODEL, i),
                                          cgs.conditional(dense, TOKENS, MODEL, i))


def test_sweep_leaves_posterior_invariant(pi):
    P = sweep_matrix(cgs.conditional)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(pi @ P, pi, atol=1e-12)


def test_negative_control_broken_conditional_is_not_invariant(pi):
    P = sweep_matrix(broken_conditional)
    assert np.abs(pi @ P - pi).max() > 1e-3


def _chi2_pvalue(hist, pi):
    expected = pi * hist.sum()
    return stats.chisquare(hist, expected).pvalue


@pytest.mark.parametrize("sampler", ["plain", "sparse"])
def test_kernel_visits_states_with_posterior_frequencies(pi, sampler):
    assert (pi * N_CHAINS).min() >= 5  # chi-square validity
    hist = one_sweep_from_exact(np.random.default_rng(20261121), pi, N_CHAINS, sampler=sampler)
    assert _chi2_pvalue(hist, pi) > ALPHA


def test_sparse_kernel_without_doc_table_visits_states_with_posterior_frequencies(pi):
    # the estimator's default path: the state has no n_dk, each document's row is rebuilt from z
    hist = one_sweep_from_exact(np.random.default_rng(20261121), pi, N_CHAINS, sampler="sparse", doc_counts=False)
    assert _chi2_pvalue(hist, pi) > ALPHA


def test_negative_control_sparse_doc_row_left_over_fails_chi_square(pi):
    """A rebuilt-row bug: the scratch carries a count of topic 0 from a document it never cleared."""
    def kernel(rng, state, tokens, model):
        sweep = cgs.sparse_sweep(model, tokens)
        sweep.doc_row[0] = 1
        sweep(rng, state, 0, tokens.doc_ptr.shape[0] - 1)
        return state, None

    hist = one_sweep_from_exact(np.random.default_rng(20261121), pi, N_CHAINS, kernel=kernel, doc_counts=False)
    assert _chi2_pvalue(hist, pi) < ALPHA


def test_negative_control_broken_kernel_fails_chi_square(pi):
    hist = one_sweep_from_exact(np.random.default_rng(20261121), pi, N_CHAINS, sweep=broken_sweep)
    assert _chi2_pvalue(hist, pi) < ALPHA


def stale_word_lists(n_wk, wptr, wtop, wlen):
    """A sparse-list bug: each word's list misses its last non-zero topic (the q bucket undercounts)."""
    lda_sparse.build_word_lists(n_wk, wptr, wtop, wlen)
    wlen[:] = np.maximum(wlen - 1, 0)


def undecremented_word_lists(n_wk, wptr, wlist, wlen):
    """A packed-list bug: every entry's count one above n_wk (as if a token's removal were never counted)."""
    lda_sparse.build_word_lists(n_wk, wptr, wlist, wlen)
    one = 1 << lda_sparse.topic_bits(n_wk.shape[1])
    for w in range(n_wk.shape[0]):
        wlist[wptr[w]:wptr[w] + wlen[w]] += one


@pytest.mark.parametrize("broken_lists", [stale_word_lists, undecremented_word_lists])
def test_negative_control_sparse_with_broken_word_lists_fails_chi_square(pi, broken_lists):
    def kernel(rng, state, tokens, model):
        sweep = cgs.sparse_sweep(model, tokens, word_lists=broken_lists)
        sweep(rng, state, 0, tokens.doc_ptr.shape[0] - 1)
        return state, None

    hist = one_sweep_from_exact(np.random.default_rng(20261121), pi, N_CHAINS, kernel=kernel)
    assert _chi2_pvalue(hist, pi) < ALPHA
