"""Exactness of the WarpLDA-style sampler (``sampler="warp"``).

1. Deterministic: one MH step with the doc proposal (word pass) and one with
   the word proposal (document pass), built from the exposed proposals and
   the kernel's own compiled acceptance ratios, leave the enumerated
   posterior invariant; so does the whole sweep in the kernel's order.
2. Stochastic: the compiled sweep, started from exact draws of pi, passes a
   chi-square test against pi after one sweep (mh_steps = 2, the default, and 1).
3. Negative controls: an acceptance ratio without the topic-total factor
   is not invariant and fails the chi-square test; WarpLDA's delayed update
   (counts frozen during each pass) fails the chi-square test too, which is
   why the kernel reads the current counts.

Suite budget: each chi-square uses alpha = 1e-4 (fixed seed, no retries).
"""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit
from scipy import stats

from harmonium._kernels import lda_warp as kern
from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs
from harmonium.inference.mcmc.lda import warp
from harmonium.models.directed.lda import counts_without_token

from ._lda_tiny import MODEL, STATES, TOKENS, K, N, exact_posterior, one_sweep_from_exact, state_index

ALPHA = 1e-4
N_CHAINS = 200_000
SEED = 20261125
D = TOKENS.doc_ptr.shape[0] - 1


@pytest.fixture(scope="module")
def pi():
    return exact_posterior()


def _state(z):
    return cgs.state_from_assignments(TOKENS, MODEL, z)


def _step_matrix(kind, i, acceptance=None):
    """Transition matrix over the 64 states of one MH step on z_i (kind "doc": word pass; "word": doc pass)."""
    proposal = warp.doc_proposal if kind == "doc" else warp.word_proposal
    if acceptance is None:
        acceptance = warp.doc_move_acceptance if kind == "doc" else warp.word_move_acceptance
    S = STATES.shape[0]
    P = np.zeros((S, S))
    for a, z in enumerate(STATES):
        st = _state(z)
        q = proposal(st, TOKENS, MODEL, i)
        s = int(z[i])
        row = np.zeros(K)
        for t in range(K):
            acc = 1.0 if t == s else acceptance(st, TOKENS, MODEL, i, t)
            row[t] += q[t] * acc
            row[s] += q[t] * (1.0 - acc)
        for k in range(K):
            z2 = z.copy()
            z2[i] = k
            P[a, state_index(z2)] += row[k]
    return P


def test_proposals_are_functions_of_the_other_tokens():
    for z in STATES[::5]:
        for i in range(N):
            z2 = z.copy()
            z2[i] = 1 - z[i]
            for q in (warp.doc_proposal, warp.word_proposal):
                np.testing.assert_array_equal(q(_state(z), TOKENS, MODEL, i), q(_state(z2), TOKENS, MODEL, i))


@pytest.mark.parametrize("kind", ["doc", "word"])
def test_one_mh_step_leaves_posterior_invariant(pi, kind):
    for i in range(N):
        P = _step_matrix(kind, i)
        np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
        np.testing.assert_allclose(pi @ P, pi, atol=1e-12)


def test_whole_sweep_leaves_posterior_invariant(pi):
    P = np.eye(STATES.shape[0])
    for kind, i in warp.sweep_order(TOKENS):
        P = P @ _step_matrix(kind, i)
    np.testing.assert_allclose(pi @ P, pi, atol=1e-12)


def _acceptance_without_topic_totals(st, tokens, model, i, t):
    """Broken: the word pass's ratio (3) without (n_s + V beta) / (n_t + V beta)."""
    _, w, s, _, n_wk, _ = counts_without_token(st, tokens, i)
    return min(1.0, (n_wk[w, t] + model.beta) / (n_wk[w, s] + model.beta))


def test_negative_control_acceptance_without_topic_totals_is_not_invariant(pi):
    worst = max(np.abs(pi @ _step_matrix("doc", i, _acceptance_without_topic_totals) - pi).max() for i in range(N))
    assert worst > 1e-3


# ---- the compiled kernel ------------------------------------------------------------------------


def _chi2_pvalue(hist, pi):
    return stats.chisquare(hist, pi * hist.sum()).pvalue


def _kernel(mh_steps=1, compiled=None):
    sweep = warp.make_sweep(MODEL, TOKENS, mh_steps=mh_steps, compiled=compiled)  # scratch once, not per chain

    def kernel(rng, state, tokens, model):
        sweep(rng, state, 0, D)
        return state, None

    return kernel


def test_kernel_visits_states_with_posterior_frequencies(pi):
    assert (pi * N_CHAINS).min() >= 5
    hist = one_sweep_from_exact(np.random.default_rng(SEED), pi, N_CHAINS, sampler="warp")
    assert _chi2_pvalue(hist, pi) > ALPHA


def test_kernel_with_one_mh_step_visits_states_with_posterior_frequencies(pi):
    hist = one_sweep_from_exact(np.random.default_rng(SEED + 1), pi, N_CHAINS, kernel=_kernel(1))
    assert _chi2_pvalue(hist, pi) > ALPHA


@njit
def uncorrected_sweep(rng, doc_ptr, words, z, n_dk, n_wk, n_k, alpha, beta, d_lo, d_hi, mh_steps,
                      perm, wpos, wptr, wword, wdoc, own, z_w, z0, alpha_prob, alpha_alias, small, large):
    """Broken: the word pass accepts with (n_wt + beta) / (n_ws + beta), without the topic totals."""
    K = n_k.shape[0]
    alpha_sum, symmetric = kern.prior_table(alpha, alpha_prob, alpha_alias, small, large)
    for j in range(own.shape[0]):
        p = own[j]
        w, i, d = wword[p], perm[p], wdoc[p]
        old = z_w[p]
        s = old
        n_wk[w, s] -= 1
        n_k[s] -= 1
        for _ in range(mh_steps):
            t = kern.draw_other(rng, i, doc_ptr[d], doc_ptr[d + 1], z, alpha_sum)
            if t < 0:
                t = kern.draw_uniform(rng, K)
            if t != s and rng.random() * (n_wk[w, s] + beta) < n_wk[w, t] + beta:
                s = t
        n_wk[w, s] += 1
        n_k[s] += 1
        if s != old:
            n_dk[d, old] -= 1
            n_dk[d, s] += 1
            z[i] = s
            z_w[p] = s
    kern.doc_pass(rng, doc_ptr, words, z, n_dk, n_wk, n_k, alpha, beta, d_lo, d_hi, mh_steps, wptr, wpos, z_w)
    return 0


@njit
def delayed_sweep(rng, doc_ptr, words, z, n_dk, n_wk, n_k, alpha, beta, d_lo, d_hi, mh_steps,
                  perm, wpos, wptr, wword, wdoc, own, z_w, z0, alpha_prob, alpha_alias, small, large):
    """Broken: WarpLDA's delayed update. The ratios read counts frozen at the start of each pass (token i's
    own count taken out of its start topic, as in WarpLDA); the tables are brought up to date after the pass."""
    K = n_k.shape[0]
    V = n_wk.shape[0]
    v_beta = beta * V
    alpha_sum, symmetric = kern.prior_table(alpha, alpha_prob, alpha_alias, small, large)
    fw, fk = n_wk.copy(), n_k.copy()
    for j in range(own.shape[0]):  # word pass against frozen n_wk, n_k
        p = own[j]
        w, i, d = wword[p], perm[p], wdoc[p]
        old = z_w[p]
        s = old
        for _ in range(mh_steps):
            t = kern.draw_other(rng, i, doc_ptr[d], doc_ptr[d + 1], z, alpha_sum)
            if t < 0:
                t = kern.draw_uniform(rng, K)
            if t != s:
                ws = fw[w, s] - (s == old)
                wt = fw[w, t] - (t == old)
                ks = fk[s] - (s == old)
                kt = fk[t] - (t == old)
                if rng.random() * (ws + beta) * (kt + v_beta) < (wt + beta) * (ks + v_beta):
                    s = t
        if s != old:
            n_wk[w, old] -= 1
            n_wk[w, s] += 1
            n_k[old] -= 1
            n_k[s] += 1
            n_dk[d, old] -= 1
            n_dk[d, s] += 1
            z[i] = s
            z_w[p] = s
    fd, fk = n_dk.copy(), n_k.copy()
    for d in range(d_lo, d_hi):  # document pass against frozen n_dk, n_k
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            w = words[i]
            old = z[i]
            s = old
            p = wpos[i]
            for _ in range(mh_steps):
                t = kern.draw_other(rng, p, wptr[w], wptr[w + 1], z_w, beta * K)
                if t < 0:
                    t = kern.draw_uniform(rng, K)
                if t != s:
                    ds = fd[d, s] - (s == old)
                    dt = fd[d, t] - (t == old)
                    ks = fk[s] - (s == old)
                    kt = fk[t] - (t == old)
                    if rng.random() * (ds + alpha[s]) * (kt + v_beta) < (dt + alpha[t]) * (ks + v_beta):
                        s = t
            if s != old:
                n_wk[w, old] -= 1
                n_wk[w, s] += 1
                n_k[old] -= 1
                n_k[s] += 1
                n_dk[d, old] -= 1
                n_dk[d, s] += 1
                z[i] = s
                z_w[p] = s
    return 0


@pytest.mark.parametrize("broken", [uncorrected_sweep, delayed_sweep], ids=["uncorrected", "delayed_update"])
def test_negative_control_broken_kernel_fails_chi_square(pi, broken):
    hist = one_sweep_from_exact(np.random.default_rng(SEED), pi, N_CHAINS, kernel=_kernel(1, compiled=broken))
    assert _chi2_pvalue(hist, pi) < ALPHA
