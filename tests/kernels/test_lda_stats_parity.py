"""The allocation-free LDA statistics against their plain numpy/scipy expressions."""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln

from harmonium._kernels import lda_stats


def _tables(seed, D=9, V=13, K=6):
    rng = np.random.default_rng(seed)
    n_dk = rng.integers(0, 4, (D, K)).astype(np.int32)
    n_wk = rng.integers(0, 4, (V, K)).astype(np.int32)
    return n_dk, n_wk, n_wk.sum(0).astype(np.int32), rng.uniform(0.05, 1.0, K), 0.03


def test_collapsed_log_joint_matches_gammaln_expression():
    for seed in range(3):
        n_dk, n_wk, n_k, alpha, beta = _tables(seed)
        V = n_wk.shape[0]
        ref = (n_dk.shape[0] * (gammaln(alpha.sum()) - gammaln(alpha).sum())
               - gammaln(n_dk.sum(1) + alpha.sum()).sum() + gammaln(n_dk + alpha).sum()
               + n_k.shape[0] * gammaln(V * beta) - gammaln(n_k + V * beta).sum()
               + (gammaln(n_wk + beta) - gammaln(beta)).sum())
        np.testing.assert_allclose(lda_stats.collapsed_log_joint(n_dk, n_wk, n_k, alpha, beta), ref, rtol=1e-12)


def test_accumulators_match_numpy():
    n_dk, n_wk, n_k, alpha, beta = _tables(4)
    phi = np.ones(n_wk.shape)
    theta = np.ones(n_dk.shape, dtype=np.float32)
    lda_stats.accumulate_phi(phi, n_wk, n_k, beta)
    lda_stats.accumulate_theta(theta, n_dk, alpha)
    np.testing.assert_allclose(phi, 1 + (n_wk + beta) / (n_k + n_wk.shape[0] * beta), rtol=1e-12)
    num = n_dk + alpha
    np.testing.assert_allclose(theta, 1 + num / num.sum(1, keepdims=True), rtol=1e-6)
