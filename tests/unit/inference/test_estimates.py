"""Burn-in / thinning and the Rao-Blackwellised averages of theta and phi."""

from __future__ import annotations

import numpy as np

from harmonium.inference.mcmc.lda.estimates import ChainAverage, keep_sample


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
    for _ in range(5):
        n_dk = rng.integers(0, 5, size=(D, K)).astype(np.int32)
        n_wk = rng.integers(0, 5, size=(V, K)).astype(np.int32)
        n_k = n_wk.sum(axis=0).astype(np.int32)
        avg.add(n_dk, n_wk, n_k, alpha, beta)
        phis.append(((n_wk + beta) / (n_k + V * beta)).T)
        thetas.append((n_dk + alpha) / (n_dk + alpha).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(avg.topic_word(), np.mean(phis, axis=0), rtol=1e-12)
    np.testing.assert_allclose(avg.doc_topic(), np.mean(thetas, axis=0), rtol=1e-6)
    restored = ChainAverage.from_arrays(avg.to_arrays(), avg.n_samples)
    np.testing.assert_array_equal(restored.doc_topic(in_place=True), avg.doc_topic())
