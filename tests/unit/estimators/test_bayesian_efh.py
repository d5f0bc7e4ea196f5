"""BayesianEFH (seed 000): fit / transform / predictive density / files, its variants, and its errors."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from harmonium.errors import InvalidParameterError
from harmonium.estimators._base import load
from harmonium.estimators.bayesian_efh import BayesianEFH
from harmonium.inference.mcmc import cftp

FAST = dict(n_iter=3, n_warmup=20, n_samples=10, thin=1, n_chains=2, step_size=0.02)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    W = np.abs(rng.normal(0, 0.15, (20, 3)))
    X, _ = cftp.sample(rng, W, np.full(20, -1.5), 80)
    return X, rng.normal(size=(80, 4))


def test_fit_transform_predictive_save_load(data, tmp_path):
    X, _ = data
    est = BayesianEFH(3, random_state=0, **FAST).fit(X)
    assert est.W_samples_[0].shape == (20, 20, 3)
    assert np.isfinite(est.diagnostics_["max_rhat"])
    # eq. 22: the predictive mean is the average of W_k^T x over the draws
    Z = est.transform(X[:5])
    np.testing.assert_allclose(Z, np.mean([X[:5] @ W for W in est.W_samples_[0]], axis=0), rtol=1e-10)
    # eq. 21: p(h | x, X) is the equal mixture of N(W_k^T x, I)
    h = Z + 0.3
    ref = np.log(np.mean([np.exp(norm.logpdf(h, X[:5] @ W, 1.0).sum(axis=1)) for W in est.W_samples_[0]], axis=0))
    np.testing.assert_allclose(est.log_prob_hidden(X[:5], h), ref, rtol=1e-10)
    path = tmp_path / "befh.hmn"
    est.save(path)
    back = load(path)
    np.testing.assert_array_equal(back.transform(X[:5]), Z)
    np.testing.assert_array_equal(back.W_samples_[0], est.W_samples_[0])


def test_same_seed_same_draws(data):
    X, _ = data
    a = BayesianEFH(3, random_state=4, **FAST).fit(X)
    b = BayesianEFH(3, random_state=4, **FAST).fit(X)
    np.testing.assert_array_equal(a.W_samples_[0], b.W_samples_[0])


@pytest.mark.parametrize("kw", [dict(sampler="mala", n_is_gibbs=2), dict(sampler="sgld", posterior_batch_size=20),
                                dict(empirical_bayes=True, n_em_iter=2), dict(empirical_bayes="scale", n_em_iter=2),
                                dict(chain_init="prior"),
                                dict(prior_covariance=0.01 * np.eye(20) + 0.002)])
def test_variants_run(data, kw):
    X, _ = data
    est = BayesianEFH(3, random_state=1, **{**FAST, **kw}).fit(X)
    assert np.isfinite(est.W_samples_[0]).all()
    if kw.get("sampler") == "mala":
        assert 0.0 < np.mean(est.diagnostics_["acceptance"]) <= 1.0
    if kw.get("empirical_bayes"):
        assert len(est.em_history_) == 2 and est.prior_scales_[0].shape == (20,)
    if kw.get("empirical_bayes") == "scale":
        assert np.all(est.prior_means_[0] == 0.0) and not np.allclose(est.prior_scales_[0], 0.1)


def test_bayesian_dual_wing(data):
    X, F = data
    est = BayesianEFH(3, wings=[("words", "bernoulli"), ("features", "gaussian")], prior_scale=[0.1, 0.05],
                      random_state=0, **{**FAST, "step_size": 0.01}).fit(X, features=F)
    assert [W.shape for W in est.W_samples_] == [(20, 20, 3), (20, 4, 3)]
    assert np.allclose(est.prior_scales_[1], 0.05)
    assert est.transform(X[:4], features=F[:4]).shape == (4, 3)


def test_clear_errors(data):
    X, _ = data
    with pytest.raises(InvalidParameterError, match="'empirical_bayes' parameter of BayesianEFH"):
        BayesianEFH(3, empirical_bayes="mean").fit(X)
    with pytest.raises(InvalidParameterError, match="'sampler' parameter of BayesianEFH"):
        BayesianEFH(3, sampler="hmc").fit(X)
    with pytest.raises(InvalidParameterError, match="step_size=0.5 must be below 2 x the smallest prior scale"):
        BayesianEFH(3, random_state=0, **{**FAST, "step_size": 0.5}).fit(X)
    with pytest.raises(InvalidParameterError, match="prior_scale"):
        BayesianEFH(3, prior_scale=[0.1, 0.2], random_state=0, **FAST).fit(X)
    with pytest.raises(InvalidParameterError, match="no partial_fit"):
        BayesianEFH(3).partial_fit(X)
