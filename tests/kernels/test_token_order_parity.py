"""The token stream's orders against their plain-numpy twins: the counting sort against
``np.argsort(keys, kind="stable")``, the word-partitioned sweep's cells against the stable argsort by the key
block D + d."""

from __future__ import annotations

import numpy as np
import pytest

from harmonium._kernels.token_order import cell_layout, counting_order, stable_order
from harmonium.errors import InvalidParameterError
from harmonium.parallel.threads import cell_order


@pytest.mark.parametrize("n, n_keys, skew", [(0, 1, 0.0), (1, 1, 0.0), (500, 3, 0.0), (2000, 40, 1.3), (3000, 2, 0.0)])
def test_stable_order_matches_numpy_stable_argsort(n, n_keys, skew):
    rng = np.random.default_rng(n + n_keys)
    keys = ((rng.zipf(skew, n) - 1) % n_keys if skew else rng.integers(0, n_keys, n)).astype(np.int32)
    want = np.argsort(keys, kind="stable")
    got = stable_order(keys, n_keys)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(stable_order(keys, n_keys, np.int64), want)
    # keys that never occur (n_keys larger than the largest key) change nothing
    np.testing.assert_array_equal(counting_order(keys, n_keys + 5, np.empty(n, np.int64)), want)


def test_the_comparison_sees_the_order_within_ties():
    # negative control: an order sorted by key but not stable within ties fails the same comparison
    keys = np.array([1, 0, 1, 0, 1, 0, 0, 1], dtype=np.int32)
    unstable = np.lexsort((-np.arange(keys.shape[0]), keys))  # ties in reverse position order
    assert np.array_equal(keys[unstable], np.sort(keys))
    assert not np.array_equal(stable_order(keys, 2), unstable)


def test_stable_order_refuses_keys_outside_the_range():
    with pytest.raises(ValueError, match="0..2"):
        stable_order(np.array([0, 3, 1]), 3)
    with pytest.raises(ValueError, match="0..2"):
        stable_order(np.array([0, -1, 1]), 3)
    with pytest.raises(ValueError, match="integer"):
        stable_order(np.array([0.5, 1.0]), 3)


def reference_cells(doc_ptr, words, block_of, n_blocks):
    n_docs = doc_ptr.shape[0] - 1
    key = block_of[words].astype(np.int64) * n_docs + np.repeat(np.arange(n_docs), np.diff(doc_ptr))
    cell_ptr = np.zeros(n_docs * n_blocks + 1, dtype=np.int64)
    np.cumsum(np.bincount(key, minlength=n_docs * n_blocks), out=cell_ptr[1:])
    return np.argsort(key, kind="stable"), cell_ptr


@pytest.mark.parametrize("n_blocks", [1, 2, 3, 5])
def test_cell_layout_matches_the_argsort_by_key(n_blocks):
    rng = np.random.default_rng(n_blocks)
    lengths = rng.integers(0, 12, 40)  # empty documents included
    doc_ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    V = 17
    words = rng.integers(0, V, int(doc_ptr[-1])).astype(np.int32)
    block_of = rng.integers(0, n_blocks, V).astype(np.int32)
    order = np.empty(words.shape[0], np.int32)
    cell_ptr = np.zeros(40 * n_blocks + 1, np.int64)
    cell_layout(doc_ptr, words, block_of, n_blocks, order, cell_ptr)
    want_order, want_ptr = reference_cells(doc_ptr, words, block_of, n_blocks)
    np.testing.assert_array_equal(cell_ptr, want_ptr)
    np.testing.assert_array_equal(order, want_order)
    # negative control: grouped by block but in reverse stream order within it (so documents run backwards)
    backwards = np.lexsort((-np.arange(words.shape[0]), block_of[words]))
    assert not np.array_equal(backwards, want_order)


def test_cell_order_refuses_words_or_blocks_outside_their_range():
    doc_ptr = np.array([0, 2, 3], np.int64)
    block_of = np.array([0, 1, 1], np.int32)
    for words in (np.array([0, 3, 1]), np.array([0, -1, 1])):  # no block; a negative id would wrap in the kernel
        with pytest.raises(InvalidParameterError, match=r"word ids must lie in 0\.\.2"):
            cell_order(doc_ptr, words, block_of, 2)
    with pytest.raises(InvalidParameterError, match=r"block_of must lie in 0\.\.1"):
        cell_order(doc_ptr, np.array([0, 2, 1]), np.array([0, 1, 2], np.int32), 2)
    order, cell_ptr = cell_order(doc_ptr, np.array([0, 2, 1]), block_of, 2)  # the same arrays, in range: accepted
    np.testing.assert_array_equal(cell_ptr, [0, 1, 1, 2, 3])
    np.testing.assert_array_equal(order, [0, 1, 2])
