"""HDP kernels against plain-numpy references (harmonium._kernels.hdp)."""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln

from harmonium._kernels import hdp as khdp
from harmonium.models.directed.hdp import word_log_likelihood


def _random_state(seed=0, D=6, V=7, K=5, cap=9):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 9, size=D)
    doc_ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    N = int(doc_ptr[-1])
    words = rng.integers(0, V, size=N).astype(np.int32)
    z = rng.integers(0, K, size=N).astype(np.int32)
    n_dk = np.zeros((D, cap), np.int32)
    n_wk = np.zeros((V, cap), np.int32)
    n_k = np.zeros(cap, np.int32)
    khdp.count_assignments(doc_ptr, words, z, n_dk, n_wk, n_k)
    tau = np.zeros(cap + 1)
    tau[: K + 1] = rng.dirichlet(np.ones(K + 1))
    return doc_ptr, words, z, n_dk, n_wk, n_k, tau, K


def test_count_assignments_and_log_likelihoods():
    doc_ptr, words, z, n_dk, n_wk, n_k, tau, K = _random_state()
    D = doc_ptr.shape[0] - 1
    ref_dk = np.zeros((D, K), np.int64)
    np.add.at(ref_dk, (np.repeat(np.arange(D), np.diff(doc_ptr)), z), 1)
    np.testing.assert_array_equal(n_dk[:, :K], ref_dk)
    used = n_k[:K] > 0
    assert np.isclose(khdp.word_log_likelihood(n_wk, n_k, K, 0.3), word_log_likelihood(n_wk[:, :K][:, used], 0.3))
    alpha = 1.7
    at = alpha * tau[:K]
    ref = np.sum(gammaln(alpha) - gammaln(alpha + np.diff(doc_ptr))) + np.sum(
        np.where(ref_dk > 0, gammaln(ref_dk + at) - gammaln(at), 0.0))
    assert np.isclose(khdp.assignment_log_prior(doc_ptr, n_dk, K, alpha, tau), ref)


def test_sample_tables_matches_reference_draws():
    doc_ptr, words, z, n_dk, n_wk, n_k, tau, K = _random_state(1)
    alpha = 0.9
    m_k = np.zeros(n_k.shape[0], np.int64)
    total = khdp.sample_tables(np.random.default_rng(5), n_dk, K, alpha, tau, m_k)
    rng = np.random.default_rng(5)
    ref = np.zeros(K, np.int64)
    for d in range(n_dk.shape[0]):
        for k in range(K):
            n = int(n_dk[d, k])
            if n > 0:
                s = 1
                for t in range(1, n):
                    s += rng.random() * (alpha * tau[k] + t) < alpha * tau[k]
                ref[k] += s
    np.testing.assert_array_equal(m_k[:K], ref)
    assert total == ref.sum()


def test_sample_tau_is_a_normalised_dirichlet_draw():
    m_k = np.array([3, 1, 7, 0, 0], np.int64)
    tau = np.zeros(6)
    khdp.sample_tau(np.random.default_rng(2), m_k, 3, 0.5, tau)
    rng = np.random.default_rng(2)
    g = np.array([rng.gamma(3.0), rng.gamma(1.0), rng.gamma(7.0), rng.gamma(0.5)])
    np.testing.assert_allclose(tau[:4], g / g.sum(), rtol=1e-12)


def test_compact_drops_empty_topics_in_order():
    doc_ptr, words, z, n_dk, n_wk, n_k, tau, K = _random_state(2, K=6)
    z = np.where(z == 2, 4, z).astype(np.int32)  # topic 2 becomes empty
    khdp.count_assignments(doc_ptr, words, z, n_dk, n_wk, n_k)
    keep = np.flatnonzero(n_k[:K] > 0)
    ref_dk, ref_wk, ref_k = n_dk[:, keep].copy(), n_wk[:, keep].copy(), n_k[keep].copy()
    ref_tau = np.append(tau[keep], tau[K])
    ref_z = np.searchsorted(keep, z)
    newK = khdp.compact(z, n_dk, n_wk, n_k, tau, K, np.empty(K, np.int64))
    assert newK == keep.shape[0]
    np.testing.assert_array_equal(z, ref_z)
    np.testing.assert_array_equal(n_dk[:, :newK], ref_dk)
    np.testing.assert_array_equal(n_wk[:, :newK], ref_wk)
    np.testing.assert_array_equal(n_k[:newK], ref_k)
    np.testing.assert_array_equal(tau[: newK + 1], ref_tau)
    assert not n_dk[:, newK:].any() and not n_wk[:, newK:].any() and not n_k[newK:].any()


def test_plain_and_sparse_sweeps_keep_counts_consistent():
    for sweep in (khdp.da_sweep, khdp.da_sweep_sparse):
        doc_ptr, words, z, n_dk, n_wk, n_k, tau, K = _random_state(3, cap=40)
        rng = np.random.default_rng(0)
        K2, _, _, i = sweep(rng, doc_ptr, words, z, n_dk, n_wk, n_k, tau, K, 0.8, 0.2, 1.5, np.empty(41), 0)
        assert i == words.shape[0]
        ref = [np.zeros_like(n_dk), np.zeros_like(n_wk), np.zeros_like(n_k)]
        khdp.count_assignments(doc_ptr, words, z, *ref)
        np.testing.assert_array_equal(n_dk, ref[0])
        np.testing.assert_array_equal(n_wk, ref[1])
        np.testing.assert_array_equal(n_k, ref[2])
        alive = n_k[:K2] > 0
        assert np.isclose(tau[: K2 + 1].sum(), 1.0) and np.all(tau[:K2][~alive] == 0)
