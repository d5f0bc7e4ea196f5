"""The allocation-free LDA statistics against their plain numpy/scipy expressions."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import gammaln

from harmonium._kernels import lda_stats


def _tables(seed, D=9, V=13, K=6, top=4, symmetric=False):
    """Count tables with counts below ``top``; a symmetric alpha (LDA's default) or one drawn per topic. The
    kernels' lgamma tables hold counts below D * K // 16 + 1 (4 here): larger counts take the direct path."""
    rng = np.random.default_rng(seed)
    n_dk = rng.integers(0, top, (D, K)).astype(np.int32)
    n_wk = rng.integers(0, top, (V, K)).astype(np.int32)
    alpha = np.full(K, 0.1) if symmetric else rng.uniform(0.05, 1.0, K)
    return n_dk, n_wk, n_wk.sum(0).astype(np.int32), alpha, 0.03


@pytest.mark.parametrize("symmetric", [True, False])
@pytest.mark.parametrize("top", [4, 40])
def test_collapsed_log_joint_matches_gammaln_expression(symmetric, top):
    # top 4: every count in the kernels' lgamma tables; top 40: most past them (computed directly)
    for seed in range(3):
        n_dk, n_wk, n_k, alpha, beta = _tables(seed, top=top, symmetric=symmetric)
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


def test_sparse_theta_kernels_match_numpy():
    """The sparse theta sums (issue 21): merge, dense read-out, and the phi read-outs, against numpy."""
    n_dk, n_wk, n_k, alpha, beta = _tables(5)
    D, K = n_dk.shape
    n_dk[n_dk.sum(1) == 0, 0] = 1
    doc_len = np.empty(D, dtype=np.int64)
    lda_stats.doc_lengths(n_dk, doc_len)
    np.testing.assert_array_equal(doc_len, n_dk.sum(1))
    inv = 1.0 / (doc_len + alpha.sum())
    ptr, top, val = np.zeros(D + 1, np.int64), np.zeros(0, np.int16), np.zeros(0, np.float32)
    dense = np.zeros((D, K))
    for shift in range(3):  # the same lengths, topics rotated: documents gain topics
        counts = np.roll(n_dk, shift, axis=1)
        room = top.shape[0] + int(np.minimum(doc_len, K).sum())
        new_ptr, new_top, new_val = np.empty(D + 1, np.int64), np.empty(room, np.int16), np.empty(room, np.float32)
        n = lda_stats.sparse_theta_add(counts, inv, ptr, top, val, new_ptr, new_top, new_val)
        ptr, top, val = new_ptr, new_top[:n], new_val[:n]
        dense += counts * inv[:, None]
        got = np.zeros((D, K))
        for d in range(D):
            seg = slice(ptr[d], ptr[d + 1])
            assert np.all(np.diff(top[seg]) > 0)  # increasing topics, no repeats
            got[d, top[seg]] = val[seg]
        np.testing.assert_allclose(got, dense, rtol=1e-6)
        assert n == (dense > 0).sum()
    out = np.empty((D, K), dtype=np.float32)
    lda_stats.sparse_theta_dense(ptr, top, val, doc_len, alpha[None, :], np.array([3.0]), out)
    want = dense + 3 * alpha[None, :] * inv[:, None]
    np.testing.assert_allclose(out, want / want.sum(1, keepdims=True), rtol=1e-6)
    phi_sum = (n_wk + 0.5).astype(np.float32)
    out = np.empty(phi_sum.T.shape)
    lda_stats.normalised_transpose(phi_sum, out)
    np.testing.assert_allclose(out, (phi_sum / phi_sum.sum(0)).T, rtol=1e-6)
    den = n_k + n_wk.shape[0] * beta
    lda_stats.topic_word_from_counts(n_wk, den, beta, out)
    np.testing.assert_allclose(out, ((n_wk + beta) / den).T, rtol=1e-14)


def _assignments(seed, D=11, V=13, K=6, symmetric=False):
    """A token stream (doc_ptr, words), assignments z and the dense tables they imply (one empty document)."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 9, D)
    lengths[3] = 0
    doc_ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    words = rng.integers(0, V, doc_ptr[-1]).astype(np.int32)
    z = rng.integers(0, K, doc_ptr[-1]).astype(np.int32)
    n_dk, n_wk, n_k = np.zeros((D, K), np.int16), np.zeros((V, K), np.int32), np.zeros(K, np.int32)
    lda_stats.count_assignments(doc_ptr, words, z, n_dk, n_wk, n_k)
    return doc_ptr, words, z, n_dk, n_wk, n_k, (np.full(K, 0.1) if symmetric else rng.uniform(0.05, 1.0, K))


@pytest.mark.parametrize("symmetric", [True, False])
def test_statistics_from_assignments_equal_the_dense_ones_bit_for_bit(symmetric):
    """Document counts rebuilt from z (issue 21: no D x K table) give the dense kernels' results exactly."""
    for seed in range(3):
        doc_ptr, words, z, n_dk, n_wk, n_k, alpha = _assignments(seed, symmetric=symmetric)
        D, K = n_dk.shape
        row = np.zeros(K, np.int64)
        n_wk2, n_k2 = np.zeros_like(n_wk), np.zeros_like(n_k)
        lda_stats.count_word_assignments(words, z, n_wk2, n_k2)
        np.testing.assert_array_equal(n_wk2, n_wk)
        np.testing.assert_array_equal(n_k2, n_k)
        assert (lda_stats.collapsed_log_joint_assignments(doc_ptr, z, n_wk, n_k, alpha, 0.03, row)
                == lda_stats.collapsed_log_joint(n_dk, n_wk, n_k, alpha, 0.03))
        assert not row.any()
        cols, vals = np.empty(len(z), np.int64), np.empty(len(z))
        n = lda_stats.doc_topic_cells(doc_ptr, z, row, cols, vals)
        r, c = np.nonzero(n_dk)  # row-major: documents in order, topics increasing
        np.testing.assert_array_equal(cols[:n], c)
        np.testing.assert_array_equal(vals[:n], n_dk[r, c])
        assert not row.any()
        inv = 1.0 / (np.diff(doc_ptr) + alpha.sum())
        ptr, top, val = np.zeros(D + 1, np.int64), np.zeros(0, np.int16), np.zeros(0, np.float32)
        ptr2, top2, val2 = ptr, top, val
        for shift in range(3):  # topics rotated: documents gain topics between samples
            zs = ((z + shift) % K).astype(np.int32)
            counts = np.roll(n_dk, shift, axis=1)
            room = top.shape[0] + len(z)
            out = [np.empty(D + 1, np.int64), np.empty(room, np.int16), np.empty(room, np.float32)]
            m = lda_stats.sparse_theta_add(counts, inv, ptr, top, val, *out)
            ptr, top, val = out[0], out[1][:m], out[2][:m]
            room = top2.shape[0] + len(z)
            out = [np.empty(D + 1, np.int64), np.empty(room, np.int16), np.empty(room, np.float32)]
            m2 = lda_stats.sparse_theta_add_assignments(doc_ptr, zs, row, inv, ptr2, top2, val2, *out)
            ptr2, top2, val2 = out[0], out[1][:m2], out[2][:m2]
            assert not row.any()
            np.testing.assert_array_equal(ptr2, ptr)
            np.testing.assert_array_equal(top2, top)
            assert val2.tobytes() == val.tobytes()
