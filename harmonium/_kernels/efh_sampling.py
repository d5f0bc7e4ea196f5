"""Sampling the visible layer of a harmonium (numba): sparse Bernoulli draws and replicated-softmax tokens.

Both consume the Generator's uniforms in a documented order (row by row), so the plain-numpy
twins in tests/kernels/test_efh_sampling_parity.py reproduce them draw for draw.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def _skip(rng, log1mq):
    """Failures before the next success of Bernoulli(q) trials: floor(log(u) / log(1 - q)), u in (0, 1]."""
    g = math.floor(math.log(1.0 - rng.random()) / log1mq)
    if g > 1e15:
        g = 1e15
    return np.int64(g)


@njit(cache=True, nogil=True)
def sample_bernoulli_csr(rng, logits, tau, indptr, indices, work):
    """Draw x_bi ~ Bernoulli(sigmoid(logits[b, i])) and write the ones as CSR structure; return their number.

    ``indptr`` (B + 1) and ``indices`` (at least B * n) are filled in place, each row's indices
    in increasing order; ``work`` (int64, at least 3 n) is workspace. Exact, with far fewer
    uniforms than units when most logits are low (documents are sparse). Per row:

    1. the units are split into high (logit > ``tau``) and low ones, both in index order;
    2. each high unit gets its own uniform u and is on iff u (1 + exp(-logit)) < 1;
    3. the low units are thinned: candidates are drawn along the list of low units as a
       Bernoulli(q) process, q = sigmoid(tau), by geometric skips (floor(log u / log(1 - q))
       units to the next candidate, one uniform each), and a candidate is kept with
       probability sigmoid(logit) / q <= 1 (one uniform). So every low unit is on with
       probability q sigmoid(logit) / q, independently of the others;
    4. the two sorted lists of ones are merged.

    Uniforms are consumed in that order: the high units' (in index order), then for the low
    list a skip, and at every candidate its acceptance uniform followed by the next skip.
    """
    n_rows, n_cols = logits.shape
    q = 1.0 / (1.0 + math.exp(-tau))
    log1mq = math.log1p(-q)
    high = work[:n_cols]
    low = work[n_cols:2 * n_cols]
    on_low = work[2 * n_cols:3 * n_cols]
    nnz = 0
    indptr[0] = 0
    for b in range(n_rows):
        n_high = 0
        n_low = 0
        for i in range(n_cols):
            is_high = logits[b, i] > tau
            high[n_high] = i
            low[n_low] = i
            n_high += is_high
            n_low += 1 - is_high
        # high units: one uniform each; accepted ones are written compactly in place
        n_on_high = 0
        for k in range(n_high):
            i = high[k]
            if rng.random() * (1.0 + math.exp(-logits[b, i])) < 1.0:
                high[n_on_high] = i
                n_on_high += 1
        # low units: thinned Bernoulli(q) candidates
        n_on_low = 0
        pos = _skip(rng, log1mq)
        while pos < n_low:
            i = low[pos]
            if rng.random() * q * (1.0 + math.exp(-logits[b, i])) < 1.0:
                on_low[n_on_low] = i
                n_on_low += 1
            pos += 1 + _skip(rng, log1mq)
        # merge
        a = 0
        c = 0
        while a < n_on_high or c < n_on_low:
            if c >= n_on_low or (a < n_on_high and high[a] < on_low[c]):
                indices[nnz] = high[a]
                a += 1
            else:
                indices[nnz] = on_low[c]
                c += 1
            nnz += 1
        indptr[b + 1] = nnz
    return nnz


@njit(cache=True, nogil=True)
def sample_softmax_tokens(rng, logits, lengths, ptr, words, cdf):
    """Draw ``lengths[b]`` words i.i.d. from softmax(logits[b]) for every row b.

    The draws of row b go to ``words[ptr[b]:ptr[b + 1]]`` (``ptr`` is the cumulative sum of
    ``lengths``, given). ``cdf`` (n_words float64) is workspace. Each draw inverts one uniform
    by bisection on the row's cumulative sum of exp(logit - max), O(n_words + D log n_words)
    per row. Rows of length 0 consume no uniforms.
    """
    n_rows, n_cols = logits.shape
    for b in range(n_rows):
        d = lengths[b]
        if d == 0:
            continue
        m = logits[b, 0]
        for i in range(1, n_cols):
            if logits[b, i] > m:
                m = logits[b, i]
        total = 0.0
        for i in range(n_cols):
            total += math.exp(logits[b, i] - m)
            cdf[i] = total
        start = ptr[b]
        for t in range(d):
            u = rng.random() * total
            lo = 0
            hi = n_cols - 1
            while lo < hi:
                mid = (lo + hi) // 2
                if cdf[mid] > u:
                    hi = mid
                else:
                    lo = mid + 1
            words[start + t] = lo
