"""Warm-up (adaptation) and whole chains for the numpy kernels: the reference of the compiled chains.

Gradient kernels (HMC, NUTS, MALA, ULA) adapt as Stan does (Stan Reference Manual, "HMC
algorithm parameters"; Hoffman & Gelman 2014, section 3.2):

* the step size by dual averaging toward ``target_accept`` in every warm-up iteration, starting
  from Algorithm 4's heuristic (:func:`harmonium.inference.mcmc.hmc.find_step_size`);
* a diagonal inverse mass matrix, the regularised variance of the draws in each slow window
  (:func:`harmonium._kernels.mcmc_adapt.window_schedule`), after which the step size is
  re-initialised and dual averaging restarts;
* the last warm-up iteration fixes the step size to its dual average, so every kept draw comes
  from the same pi-invariant kernel.

:func:`run_gradient_chain` and :func:`run_rw_chain` mirror, statement for statement and random
number for random number, ``harmonium._kernels.mcmc_gradient.gradient_chain`` and
``harmonium._kernels.mcmc_rwmh.rw_chain``; the parity tests hold them to the same draws.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from harmonium._kernels import mcmc_adapt as adapt
from harmonium._kernels.mcmc_common import (
    ACCEPT,
    ACCEPTED,
    DEPTH,
    DIVERGENT,
    ENERGY,
    LOGDENSITY,
    N_STATS,
    N_STEPS,
    STEP,
)
from harmonium._kernels.mcmc_gradient import HMC, MALA, NUTS, ULA, hmc_n_steps
from harmonium._kernels.mcmc_rwmh import MWG, RWMH
from harmonium.inference.mcmc import gibbs, hmc, langevin, rwmh

KINDS = {"hmc": HMC, "nuts": NUTS, "mala": MALA, "ula": ULA}
RW_KINDS = {"rwmh": RWMH, "mwg": MWG}


def build_gradient_kernel(kind: int, vg: Callable, data: tuple, step_size: float, inverse_mass, n_steps: int = 10,
                          trajectory_length: float = 0.0, max_tree_depth: int = 10) -> Callable:
    """The numpy kernel of ``kind`` (HMC, NUTS, MALA, ULA) with the given tuning."""
    if kind == HMC:
        n = int(hmc_n_steps(step_size, n_steps, trajectory_length))
        return hmc.build_kernel(vg, step_size, n, inverse_mass, data)
    if kind == NUTS:
        return hmc.build_nuts_kernel(vg, step_size, inverse_mass, data, max_tree_depth)
    if kind == MALA:
        return langevin.build_mala_kernel(vg, step_size, inverse_mass, data)
    return langevin.build_ula_kernel(vg, step_size, inverse_mass, data)


def _stats_row(row, info, state, step_size):
    row[:] = np.nan
    row[ACCEPT] = info.acceptance_prob
    row[ACCEPTED] = float(info.is_accepted)
    row[DIVERGENT] = float(getattr(info, "is_divergent", False))
    row[ENERGY] = getattr(info, "energy", np.nan)
    row[N_STEPS] = getattr(info, "n_steps", 1)
    row[DEPTH] = getattr(info, "tree_depth", np.nan)
    row[LOGDENSITY] = state.logdensity
    row[STEP] = step_size


def run_gradient_chain(rng: np.random.Generator, kind: int, vg: Callable, data: tuple, x0, n_warmup: int,
                       n_draws: int, *, step_size: float = -1.0, n_steps: int = 10, trajectory_length: float = 0.0,
                       max_tree_depth: int = 10, target_accept: float = 0.8, adapt_step: bool = True,
                       adapt_mass: bool = True, inverse_mass=None):
    """Warm-up then ``n_draws`` kept draws; returns ``(draws, stats, step_size, inverse_mass)``.

    ``step_size <= 0`` asks for the heuristic start. ``draws`` is (n_draws, d), ``stats`` is
    (n_draws, N_STATS) in the layout of ``harmonium._kernels.mcmc_common.STAT_NAMES``.
    """
    state = hmc.init(x0, vg, data)
    d = state.position.shape[0]
    im = np.ones(d) if inverse_mass is None else np.array(inverse_mass, dtype=np.float64)
    in_window, window_end = adapt.window_schedule(n_warmup, adapt_mass)
    da = np.empty(adapt.DA_SIZE)
    mean, m2, count = np.zeros(d), np.zeros(d), np.zeros(1)
    draws = np.empty((n_draws, d))
    stats = np.empty((n_draws, N_STATS))
    row = np.empty(N_STATS)
    if not step_size > 0.0:
        step_size = hmc.find_step_size(rng, vg, state, 1.0, im, data)
    if adapt_step and n_warmup > 0:
        adapt.da_init(da, step_size)
    for t in range(n_warmup + n_draws):
        kernel = build_gradient_kernel(kind, vg, data, step_size, im, n_steps, trajectory_length, max_tree_depth)
        state, info = kernel(rng, state)
        if t >= n_warmup:
            row = stats[t - n_warmup]
        _stats_row(row, info, state, step_size)
        if t < n_warmup:
            if adapt_step:
                step_size = adapt.da_update(da, row[ACCEPT], target_accept)
            if in_window[t]:
                adapt.welford_update(mean, m2, count, state.position)
            if window_end[t]:
                adapt.welford_variance(m2, count, im)
                adapt.welford_reset(mean, m2, count)
                if adapt_step:
                    step_size = hmc.find_step_size(rng, vg, state, step_size, im, data)
                    adapt.da_init(da, step_size)
            if t == n_warmup - 1 and adapt_step:
                step_size = adapt.da_final(da)
        else:
            draws[t - n_warmup] = state.position
    return draws, stats, step_size, im


def run_rw_chain(rng: np.random.Generator, kind: int, logdensity: Callable, data: tuple, x0, n_warmup: int,
                 n_draws: int, *, scale: float, target_accept: float, adapt_scale: bool = True,
                 adapt_sd: bool = True, proposal_sd=None):
    """Random-walk chains (RWMH or componentwise MWG); returns ``(draws, stats, scale, proposal_sd)``.

    For MWG the returned ``proposal_sd`` holds the per-coordinate scales and ``scale`` is NaN.
    """
    x0 = np.array(x0, dtype=np.float64)
    d = x0.shape[0]
    draws = np.empty((n_draws, d))
    stats = np.empty((n_draws, N_STATS))
    sd = np.ones(d) if proposal_sd is None else np.array(proposal_sd, dtype=np.float64)
    if kind == RWMH:
        state = rwmh.init(x0, logdensity, data)
        state, scale, sd = rwmh.warmup(rng, logdensity, state, n_warmup, scale=scale, proposal_sd=sd,
                                       target_accept=target_accept, adapt_scale=adapt_scale, adapt_sd=adapt_sd,
                                       data=data)
        kernel = rwmh.build_kernel(logdensity, scale, sd, data)
    else:
        state = gibbs.init(x0, logdensity, data)
        state, sd = gibbs.mwg_warmup(rng, logdensity, state, n_warmup, scales=sd, target_accept=target_accept,
                                     adapt_scale=adapt_scale, data=data)
        kernel = gibbs.build_mwg_kernel(logdensity, sd, data)
        scale = np.nan
    for t in range(n_draws):
        before = state.position
        state, info = kernel(rng, state)
        row = stats[t]
        row[:] = np.nan
        if kind == RWMH:
            row[ACCEPT], row[ACCEPTED] = info.acceptance_prob, float(info.is_accepted)
            row[STEP] = scale
        else:
            row[ACCEPT] = float(np.mean(info.acceptance_prob))
            row[ACCEPTED] = float(np.mean(state.position != before))
        row[DIVERGENT], row[N_STEPS] = 0.0, 0.0
        row[LOGDENSITY] = state.logdensity
        draws[t] = state.position
    return draws, stats, scale, sd
