"""Negative controls of the continuous samplers, and SGLD against its exact stationary law.

Each sampler family is run twice through the same moment test (|z| < Z, ``_mcmc_targets``):
the numpy kernel as shipped passes, a deliberately broken one fails. Chains start from exact
draws of the target with fixed tuning, so any drift comes from the kernel. Broken kernels:

* HMC: the last momentum half-step with its sign flipped (no longer reversible); and the accept
  step without the kinetic energy (min(1, pi(q') / pi(q)));
* NUTS: leaves weighted by pi(q) instead of exp(-H);
* MALA: the proposal densities dropped from the acceptance ratio;
* Metropolis-Hastings: a multiplicative random walk x' = x e^(s xi) on a Gamma(3, 1) target
  without the Hastings factor x' / x;
* SGLD: injected noise with variance 2 eps instead of eps.

SGLD on the Gaussian-mean model (x_i ~ N(theta, 1), theta ~ N(0, 10^2), N = 100) is a linear
Gaussian AR(1) for any batch size, so its stationary mean and variance are known exactly,
including the mini-batch gradient noise:

    var = (eps + (eps / 2)^2 N^2 s^2 / n (N - n) / (N - 1)) / (1 - (1 - eps P / 2)^2),

with P the posterior precision and s^2 the (population) variance of the data.
"""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from harmonium.inference.mcmc import hmc, langevin, rwmh
from harmonium.inference.mcmc.sample import sample_sgld
from harmonium.parallel.seeds import spawn

from ._mcmc_targets import STD5, Target, Z, moment_z


def _vg(x):
    return -0.5 * float(x @ x), -x


def _run(build, init, target, n_chains=8, n_iter=2000, seed=3):
    rng = np.random.default_rng(seed)
    x0 = target.exact_draws(rng, n_chains)
    chains = spawn(rng, n_chains)
    out = np.empty((n_chains, n_iter, target.dim))
    for c in range(n_chains):
        kernel, state = build(), init(x0[c])
        for t in range(n_iter):
            state, _ = kernel(chains[c], state)
            out[c, t] = state.position
    return np.abs(moment_z(out, target)).max()


def _flipped_leapfrog(vg, data, q, p, g, eps, n_steps, inverse_mass):
    half = 0.5 * eps
    for _ in range(n_steps):
        p = p + half * g
        q = q + eps * inverse_mass * p
        _lp, g = vg(q, *data)
        p = p - half * g  # the bug
    return q, p, _lp, g


def _hmc_without_kinetic_energy(step_size, n_steps):
    def kernel(rng, state):
        q, lp, g = state
        p = rng.standard_normal(q.shape[0])
        q1, _p1, lp1, g1 = hmc.leapfrog(_vg, (), q, p, g, step_size, n_steps, np.ones(q.shape[0]))
        if rng.random() < min(1.0, np.exp(lp1 - lp)):  # the bug: H should include p' M^-1 p / 2
            return hmc.HMCState(q1, lp1, g1), None
        return state, None

    return kernel


def _init(x):
    return hmc.init(x, _vg)


CONTROLS = {
    # name: (shipped kernel, broken kernel, iterations)
    "hmc-flipped-half-step": (lambda: hmc.build_kernel(_vg, 1.0, 2),
                              lambda: hmc.build_kernel(_vg, 1.0, 2, integrator=_flipped_leapfrog), 2000),
    "hmc-no-kinetic-energy": (lambda: hmc.build_kernel(_vg, 0.5, 5), lambda: _hmc_without_kinetic_energy(0.5, 5), 1000),
    "nuts-weights-without-energy": (lambda: hmc.build_nuts_kernel(_vg, 0.5),
                                    lambda: hmc.build_nuts_kernel(_vg, 0.5, weight_energy=False), 300),
    "mala-no-proposal-correction": (lambda: langevin.build_mala_kernel(_vg, 1.2),
                                    lambda: langevin.build_mala_kernel(_vg, 1.2, correct=False), 1000),
}


@pytest.mark.parametrize("name", list(CONTROLS))
def test_shipped_kernel_passes_and_broken_kernel_fails(name):
    good, bad, n_iter = CONTROLS[name]
    assert _run(good, _init, STD5, n_iter=n_iter) < Z
    assert _run(bad, _init, STD5, n_iter=n_iter) > Z


# -- MH with an asymmetric proposal on Gamma(3, 1) -------------------------------------------------------
SHAPE_K = 3.0
GAMMA = Target("gamma3", 1, None, None, None, None,
               [lambda v: v[..., 0], lambda v: v[..., 0] ** 2], [SHAPE_K, SHAPE_K * (SHAPE_K + 1)],
               ["E x", "E x^2"], lambda rng, n: rng.gamma(SHAPE_K, size=(n, 1)))


def _gamma_logdensity(x):
    return float((SHAPE_K - 1) * np.log(x[0]) - x[0]) if x[0] > 0 else -np.inf


def _multiplicative_walk(rng, x):
    return x * np.exp(0.8 * rng.standard_normal(1))


def _log_q(x_to, x_from):  # log-normal proposal density in x_to (the 1/x_to Jacobian)
    return float(-np.log(x_to[0]) - (np.log(x_to[0] / x_from[0])) ** 2 / (2 * 0.8 ** 2))


def test_mh_with_asymmetric_proposal_needs_the_hastings_factor():
    def init(x):
        return rwmh.init(x, _gamma_logdensity)

    def good():
        return rwmh.build_mh_kernel(_gamma_logdensity, _multiplicative_walk, _log_q)

    def bad():
        return rwmh.build_mh_kernel(_gamma_logdensity, _multiplicative_walk, None)

    assert _run(good, init, GAMMA, n_iter=3000) < Z
    assert _run(bad, init, GAMMA, n_iter=3000) > Z


# -- SGLD ---------------------------------------------------------------------------------------------------
N_DATA = 100
DATA = np.random.default_rng(23).normal(1.5, 1.0, size=(N_DATA, 1))
PRIOR_VAR = 100.0
PRECISION = N_DATA + 1.0 / PRIOR_VAR
POST_MEAN = float(DATA.sum() / PRECISION)


@njit
def grad_log_prior(theta):
    return -theta / PRIOR_VAR


@njit
def grad_log_lik(theta, x):
    return x - theta


def sgld_moments(eps, batch):
    s2 = DATA.var()
    noise = eps + (eps / 2) ** 2 * N_DATA ** 2 * s2 / batch * (N_DATA - batch) / (N_DATA - 1)
    var = noise / (1 - (1 - eps * PRECISION / 2) ** 2)
    return Target("sgld", 1, None, None, None, None, [lambda v: v[..., 0], lambda v: (v[..., 0] - POST_MEAN) ** 2],
                  [POST_MEAN, var], ["E theta", "E (theta - mean)^2"])


@pytest.mark.parametrize(("batch", "noise_scale", "passes"), [(N_DATA, 1.0, True), (10, 1.0, True),
                                                              (N_DATA, np.sqrt(2.0), False)])
def test_sgld_has_its_exact_stationary_law(batch, noise_scale, passes):
    """Constant step eps P = 0.5 (gamma = 0); the wrong noise scale is the negative control."""
    eps = 0.5 / PRECISION
    res = sample_sgld(29, grad_log_prior, grad_log_lik, DATA, np.array([POST_MEAN]), n_iter=40000, batch_size=batch,
                      a=eps, gamma=0.0, n_chains=4, noise_scale=noise_scale)
    assert res.backend == "compiled"
    draws = res.draws[:, 1000:]
    z = np.abs(moment_z(draws, sgld_moments(eps, batch))).max()
    assert (z < Z) if passes else (z > Z)


def test_sgld_with_decaying_steps_approaches_the_posterior():
    """eps_t = a (b + t)^-0.55 from eps_0 P = 0.5: mean and variance near the posterior's.

    Not an exactness test (the bias vanishes only as eps_t -> 0): tolerances are 5 MCSE on the
    mean and 15% on the variance, which the constant-step bias at the final step size stays under.
    """
    a, b, gamma = 0.5 / PRECISION * 10 ** 0.55, 10.0, 0.55
    res = sample_sgld(31, grad_log_prior, grad_log_lik, DATA, np.array([POST_MEAN]), n_iter=60000, batch_size=10,
                      a=a, b=b, gamma=gamma, n_chains=4)
    draws = res.draws[:, 30000:, 0]
    assert res.step_size[-1] < res.step_size[0] / 50
    post = Target("post", 1, None, None, None, None, [lambda v: v[..., 0]], [POST_MEAN], ["E theta"])
    assert np.abs(moment_z(draws[:, :, None], post)).max() < Z
    assert abs(draws.var() * PRECISION - 1.0) < 0.15
