"""Burn-in / thinning and the Rao-Blackwellised averages of theta and phi."""

from __future__ import annotations

import numpy as np
import pytest

from harmonium.inference.mcmc.lda.estimates import (
    ChainAverage,
    SparsePhiSum,
    SparseThetaSum,
    WordCounts,
    default_burn_in,
    final_state_theta,
    final_state_topic_word,
    keep_sample,
)
from harmonium.models.directed.lda import doc_topic_mean, make_seed_prior, seeded_counts, topic_word_mean


def test_keep_sample_schedule():
    kept = [it for it in range(1, 21) if keep_sample(it, burn_in=10, thin=3)]
    assert kept == [13, 16, 19]
    assert [it for it in range(1, 6) if keep_sample(it, 0, 1)] == [1, 2, 3, 4, 5]


@pytest.mark.parametrize(("n_iter", "thin", "kept"), [
    (200, 5, [185, 190, 195, 200]),  # the last tenth, every 5th, ending on the last sweep
    (203, 5, [188, 193, 198, 203]),
    (60, 5, [60]),                   # a tenth shorter than two samples: the last sweep alone
    (12, 2, [12]),
    (20, 1, [19, 20]),
    (3, 5, []),                      # shorter than thin: no sample, the fit keeps its final state
])
def test_default_burn_in_averages_the_last_tenth(n_iter, thin, kept):
    b = default_burn_in(n_iter, thin)
    assert [it for it in range(1, n_iter + 1) if keep_sample(it, b, thin)] == kept


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


def test_final_state_estimates_from_sparse_word_counts_and_z_are_bit_identical():
    """The fit's lean final-state path (issue 21): n_wk's non-zero cells only, theta's counts from z."""
    from harmonium.models.directed.lda import counts_from_assignments

    rng = np.random.default_rng(4)
    D, V, K, beta = 7, 9, 5, 0.05
    doc_ptr = np.concatenate([[0], np.cumsum(rng.integers(0, 8, D))]).astype(np.int64)
    words = rng.integers(0, V, doc_ptr[-1]).astype(np.int32)
    z = rng.integers(0, K, doc_ptr[-1]).astype(np.int32)
    n_dk, n_wk, n_k = counts_from_assignments(doc_ptr, words, z, K, V)
    alpha = rng.uniform(0.05, 0.5, K)
    cells = WordCounts(n_wk)
    assert cells.top.shape[0] == np.count_nonzero(n_wk)
    for seeds in (None, make_seed_prior([(1, 0), (4, 3), (1, 2), (words[0], int(z[0]))], 7)):
        want = final_state_topic_word(n_wk, n_k, beta, seeds)
        assert final_state_topic_word(cells, n_k, beta, seeds).tobytes() == want.tobytes()
    cells.cnt[0] += 1  # negative control: one count wrong, another phi
    assert final_state_topic_word(cells, n_k, beta).tobytes() != final_state_topic_word(n_wk, n_k, beta).tobytes()
    a, b = final_state_theta(n_dk, alpha), final_state_theta(None, alpha, doc_ptr=doc_ptr, z=z)
    assert a.dense().tobytes() == b.dense().tobytes()


def _dense_phi_reference(samples, V, K, beta, seeds=None):
    """The dense float32 accumulator the sparse phi sums replace (lda_stats.accumulate_phi + normalised_transpose)."""
    from harmonium._kernels import lda_stats

    acc = np.zeros((V, K), dtype=np.float32)
    for n_wk, n_k in samples:
        with seeded_counts(n_wk, n_k, seeds):
            lda_stats.accumulate_phi(acc, n_wk, n_k, beta)
    out = np.empty((K, V))
    lda_stats.normalised_transpose(acc, out)
    return acc, out


def _sparse_word_counts(rng, V, K, n_tokens):
    """n_wk of n_tokens tokens spread over few (word, topic) cells, as in a real chain (most cells zero)."""
    n_wk = np.zeros((V, K), dtype=np.int32)
    np.add.at(n_wk, (rng.integers(0, V, n_tokens), rng.integers(0, max(1, K // 3), n_tokens) * 3 % K), 1)
    return n_wk, n_wk.sum(axis=0).astype(np.int32)


def test_sparse_phi_sums_are_bit_identical_to_the_dense_accumulator():
    """Cells that appear late, cells that go back to zero, topics with no tokens, seeded cells and a
    checkpoint round trip in the middle: the sums and phi_hat equal the dense float32 ones bit for bit,
    and only the cells that have held a count are stored."""
    rng = np.random.default_rng(5)
    V, K, beta = 40, 12, 0.013
    for seeds in (None, make_seed_prior([(1, 0), (4, 3), (1, 2)], 7)):
        samples = [_sparse_word_counts(rng, V, K, n) for n in (30, 90, 5, 200, 60)]
        dense, phi = _dense_phi_reference([(a.copy(), b.copy()) for a, b in samples], V, K, beta, seeds)
        acc, held = SparsePhiSum(V, K), np.zeros((V, K), dtype=bool)
        for s, (n_wk, n_k) in enumerate(samples):
            avg = ChainAverage(1, V, K)
            avg.phi = acc
            avg.add(np.ones((1, K), dtype=np.int16), n_wk, n_k, np.full(K, 0.1), beta, seeds)
            with seeded_counts(n_wk, n_k, seeds):
                held |= n_wk > 0
            if s == 2:  # a checkpoint written and read back mid-chain
                acc = SparsePhiSum.from_arrays(acc.to_arrays("p"), "p")
        np.testing.assert_array_equal(acc.dense(), dense)
        np.testing.assert_array_equal(acc.topic_word(), phi)
        assert acc.top.shape[0] == held.sum() < V * K


def test_dense_phi_checkpoint_migrates_bit_for_bit():
    """A checkpoint with the dense rb_phi_wk_sum resumes into the same sums as an uninterrupted dense run."""
    rng = np.random.default_rng(6)
    V, K, beta = 25, 7, 0.05
    samples = [_sparse_word_counts(rng, V, K, n) for n in (40, 10, 70)]
    dense2, _ = _dense_phi_reference(samples[:2], V, K, beta)
    dense3, phi3 = _dense_phi_reference(samples, V, K, beta)
    acc = SparsePhiSum.from_dense(dense2)
    acc.add(*samples[2], beta)
    np.testing.assert_array_equal(acc.dense(), dense3)
    np.testing.assert_array_equal(acc.topic_word(), phi3)
