"""Parity of the harmonium sampling kernels with plain-numpy twins that consume the same uniforms.

Also runs under NUMBA_DISABLE_JIT=1. Distributional checks of the thinned Bernoulli draw
(it must give Bernoulli(sigmoid(logit)) exactly) follow the parity tests.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import expit

from harmonium._kernels.efh_sampling import sample_bernoulli_csr, sample_softmax_tokens


def reference_bernoulli_csr(rng, logits, tau):
    q = 1.0 / (1.0 + math.exp(-tau))
    log1mq = math.log1p(-q)

    def skip():
        return int(min(math.floor(math.log(1.0 - rng.random()) / log1mq), 1e15))

    rows = []
    for row in logits:
        high = [i for i, lg in enumerate(row) if lg > tau]
        low = [i for i, lg in enumerate(row) if not lg > tau]
        on = [i for i in high if rng.random() * (1.0 + math.exp(-row[i])) < 1.0]
        pos = skip()
        while pos < len(low):
            i = low[pos]
            if rng.random() * q * (1.0 + math.exp(-row[i])) < 1.0:
                on.append(i)
            pos += 1 + skip()
        rows.append(sorted(on))
    return rows


def reference_softmax_tokens(rng, logits, lengths):
    out = []
    for row, d in zip(logits, lengths, strict=True):
        if d == 0:
            out.append([])
            continue
        cdf = np.cumsum(np.exp(row - row.max()))
        words = []
        for _ in range(d):
            u = rng.random() * cdf[-1]
            words.append(int(np.searchsorted(cdf, u, side="right")))
        out.append(words)
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("tau", [-4.0, -1.0, 10.0])
def test_bernoulli_csr_matches_reference(seed, tau):
    rng = np.random.default_rng(seed)
    logits = rng.normal(-3.0, 3.0, size=(7, 40))
    indptr = np.empty(8, dtype=np.int64)
    indices = np.empty(7 * 40, dtype=np.int32)
    nnz = sample_bernoulli_csr(np.random.default_rng(seed + 10), logits, tau, indptr, indices,
                               np.empty(120, dtype=np.int64))
    ref = reference_bernoulli_csr(np.random.default_rng(seed + 10), logits, tau)
    assert nnz == sum(len(r) for r in ref)
    for b, r in enumerate(ref):
        assert indices[indptr[b]:indptr[b + 1]].tolist() == r


def test_bernoulli_csr_float32_logits():
    rng = np.random.default_rng(3)
    logits = rng.normal(-3.0, 3.0, size=(5, 30)).astype(np.float32)
    indptr = np.empty(6, dtype=np.int64)
    indices = np.empty(150, dtype=np.int32)
    nnz = sample_bernoulli_csr(np.random.default_rng(4), logits, -4.0, indptr, indices, np.empty(90, dtype=np.int64))
    ref = reference_bernoulli_csr(np.random.default_rng(4), logits.astype(np.float64), -4.0)
    assert nnz == sum(len(r) for r in ref)


@pytest.mark.parametrize("seed", [0, 1])
def test_softmax_tokens_matches_reference(seed):
    rng = np.random.default_rng(seed)
    logits = rng.normal(0.0, 2.0, size=(6, 25))
    lengths = np.array([3, 0, 7, 1, 12, 2], dtype=np.int64)
    ptr = np.zeros(7, dtype=np.int64)
    np.cumsum(lengths, out=ptr[1:])
    words = np.empty(ptr[-1], dtype=np.int32)
    sample_softmax_tokens(np.random.default_rng(seed + 5), logits, lengths, ptr, words, np.empty(25))
    ref = reference_softmax_tokens(np.random.default_rng(seed + 5), logits, lengths)
    for b, r in enumerate(ref):
        assert words[ptr[b]:ptr[b + 1]].tolist() == r


def test_thinned_bernoulli_has_the_right_marginals():
    """Every unit is on with probability sigmoid(logit): z-scores of the counts over 4,000 draws (3 sigma per cell,
    Bonferroni over 600 cells at alpha = 1e-3 is 4.0 sigma; cells with expected count < 20 are left out)."""
    rng = np.random.default_rng(7)
    logits = np.concatenate([rng.normal(-5.0, 2.0, size=(10, 40)), rng.normal(1.0, 2.0, size=(5, 40))])
    p = expit(logits)
    n = 4_000
    counts = np.zeros_like(p)
    indptr = np.empty(16, dtype=np.int64)
    indices = np.empty(600, dtype=np.int32)
    work = np.empty(120, dtype=np.int64)
    for _ in range(n):
        sample_bernoulli_csr(rng, logits, -4.0, indptr, indices, work)
        for b in range(15):
            counts[b, indices[indptr[b]:indptr[b + 1]]] += 1
    ok = (p * n > 20) & ((1 - p) * n > 20)
    z = (counts[ok] / n - p[ok]) / np.sqrt(p[ok] * (1 - p[ok]) / n)
    assert np.abs(z).max() < 4.0
    # the rarest cells: total count of the low-probability units against its Poisson expectation
    low = ~ok
    expected = (p[low] * n).sum()
    assert abs(counts[low].sum() - expected) < 4.0 * math.sqrt(expected)
