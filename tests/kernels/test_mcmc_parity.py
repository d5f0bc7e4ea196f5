"""Parity of the compiled MCMC chains with their numpy twins in ``harmonium.inference.mcmc``.

Both consume the same random numbers from equal seeds, so with fixed tuning the chains agree to
rounding (the only differences are summation orders). With adaptive warm-up the step size feeds
back on the draws and rounding differences grow (about x1.2 an iteration, through the step-size
heuristic's thresholds and dual averaging), so warm-up parity is checked over short warm-ups
only. Also: the adaptation arithmetic against direct formulas, and Stan's window schedule.
This file also runs under NUMBA_DISABLE_JIT=1 (``make test`` does so for tests/kernels).
"""

from __future__ import annotations

import numba
import numpy as np
import pytest
from numba import njit

from harmonium._kernels import mcmc_adapt, mcmc_sgld
from harmonium._kernels.mcmc_common import N_STATS, STAT_NAMES
from harmonium.inference.mcmc import sgld
from harmonium.inference.mcmc.sample import KERNELS

PREC = np.array([[2.0, 0.6, 0.0], [0.6, 1.0, 0.3], [0.0, 0.3, 0.5]])


@njit
def vg_jit(x, prec, shift):
    r = x - shift
    g = -(prec @ r)
    return 0.5 * (r @ g) - 0.1 * np.sum(r ** 4) / 4.0, g - 0.1 * r ** 3


def vg_np(x, prec, shift):
    r = x - shift
    g = -(prec @ r)
    return 0.5 * float(r @ g) - 0.1 * float(np.sum(r ** 4)) / 4.0, g - 0.1 * r ** 3


@njit
def lp_jit(x, prec, shift):
    return vg_jit(x, prec, shift)[0]


def lp_np(x, prec, shift):
    return vg_np(x, prec, shift)[0]


DATA = (PREC, np.array([0.5, -1.0, 2.0]))
X0 = np.array([0.3, -0.2, 1.0])


# every registry row with a compiled chain: its numpy chain must draw the same chain
TWINS = {k: s for k, s in KERNELS.items() if s.compiled_chain is not None}
GRADIENT = [k for k, s in TWINS.items() if s.family == "gradient"]
RANDOM_WALK = [k for k, s in TWINS.items() if s.family == "random_walk"]


def _both_chains(kernel, n_warmup, n_draws, tuning, adapt_mass, seed):
    """Run the row's compiled chain and its numpy chain on the same arguments; return both outputs."""
    spec = KERNELS[kernel]
    fns = (vg_jit, vg_np) if spec.needs_gradient else (lp_jit, lp_np)
    chains = (spec.compiled_chain.get(tuple(numba.typeof(a) for a in DATA)), spec.numpy_chain)
    in_w, end_w = mcmc_adapt.window_schedule(n_warmup, adapt_mass)
    outs = []
    for chain, fn in zip(chains, fns, strict=True):
        draws, stats = np.empty((n_draws, 3)), np.empty((n_draws, N_STATS))
        mass, out = np.ones(3), np.empty(1)
        chain(np.random.default_rng(seed), fn, DATA, X0.copy(), spec.kind, n_warmup, n_draws, *tuning, in_w, end_w,
              mass, draws, stats, out)
        outs.append((draws, stats, out[0], mass))
    return outs


def _gradient_tuning(step, adapt_step, n_steps=5, max_depth=6):
    return (step, n_steps, 0.0, max_depth, 0.8, adapt_step)


def _close_stats(a, b, rtol):
    for k, name in enumerate(STAT_NAMES):
        np.testing.assert_allclose(a[:, k], b[:, k], rtol=rtol, atol=1e-12, equal_nan=True, err_msg=name)


def test_every_compiled_chain_has_a_numpy_twin_in_the_parity_tests():
    assert set(GRADIENT) | set(RANDOM_WALK) == set(TWINS)
    assert all(s.numpy_chain is not None for s in TWINS.values())


@pytest.mark.parametrize("kernel", GRADIENT)
def test_gradient_chain_matches_numpy_with_fixed_tuning(kernel):
    (d1, s1, e1, _), (d2, s2, e2, _) = _both_chains(kernel, 0, 60, _gradient_tuning(0.4, False), False, 1)
    np.testing.assert_allclose(d1, d2, rtol=1e-9, atol=1e-12)
    _close_stats(s1, s2, 1e-9)
    assert e1 == e2 == 0.4
    assert len(np.unique(d1[:, 0])) > 10  # the chain moved


@pytest.mark.filterwarnings("ignore:overflow encountered")  # the step-size heuristic's longest trials overflow
@pytest.mark.parametrize("kernel", [k for k in GRADIENT if KERNELS[k].adapt_step])
def test_gradient_chain_matches_numpy_through_a_short_warmup(kernel):
    (d1, s1, e1, im1), (d2, s2, e2, im2) = _both_chains(kernel, 40, 20, _gradient_tuning(-1.0, True), True, 2)
    np.testing.assert_allclose(d1, d2, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(e1, e2, rtol=1e-6)
    np.testing.assert_allclose(im1, im2, rtol=1e-6)
    assert not np.allclose(im1, 1.0)  # the mass matrix was adapted


@pytest.mark.parametrize("kernel", RANDOM_WALK)
def test_random_walk_chain_matches_numpy_through_warmup(kernel):
    (d1, s1, e1, sd1), (d2, s2, e2, sd2) = _both_chains(kernel, 120, 80, (1.3, 0.3, True), True, 3)
    np.testing.assert_allclose(d1, d2, rtol=1e-9, atol=1e-12)
    _close_stats(s1, s2, 1e-9)
    np.testing.assert_allclose(sd1, sd2, rtol=1e-9)
    assert not np.allclose(sd1, 1.0)  # the proposal sd (RWMH) or the scales (MWG) were adapted
    np.testing.assert_allclose(e1, e2, rtol=1e-9, equal_nan=True)


@njit
def gp_jit(theta):
    return -theta / 4.0


@njit
def gd_jit(theta, x):
    return x[:2] * (x[2] - theta @ x[:2])


def test_sgld_chain_matches_numpy():
    """sample_sgld's two chains (compiled and numpy) take the same arguments and draw the same chain."""
    rng = np.random.default_rng(4)
    x = rng.normal(size=(23, 3))
    n_iter, batch = 40, 7
    outs = []
    for chain, fns in ((mcmc_sgld.sgld_chain.get(()), (gp_jit, gd_jit)),
                       (sgld.chain, (lambda t: -t / 4.0, lambda t, xi: xi[:2] * (xi[2] - t @ xi[:2])))):
        draws, steps = np.empty((n_iter, 2)), np.empty(n_iter)
        chain(np.random.default_rng(5), *fns, x, np.array([0.1, -0.1]), n_iter, batch, 0.05, 2.0, 0.6, 3, 1.0,
              draws, steps)
        outs.append((draws, steps))
    np.testing.assert_allclose(outs[0][0], outs[1][0], rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(outs[0][1], outs[1][1], rtol=1e-14)
    np.testing.assert_allclose(outs[1][1], 0.05 * (2.0 + 3 + np.arange(n_iter)) ** -0.6, rtol=1e-14)  # t0 = 3
    assert len(np.unique(outs[0][0][:, 0])) == n_iter  # the chain moved


# -- adaptation arithmetic --------------------------------------------------------------------------------
def test_dual_averaging_matches_hoffman_gelman_formulas():
    da = np.empty(mcmc_adapt.DA_SIZE)
    mcmc_adapt.da_init(da, 0.5)
    mu, h_bar, log_bar = np.log(5.0), 0.0, 0.0
    for t, a in enumerate([0.9, 0.2, 1.0, 0.5, np.nan, 0.7], start=1):
        eps = mcmc_adapt.da_update(da, a, 0.65)
        a = 0.0 if np.isnan(a) else a
        h_bar = (1 - 1 / (t + 10)) * h_bar + (0.65 - a) / (t + 10)
        log_eps = mu - np.sqrt(t) / 0.05 * h_bar
        log_bar = t ** -0.75 * log_eps + (1 - t ** -0.75) * log_bar
        assert eps == pytest.approx(np.exp(log_eps), rel=1e-12)
    assert mcmc_adapt.da_final(da) == pytest.approx(np.exp(log_bar), rel=1e-12)


def test_welford_matches_numpy_variance():
    x = np.random.default_rng(6).normal(size=(50, 4)) * [1.0, 2.0, 0.1, 5.0]
    mean, m2, count, out = np.zeros(4), np.zeros(4), np.zeros(1), np.empty(4)
    for row in x:
        mcmc_adapt.welford_update(mean, m2, count, row)
    mcmc_adapt.welford_variance(m2, count, out)
    np.testing.assert_allclose(mean, x.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(out, 50 / 55 * x.var(axis=0, ddof=1) + 1e-3 * 5 / 55, rtol=1e-12)


def test_robbins_monro_step():
    assert mcmc_adapt.rm_update(0.0, 0.5, 0.234, 4.0) == pytest.approx(4.0 ** -0.6 * (0.5 - 0.234))
    assert mcmc_adapt.rm_update(0.0, np.nan, 0.234, 1.0) == pytest.approx(-0.234)


def test_window_schedule_is_stans():
    in_w, end_w = mcmc_adapt.window_schedule(1000, True)
    ends = np.flatnonzero(end_w) + 1
    np.testing.assert_array_equal(ends, [100, 150, 250, 450, 950])  # 75 | 25 50 100 200 500 | 50
    assert in_w[:75].sum() == 0 and in_w[75:950].all() and in_w[950:].sum() == 0
    in_w, end_w = mcmc_adapt.window_schedule(100, True)  # 15% / 75% / 10%
    np.testing.assert_array_equal(np.flatnonzero(end_w) + 1, [90])
    assert in_w.sum() == 75
    assert mcmc_adapt.window_schedule(1000, False)[1].sum() == 0
