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

:func:`gradient_chain` and :func:`rw_chain` mirror, statement for statement and random number for
random number, ``harmonium._kernels.mcmc_gradient.gradient_chain`` and
``harmonium._kernels.mcmc_rwmh.rw_chain``, and take the same arguments: a row of the kernel
registry (``harmonium.inference.mcmc.sample.KERNELS``) names both, the runner calls either, and the
parity tests hold them to the same draws. :func:`gibbs_chain` has the same arguments and no
compiled twin (its conditionals are Python callables).
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
from harmonium._kernels.mcmc_gradient import HMC, MALA, NUTS, hmc_n_steps
from harmonium._kernels.mcmc_rwmh import RWMH
from harmonium.inference.mcmc import gibbs, hmc, langevin, rwmh


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


def gradient_chain(rng: np.random.Generator, vg: Callable, data: tuple, x0, kind: int, n_warmup: int,
                   n_draws: int, step_size: float, n_steps: int, trajectory_length: float, max_tree_depth: int,
                   target_accept: float, adapt_step: bool, in_window, window_end, inverse_mass, draws, stats,
                   out_step) -> int:
    """Warm-up then ``n_draws`` kept draws, with the arguments of ``mcmc_gradient.gradient_chain``.

    ``step_size <= 0`` asks for the heuristic start; ``in_window`` / ``window_end`` are the slow
    windows of :func:`harmonium._kernels.mcmc_adapt.window_schedule`. Writes the draws (n_draws, d),
    the statistics (n_draws, N_STATS, layout ``mcmc_common.STAT_NAMES``), the adapted inverse mass
    (into ``inverse_mass``) and the final step size (``out_step[0]``); returns 0, or 1 when the last
    log density is not finite.
    """
    state = hmc.init(np.reshape(x0, -1), vg, data)
    im = inverse_mass
    d = state.position.shape[0]
    da = np.empty(adapt.DA_SIZE)
    mean, m2, count = np.zeros(d), np.zeros(d), np.zeros(1)
    row = np.empty(N_STATS)
    if not step_size > 0.0:
        step_size = hmc.find_step_size(rng, vg, state, 1.0, im, data)
    if adapt_step and n_warmup > 0:
        adapt.da_init(da, step_size)
    for t in range(n_warmup + n_draws):
        kernel = build_gradient_kernel(kind, vg, data, step_size, im, n_steps, trajectory_length,
                                       max_tree_depth)
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
    out_step[0] = step_size
    return 0 if np.isfinite(state.logdensity) else 1


def rw_chain(rng: np.random.Generator, logdensity: Callable, data: tuple, x0, kind: int, n_warmup: int,
             n_draws: int, scale: float, target_accept: float, adapt_scale: bool, in_window, window_end, sd, draws,
             stats, out_scale) -> int:
    """Random-walk chains (RWMH or componentwise MWG) with the arguments of ``mcmc_rwmh.rw_chain``.

    ``sd`` holds RWMH's proposal sd or MWG's per-coordinate scales and receives the adapted ones;
    ``out_scale[0]`` receives RWMH's adapted scale (NaN for MWG). RWMH's slow windows are
    ``in_window`` / ``window_end``; MWG has none.
    """
    x0 = np.array(x0, dtype=np.float64).reshape(-1)
    if kind == RWMH:
        state = rwmh.init(x0, logdensity, data)
        state, scale, adapted = rwmh.warmup(rng, logdensity, state, n_warmup, scale=scale, proposal_sd=sd,
                                            target_accept=target_accept, adapt_scale=adapt_scale,
                                            windows=(in_window, window_end), data=data)
        sd[:] = adapted
        kernel = rwmh.build_kernel(logdensity, scale, adapted, data)
    else:
        state = gibbs.init(x0, logdensity, data)
        state, adapted = gibbs.mwg_warmup(rng, logdensity, state, n_warmup, scales=sd, target_accept=target_accept,
                                          adapt_scale=adapt_scale, data=data)
        sd[:] = adapted
        kernel = gibbs.build_mwg_kernel(logdensity, adapted, data)
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
    out_scale[0] = scale
    return 0 if np.isfinite(state.logdensity) else 1


def gibbs_chain(rng: np.random.Generator, logdensity: Callable | None, data: tuple, x0, kind, n_warmup: int,
                n_draws: int, sweep: Callable, in_window, window_end, inverse_mass, draws, stats, out_step) -> int:
    """Gibbs sweeps (``sweep``, a :func:`harmonium.inference.mcmc.gibbs.build_kernel`) in the chains' convention.

    ``x0`` keeps its shape and dtype (blocks index into it); each kept draw is written flattened.
    Nothing is adapted: ``in_window``, ``window_end``, ``inverse_mass`` are unused and ``out_step[0]``
    is NaN. Statistics: the mean acceptance probability of the sweep's updates and the log density
    (NaN without ``logdensity``).
    """
    state = gibbs.init(x0, logdensity, data)
    for t in range(n_warmup + n_draws):
        state, info = sweep(rng, state)
        if t >= n_warmup:
            row = stats[t - n_warmup]
            row[:] = np.nan
            row[ACCEPT] = float(np.mean(info.acceptance_prob))
            row[LOGDENSITY] = state.logdensity
            draws[t - n_warmup] = state.position.reshape(-1)
    out_step[0] = np.nan
    return 0
