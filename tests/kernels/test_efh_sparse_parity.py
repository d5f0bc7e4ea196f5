"""Parity of the sparse harmonium products with dense numpy (also under NUMBA_DISABLE_JIT=1)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from harmonium._kernels.efh_sparse import csr_gather_rows, csr_scatter_outer


def _problem(seed, dtype):
    rng = np.random.default_rng(seed)
    x = sp.random(9, 30, density=0.2, random_state=seed, format="csr", dtype=np.float64)
    x.data = np.ceil(3 * x.data)
    keep = np.ones(9)
    keep[4] = 0.0  # an empty row
    x = (sp.diags(keep) @ x).tocsr().astype(dtype)
    x.eliminate_zeros()
    W = rng.normal(size=(30, 5)).astype(dtype)
    H = rng.normal(size=(9, 5)).astype(dtype)
    return x, W, H


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("seed", [0, 1])
def test_gather_rows_is_x_times_w(seed, dtype):
    x, W, _ = _problem(seed, dtype)
    out = np.full((9, 5), np.nan, dtype=dtype)
    csr_gather_rows(x.indptr, x.indices, x.data, W, out)
    tol = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(out, x.toarray() @ W, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("seed", [0, 1])
def test_scatter_outer_adds_scaled_xt_h(seed, dtype):
    x, W, H = _problem(seed, dtype)
    target = W.copy()
    csr_scatter_outer(x.indptr, x.indices, x.data, H, dtype(-0.3), target)
    tol = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(target, W - 0.3 * x.toarray().T @ H, rtol=tol, atol=tol)
