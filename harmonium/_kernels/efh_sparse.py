"""Sparse-times-dense products of harmonium learning (numba): row gathers and rank-one scatters.

A visible mini-batch x (B, V) of documents is sparse; its coupling to the hidden layer
x W (B, F) gathers the rows of W (V, F) that the documents use, and the weight update
x^T H (V, F) scatters each document's hidden vector into those rows. Both cost
O(nnz F) instead of the O(B V F) of a dense product.
"""

from __future__ import annotations

from numba import njit


@njit(cache=True, nogil=True)
def csr_gather_rows(indptr, indices, data, W, out):
    """out[b, :] = sum_{e in row b} data[e] * W[indices[e], :]  (out is overwritten)."""
    n_rows = indptr.shape[0] - 1
    n_cols = W.shape[1]
    for b in range(n_rows):
        for f in range(n_cols):
            out[b, f] = 0.0
        for e in range(indptr[b], indptr[b + 1]):
            i = indices[e]
            v = data[e]
            for f in range(n_cols):
                out[b, f] += v * W[i, f]


@njit(cache=True, nogil=True)
def csr_scatter_outer(indptr, indices, data, H, scale, W):
    """W[indices[e], :] += scale * data[e] * H[b, :] for every entry e of row b (W is mutated in place).

    ``scale * x^T H`` added to W without forming the dense (V, F) product.
    """
    n_rows = indptr.shape[0] - 1
    n_cols = W.shape[1]
    for b in range(n_rows):
        for e in range(indptr[b], indptr[b + 1]):
            i = indices[e]
            v = scale * data[e]
            for f in range(n_cols):
                W[i, f] += v * H[b, f]
