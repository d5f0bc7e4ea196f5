"""Monotone coupling from the past for attractive binary pairwise models (numba).

Propp & Wilson (1996); for GB-EFH with V = W W^T >= 0 (seed 000 §5.1, eq. 28) the visible marginal
p(x) ~ exp(b^T x + sum_{i<k} V_ik x_i x_k), b = theta + diag(V) / 2, is attractive, so the single-site
heat-bath update x_i <- [u < sigmoid(b_i + sum_{k != i} V_ik x_k)] is monotone in x: chains started at
the top (all ones) and bottom (all zeros) states sandwich every other chain driven by the same
uniforms. Fields are kept incrementally (``field`` = b + C x, C the zero-diagonal coupling).

Uniform order (the numpy twin in tests/kernels/test_cftp_parity.py draws the same): ``u[k]`` is
the sweep at time -(k + 1); rows are drawn in increasing k when first needed (k = 0 .. T-1 for the
first horizon T, then T .. 2T-1 when the horizon doubles), units in index order within a row.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def init_field(coupling, bias, x, field):
    """field = bias + coupling @ x."""
    m = x.shape[0]
    for i in range(m):
        s = bias[i]
        for k in range(m):
            s += coupling[i, k] * x[k]
        field[i] = s


@njit(cache=True, nogil=True)
def heat_bath_sweep(coupling, bias, u_row, x, field):
    """One systematic-scan heat-bath sweep with the given uniforms; x and field updated in place."""
    m = x.shape[0]
    for i in range(m):
        new = 1.0 if u_row[i] * (1.0 + math.exp(-field[i])) < 1.0 else 0.0
        d = new - x[i]
        if d != 0.0:
            x[i] = new
            for k in range(m):
                field[k] += coupling[k, i] * d


@njit(cache=True, nogil=True)
def cftp_draw(rng, coupling, bias, u, t0, max_t, top, bot, ftop, fbot):
    """One exact draw (left in ``top``); returns (T, u): the horizon T used (-T if ``max_t`` was
    reached without coalescence) and the uniforms buffer, grown (rows copied) when T outgrew it.
    The uniforms of times already visited are kept, as coupling from the past requires."""
    m = top.shape[0]
    t = t0
    filled = 0
    while True:
        if t > u.shape[0]:
            bigger = np.empty((max(t, 2 * u.shape[0]), m))
            bigger[:filled] = u[:filled]
            u = bigger
        for k in range(filled, t):
            for i in range(m):
                u[k, i] = rng.random()
        filled = t
        for i in range(m):
            top[i] = 1.0
            bot[i] = 0.0
        init_field(coupling, bias, top, ftop)
        init_field(coupling, bias, bot, fbot)
        for k in range(t - 1, -1, -1):
            heat_bath_sweep(coupling, bias, u[k], top, ftop)
            heat_bath_sweep(coupling, bias, u[k], bot, fbot)
        same = True
        for i in range(m):
            if top[i] != bot[i]:
                same = False
                break
        if same:
            return t, u
        if 2 * t > max_t:
            return -t, u
        t *= 2


@njit(cache=True, nogil=True)
def cftp_many(rng, coupling, bias, u, t0, max_t, out, horizons, top, bot, ftop, fbot):
    """``out.shape[0]`` independent exact draws into ``out``; their horizons into ``horizons``.
    ``u`` is the initial uniforms buffer (rows = sweeps); it grows up to ``max_t`` rows as needed."""
    for s in range(out.shape[0]):
        horizons[s], u = cftp_draw(rng, coupling, bias, u, t0, max_t, top, bot, ftop, fbot)
        for i in range(top.shape[0]):
            out[s, i] = top[i]


@njit(cache=True, nogil=True)
def forward_many(rng, coupling, bias, n_sweeps, start, out, x, field, u_row):
    """Fixed-horizon forward sampling from the constant state ``start`` (biased; a negative control)."""
    m = x.shape[0]
    for s in range(out.shape[0]):
        for i in range(m):
            x[i] = start
        init_field(coupling, bias, x, field)
        for _ in range(n_sweeps):
            for i in range(m):
                u_row[i] = rng.random()
            heat_bath_sweep(coupling, bias, u_row, x, field)
        for i in range(m):
            out[s, i] = x[i]
