"""The left-to-right estimator against the exact log p(w | Phi, alpha) of an enumerable tiny LDA.

Targets (tests/statistical/_heldout_tiny.py): K = 3, V = 4, documents of up to
6 tokens, log p(w | Phi, alpha) by enumerating all K**N assignment sequences;
the library's dynamic programme over topic counts must agree with it, and with
quadrature over theta for K = 2.

* Unbiasedness: each particle's cumulative weight prod_n p_n^(r) is an
  annealed-importance weight, so mean(p-hat) over 20,000 independent copies of
  a 5-token document must equal p(w) within Monte Carlo error (with the
  resampling sweep of Algorithm 3, and without it, which is sequential
  importance sampling: also unbiased, only noisier).
* Convergence: the error of log p-hat shrinks like 1/sqrt(R).
* Negative controls fail the same tests: a resampling sweep that keeps the
  token's own count (off by one; it no longer leaves p(z_{<n} | w_{<n})
  invariant), and a prediction made after the token's own draw. The
  per-position combination printed in Algorithm 3, with or without the
  resampling, is biased too, and its bias does not vanish as R grows.
"""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit
from scipy import integrate, stats

from harmonium.evaluation import exact_log_likelihood, left_to_right
from harmonium.evaluation._heldout import exact_document_log_likelihood
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
N_COPIES = 20_000
R = 3


@pytest.fixture(scope="module")
def exact():
    return brute_force_log_likelihood(DOC)


# -- the exact target ---------------------------------------------------------------------------------
@pytest.mark.parametrize("words", [[0], [3, 3], [0, 1, 2], [2, 2, 2, 2], [0, 2, 2, 1, 3], [1, 0, 3, 2, 0, 1]])
def test_dynamic_programme_matches_enumeration(words):
    words = np.array(words)
    assert exact_document_log_likelihood(words, PHI, ALPHA) == pytest.approx(brute_force_log_likelihood(words),
                                                                              rel=1e-12)


def test_dynamic_programme_matches_quadrature_over_theta_for_two_topics():
    phi, alpha = PHI[:2] / PHI[:2].sum(1, keepdims=True), np.array([0.7, 1.6])
    words = np.array([0, 2, 2, 1, 3, 3, 0])
    integrand = lambda t: stats.beta.pdf(t, *alpha) * np.prod(t * phi[0, words] + (1 - t) * phi[1, words])  # noqa: E731
    value, _ = integrate.quad(integrand, 0, 1, epsabs=1e-14, epsrel=1e-12)
    assert exact_document_log_likelihood(words, phi, alpha) == pytest.approx(np.log(value), rel=1e-9)


def test_exact_log_likelihood_on_a_corpus():
    res = exact_log_likelihood(MODEL, copies(DOC, 2))
    np.testing.assert_allclose(res.log_likelihood, brute_force_log_likelihood(DOC), rtol=1e-12)
    assert res.method == "exact" and np.all(res.std_error == 0)


# -- unbiasedness -------------------------------------------------------------------------------------
@pytest.mark.parametrize("resample", [True, False], ids=["algorithm3", "sequential_is"])
def test_cumulative_weights_are_unbiased(exact, resample):
    res = left_to_right(MODEL, copies(DOC, N_COPIES), n_particles=R, resample=resample, random_state=11)
    assert abs(unbiasedness_z(res.log_likelihood, exact)) < Z_CRIT


def test_resampling_tightens_the_log_estimate_on_a_longer_document():
    """Why Algorithm 3 resamples: the same unbiased weights, but far less downward error in log p-hat.

    40 tokens, K = 4 (exact value by the dynamic programme, 41**3 count vectors).
    """
    rng = np.random.default_rng(0)
    phi, alpha = rng.dirichlet(np.full(30, 0.2), size=4), np.full(4, 0.3)
    words = rng.choice(30, size=40, p=rng.dirichlet(alpha) @ phi)
    exact = exact_document_log_likelihood(words, phi, alpha)
    err = {}
    for resample in (True, False):
        res = left_to_right((phi, alpha), copies(words, 2000, 30), n_particles=1, resample=resample, random_state=12)
        err[resample] = np.mean(res.log_likelihood - exact)
    assert 0 > err[True] > 0.5 * err[False]


def test_standard_error_matches_the_spread_over_copies(exact):
    res = left_to_right(MODEL, copies(DOC, 4000), n_particles=50, random_state=13)
    ratio = np.mean(res.std_error) / np.std(res.log_likelihood)
    assert 0.8 < ratio < 1.25


# -- convergence in R ---------------------------------------------------------------------------------
def test_log_estimates_converge_as_particles_grow():
    words = np.array([1, 0, 3, 2, 0, 1])
    exact = brute_force_log_likelihood(words)
    rmse = []
    for n_particles in (1, 10, 100):
        res = left_to_right(MODEL, copies(words, 400), n_particles=n_particles, random_state=14)
        rmse.append(np.sqrt(np.mean((res.log_likelihood - exact) ** 2)))
    assert rmse[0] > rmse[1] > rmse[2]
    assert rmse[2] < rmse[0] / 5  # 1/sqrt(R) predicts a factor of 10
    res = left_to_right(MODEL, copies(words, 2000), n_particles=100, random_state=15)
    assert abs(_jensen_corrected_error(res, exact)) < Z_CRIT * res.log_likelihood.std(ddof=1) / np.sqrt(2000)


def _jensen_corrected_error(res, exact):
    """mean(log p-hat - log p) + mean(se**2) / 2: E[log p-hat] = log p - Var(log p-hat) / 2 to second order."""
    return float(np.mean(res.log_likelihood - exact) + np.mean(res.std_error**2) / 2)


# -- negative controls --------------------------------------------------------------------------------
@njit
def _invert(rng, cum, total, K):
    u = rng.random() * total
    for k in range(K - 1):
        if u < cum[k]:
            return k
    return K - 1


@njit
def off_by_one_resample(rng, doc_ptr, words, phi_wk, alpha, d_lo, d_hi, resample, z, n_k, p, cum, log_w, log_pos, g):
    """Algorithm 3 whose resampling sweep leaves the token's own assignment in the counts."""
    R, K = p.shape[0], alpha.shape[0]
    a_sum = alpha.sum()
    for d in range(d_lo, d_hi):
        start, length = doc_ptr[d], doc_ptr[d + 1] - doc_ptr[d]
        n_k[:, :] = 0
        log_w[d, :] = 0.0
        lp = 0.0
        for n in range(length):
            w = words[start + n]
            mean = 0.0
            for r in range(R):
                for m in range(n):
                    wm, old = words[start + m], z[r, m]
                    total = 0.0
                    for k in range(K):
                        total += (n_k[r, k] + alpha[k]) * phi_wk[wm, k]  # BUG: n_k still holds z_m
                        cum[k] = total
                    new = _invert(rng, cum, total, K)
                    n_k[r, old] -= 1
                    z[r, m] = new
                    n_k[r, new] += 1
                total = 0.0
                for k in range(K):
                    total += (n_k[r, k] + alpha[k]) * phi_wk[w, k]
                    cum[k] = total
                p[r] = total / (n + a_sum)
                new = _invert(rng, cum, total, K)
                z[r, n] = new
                n_k[r, new] += 1
                mean += p[r]
            lp += np.log(mean / R)
            for r in range(R):
                log_w[d, r] += np.log(p[r])
        log_pos[d] = lp


@njit
def self_prediction(rng, doc_ptr, words, phi_wk, alpha, d_lo, d_hi, resample, z, n_k, p, cum, log_w, log_pos, g):
    """Algorithm 3 that predicts w_n after drawing and counting z_n (the token sees itself)."""
    R, K = p.shape[0], alpha.shape[0]
    a_sum = alpha.sum()
    for d in range(d_lo, d_hi):
        start, length = doc_ptr[d], doc_ptr[d + 1] - doc_ptr[d]
        n_k[:, :] = 0
        log_w[d, :] = 0.0
        lp = 0.0
        for n in range(length):
            w = words[start + n]
            mean = 0.0
            for r in range(R):
                for m in range(n):
                    wm, old = words[start + m], z[r, m]
                    n_k[r, old] -= 1
                    total = 0.0
                    for k in range(K):
                        total += (n_k[r, k] + alpha[k]) * phi_wk[wm, k]
                        cum[k] = total
                    new = _invert(rng, cum, total, K)
                    z[r, m] = new
                    n_k[r, new] += 1
                total = 0.0
                for k in range(K):
                    total += (n_k[r, k] + alpha[k]) * phi_wk[w, k]
                    cum[k] = total
                new = _invert(rng, cum, total, K)
                z[r, n] = new
                n_k[r, new] += 1
                total = 0.0
                for k in range(K):
                    total += (n_k[r, k] + alpha[k]) * phi_wk[w, k]  # BUG: includes z_n itself
                p[r] = total / (n + 1 + a_sum)
                mean += p[r]
            lp += np.log(mean / R)
            for r in range(R):
                log_w[d, r] += np.log(p[r])
        log_pos[d] = lp


BROKEN = {"off_by_one_resample": off_by_one_resample, "self_prediction": self_prediction}


@pytest.mark.parametrize("name", list(BROKEN))
def test_negative_control_broken_kernel_is_biased(exact, name):
    res = left_to_right(MODEL, copies(DOC, N_COPIES), n_particles=R, random_state=11, kernel=BROKEN[name])
    assert abs(unbiasedness_z(res.log_likelihood, exact)) > Z_CRIT


@pytest.mark.parametrize("name", list(BROKEN))
def test_negative_control_broken_kernel_converges_elsewhere(name):
    words = np.array([1, 0, 3, 2, 0, 1])
    exact = brute_force_log_likelihood(words)
    res = left_to_right(MODEL, copies(words, 2000), n_particles=100, random_state=15, kernel=BROKEN[name])
    assert abs(_jensen_corrected_error(res, exact)) > Z_CRIT * res.log_likelihood.std(ddof=1) / np.sqrt(2000)


@pytest.mark.parametrize("resample", [True, False], ids=["algorithm3", "forgets_to_resample"])
def test_per_position_combination_is_biased(exact, resample):
    """Averaging particles position by position (Algorithm 3 as printed) drops the particles' weights.

    Without the resampling sweep the particles follow the proposal, not
    p(z_{<n} | w_{<n}); with it they are closer but one sweep does not mix
    them fully. Either way the mean of p-hat misses p(w), and more particles
    do not close the gap.
    """
    res = left_to_right(MODEL, copies(DOC, N_COPIES), n_particles=R, combine="per_position", resample=resample,
                        random_state=11)
    assert unbiasedness_z(res.log_likelihood, exact) < -Z_CRIT
    many = left_to_right(MODEL, copies(DOC, 200), n_particles=300, combine="per_position", resample=resample,
                         random_state=16)
    err = many.log_likelihood - exact
    assert err.mean() < -Z_CRIT * err.std(ddof=1) / np.sqrt(err.shape[0])
