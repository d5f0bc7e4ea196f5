"""``to_inference_data`` of ``harmonium.sample``'s result and of a fitted BayesianEFH (ArviZ interop)."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from numba import njit

from harmonium.errors import InvalidParameterError
from harmonium.estimators.bayesian_efh import BayesianEFH
from harmonium.estimators.sampling import sample
from harmonium.inference.mcmc import cftp

az = pytest.importorskip("arviz")


@njit
def logp(x):
    return -0.5 * np.sum((x - 1.0) ** 2)


@njit
def grad(x):
    return -(x - 1.0)


def test_sampling_result_to_inference_data():
    fit = sample(logp, np.zeros((2, 3)), grad=grad, random_state=3, n_chains=2, n_warmup=100, n_draws=200)
    idata = fit.to_inference_data()
    x = idata.posterior["x"].values
    np.testing.assert_array_equal(x, fit.draws)
    assert x.shape == (2, 200, 2, 3)
    stats = idata.sample_stats
    assert {"lp", "acceptance_rate", "diverging", "energy", "n_steps", "tree_depth", "step_size"} <= set(stats)
    assert stats["diverging"].dtype == bool
    np.testing.assert_array_equal(stats["lp"].values, fit.stats["logdensity"])
    assert idata.posterior.attrs["kernel"] == "nuts" and idata.posterior.attrs["seed"] == 3
    # ArviZ's diagnostics on the InferenceData are the summary's
    np.testing.assert_allclose(az.rhat(idata, method="rank")["x"].values, fit.summary["r_hat"], rtol=1e-10)
    np.testing.assert_allclose(az.ess(idata, method="bulk")["x"].values, fit.summary["ess_bulk"], rtol=1e-10)


def test_named_parameters_and_kernel_without_energy():
    fit = sample(logp, np.zeros(2), kernel="rwmh", names=["a", "b"], random_state=0, n_chains=2, n_warmup=50,
                 n_draws=50)
    idata = fit.to_inference_data()
    assert set(idata.posterior.data_vars) == {"a", "b"}
    np.testing.assert_array_equal(idata.posterior["b"].values, fit.draws[..., 1])
    assert "energy" not in idata.sample_stats and "tree_depth" not in idata.sample_stats  # all NaN for RWMH
    fit.names = ["a"]
    with pytest.raises(InvalidParameterError, match="must hold 2 names"):
        fit.to_inference_data()


def test_without_arviz_a_clear_error(monkeypatch):
    fit = sample(logp, np.zeros(1), kernel="rwmh", random_state=0, n_chains=2, n_warmup=10, n_draws=20)
    monkeypatch.setitem(sys.modules, "arviz", None)
    with pytest.raises(ImportError, match=r"to_inference_data needs ArviZ.*pip install harmonium\[arviz\]"):
        fit.to_inference_data()


def test_bayesian_efh_to_inference_data(tmp_path):
    rng = np.random.default_rng(0)
    W = np.abs(rng.normal(0, 0.15, (12, 3)))
    X, _ = cftp.sample(rng, W, np.full(12, -1.5), 40)
    est = BayesianEFH(3, random_state=0, n_iter=2, n_warmup=10, n_samples=6, thin=1, n_chains=2,
                      step_size=0.02).fit(X)
    idata = est.to_inference_data()
    w = idata.posterior["W_words"]
    assert w.shape == (2, 6, 12, 3) and w.dims == ("chain", "draw", "words_visible", "hidden")
    # chain c's draws are rows c * n_samples ... of W_samples_
    np.testing.assert_array_equal(w.values[1, 2], est.W_samples_[0][6 + 2])
    assert idata.posterior.attrs["sampler"] == "langevin"
    with pytest.raises(Exception, match="fit"):
        BayesianEFH(3).to_inference_data()
