"""Minka's fixed point for the LDA hyperparameters (harmonium.models.directed.lda_hyper)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import digamma, gammaln
from scipy.stats import dirichlet_multinomial

from harmonium.errors import InvalidParameterError
from harmonium.models.directed.lda_hyper import (
    dirichlet_multinomial_log_evidence,
    optimize_alpha,
    optimize_beta,
)

TIGHT = {"n_iter": 200_000, "tol": 1e-13}


def dm_counts(rng, alpha, n_rows, lengths):
    """Rows drawn from a Dirichlet-multinomial: p_r ~ Dir(alpha), counts_r ~ Mult(N_r, p_r)."""
    p = rng.dirichlet(alpha, size=n_rows)
    lengths = np.broadcast_to(lengths, (n_rows,))
    return np.stack([rng.multinomial(n, pr) for n, pr in zip(lengths, p, strict=True)])


def dense_update_alpha(n_dk, a):
    """Equation (A) evaluated over every entry (zeros included), no histograms."""
    num = (digamma(n_dk + a) - digamma(a)).sum(axis=0)
    den = (digamma(n_dk.sum(axis=1) + a.sum()) - digamma(a.sum())).sum()
    return a * num / den


def dense_update_beta(n_wk, b):
    V = n_wk.shape[0]
    n_k = n_wk.sum(axis=0)
    return b * (digamma(n_wk + b) - digamma(b)).sum() / (V * (digamma(n_k + V * b) - digamma(V * b)).sum())


def _neg_evidence_log_alpha(x, counts):
    a = np.exp(x)
    A = a.sum()
    grad = (digamma(A) - digamma(counts.sum(axis=1) + A))[:, None] + digamma(counts + a) - digamma(a)
    return -dirichlet_multinomial_log_evidence(counts, a), -(grad.sum(axis=0) * a)


def _neg_evidence_log_beta(x, counts):
    b = float(np.exp(x[0]))
    C = counts.shape[1]
    grad = C * (digamma(C * b) - digamma(counts.sum(axis=1) + C * b)).sum() + (digamma(counts + b) - digamma(b)).sum()
    return -dirichlet_multinomial_log_evidence(counts, b), np.array([-grad * b])


def _lbfgs(fun, x0, counts):
    res = minimize(fun, x0, args=(counts,), jac=True, method="L-BFGS-B",
                   options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 10_000, "maxcor": 30})
    return np.exp(res.x)


def test_log_evidence_matches_scipy_dirichlet_multinomial():
    rng = np.random.default_rng(0)
    a = np.array([0.3, 1.2, 2.0])
    x = dm_counts(rng, a, 5, 7)
    # scipy's pmf includes the multinomial coefficient log(N! / prod n!)
    coef = (gammaln(x.sum(axis=1) + 1) - gammaln(x + 1).sum(axis=1)).sum()
    ref = sum(dirichlet_multinomial.logpmf(r, a, r.sum()) for r in x)
    assert dirichlet_multinomial_log_evidence(x, a) + coef == pytest.approx(ref, rel=1e-12)


def test_one_update_equals_the_dense_formula():
    rng = np.random.default_rng(1)
    n_dk = dm_counts(rng, [0.2, 0.9, 3.0, 0.05], 60, rng.integers(0, 40, size=60))
    a = np.array([0.5, 0.5, 1.0, 0.1])
    np.testing.assert_allclose(optimize_alpha(n_dk, a, n_iter=1), dense_update_alpha(n_dk, a), rtol=1e-12)
    n_wk = dm_counts(rng, np.full(25, 0.2), 6, 80).T
    assert optimize_beta(n_wk, n_wk.sum(axis=0), 0.7, n_iter=1) == pytest.approx(dense_update_beta(n_wk, 0.7),
                                                                                  rel=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_alpha_fixed_point_is_the_evidence_maximiser(seed):
    rng = np.random.default_rng(10 + seed)
    K = 3 + seed
    truth = rng.uniform(0.1, 2.0, size=K)
    n_dk = dm_counts(rng, truth, 300, rng.poisson(30, size=300) + 1)
    fp = optimize_alpha(n_dk, np.ones(K), **TIGHT)
    ref = _lbfgs(_neg_evidence_log_alpha, np.zeros(K), n_dk)
    np.testing.assert_allclose(fp, ref, rtol=1e-5)
    assert dirichlet_multinomial_log_evidence(n_dk, fp) >= dirichlet_multinomial_log_evidence(n_dk, ref) - 1e-9


@pytest.mark.parametrize("seed", [0, 1])
def test_beta_fixed_point_is_the_evidence_maximiser(seed):
    rng = np.random.default_rng(20 + seed)
    V = 40
    topics = dm_counts(rng, np.full(V, 0.05 + 0.4 * seed), 12, rng.integers(50, 400, size=12))  # (K, V)
    n_wk = np.ascontiguousarray(topics.T)
    fp = optimize_beta(n_wk, n_wk.sum(axis=0), 1.0, **TIGHT)
    ref = float(_lbfgs(_neg_evidence_log_beta, np.zeros(1), topics)[0])
    assert fp == pytest.approx(ref, rel=1e-5)
    assert dirichlet_multinomial_log_evidence(topics, fp) >= dirichlet_multinomial_log_evidence(topics, ref) - 1e-9


def test_evidence_never_decreases_over_iterations():
    rng = np.random.default_rng(3)
    n_dk = dm_counts(rng, [0.1, 0.7, 2.5, 0.3], 200, rng.poisson(20, size=200))
    a = np.array([8.0, 0.01, 0.5, 30.0])  # far from the optimum
    ev = [dirichlet_multinomial_log_evidence(n_dk, a)]
    for _ in range(300):
        a = optimize_alpha(n_dk, a, n_iter=1)
        ev.append(dirichlet_multinomial_log_evidence(n_dk, a))
    assert np.all(np.diff(ev) >= -1e-9 * abs(ev[-1]))
    assert ev[-1] > ev[0] + 1.0

    topics = dm_counts(rng, np.full(30, 0.1), 8, 200)
    n_wk = topics.T
    for b0 in (1e-3, 25.0):
        b = b0
        ev = [dirichlet_multinomial_log_evidence(topics, b)]
        for _ in range(200):
            b = optimize_beta(n_wk, n_wk.sum(axis=0), b, n_iter=1)
            ev.append(dirichlet_multinomial_log_evidence(topics, b))
        assert np.all(np.diff(ev) >= -1e-9 * abs(ev[-1]))


def test_recovers_known_asymmetric_alpha():
    truth = np.array([0.1, 0.5, 1.0, 2.0])
    n_dk = dm_counts(np.random.default_rng(4), truth, 2000, 50)
    est = optimize_alpha(n_dk, np.ones(4), n_iter=10_000, tol=1e-10)
    np.testing.assert_allclose(est, truth, rtol=0.10)


def test_recovers_known_symmetric_beta():
    truth = 0.3
    topics = dm_counts(np.random.default_rng(5), np.full(30, truth), 2000, 50)
    n_wk = topics.T
    est = optimize_beta(n_wk, n_wk.sum(axis=0), 1.0, n_iter=10_000, tol=1e-10)
    assert est == pytest.approx(truth, rel=0.10)


def test_empty_topic_and_empty_corpus_keep_values_positive():
    n_dk = np.array([[3, 0], [1, 0], [0, 0]])
    a = optimize_alpha(n_dk, [0.5, 0.5])
    assert np.all(a > 0) and np.all(np.isfinite(a))
    np.testing.assert_array_equal(optimize_alpha(np.zeros((2, 3)), [0.1, 0.2, 0.3]), [0.1, 0.2, 0.3])
    assert optimize_beta(np.zeros((4, 2)), np.zeros(2), 0.25) == 0.25


@pytest.mark.parametrize("alpha", [[0.5, 0.0], [0.5, -1.0], [0.5, np.nan], [0.5, 0.5, 0.5], 0.0, [[0.5, 0.5]]])
def test_invalid_alpha_raises(alpha):
    with pytest.raises(InvalidParameterError, match="'alpha' parameter of optimize_alpha"):
        optimize_alpha(np.ones((3, 2)), alpha)


@pytest.mark.parametrize("beta", [0.0, -0.1, float("inf"), "x"])
def test_invalid_beta_raises(beta):
    with pytest.raises(InvalidParameterError, match="'beta' parameter of optimize_beta"):
        optimize_beta(np.ones((3, 2)), np.array([3, 3]), beta)


def test_invalid_counts_and_options_raise():
    with pytest.raises(InvalidParameterError, match="'n_dk' parameter"):
        optimize_alpha(np.array([[1, -1]]), [1.0, 1.0])
    with pytest.raises(InvalidParameterError, match="'n_iter' parameter"):
        optimize_alpha(np.ones((2, 2)), [1.0, 1.0], n_iter=0)
    with pytest.raises(InvalidParameterError, match="'n_k' parameter"):
        optimize_beta(np.ones((3, 2)), np.ones(3), 0.1)
    with pytest.raises(InvalidParameterError, match="'alpha' parameter of dirichlet_multinomial"):
        dirichlet_multinomial_log_evidence(np.ones((2, 2)), [1.0, 0.0])


def test_alpha_from_assignments_equals_alpha_from_the_table_bit_for_bit():
    # the no-n_dk path (issue 21): the counts come from z one document at a time, same histogram, same alpha
    from harmonium.models.directed.lda import counts_from_assignments

    rng = np.random.default_rng(5)
    lengths = rng.integers(0, 30, size=40)
    lengths[7] = 0
    doc_ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    z = rng.integers(0, 6, size=doc_ptr[-1]).astype(np.int32)
    n_dk = counts_from_assignments(doc_ptr, np.zeros_like(z), z, 6, 1)[0]
    a = rng.uniform(0.1, 2.0, size=6)
    want = optimize_alpha(n_dk, a)
    assert optimize_alpha(None, a, doc_ptr=doc_ptr, z=z).tobytes() == want.tobytes()
    z2 = z.copy()
    z2[0] = (z2[0] + 1) % 6  # negative control: other assignments, another alpha
    assert not np.array_equal(optimize_alpha(None, a, doc_ptr=doc_ptr, z=z2), want)
