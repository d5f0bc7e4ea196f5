"""Message passing for fully connected CRFs with Gaussian kernels (numba).

Krähenbühl & Koltun (2011), "Efficient inference in fully connected CRFs with
Gaussian edge potentials", NIPS; seed 004, "Fully-Connected CRF". The pairwise
strength of variables i and j is K(i, j) = sum_m w_m k_m(i, j) with

    k_m(i, j) = exp(-|f_i^m - f_j^m|^2 / 2),

the features ``f^m`` already divided by their bandwidths. All kernels'
features sit side by side in one matrix ``feats`` (N, D_1 + ... + D_M);
kernel m owns the columns ``dim_ptr[m]:dim_ptr[m + 1]``.

* :func:`exact_messages_rows`: msg[i, l] = sum_{j != i} K(i, j) Q[j, l], O(N^2 (D + L)),
  for a range of rows (threads split the rows).
* :func:`sequential_sweep`: one sweep of one-variable-at-a-time mean-field
  updates, keeping the messages of every variable current as each Q_i moves.
* :func:`splat`, :func:`slice_grid`: multilinear interpolation of points
  to and from a regular grid, the two ends of the grid (bilateral-grid)
  approximation of the Gaussian filtering (the blur between them is
  ``scipy.ndimage.gaussian_filter``, in :mod:`harmonium.inference.vi.dense_crf`).

No validation, no raising; outputs are written in place as each docstring says.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def _pair_strength(feats, dim_ptr, weights, i, j):
    """K(i, j) = sum_m w_m exp(-|f_i^m - f_j^m|^2 / 2)."""
    k = 0.0
    for m in range(weights.shape[0]):
        d2 = 0.0
        for d in range(dim_ptr[m], dim_ptr[m + 1]):
            diff = feats[i, d] - feats[j, d]
            d2 += diff * diff
        k += weights[m] * math.exp(-0.5 * d2)
    return k


@njit(cache=True, nogil=True)
def exact_messages_rows(feats, dim_ptr, weights, Q, lo, hi, out):
    """out[i, l] = sum_{j != i} K(i, j) Q[j, l] for lo <= i < hi (rows written in place)."""
    N, L = Q.shape
    for i in range(lo, hi):
        for l in range(L):
            out[i, l] = 0.0
        for j in range(N):
            if j == i:
                continue
            k = _pair_strength(feats, dim_ptr, weights, i, j)
            for l in range(L):
                out[i, l] += k * Q[j, l]


@njit(cache=True, nogil=True)
def sequential_sweep(feats, dim_ptr, weights, unary, compat, order, Q, msg, q_new):
    """One sweep of sequential mean-field updates in the given ``order``; Q and msg are updated in place.

    For each i: Q_i(l) <- exp(-unary[i, l] - sum_l' compat[l, l'] msg[i, l']) / Z_i, the
    exact minimiser of the free energy over Q_i with the others fixed (so a sweep
    never increases it); then msg[j] += K(j, i) (Q_i_new - Q_i_old) for every j != i,
    which keeps ``msg`` equal to the exact messages of the current Q. ``q_new`` is an
    (L,) buffer. Returns the largest absolute change of any Q_i(l).
    """
    N, L = Q.shape
    biggest = 0.0
    for step in range(order.shape[0]):
        i = order[step]
        m = -np.inf
        for l in range(L):
            s = -unary[i, l]
            for lp in range(L):
                s -= compat[l, lp] * msg[i, lp]
            q_new[l] = s
            m = max(m, s)
        z = 0.0
        for l in range(L):
            q_new[l] = math.exp(q_new[l] - m)
            z += q_new[l]
        for l in range(L):
            q_new[l] = q_new[l] / z - Q[i, l]  # the change
            biggest = max(biggest, abs(q_new[l]))
        for j in range(N):
            if j == i:
                continue
            k = _pair_strength(feats, dim_ptr, weights, i, j)
            for l in range(L):
                msg[j, l] += k * q_new[l]
        for l in range(L):
            Q[i, l] += q_new[l]
    return biggest


@njit(cache=True, nogil=True, inline="always")
def _corner(pos, i, corner, strides):
    """Weight and flat cell of corner ``corner`` (bit d: upper neighbour on axis d) of point i's cell."""
    w = 1.0
    cell = 0
    for d in range(pos.shape[1]):
        base = math.floor(pos[i, d])
        frac = pos[i, d] - base
        if (corner >> d) & 1:
            w *= frac
            cell += (int(base) + 1) * strides[d]
        else:
            w *= 1.0 - frac
            cell += int(base) * strides[d]
    return w, cell


@njit(cache=True, nogil=True)
def _interpolate(pos, strides, points, grid, to_grid):
    """The multilinear weights of each point's 2^D grid corners, applied one way or the other.

    ``to_grid``: grid[cell] += w points[i] (splatting); else points[i] = sum w grid[cell] (slicing,
    the transpose). ``points`` (N, L), ``grid`` (n_cells, L).
    """
    N, D = pos.shape
    L = points.shape[1]
    for i in range(N):
        if not to_grid:
            for l in range(L):
                points[i, l] = 0.0
        for corner in range(1 << D):
            w, cell = _corner(pos, i, corner, strides)
            if w == 0.0:
                continue
            if to_grid:
                for l in range(L):
                    grid[cell, l] += w * points[i, l]
            else:
                for l in range(L):
                    points[i, l] += w * grid[cell, l]


@njit(cache=True, nogil=True)
def splat(pos, values, strides, grid):
    """ADD each point's ``values`` (N, L) into the grid cells around it, multilinearly.

    ``pos`` (N, D) are grid coordinates (cell units, >= 0, each below its axis
    length - 1 so that both neighbours exist), ``strides`` (D,) the C-order
    strides of the grid in cells, ``grid`` (n_cells, L) flat, in place.
    """
    _interpolate(pos, strides, values, grid, True)


@njit(cache=True, nogil=True)
def slice_grid(pos, strides, grid, out):
    """out[i] = multilinear interpolation of ``grid`` (n_cells, L) at ``pos[i]`` (written in place)."""
    _interpolate(pos, strides, out, grid, False)
