"""``harmonium.estimators.sampling.sample``: draws, stats and their summary in one call."""

from __future__ import annotations

import numpy as np
from numba import njit

from harmonium.estimators.sampling import SamplingResult, sample


@njit
def logp(x):
    return -0.5 * np.sum((x - 1.0) ** 2)


@njit
def grad(x):
    return -(x - 1.0)


def test_sample_returns_draws_stats_and_summary():
    fit = sample(logp, np.zeros(3), grad=grad, random_state=0, n_chains=2, n_warmup=200, n_draws=300,
                 names=["a", "b", "c"])
    assert isinstance(fit, SamplingResult)
    assert fit.draws.shape == (2, 300, 3)
    assert fit.stats["acceptance_prob"].shape == (2, 300)
    assert fit.summary["name"] == ["a", "b", "c"]
    np.testing.assert_allclose(fit.summary["mean"], 1.0, atol=0.3)
    assert np.all(fit.summary["r_hat"] < 1.05) and np.all(fit.summary["ess_bulk"] > 50)
    assert fit.seed_ == 0 and fit.n_divergent == 0
    text = str(fit)
    assert text.startswith("nuts (compiled): 2 chains x 300 draws after 200 warm-up") and "r_hat" in text
    again = sample(logp, np.zeros(3), grad=grad, random_state=0, n_chains=2, n_warmup=200, n_draws=300)
    np.testing.assert_array_equal(fit.draws, again.draws)


def test_random_state_none_records_a_seed():
    fit = sample(logp, np.zeros(1), kernel="rwmh", random_state=None, n_chains=2, n_warmup=10, n_draws=20)
    assert isinstance(fit.seed_, int)
    rerun = sample(logp, np.zeros(1), kernel="rwmh", random_state=fit.seed_, n_chains=2, n_warmup=10, n_draws=20)
    np.testing.assert_array_equal(fit.draws, rerun.draws)
