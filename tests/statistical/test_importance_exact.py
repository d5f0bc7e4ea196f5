"""Importance-sampling estimators against the exact log p(w | Phi, alpha) of an enumerable tiny LDA.

Same target and test as tests/statistical/test_left_to_right_exact.py: the mean
of p-hat / p over many independent copies of a 5-token document must be 1
within Monte Carlo error, for IS from the prior, IS with the iterated
pseudo-count proposal and annealed importance sampling. Negative controls, run
through the same test: IS-IP weights without the division by q(z); IS that draws
theta from Dir(2 alpha) but weighs as if from the prior; AIS that takes each
weight increment after the transition instead of before it.
"""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from harmonium.evaluation import exact_log_likelihood, importance_sampling
from harmonium.evaluation._heldout import log_doc_prior, log_mean_exp
from harmonium.evaluation.importance import (
    annealed_log_weights,
    annealing_schedule,
    iterated_pseudo_counts,
    prior_log_weights,
)
from tests.statistical._heldout_tiny import (
    ALPHA,
    DOC,
    PHI,
    Z_CRIT,
    brute_force_log_likelihood,
    copies,
    unbiasedness_z,
)

MODEL = (PHI, ALPHA)


@pytest.fixture(scope="module")
def exact():
    return brute_force_log_likelihood(DOC)


@pytest.mark.parametrize(
    ("proposal", "n_copies", "n_samples", "extra"),
    [("prior", 20_000, 3, {}), ("iterated", 1000, 30, {}), ("annealed", 20_000, 2, {"n_temperatures": 10})],
)
def test_weights_are_unbiased(exact, proposal, n_copies, n_samples, extra):
    res = importance_sampling(MODEL, copies(DOC, n_copies), proposal=proposal, n_samples=n_samples,
                              random_state=21, **extra)
    assert abs(unbiasedness_z(res.log_likelihood, exact)) < Z_CRIT


@pytest.mark.parametrize("proposal", ["prior", "iterated", "annealed"])
def test_log_estimates_converge_as_samples_grow(proposal):
    words = np.array([1, 0, 3, 2, 0, 1])
    exact = brute_force_log_likelihood(words)
    rmse = []
    for n_samples in (1, 10, 100):
        res = importance_sampling(MODEL, copies(words, 200), proposal=proposal, n_samples=n_samples,
                                  n_temperatures=10, random_state=22)
        rmse.append(np.sqrt(np.mean((res.log_likelihood - exact) ** 2)))
    assert rmse[0] > rmse[1] > rmse[2]
    assert rmse[2] < rmse[0] / 2  # IS-IP converges slowest here: its factorised q is too narrow (heavy tails)


def test_iterated_proposal_is_the_fixed_point():
    words, n_w = np.array([0, 1, 2]), np.array([1.0, 1.0, 2.0])
    q = iterated_pseudo_counts(PHI[:, words], n_w, ALPHA, n_iter=500, tol=1e-14)
    n_k = n_w @ q
    target = (ALPHA + n_k - q) * PHI[:, words].T
    np.testing.assert_allclose(q, target / target.sum(1, keepdims=True), atol=1e-12)


def test_iterated_proposal_beats_the_prior_on_a_longer_document():
    rng = np.random.default_rng(0)
    phi, alpha = rng.dirichlet(np.full(30, 0.2), size=4), np.full(4, 0.3)
    words = rng.choice(30, size=40, p=rng.dirichlet(alpha) @ phi)
    exact = exact_log_likelihood((phi, alpha), copies(words, 1, 30)).log_likelihood[0]
    err = {}
    for proposal in ("prior", "iterated"):
        res = importance_sampling((phi, alpha), copies(words, 200, 30), proposal=proposal, n_samples=20,
                                  random_state=23)
        err[proposal] = np.mean(np.abs(res.log_likelihood - exact))
    assert err["iterated"] < 0.5 * err["prior"]


# -- negative controls --------------------------------------------------------------------------------
def uncorrected_iterated_log_weights(rng, counts, phi, alpha, n_samples):
    """IS-IP that forgets to divide by q(z): the weight is p(w, z) alone."""
    out = np.zeros((counts.shape[0], n_samples))
    for d in range(counts.shape[0]):
        lo, hi = counts.indptr[d], counts.indptr[d + 1]
        words, n_w = counts.indices[lo:hi], counts.data[lo:hi]
        q = iterated_pseudo_counts(phi[:, words], n_w.astype(float), alpha)
        m = rng.multinomial(n_w, q, size=(n_samples, words.shape[0]))
        out[d] = log_doc_prior(m.sum(1).astype(float), alpha) + np.einsum("sjk,jk->s", m, np.log(phi[:, words].T))
    return out


def prior_from_the_wrong_dirichlet(rng, counts, phi, alpha, n_samples):
    """Draws theta from Dir(2 alpha) and weighs it as if it came from Dir(alpha)."""
    return prior_log_weights(rng, counts, phi, 2 * alpha, n_samples)


@njit
def _invert(rng, cum, total, K):
    u = rng.random() * total
    for k in range(K - 1):
        if u < cum[k]:
            return k
    return K - 1


@njit
def ais_weight_after_move(rng, doc_ptr, words, log_phi_wk, alpha, taus, d_lo, d_hi, z, n_k, cum, log_w):
    """AIS that moves z under f_t first and then adds (tau_t - tau_{t-1}) log p(w | z) at the new z."""
    S, K, T = log_w.shape[1], alpha.shape[0], taus.shape[0] - 1
    for d in range(d_lo, d_hi):
        start, length = doc_ptr[d], doc_ptr[d + 1] - doc_ptr[d]
        for s in range(S):
            n_k[:] = 0
            for n in range(length):
                total = 0.0
                for k in range(K):
                    total += n_k[k] + alpha[k]
                    cum[k] = total
                z[n] = _invert(rng, cum, total, K)
                n_k[z[n]] += 1
            lw = 0.0
            for t in range(1, T + 1):
                for n in range(length):
                    w = words[start + n]
                    n_k[z[n]] -= 1
                    total = 0.0
                    for k in range(K):
                        total += (n_k[k] + alpha[k]) * np.exp(taus[t] * log_phi_wk[w, k])
                        cum[k] = total
                    z[n] = _invert(rng, cum, total, K)
                    n_k[z[n]] += 1
                ll = 0.0
                for n in range(length):
                    ll += log_phi_wk[words[start + n], z[n]]
                lw += (taus[t] - taus[t - 1]) * ll  # BUG: evaluated after the move
            log_w[d, s] = lw


def _ais_after_move(rng, corpus, phi, alpha, n_samples):
    return annealed_log_weights(rng, corpus, phi, alpha, n_samples, annealing_schedule(10),
                                kernel=ais_weight_after_move)


def _check(log_w_fn, exact, n_copies, n_samples, corpus_arg=False):
    """The test of test_weights_are_unbiased, on a function returning (D, S) log weights."""
    corpus = copies(DOC, n_copies)
    arg = corpus if corpus_arg else corpus.counts
    log_w = log_w_fn(np.random.default_rng(21), arg, PHI, ALPHA, n_samples)
    est, _ = log_mean_exp(log_w)
    return unbiasedness_z(est, exact)


@pytest.mark.parametrize(
    ("fn", "n_copies", "n_samples", "corpus_arg"),
    [(uncorrected_iterated_log_weights, 1000, 30, False), (prior_from_the_wrong_dirichlet, 20_000, 3, False),
     (_ais_after_move, 20_000, 2, True)],
    ids=["is_ip_without_q", "prior_wrong_dirichlet", "ais_weight_after_move"],
)
def test_negative_control_is_biased(exact, fn, n_copies, n_samples, corpus_arg):
    assert abs(_check(fn, exact, n_copies, n_samples, corpus_arg)) > Z_CRIT
