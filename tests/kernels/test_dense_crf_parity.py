"""Parity of the dense-CRF kernels with plain-numpy twins (harmonium._kernels.dense_crf)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from harmonium._kernels import dense_crf as kd


def strengths(feats, dim_ptr, weights):
    """K (N, N) = sum_m w_m exp(-|f_i^m - f_j^m|^2 / 2), zero diagonal."""
    N = feats.shape[0]
    K = np.zeros((N, N))
    for m, w in enumerate(weights):
        f = feats[:, dim_ptr[m]:dim_ptr[m + 1]]
        K += w * np.exp(-0.5 * ((f[:, None] - f[None]) ** 2).sum(axis=2))
    np.fill_diagonal(K, 0.0)
    return K


def problem(seed, N=9, L=3, dims=(2, 1)):
    rng = np.random.default_rng(seed)
    feats = rng.normal(0, 1.5, size=(N, sum(dims)))
    dim_ptr = np.concatenate([[0], np.cumsum(dims)]).astype(np.int64)
    weights = rng.uniform(0.5, 2.0, size=len(dims))
    Q = rng.dirichlet(np.ones(L), size=N)
    unary = rng.normal(size=(N, L))
    compat = rng.normal(size=(L, L))
    compat = compat + compat.T
    return feats, dim_ptr, weights, Q, unary, compat


@pytest.mark.parametrize("seed", [0, 1])
def test_exact_messages_rows(seed):
    feats, dim_ptr, weights, Q, _, _ = problem(seed)
    out = np.full_like(Q, np.nan)
    kd.exact_messages_rows(feats, dim_ptr, weights, Q, 0, 4, out)
    kd.exact_messages_rows(feats, dim_ptr, weights, Q, 4, Q.shape[0], out)
    np.testing.assert_allclose(out, strengths(feats, dim_ptr, weights) @ Q, rtol=1e-13, atol=1e-15)


def sweep_twin(K, unary, compat, order, Q):
    Q = Q.copy()
    biggest = 0.0
    for i in order:
        logits = -unary[i] - compat @ (K[i] @ Q)
        q = np.exp(logits - logits.max())
        q /= q.sum()
        biggest = max(biggest, np.abs(q - Q[i]).max())
        Q[i] = q
    return Q, biggest


@pytest.mark.parametrize("seed", [0, 1])
def test_sequential_sweep(seed):
    feats, dim_ptr, weights, Q, unary, compat = problem(seed)
    K = strengths(feats, dim_ptr, weights)
    order = np.random.default_rng(seed).permutation(Q.shape[0]).astype(np.int64)
    want, want_change = sweep_twin(K, unary, compat, order, Q)
    msg = K @ Q
    got = Q.copy()
    change = kd.sequential_sweep(feats, dim_ptr, weights, unary, compat, order, got, msg, np.empty(Q.shape[1]))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(msg, K @ got, rtol=1e-12, atol=1e-13)  # messages kept current
    assert change == pytest.approx(want_change, rel=1e-12)


def multilinear_weights(p, shape):
    """Dense (n_cells,) interpolation weights of one point, written out per corner."""
    w = np.zeros(int(np.prod(shape)))
    base = np.floor(p).astype(int)
    frac = p - base
    for corner in itertools.product((0, 1), repeat=len(p)):
        idx = tuple(base + np.array(corner))
        wt = np.prod([f if c else 1 - f for f, c in zip(frac, corner, strict=True)])
        w[np.ravel_multi_index(idx, shape)] += wt
    return w


@pytest.mark.parametrize("D", [1, 2, 3])
def test_splat_and_slice(D):
    rng = np.random.default_rng(D)
    shape = tuple(int(s) for s in rng.integers(3, 6, size=D))
    pos = rng.uniform(0, np.array(shape) - 1 - 1e-9, size=(7, D))
    pos[0] = np.floor(pos[0])  # a point on a grid node
    values = rng.normal(size=(7, 2))
    strides = np.array([int(np.prod(shape[d + 1:])) for d in range(D)], dtype=np.int64)
    W = np.stack([multilinear_weights(p, shape) for p in pos])  # (N, n_cells)
    grid = np.zeros((W.shape[1], 2))
    kd.splat(pos, values, strides, grid)
    np.testing.assert_allclose(grid, W.T @ values, atol=1e-13)
    field = rng.normal(size=(W.shape[1], 2))
    out = np.empty((7, 2))
    kd.slice_grid(pos, strides, field, out)
    np.testing.assert_allclose(out, W @ field, atol=1e-13)
