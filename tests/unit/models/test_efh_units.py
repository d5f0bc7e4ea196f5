"""The vectorised unit types agree with the harmonium.expfam families they stand for."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from harmonium.errors import CorpusError, InvalidParameterError
from harmonium.models.undirected.units import (
    BernoulliUnits,
    BinomialUnits,
    GaussianUnits,
    PoissonUnits,
    RatePoissonUnits,
    ReplicatedSoftmaxUnits,
    SoftmaxUnits,
    units_from_spec,
)

RNG = np.random.default_rng(0)
ETA = RNG.normal(0.0, 1.0, size=(4, 6))
ELEMENTWISE = [BernoulliUnits(), BinomialUnits(4), PoissonUnits(), GaussianUnits(0.7), GaussianUnits(2.0, True)]


def _data(units, eta):
    params = units.init_params(eta.shape[1])
    return params, units.sample(np.random.default_rng(1), eta, params)


@pytest.mark.parametrize("units", ELEMENTWISE, ids=lambda u: repr(u))
def test_elementwise_units_match_expfam(units):
    params, x = _data(units, ETA)
    dist = units.distribution(ETA, params)
    np.testing.assert_allclose(units.mean(ETA, params), dist.mean_params()[0], rtol=1e-12)
    # log p(x | eta) = log_base(x) + eta . x - A(eta), summed over the row
    lp = dist.log_prob(x).sum(axis=1)
    mine = units.log_base(x, params) + (ETA * x).sum(axis=1) - units.log_partition(ETA, params)
    np.testing.assert_allclose(mine, lp, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("units", [SoftmaxUnits(), ReplicatedSoftmaxUnits(), RatePoissonUnits()], ids=repr)
def test_softmax_groups_match_expfam(units):
    params = units.init_params(6)
    lengths = np.array([1, 3, 5, 2]) if units.needs_lengths else None
    x = units.sample(np.random.default_rng(2), ETA, params, lengths)
    x = x.toarray() if sp.issparse(x) else x
    dist = units.distribution(ETA, params, lengths)
    mean = units.mean(ETA, params, lengths)
    if units.needs_lengths:
        np.testing.assert_allclose(mean, dist.mean_params()[0], rtol=1e-12)
        np.testing.assert_array_equal(x.sum(axis=1), lengths)
        # sequence probability: the multinomial log p minus its coefficient
        coef = dist.log_base_measure(x)
        lp = dist.log_prob(x) - coef
    else:
        np.testing.assert_allclose(mean, dist.probs, rtol=1e-12)
        lp = dist.log_prob(x.argmax(axis=1))
    mine = units.log_base(x, params) + (ETA * x).sum(axis=1) - units.log_partition(ETA, params, lengths)
    np.testing.assert_allclose(mine, lp, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("units", ELEMENTWISE + [SoftmaxUnits(), ReplicatedSoftmaxUnits()], ids=repr)
def test_sample_means(units):
    """Sample means of 20,000 draws within 5 standard errors of E[x | eta]."""
    eta = ETA[:2]
    params = units.init_params(6)
    lengths = np.array([4, 9]) if units.needs_lengths else None
    rng = np.random.default_rng(3)
    draws = [units.sample(rng, np.repeat(eta, 10_000, axis=0), params,
                         None if lengths is None else np.repeat(lengths, 10_000))]
    x = draws[0].toarray() if sp.issparse(draws[0]) else draws[0]
    x = x.reshape(2, 10_000, 6)
    mean = units.mean(eta, params, lengths)
    se = x.std(axis=1) / np.sqrt(10_000) + 1e-12
    assert np.all(np.abs(x.mean(axis=1) - mean) < 5 * se + 1e-9)


def test_sparse_bernoulli_draw_matches_dense_distribution():
    units = BernoulliUnits()
    eta = np.array([[-6.0, -3.0, 0.0, 2.0, -8.0]])
    x = units.sample_sparse(np.random.default_rng(0), np.repeat(eta, 20_000, axis=0), None)
    assert sp.isspmatrix_csr(x)
    p = units.mean(eta, None)[0]
    f = np.asarray(x.mean(axis=0)).ravel()
    assert np.all(np.abs(f - p) < 5 * np.sqrt(p * (1 - p) / 20_000) + 1e-4)


def test_log_base_sparse_equals_dense():
    x = sp.csr_matrix(np.array([[0, 2, 1], [3, 0, 0]], dtype=float))
    for units in (BinomialUnits(3), PoissonUnits()):
        np.testing.assert_allclose(units.log_base(x, None), units.log_base(x.toarray(), None))


def test_gaussian_variance_gradient_statistic():
    """d/d log_var of log p*(x) terms: x^2 / (2 var)."""
    u = GaussianUnits(2.0, learn_variance=True)
    p = u.init_params(3)
    x = np.array([[0.5, -1.0, 2.0]])
    s = u.bias_stats(x, p)
    eps = 1e-6
    q = {"log_var": p["log_var"] + eps, "bias": p["bias"]}
    fd = (u.log_base(x, q) - u.log_base(x, p)) / eps
    np.testing.assert_allclose(s["log_var"].sum(), fd[0], rtol=1e-4)


def test_specs_round_trip_and_errors():
    for u in ELEMENTWISE + [SoftmaxUnits(), ReplicatedSoftmaxUnits(), RatePoissonUnits()]:
        assert units_from_spec(u.spec()) == u
    assert units_from_spec("bernoulli") == BernoulliUnits()
    with pytest.raises(InvalidParameterError, match="unit type"):
        units_from_spec("gamma")
    with pytest.raises(InvalidParameterError, match="n_trials"):
        BinomialUnits(0)
    with pytest.raises(InvalidParameterError, match="variance"):
        GaussianUnits(-1.0)
    with pytest.raises(CorpusError, match="document 1"):
        BernoulliUnits().check_data(np.array([[0, 1], [2, 0]]), "here")
    with pytest.raises(CorpusError, match="unit 1 in document 0"):
        PoissonUnits().check_data(sp.csr_matrix(np.array([[0, -1.0]])), "here")
