"""Hamiltonian Monte Carlo transitions (numba): leapfrog, static HMC, multinomial NUTS, initial step size.

References: Neal (2011), "MCMC using Hamiltonian dynamics" (leapfrog eqs. 5.18-5.20, acceptance
eq. 3.6); Hoffman & Gelman (2014), "The No-U-Turn Sampler" (Algorithm 4: a reasonable first step
size); Betancourt (2017), "A Conceptual Introduction to HMC", appendix A (multinomial sampling of
the trajectory, biased progressive sampling between subtrees, the generalised U-turn criterion),
in the iterative form with momentum checkpoints of NumPyro's ``_iterative_build_subtree``.

Conventions: ``inv_mass`` is the diagonal of M^-1; momenta p ~ N(0, M); the Hamiltonian is
H(q, p) = -log pi(q) + p' M^-1 p / 2. ``vg(q, *data) -> (log pi(q), grad log pi(q))`` is the
user's jitted function. Positions, momenta and gradients live in preallocated workspace rows and
are updated in place; a transition writes its statistics into ``stats`` (layout in
:mod:`mcmc_common`). Nothing here raises: non-finite energies count as divergent / rejected.
The numpy twins are in :mod:`harmonium.inference.mcmc.hmc` and consume the same random numbers.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from harmonium._kernels.mcmc_common import (
    DIVERGENCE,
    copy_into,
    fill_stats,
    logaddexp,
    popcount,
    trailing_ones,
)

# NUTS workspace rows (ws has shape (NUTS_ROWS, d)).
QL, PL, GL, QR, PR, GR, QP, GP, QS, GS, RSUM, SRSUM, QN, PN, GN, P0 = range(16)
NUTS_ROWS = 16


@njit(cache=True, nogil=True)
def kinetic(p, inv_mass):
    s = 0.0
    for j in range(p.shape[0]):
        s += inv_mass[j] * p[j] * p[j]
    return 0.5 * s


@njit(cache=True, nogil=True)
def draw_momentum(rng, inv_mass, p):
    for j in range(p.shape[0]):
        p[j] = rng.standard_normal() / math.sqrt(inv_mass[j])


@njit(cache=True, nogil=True)
def leapfrog(vg, data, q, p, g, step_size, n_steps, inv_mass):
    """Advance (q, p, g) by ``n_steps`` leapfrog steps in place; return log pi at the end."""
    lp = np.nan
    half = 0.5 * step_size
    d = q.shape[0]
    for _ in range(n_steps):
        for j in range(d):
            p[j] += half * g[j]
            q[j] += step_size * inv_mass[j] * p[j]
        lp, gn = vg(q, *data)
        for j in range(d):
            g[j] = gn[j]
            p[j] += half * g[j]
    return lp


@njit(cache=True, nogil=True)
def energy_error(lp_new, p_new, inv_mass, h0):
    """(H_new - H0, H_new) with non-finite values mapped to +inf."""
    h = -lp_new + kinetic(p_new, inv_mass)
    if not math.isfinite(h):
        return np.inf, np.inf
    return h - h0, h


@njit(cache=True, nogil=True)
def hmc_step(rng, vg, data, q, lp, g, step_size, n_steps, inv_mass, ws, stats):
    """One static HMC transition; (q, g) updated in place when accepted; returns the new log pi."""
    q1, p1, g1 = ws[0], ws[1], ws[2]
    draw_momentum(rng, inv_mass, p1)
    h0 = -lp + kinetic(p1, inv_mass)
    copy_into(q1, q)
    copy_into(g1, g)
    lp1 = leapfrog(vg, data, q1, p1, g1, step_size, n_steps, inv_mass)
    delta, h1 = energy_error(lp1, p1, inv_mass, h0)
    accept_prob = 1.0 if delta <= 0.0 else math.exp(-delta)
    accepted = rng.random() < accept_prob
    if accepted:
        copy_into(q, q1)
        copy_into(g, g1)
        lp = lp1
    fill_stats(stats, accept_prob, accepted, delta > DIVERGENCE, h1 if accepted else h0, n_steps, np.nan, lp,
               step_size)
    return lp


@njit(cache=True, nogil=True)
def is_turning(p_a, p_b, r_sum, inv_mass):
    """Generalised U-turn of a (sub)trajectory with end momenta p_a, p_b and momentum sum r_sum."""
    dot_a = 0.0
    dot_b = 0.0
    for j in range(r_sum.shape[0]):
        r = r_sum[j] - 0.5 * (p_a[j] + p_b[j])
        dot_a += inv_mass[j] * p_a[j] * r
        dot_b += inv_mass[j] * p_b[j] * r
    return dot_a <= 0.0 or dot_b <= 0.0


@njit(cache=True, nogil=True)
def nuts_step(rng, vg, data, q, lp, g, step_size, max_depth, inv_mass, ws, ckpt_p, ckpt_r, stats):
    """One multinomial NUTS transition; (q, g) updated in place; returns the new log pi.

    Random numbers, in order: d normals (momentum); per doubling one uniform (direction), one
    uniform per new leaf (progressive sampling inside the subtree) and, when the subtree is kept,
    one uniform (biased progressive sampling between the old tree and the subtree).
    """
    d = q.shape[0]
    draw_momentum(rng, inv_mass, ws[P0])
    h0 = -lp + kinetic(ws[P0], inv_mass)
    for j in range(d):
        ws[QL, j] = q[j]
        ws[QR, j] = q[j]
        ws[QP, j] = q[j]
        ws[PL, j] = ws[P0, j]
        ws[PR, j] = ws[P0, j]
        ws[RSUM, j] = ws[P0, j]
        ws[GL, j] = g[j]
        ws[GR, j] = g[j]
        ws[GP, j] = g[j]
    lp_prop, energy_prop = lp, h0
    log_w = -h0
    depth, n_leapfrog, sum_accept = 0, 0, 0.0
    diverging = False
    moved = False
    while depth < max_depth:
        right = rng.random() < 0.5
        if right:
            eps = step_size
            copy_into(ws[QN], ws[QR])
            copy_into(ws[PN], ws[PR])
            copy_into(ws[GN], ws[GR])
        else:
            eps = -step_size
            copy_into(ws[QN], ws[QL])
            copy_into(ws[PN], ws[PL])
            copy_into(ws[GN], ws[GL])
        log_w_sub = -np.inf
        lp_sub, energy_sub = np.nan, np.nan
        ws[SRSUM, :] = 0.0
        stop = False
        for n in range(1 << depth):
            lp_n = leapfrog(vg, data, ws[QN], ws[PN], ws[GN], eps, 1, inv_mass)
            n_leapfrog += 1
            delta, h = energy_error(lp_n, ws[PN], inv_mass, h0)
            sum_accept += 1.0 if delta <= 0.0 else math.exp(-delta)
            log_w_new = logaddexp(log_w_sub, -h)
            if rng.random() < math.exp(-h - log_w_new):
                copy_into(ws[QS], ws[QN])
                copy_into(ws[GS], ws[GN])
                lp_sub, energy_sub = lp_n, h
            log_w_sub = log_w_new
            for j in range(d):
                ws[SRSUM, j] += ws[PN, j]
            if delta > DIVERGENCE:
                diverging = True
                stop = True
                break
            if n % 2 == 0:
                k = popcount(n >> 1)
                copy_into(ckpt_p[k], ws[PN])
                copy_into(ckpt_r[k], ws[SRSUM])
            else:
                k_max = popcount(n >> 1)
                k_min = k_max - trailing_ones(n) + 1
                for k in range(k_max, k_min - 1, -1):
                    if _subtree_turning(ckpt_p[k], ws[PN], ws[SRSUM], ckpt_r[k], inv_mass):
                        stop = True
                        break
                if stop:
                    break
        if stop:
            break
        if rng.random() < math.exp(min(0.0, log_w_sub - log_w)):
            copy_into(ws[QP], ws[QS])
            copy_into(ws[GP], ws[GS])
            lp_prop, energy_prop = lp_sub, energy_sub
            moved = True
        log_w = logaddexp(log_w, log_w_sub)
        for j in range(d):
            ws[RSUM, j] += ws[SRSUM, j]
        if right:
            copy_into(ws[QR], ws[QN])
            copy_into(ws[PR], ws[PN])
            copy_into(ws[GR], ws[GN])
        else:
            copy_into(ws[QL], ws[QN])
            copy_into(ws[PL], ws[PN])
            copy_into(ws[GL], ws[GN])
        depth += 1
        if is_turning(ws[PL], ws[PR], ws[RSUM], inv_mass):
            break
    copy_into(q, ws[QP])
    copy_into(g, ws[GP])
    fill_stats(stats, sum_accept / n_leapfrog if n_leapfrog > 0 else 0.0, moved, diverging, energy_prop, n_leapfrog,
               depth, lp_prop, step_size)
    return lp_prop


@njit(cache=True, nogil=True)
def _subtree_turning(p_first, p_last, srsum, ckpt_rsum, inv_mass):
    """U-turn of the leaves from a checkpoint to the current leaf.

    Their momentum sum is srsum - ckpt_rsum + p_first (the checkpoint stored the running sum
    including its own leaf), computed on the fly so no scratch row is needed.
    """
    dot_a = 0.0
    dot_b = 0.0
    for j in range(srsum.shape[0]):
        r = srsum[j] - ckpt_rsum[j] + p_first[j] - 0.5 * (p_first[j] + p_last[j])
        dot_a += inv_mass[j] * p_first[j] * r
        dot_b += inv_mass[j] * p_last[j] * r
    return dot_a <= 0.0 or dot_b <= 0.0


@njit(cache=True, nogil=True)
def find_step_size(rng, vg, data, q, lp, g, step_size, inv_mass, ws):
    """Hoffman & Gelman (2014) Algorithm 4: double or halve until the one-step acceptance crosses 1/2.

    Draws one momentum (d normals); at most 100 doublings or halvings. Uses workspace rows 0-2
    and P0 (``ws`` has :data:`NUTS_ROWS` rows).
    """
    q1, p1, g1, p0 = ws[0], ws[1], ws[2], ws[P0]
    draw_momentum(rng, inv_mass, p0)
    h0 = -lp + kinetic(p0, inv_mass)
    direction = 0
    for _ in range(100):
        copy_into(q1, q)
        copy_into(p1, p0)
        copy_into(g1, g)
        lp1 = leapfrog(vg, data, q1, p1, g1, step_size, 1, inv_mass)
        delta, _h = energy_error(lp1, p1, inv_mass, h0)
        log_ratio = -delta
        if direction == 0:
            direction = 1 if log_ratio > math.log(0.5) else -1
        if direction == 1 and not (log_ratio > math.log(0.5)):
            break
        if direction == -1 and not (log_ratio < math.log(0.5)):
            break
        step_size = step_size * 2.0 if direction == 1 else step_size * 0.5
    return step_size
