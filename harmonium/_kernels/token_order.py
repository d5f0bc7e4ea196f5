"""Orders of the token stream (numba): a stable counting sort by a small integer key.

The samplers that visit tokens word by word (F+LDA, WarpLDA) and the word-partitioned parallel sweep
reorder the stream once per fit, by word or by word block. ``np.argsort(keys, kind="stable")`` does it in
O(N log N) (numpy's radix sort serves only keys of 16 bits or fewer): about 150 ms for Debian's 2.1 M tokens
and 370-500 ms for PyPI's 4.5 M. A counting sort (Cormen et al., *Introduction to Algorithms*, 3rd ed.,
section 8.2) is O(N + n_keys) and gives the same permutation: 15-18 and 29-43 ms (benchmarks/lda/README.md,
"Threads: what more threads cost", item 4).
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def counting_order(keys, n_keys, out):
    """``out`` <- the positions of ``keys`` in ascending key order, equal keys in position order; returns ``out``.

    Every key must lie in 0 .. n_keys - 1 (unchecked: :func:`stable_order` checks). ``out`` has the length of
    ``keys``; ``np.argsort(keys, kind="stable")`` is the plain-numpy twin.
    """
    start = np.zeros(n_keys + 1, dtype=np.int64)
    for i in range(keys.shape[0]):
        start[keys[i] + 1] += 1
    for k in range(n_keys):
        start[k + 1] += start[k]
    for i in range(keys.shape[0]):
        k = keys[i]
        out[start[k]] = i
        start[k] += 1
    return out


def stable_order(keys: np.ndarray, n_keys: int, dtype=None) -> np.ndarray:
    """``np.argsort(keys, kind="stable")`` for integer keys in 0 .. n_keys - 1, by :func:`counting_order`.

    ``dtype``: of the positions (default int32 when they fit, else int64). A key outside the range is a
    ValueError (the kernel would write outside its arrays).
    """
    keys = np.ascontiguousarray(keys)
    if keys.ndim != 1 or not np.issubdtype(keys.dtype, np.integer):
        raise ValueError(f"stable_order: keys must be a 1-d integer array; got {keys.dtype} of shape {keys.shape}")
    n_keys = int(n_keys)
    if keys.shape[0] and (int(keys.min()) < 0 or int(keys.max()) >= n_keys):
        raise ValueError(f"stable_order: keys must lie in 0..{n_keys - 1}; got {int(keys.min())}..{int(keys.max())}")
    if dtype is None:
        dtype = np.int32 if keys.shape[0] < 2**31 else np.int64
    return counting_order(keys, max(n_keys, 1), np.empty(keys.shape[0], dtype=dtype))


@njit(cache=True, nogil=True)
def cell_layout(doc_ptr, words, block_of, n_blocks, order, cell_ptr):
    """The word-partitioned sweep's cells (:func:`harmonium.parallel.threads.cell_order`) in two passes, O(N + D B).

    ``cell_ptr`` (length D B + 1, zero on entry) <- the cells' bounds in ``order``: document d's tokens of block b
    are ``order[cell_ptr[b * D + d] : cell_ptr[b * D + d + 1]]``; ``order`` (length N) <- the positions, by block,
    then by document, in stream order within a cell. As the stream runs in document order, placing each block's
    tokens in stream order fills its cells one after another, so one cursor a block is enough. Every
    ``block_of[words[i]]`` must lie in 0 .. n_blocks - 1 (unchecked: the caller checks). The plain-numpy twin
    is the stable argsort by the key block D + d.
    """
    n_docs = doc_ptr.shape[0] - 1
    for d in range(n_docs):
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            cell_ptr[block_of[words[i]] * n_docs + d + 1] += 1
    for c in range(n_docs * n_blocks):
        cell_ptr[c + 1] += cell_ptr[c]
    cursor = np.empty(n_blocks, dtype=np.int64)
    for b in range(n_blocks):
        cursor[b] = cell_ptr[b * n_docs]
    for i in range(words.shape[0]):
        b = block_of[words[i]]
        order[cursor[b]] = i
        cursor[b] += 1
