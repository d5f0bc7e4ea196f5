"""Langevin transitions (numba): the unadjusted Langevin algorithm (ULA) and MALA.

Roberts & Tweedie (1996), "Exponential convergence of Langevin distributions and their discrete
approximations", eq. 2 (ULA) and section 1.4 (the Metropolis-adjusted version). With step size
eps and diagonal preconditioner ``inv_mass`` (M^-1), the proposal is

    x' = x + (eps^2 / 2) M^-1 grad log pi(x) + eps M^-1/2 xi,     xi ~ N(0, I),

i.e. one leapfrog step of HMC. ULA always moves (biased: its stationary law is not pi); MALA
accepts with min(1, pi(x') q(x | x') / (pi(x) q(x' | x))). Random numbers: d normals, then (MALA)
one uniform. Numpy twins: :mod:`harmonium.inference.mcmc.langevin`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from harmonium._kernels.mcmc_common import (
    copy_into,
    fill_stats,
)


@njit(cache=True, nogil=True)
def langevin_propose(rng, q, g, step_size, inv_mass, out):
    half_sq = 0.5 * step_size * step_size
    for j in range(q.shape[0]):
        out[j] = q[j] + half_sq * inv_mass[j] * g[j] + step_size * math.sqrt(inv_mass[j]) * rng.standard_normal()


@njit(cache=True, nogil=True)
def proposal_logdensity(x_to, x_from, g_from, step_size, inv_mass):
    """log q(x_to | x_from) up to the constant shared by both directions."""
    half_sq = 0.5 * step_size * step_size
    s = 0.0
    for j in range(x_to.shape[0]):
        r = x_to[j] - x_from[j] - half_sq * inv_mass[j] * g_from[j]
        s += r * r / inv_mass[j]
    return -s / (2.0 * step_size * step_size)


@njit(cache=True, nogil=True)
def mala_step(rng, vg, data, q, lp, g, step_size, inv_mass, ws, stats):
    """One MALA transition; (q, g) updated in place when accepted; returns the new log pi."""
    q1 = ws[0]
    langevin_propose(rng, q, g, step_size, inv_mass, q1)
    lp1, g1 = vg(q1, *data)
    log_ratio = (lp1 - lp + proposal_logdensity(q, q1, g1, step_size, inv_mass)
                 - proposal_logdensity(q1, q, g, step_size, inv_mass))
    if not math.isfinite(log_ratio):
        log_ratio = -np.inf
    accept_prob = 1.0 if log_ratio >= 0.0 else math.exp(log_ratio)
    accepted = rng.random() < accept_prob
    if accepted:
        copy_into(q, q1)
        copy_into(g, g1)
        lp = lp1
    fill_stats(stats, accept_prob, accepted, False, np.nan, 1.0, np.nan, lp, step_size)
    return lp


@njit(cache=True, nogil=True)
def ula_step(rng, vg, data, q, lp, g, step_size, inv_mass, ws, stats):
    """One ULA step (always moves); (q, g) updated in place; returns the new log pi."""
    q1 = ws[0]
    langevin_propose(rng, q, g, step_size, inv_mass, q1)
    lp1, g1 = vg(q1, *data)
    copy_into(q, q1)
    copy_into(g, g1)
    fill_stats(stats, 1.0, True, False, np.nan, 1.0, np.nan, lp1, step_size)
    return lp1
