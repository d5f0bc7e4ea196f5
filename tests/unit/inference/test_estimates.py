"""Burn-in / thinning and the Rao-Blackwellised averages of theta and phi."""

from __future__ import annotations

import numpy as np

from harmonium.inference.mcmc.lda.estimates import (
    ChainAverage,
    SparseThetaSum,
    final_state_theta,
    final_state_topic_word,
    keep_sample,
)
from harmonium.models.directed.lda import doc_topic_mean, make_seed_prior, topic_word_mean


def test_keep_sample_schedule():
    kept = [it for it in range(1, 21) if keep_sample(it, burn_in=10, thin=3)]
    assert kept == [13, 16, 19]
    assert [it for it in range(1, 6) if keep_sample(it, 0, 1)] == [1, 2, 3, 4, 5]


def test_chain_average_is_the_mean_of_conditional_means():
    rng = np.random.default_rng(0)
    D, V, K, beta = 4, 6, 3, 0.2
    alpha = np.array([0.1, 0.5, 1.0])
    avg = ChainAverage(D, V, K)
    phis, thetas = [], []
    lengths = rng.integers(1, 12, size=D)
    for _ in range(5):
        # a chain keeps each document's length N_d: only the topics move (the sparse theta sums rely on it)
        n_dk = np.stack([np.bincount(rng.integers(0, K, size=n), minlength=K) for n in lengths]).astype(np.int32)
        n_wk = rng.integers(0, 5, size=(V, K)).astype(np.int32)
        n_k = n_wk.sum(axis=0).astype(np.int32)
        avg.add(n_dk, n_wk, n_k, alpha, beta)
        phis.append(((n_wk + beta) / (n_k + V * beta)).T)
        thetas.append((n_dk + alpha) / (n_dk + alpha).sum(axis=1, keepdims=True))
    # the phi sum is float32 (issue 21): equal to its precision
    np.testing.assert_allclose(avg.topic_word(), np.mean(phis, axis=0), rtol=1e-6)
    np.testing.assert_allclose(avg.doc_topic(), np.mean(thetas, axis=0), rtol=1e-6)
    restored = ChainAverage.from_arrays(avg.to_arrays(), avg.n_samples)
    np.testing.assert_array_equal(restored.doc_topic(in_place=True), avg.doc_topic())


def _random_counts(rng, D, V, K):
    n_dk = rng.integers(0, 3, size=(D, K)).astype(np.int16)
    n_dk[np.arange(D), rng.integers(0, K, size=D)] += 1  # no empty document
    n_wk = rng.integers(0, 5, size=(V, K)).astype(np.int32)
    return n_dk, n_wk, n_wk.sum(axis=0).astype(np.int32)


def test_sparse_theta_sum_with_changing_alpha_is_the_dense_mean():
    """Samples whose alpha differs (hyperparameter optimisation) and whose topics move in and out of a
    document: the sparse sums give the dense mean of (n_dk + alpha) / (N_d + A), and store only the
    topics each document held."""
    rng = np.random.default_rng(1)
    D, K = 7, 9
    n_dk0, _, _ = _random_counts(rng, D, 1, K)
    acc, thetas, held = SparseThetaSum(D, K), [], np.zeros((D, K), dtype=bool)
    for s in range(6):
        alpha = np.full(K, 0.1) if s < 3 else rng.uniform(0.05, 0.9, K)
        n_dk = np.zeros_like(n_dk0)
        for d in range(D):  # the same document lengths, topics redrawn
            np.add.at(n_dk[d], rng.integers(0, K, size=int(n_dk0[d].sum())), 1)
        acc.add(n_dk, alpha)
        thetas.append((n_dk + alpha) / (n_dk + alpha).sum(axis=1, keepdims=True))
        held |= n_dk > 0
    np.testing.assert_allclose(acc.dense(), np.mean(thetas, axis=0), rtol=2e-6)
    assert acc.top.shape[0] == held.sum() < D * K
    assert acc.alphas.shape[0] == 4 and acc.weights.tolist() == [3.0, 1.0, 1.0, 1.0]
    restored = SparseThetaSum.from_arrays(acc.to_arrays("t"), "t")
    np.testing.assert_array_equal(restored.dense(), acc.dense())


def test_dense_checkpoint_sum_migrates_and_keeps_averaging():
    """A checkpoint from before the sparse sums (rb_theta_sum, dense) resumes to the same estimate."""
    rng = np.random.default_rng(2)
    D, V, K = 5, 6, 4
    alpha = np.array([0.1, 0.3, 0.2, 0.5])
    samples = [_random_counts(rng, D, V, K) for _ in range(3)]
    for s in samples[1:]:  # the same document lengths in every sample
        s[0][:] = 0
        for d in range(D):
            np.add.at(s[0][d], rng.integers(0, K, size=int(samples[0][0][d].sum())), 1)
    dense = np.zeros((D, K), dtype=np.float32)
    for n_dk, _, _ in samples[:2]:
        dense += ((n_dk + alpha) / (n_dk + alpha).sum(axis=1, keepdims=True)).astype(np.float32)
    avg = ChainAverage.from_arrays({"rb_phi_wk_sum": np.zeros((V, K)), "rb_theta_sum": dense}, 2)
    avg.add(*samples[2], alpha, 0.1)
    want = np.mean([(n + alpha) / (n + alpha).sum(axis=1, keepdims=True) for n, _, _ in samples], axis=0)
    np.testing.assert_allclose(avg.doc_topic(), want, rtol=2e-6)


def test_final_state_estimates_match_the_dense_means():
    rng = np.random.default_rng(3)
    D, V, K, beta = 6, 8, 5, 0.05
    alpha = rng.uniform(0.05, 0.5, K)
    n_dk, n_wk, n_k = _random_counts(rng, D, V, K)
    for seeds in (None, make_seed_prior([(1, 0), (4, 3), (1, 2)], 7)):
        phi = final_state_topic_word(n_wk, n_k, beta, seeds)
        np.testing.assert_allclose(phi, topic_word_mean(n_wk, n_k, beta, seeds), rtol=1e-14)
    np.testing.assert_allclose(final_state_theta(n_dk, alpha).dense(), doc_topic_mean(n_dk, alpha), rtol=1e-6)
