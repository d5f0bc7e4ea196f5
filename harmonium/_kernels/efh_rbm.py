"""Fused mini-batch steps of CD-1 / PCD-1 for binary harmoniums (RBMs) on sparse documents (numba).

The generic update of :mod:`harmonium.inference.learning.cd` costs one dense product per
mini-batch (the visible logits h W^T, left to BLAS) plus a dozen small numpy calls; these
kernels do everything else of one step in two calls. With B documents, V words, F hidden
units and the couplings W (V, F):

``rbm_positive``
    U = x W + c (gathered rows of W), h_pos = sigmoid(U); for CD-1 also the hidden sample
    h ~ Bernoulli(h_pos) (one uniform per unit, row-major) that the reconstruction starts from.
``rbm_negative_update``
    x_neg ~ Bernoulli(sigmoid(L + b)) with L = h W^T given (thinned sparse draw, the order
    of uniforms of :func:`harmonium._kernels.efh_sampling.sample_bernoulli_csr`), h_neg =
    sigmoid(x_neg W + c); for PCD-1 the new persistent sample h ~ Bernoulli(h_neg) (one
    uniform per unit, row-major, after the visible draw); then the update with step s = lr / B,

        W += s (x^T h_pos - x_neg^T h_neg),  b += s (sum x - sum x_neg),  c += s (sum h_pos - sum h_neg),

    scattered into the rows of the words that occur (W, b, c mutated in place). The
    negative particles are returned as CSR structure for monitoring and tests.
"""

from __future__ import annotations

import math

from numba import njit

from harmonium._kernels.efh_sampling import sample_bernoulli_csr


@njit(cache=True, nogil=True)
def _hidden_probabilities(indices, data, lo, hi, W, c, out):
    """out = sigmoid(x W + c) for one sparse row x (entries lo..hi-1; ``data`` None: every value is 1)."""
    n_hidden = W.shape[1]
    for f in range(n_hidden):
        out[f] = c[f]
    for e in range(lo, hi):
        i = indices[e]
        if data is None:
            for f in range(n_hidden):
                out[f] += W[i, f]
        else:
            v = data[e]
            for f in range(n_hidden):
                out[f] += v * W[i, f]
    for f in range(n_hidden):
        out[f] = 1.0 / (1.0 + math.exp(-out[f]))


@njit(cache=True, nogil=True)
def _bernoulli(rng, p, out):
    """out ~ Bernoulli(p) elementwise, one uniform per entry in row-major order."""
    for r in range(p.shape[0]):
        for f in range(p.shape[1]):
            out[r, f] = 1.0 if rng.random() < p[r, f] else 0.0


@njit(cache=True, nogil=True)
def rbm_positive(rng, indptr, indices, data, W, c, h_pos, h_sample, draw):
    """h_pos = sigmoid(x W + c) (overwritten); if ``draw``, h_sample ~ Bernoulli(h_pos) row-major."""
    n_rows = indptr.shape[0] - 1
    for b in range(n_rows):
        _hidden_probabilities(indices, data, indptr[b], indptr[b + 1], W, c, h_pos[b])
    if draw:
        _bernoulli(rng, h_pos, h_sample)


@njit(cache=True, nogil=True)
def rbm_negative_update(rng, indptr, indices, data, logits, W, b_vis, c, h_pos, h_neg, chains, persistent, tau,
                        scale, neg_indptr, neg_indices, work):
    """One CD-1 / PCD-1 step after the visible logits (module docstring); returns nnz of x_neg.

    ``logits`` (B, V) holds h W^T on entry and is overwritten with h W^T + b. ``h_neg``
    (B, F) is overwritten; ``chains`` (B, F) receives the new persistent sample if
    ``persistent``. ``neg_indptr`` (B + 1), ``neg_indices`` (>= B V) and ``work`` (int64,
    >= 3 V) are outputs / workspace.
    """
    n_rows, n_vis = logits.shape
    n_hidden = W.shape[1]
    for r in range(n_rows):
        for i in range(n_vis):
            logits[r, i] += b_vis[i]
    nnz = sample_bernoulli_csr(rng, logits, tau, neg_indptr, neg_indices, work)
    for r in range(n_rows):
        _hidden_probabilities(neg_indices, None, neg_indptr[r], neg_indptr[r + 1], W, c, h_neg[r])
    if persistent:
        _bernoulli(rng, h_neg, chains)
    # updates (after every product that reads W)
    for r in range(n_rows):
        for e in range(indptr[r], indptr[r + 1]):
            i = indices[e]
            v = scale * data[e]
            b_vis[i] += v
            for f in range(n_hidden):
                W[i, f] += v * h_pos[r, f]
        for e in range(neg_indptr[r], neg_indptr[r + 1]):
            i = neg_indices[e]
            b_vis[i] -= scale
            for f in range(n_hidden):
                W[i, f] -= scale * h_neg[r, f]
        for f in range(n_hidden):
            c[f] += scale * (h_pos[r, f] - h_neg[r, f])
    return nnz
