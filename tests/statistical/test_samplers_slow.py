"""Slow tier (``pytest -m slow``): Geweke's joint-distribution test for Gibbs, SBC for HMC and NUTS.

* Geweke (2004), "Getting it right", JASA 99: a Gibbs chain that alternates the posterior
  conditional p(theta | y) with the likelihood p(y | theta) leaves the *prior* joint p(theta, y)
  invariant, so its theta-moments must be the prior's. Model: theta ~ N(0, 1), y_i | theta ~
  N(theta, 1), i = 1..3. Checked: E theta = 0, E theta^2 = 1, E theta y_1 = 1 (|z| < 4.5).
  Negative control: the theta conditional with 1/precision as its sd fails.
* Talts et al. (2018), "Validating Bayesian inference algorithms with simulation-based
  calibration": theta ~ prior, y ~ p(y | theta), then the rank of theta among L posterior draws is
  uniform on 0..L for an exact sampler. Model: theta ~ N(0, I_2), y_i ~ N(theta, I), n = 5, sampled
  through the log density (compiled, with y as data). Chi-square on 10 rank bins, alpha = 1e-4
  per test. Negative control: ULA with a large step (biased) fails.
"""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit
from scipy import stats

from harmonium.inference.mcmc import gibbs
from harmonium.inference.mcmc.sample import sample
from harmonium.parallel.seeds import spawn

from ._mcmc_targets import Target, Z, moment_z

pytestmark = pytest.mark.slow
ALPHA = 1e-4
N_Y = 3


def _theta_given_y(sd_as_variance=False):
    def draw(rng, x):
        precision = 1.0 + N_Y
        sd = 1.0 / precision if sd_as_variance else 1.0 / np.sqrt(precision)
        return x[1:].sum() / precision + sd * rng.standard_normal()

    return draw


def _y_given_theta(rng, x):
    return x[0] + rng.standard_normal(N_Y)


PRIOR_JOINT = Target("geweke", 1 + N_Y, None, None, None, None,
                     [lambda v: v[..., 0], lambda v: v[..., 0] ** 2, lambda v: v[..., 0] * v[..., 1]],
                     [0.0, 1.0, 1.0], ["E theta", "E theta^2", "E theta y1"])


def _geweke_z(theta_conditional, seed=41, n_chains=4, n_iter=40000):
    kernel = gibbs.build_kernel([theta_conditional, _y_given_theta], blocks=[0, slice(1, 1 + N_Y)])
    rng = np.random.default_rng(seed)
    chains = spawn(rng, n_chains)
    draws = np.empty((n_chains, n_iter, 1 + N_Y))
    for c in range(n_chains):
        theta = rng.standard_normal()
        state = gibbs.init(np.concatenate([[theta], theta + rng.standard_normal(N_Y)]))
        for t in range(n_iter):
            state, _ = kernel(chains[c], state)
            draws[c, t] = state.position
    return np.abs(moment_z(draws, PRIOR_JOINT)).max()


def test_geweke_gibbs_leaves_the_prior_joint_invariant():
    assert _geweke_z(_theta_given_y()) < Z


def test_negative_control_geweke_conditional_with_variance_for_sd_fails():
    # theta' = 3/4 theta + noise of variance 1/4 (y) + 1/16: stationary E theta^2 = 4/7, not 1
    assert _geweke_z(_theta_given_y(sd_as_variance=True)) > Z


# -- simulation-based calibration -------------------------------------------------------------------------
N_OBS = 5


@njit
def sbc_lp(x, y):
    s = -0.5 * np.sum(x * x)
    for i in range(y.shape[0]):
        r = y[i] - x
        s -= 0.5 * np.sum(r * r)
    return s


@njit
def sbc_grad(x, y):
    g = -x.copy()
    for i in range(y.shape[0]):
        g += y[i] - x
    return g


def _sbc_pvalue(kernel, n_rep=400, n_draws=198, thin=2, seed=43, **kwargs):
    rng = np.random.default_rng(seed)
    ranks = []
    for _ in range(n_rep):
        theta = rng.standard_normal(2)
        y = theta + rng.standard_normal((N_OBS, 2))
        res = sample(rng, sbc_lp, theta, grad=sbc_grad, data=(y,), kernel=kernel, n_chains=1, n_warmup=200,
                     n_draws=n_draws, **kwargs)
        post = res.draws[0, ::thin]
        ranks.append((post < theta).sum(axis=0))
    ranks = np.concatenate(ranks)  # both coordinates pooled, values in 0..L
    n_bins = 10
    hist = np.histogram(ranks, bins=n_bins, range=(0, n_draws // thin + 1))[0]
    return stats.chisquare(hist).pvalue


@pytest.mark.parametrize("kernel", ["nuts", "hmc"])
def test_sbc_ranks_are_uniform(kernel):
    assert _sbc_pvalue(kernel) > ALPHA


def test_negative_control_sbc_of_a_biased_sampler_fails():
    # ULA at step 0.6 against a posterior sd of 0.41: its stationary variance is 1.6 times too large
    assert _sbc_pvalue("ula", step_size=0.6, adapt_mass=False) < ALPHA
