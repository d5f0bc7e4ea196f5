"""Parity of the fused RBM CD-1 / PCD-1 kernels with a plain-numpy twin (same uniforms, same order).

Also runs under NUMBA_DISABLE_JIT=1.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import expit

from harmonium._kernels.efh_rbm import rbm_negative_update, rbm_positive
from tests.kernels.test_efh_sampling_parity import reference_bernoulli_csr


def _problem(seed):
    rng = np.random.default_rng(seed)
    x = sp.random(6, 25, density=0.15, random_state=seed, format="csr")
    x.data[:] = 1.0
    W = rng.normal(0, 0.5, size=(25, 4))
    b = rng.normal(-2.0, 1.0, size=25)
    c = rng.normal(0, 0.5, size=4)
    chains = (rng.random((6, 4)) < 0.5).astype(float)
    return x, W, b, c, chains


def reference_step(rng, x, W, b, c, chains, persistent, tau, scale):
    W, b, c, chains = W.copy(), b.copy(), c.copy(), chains.copy()
    X = x.toarray()
    h_pos = expit(X @ W + c)
    if not persistent:
        chains = np.array([[1.0 if rng.random() < p else 0.0 for p in row] for row in h_pos])
    logits = chains @ W.T + b
    rows = reference_bernoulli_csr(rng, logits, tau)
    X_neg = np.zeros_like(X)
    for r, on in enumerate(rows):
        X_neg[r, on] = 1.0
    h_neg = expit(X_neg @ W + c)
    if persistent:
        chains = np.array([[1.0 if rng.random() < p else 0.0 for p in row] for row in h_neg])
    W += scale * (X.T @ h_pos - X_neg.T @ h_neg)
    b += scale * (X.sum(axis=0) - X_neg.sum(axis=0))
    c += scale * (h_pos.sum(axis=0) - h_neg.sum(axis=0))
    return W, b, c, chains, rows


@pytest.mark.parametrize("persistent", [False, True])
@pytest.mark.parametrize("seed", [0, 1])
def test_fused_step_matches_reference(seed, persistent):
    x, W, b, c, chains = _problem(seed)
    tau, scale = -3.0, 0.05
    ref = reference_step(np.random.default_rng(seed + 7), x, W, b, c, chains, persistent, tau, scale)
    rng = np.random.default_rng(seed + 7)
    n, V = x.shape
    h_pos = np.empty((n, 4))
    h_sample = np.empty((n, 4))
    rbm_positive(rng, x.indptr, x.indices, x.data, W, c, h_pos, h_sample, not persistent)
    ch = chains.copy() if persistent else h_sample
    logits = ch @ W.T
    h_neg = np.empty((n, 4))
    neg_indptr = np.empty(n + 1, dtype=np.int64)
    neg_indices = np.empty(n * V, dtype=np.int32)
    nnz = rbm_negative_update(rng, x.indptr, x.indices, x.data, logits, W, b, c, h_pos, h_neg, ch, persistent, tau,
                              scale, neg_indptr, neg_indices, np.empty(3 * V, dtype=np.int64))
    W_ref, b_ref, c_ref, chains_ref, rows = ref
    assert nnz == sum(len(r) for r in rows)
    for r, on in enumerate(rows):
        assert neg_indices[neg_indptr[r]:neg_indptr[r + 1]].tolist() == on
    np.testing.assert_allclose(W, W_ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(b, b_ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(c, c_ref, rtol=1e-12, atol=1e-12)
    if persistent:
        np.testing.assert_array_equal(ch, chains_ref)
