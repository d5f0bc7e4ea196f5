"""Exactness of the alias-table Metropolis-Hastings sampler (``sampler="alias_mh"``).

1. Deterministic: one MH step with the word proposal, and one with the doc
   proposal, built from the exposed formulas (the same compiled functions the
   kernel evaluates), leaves the enumerated posterior invariant; so does the
   whole two-phase sweep.
2. Stochastic: the compiled sweep, started from exact draws of pi, passes a
   chi-square test against pi after one sweep (mh_steps = 2, 1, 4).
3. Negative controls: a doc proposal that includes the token itself, an
   acceptance ratio without q(s)/q(t), and LightLDA's start-of-sweep word
   tables are not invariant; the last two also fail the chi-square test.

Suite budget: each chi-square uses alpha = 1e-4 (fixed seed, no retries).
"""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit
from scipy import stats

from harmonium._kernels import lda_alias_mh as kern
from harmonium._kernels.lda_alias import build_alias, draw_alias
from harmonium.inference.mcmc.lda import alias_mh as amh
from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs

from ._lda_tiny import MODEL, STATES, TOKENS, K, N, exact_posterior, one_sweep_from_exact, state_index

ALPHA = 1e-4
N_CHAINS = 200_000
SEED = 20261121
D = TOKENS.doc_ptr.shape[0] - 1


@pytest.fixture(scope="module")
def pi():
    return exact_posterior()


def _state(z):
    return cgs.state_from_assignments(TOKENS, MODEL, z)


def _step_matrix(i, proposal):
    """Transition matrix over the 64 states of one MH step on z_i; ``proposal(state, i)`` normalised q."""
    S = STATES.shape[0]
    P = np.zeros((S, S))
    for a, z in enumerate(STATES):
        st = _state(z)
        row = amh.mh_step(amh.target(st, TOKENS, MODEL, i), proposal(st, i), int(z[i]))
        for k in range(K):
            z2 = z.copy()
            z2[i] = k
            P[a, state_index(z2)] += row[k]
    return P


def word_q(st, i):
    return amh.word_proposal(st, TOKENS, MODEL, i)


def doc_q(st, i):
    return amh.doc_proposal(st, TOKENS, MODEL, i)


def doc_q_with_self(st, i):
    """Broken: the doc proposal counts token i itself (depends on z_i)."""
    d = int(np.searchsorted(TOKENS.doc_ptr, i, side="right") - 1)
    q = st.n_dk[d] + MODEL.alpha
    return q / q.sum()


def _sweep_order():
    # phases: documents at even offsets, then odd offsets
    ptr = TOKENS.doc_ptr
    return [i for parity in (0, 1) for d in range(parity, D, 2) for i in range(ptr[d], ptr[d + 1])]


def test_proposals_are_functions_of_the_other_tokens():
    # changing z_i alone leaves both proposals for token i unchanged
    for z in STATES[::7]:
        for i in range(N):
            z2 = z.copy()
            z2[i] = 1 - z[i]
            for q in (word_q, doc_q):
                np.testing.assert_array_equal(q(_state(z), i), q(_state(z2), i))


@pytest.mark.parametrize("proposal", [word_q, doc_q], ids=["word", "doc"])
def test_one_mh_step_leaves_posterior_invariant(pi, proposal):
    for i in range(N):
        P = _step_matrix(i, proposal)
        np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
        np.testing.assert_allclose(pi @ P, pi, atol=1e-12)


def test_whole_sweep_leaves_posterior_invariant(pi):
    P = np.eye(STATES.shape[0])
    for i in _sweep_order():
        P = P @ _step_matrix(i, word_q) @ _step_matrix(i, doc_q)
    np.testing.assert_allclose(pi @ P, pi, atol=1e-12)


def test_negative_control_doc_proposal_with_the_token_itself_is_not_invariant(pi):
    worst = max(np.abs(pi @ _step_matrix(i, doc_q_with_self) - pi).max() for i in range(N))
    assert worst > 1e-3


def test_negative_control_acceptance_without_proposal_correction_is_not_invariant(pi, monkeypatch):
    monkeypatch.setattr(amh, "acceptance", lambda p_s, p_t, q_s, q_t: min(1.0, p_t / p_s))
    worst = max(np.abs(pi @ _step_matrix(i, word_q) - pi).max() for i in range(N))
    assert worst > 1e-3


def test_negative_control_start_of_sweep_word_tables_are_not_invariant(pi):
    # LightLDA's tables: q_w from the counts at the start of the sweep (including token i and the old values
    # of tokens already resampled). The sweep's distribution from exact draws of pi is computed exactly.
    out = np.zeros_like(pi)
    for a, z0 in enumerate(STATES):
        st0 = _state(z0)
        c = 1.0 / (st0.n_k + MODEL.beta * MODEL.n_words)

        def stale_q(st, i, st0=st0, c=c):
            q = (st0.n_wk[TOKENS.words[i]] + MODEL.beta) * c
            return q / q.sum()

        dist = np.zeros_like(pi)
        dist[a] = 1.0
        for i in _sweep_order():
            dist = dist @ _step_matrix(i, stale_q) @ _step_matrix(i, doc_q)
        out += pi[a] * dist
    assert 0.5 * np.abs(out - pi).sum() > 1e-2


# ---- the compiled kernel ------------------------------------------------------------------------


def _chi2_pvalue(hist, pi):
    return stats.chisquare(hist, pi * hist.sum()).pvalue


def _kernel(mh_steps=2, compiled=None):
    sweep = amh.make_sweep(MODEL, TOKENS, mh_steps=mh_steps, compiled=compiled)  # scratch once, not per chain

    def kernel(rng, state, tokens, model):
        sweep(rng, state, 0, D)
        return state, None

    return kernel


def test_kernel_visits_states_with_posterior_frequencies(pi):
    assert (pi * N_CHAINS).min() >= 5
    hist = one_sweep_from_exact(np.random.default_rng(SEED), pi, N_CHAINS, sampler="alias_mh")
    assert _chi2_pvalue(hist, pi) > ALPHA


@pytest.mark.parametrize("mh_steps", [1, 4])
def test_kernel_with_other_mh_steps_visits_states_with_posterior_frequencies(pi, mh_steps):
    hist = one_sweep_from_exact(np.random.default_rng(SEED + mh_steps), pi, N_CHAINS, kernel=_kernel(mh_steps))
    assert _chi2_pvalue(hist, pi) > ALPHA


@njit
def stale_tables_sweep(rng, doc_ptr, words, z, n_dk, n_wk, n_k, alpha, beta, d_lo, d_hi, mh_steps,
                       n_other, n_other_k, c_other, wptr, wlen, tab_topic, tab_prob, tab_alias, word_mass,
                       beta_prob, beta_alias, alpha_prob, alpha_alias, small, large):
    """Broken: word tables built once from the counts at the start of the sweep (LightLDA)."""
    K = n_k.shape[0]
    alpha_sum = alpha.sum()
    for k in range(K):
        alpha_prob[k] = alpha[k]
    build_alias(alpha_prob, alpha_alias, 0, K, small, large)
    v_beta = beta * n_wk.shape[0]
    kern.other_counts(doc_ptr, words, z, n_wk, n_k, d_lo, d_hi, 2, n_other, n_other_k)  # parity 2: none removed
    b_mass = kern.build_word_tables(n_other, n_other_k, beta, v_beta, wptr, wlen, tab_topic, tab_prob, tab_alias,
                                    word_mass, c_other, beta_prob, beta_alias, small, large)
    n = 0
    for parity in range(2):
        n += kern.mh_phase(rng, doc_ptr, words, z, n_dk, n_wk, n_k, alpha, alpha_sum, False, beta, d_lo, d_hi,
                           parity, mh_steps, n_other, c_other, wptr, wlen, tab_topic, tab_prob, tab_alias,
                           word_mass, b_mass, beta_prob, beta_alias, alpha_prob, alpha_alias)
    return n


@njit
def uncorrected_sweep(rng, doc_ptr, words, z, n_dk, n_wk, n_k, alpha, beta, d_lo, d_hi, mh_steps,
                      n_other, n_other_k, c_other, wptr, wlen, tab_topic, tab_prob, tab_alias, word_mass,
                      beta_prob, beta_alias, alpha_prob, alpha_alias, small, large):
    """Broken: word-proposal steps accept with min(1, p(t)/p(s)), without q(s)/q(t)."""
    K = n_k.shape[0]
    alpha_sum = alpha.sum()
    for k in range(K):
        alpha_prob[k] = alpha[k]
    build_alias(alpha_prob, alpha_alias, 0, K, small, large)
    v_beta = beta * n_wk.shape[0]
    n_changed = 0
    for parity in range(2):
        kern.other_counts(doc_ptr, words, z, n_wk, n_k, d_lo, d_hi, parity, n_other, n_other_k)
        b_mass = kern.build_word_tables(n_other, n_other_k, beta, v_beta, wptr, wlen, tab_topic, tab_prob,
                                        tab_alias, word_mass, c_other, beta_prob, beta_alias, small, large)
        for d in range(d_lo + parity, d_hi, 2):
            for i in range(doc_ptr[d], doc_ptr[d + 1]):
                w = words[i]
                old = z[i]
                n_dk[d, old] -= 1
                n_wk[w, old] -= 1
                n_k[old] -= 1
                s = old
                for step in range(mh_steps):
                    if step % 2 == 0:
                        if rng.random() * (word_mass[w] + b_mass) < word_mass[w]:
                            t = tab_topic[wptr[w] + draw_alias(rng, tab_prob, tab_alias, wptr[w], wlen[w])]
                        else:
                            t = draw_alias(rng, beta_prob, beta_alias, 0, K)
                        p_s = kern.target_weight(d, w, s, n_dk, n_wk, n_k, alpha, beta, v_beta)
                        p_t = kern.target_weight(d, w, t, n_dk, n_wk, n_k, alpha, beta, v_beta)
                        if t != s and kern.accept(rng, p_s, p_t, 1.0, 1.0):
                            s = t
                    else:
                        s = kern.doc_step(rng, i, d, w, s, doc_ptr, z, n_dk, n_wk, n_k, alpha, alpha_sum, False,
                                          beta, v_beta, alpha_prob, alpha_alias)
                z[i] = s
                n_dk[d, s] += 1
                n_wk[w, s] += 1
                n_k[s] += 1
                n_changed += s != old
    return n_changed


@pytest.mark.parametrize("broken", [stale_tables_sweep, uncorrected_sweep], ids=["stale_tables", "uncorrected"])
def test_negative_control_broken_kernel_fails_chi_square(pi, broken):
    hist = one_sweep_from_exact(np.random.default_rng(SEED), pi, N_CHAINS, kernel=_kernel(2, compiled=broken))
    assert _chi2_pvalue(hist, pi) < ALPHA
