"""One compiled chain of a gradient-based sampler, warm-up included (numba).

``gradient_chain`` runs ``n_warmup`` adaptive iterations then ``n_draws`` kept ones of HMC, NUTS,
MALA or ULA on a user log density passed as a first-class function (see :mod:`mcmc_common`).
Warm-up follows Stan: dual averaging of the step size toward ``target_accept`` (Hoffman & Gelman
2014, Algorithm 5) in every iteration, and a diagonal inverse mass matrix estimated from the draws
of the slow windows given by ``in_window`` / ``window_end`` (built by
:func:`mcmc_adapt.window_schedule`); at the end of each window the step size is re-initialised
(Algorithm 4) and dual averaging restarts. The last warm-up iteration fixes the step size to the
dual-averaged one, so the kept draws come from one fixed, pi-invariant kernel.

The Python reference of the same loop, with the same arguments, is
:func:`harmonium.inference.mcmc.warmup.gradient_chain`; a row of the registry
``harmonium.inference.mcmc.sample.KERNELS`` names both.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, types

from harmonium._kernels import mcmc_adapt as adapt
from harmonium._kernels.mcmc_common import (
    ACCEPT,
    N_STATS,
    LazyKernel,
    chain_signature,
    copy_into,
    value_and_grad_signature,
)
from harmonium._kernels.mcmc_hmc import NUTS_ROWS, find_step_size, hmc_step, nuts_step
from harmonium._kernels.mcmc_langevin import mala_step, ula_step

HMC, NUTS, MALA, ULA = 0, 1, 2, 3
MAX_STEPS = 1024


@njit(cache=True, nogil=True)
def hmc_n_steps(step_size, n_steps, trajectory_length):
    """Leapfrog steps of one HMC transition: ``n_steps``, or floor(L / eps) clipped to [1, MAX_STEPS]."""
    if trajectory_length > 0.0:
        n = trajectory_length / step_size
        if not (n >= 1.0):
            return 1
        if n > MAX_STEPS:
            return MAX_STEPS
        return int(n)
    return n_steps


def _gradient_chain(rng, vg, data, x0, kind, n_warmup, n_draws, step_size, n_steps, trajectory_length,
                    max_depth, target_accept, adapt_step, in_window, window_end, inv_mass, draws, stats,
                    out_step):
    d = x0.shape[0]
    q = x0.copy()
    lp, g0 = vg(q, *data)
    g = g0.copy()
    ws = np.empty((NUTS_ROWS, d))
    ckpt_p = np.empty((max(max_depth, 1), d))
    ckpt_r = np.empty((max(max_depth, 1), d))
    row = np.empty(N_STATS)
    da = np.empty(adapt.DA_SIZE)
    mean = np.zeros(d)
    m2 = np.zeros(d)
    count = np.zeros(1)
    if not (step_size > 0.0):
        step_size = find_step_size(rng, vg, data, q, lp, g, 1.0, inv_mass, ws)
    if adapt_step and n_warmup > 0:
        adapt.da_init(da, step_size)
    for t in range(n_warmup + n_draws):
        if t >= n_warmup:
            row = stats[t - n_warmup]
        if kind == HMC:
            n = hmc_n_steps(step_size, n_steps, trajectory_length)
            lp = hmc_step(rng, vg, data, q, lp, g, step_size, n, inv_mass, ws, row)
        elif kind == NUTS:
            lp = nuts_step(rng, vg, data, q, lp, g, step_size, max_depth, inv_mass, ws, ckpt_p, ckpt_r, row)
        elif kind == MALA:
            lp = mala_step(rng, vg, data, q, lp, g, step_size, inv_mass, ws, row)
        else:
            lp = ula_step(rng, vg, data, q, lp, g, step_size, inv_mass, ws, row)
        if t < n_warmup:
            if adapt_step:
                step_size = adapt.da_update(da, row[ACCEPT], target_accept)
            if in_window[t]:
                adapt.welford_update(mean, m2, count, q)
            if window_end[t]:
                adapt.welford_variance(m2, count, inv_mass)
                adapt.welford_reset(mean, m2, count)
                if adapt_step:
                    step_size = find_step_size(rng, vg, data, q, lp, g, step_size, inv_mass, ws)
                    adapt.da_init(da, step_size)
            if t == n_warmup - 1 and adapt_step:
                step_size = adapt.da_final(da)
        else:
            copy_into(draws[t - n_warmup], q)
    out_step[0] = step_size
    return 0 if math.isfinite(lp) else 1


def _signature(dtypes):
    f8, i8, b1 = types.float64, types.int64, types.boolean
    return chain_signature(value_and_grad_signature(dtypes), dtypes, (f8, i8, f8, i8, f8, b1))


gradient_chain = LazyKernel(_gradient_chain, _signature)
