"""The token stream's one-off orders: numpy's stable argsort against the counting sorts of ``_kernels.token_order``.

Issue 21 (time to quality counts a fit's set-up). F+LDA's and WarpLDA's word-major order was
``np.argsort(words, kind="stable")`` and the word-partitioned sweep's cell order an argsort by the key block D + d,
both O(N log N); ``stable_order`` and ``cell_layout`` are O(N + keys) and give the same permutations. For each
CORPUS (the benchmark's training split), REPEATS alternating timings of each, median milliseconds (wall), and a
check that the orders are equal:

* the word-major order (``np.argsort(words, kind="stable")`` against ``stable_order(words, V)``);
* the cells of P = 2, 4, 8 (the argsort by key, with the key and bincount it needs, against ``threads.cell_order``).

    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/token_order_speed.py 5 debian pypi    # REPEATS, CORPUS...

2026-11-29 (thirteenth session, AMD EPYC VM): results/token-order-speed-amd.txt; benchmarks/lda/README.md,
"Threads: what more threads cost", item 4.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: _common

import _common as C  # noqa: E402

from harmonium._kernels.token_order import stable_order  # noqa: E402
from harmonium.parallel.threads import cell_order, partition_documents, partition_words  # noqa: E402


def argsort_cells(doc_ptr, words, block_of, n_blocks):
    """The cell order as ``threads.cell_order`` made it before the counting sort (the plain-numpy twin)."""
    n_docs = doc_ptr.shape[0] - 1
    key = block_of[words].astype(np.int64) * n_docs
    key += np.repeat(np.arange(n_docs, dtype=np.int64), np.diff(doc_ptr))
    cell_ptr = np.zeros(n_docs * n_blocks + 1, dtype=np.int64)
    np.cumsum(np.bincount(key, minlength=n_docs * n_blocks), out=cell_ptr[1:])
    return np.argsort(key, kind="stable").astype(np.int32), cell_ptr


def timed(fn, repeats):
    out, times = None, []
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return out, 1e3 * float(np.median(times))


def main(argv) -> None:
    repeats = int(argv[0])
    stable_order(np.zeros(4, np.int32), 1)  # compile or load, off the clock
    cell_order(np.array([0, 2]), np.zeros(2, np.int32), np.zeros(1, np.int32), 1)
    for corpus in argv[1:]:
        report(corpus, repeats)


def report(corpus: str, repeats: int) -> None:
    """Print CORPUS's timings (see the module docstring)."""
    _, tokens, model, _, _ = C.lda_start(corpus, 100, 0, doc_counts=False)
    ptr, w, V = tokens.doc_ptr, tokens.words, model.n_words
    print(f"{corpus}: {w.shape[0]:,} tokens, {ptr.shape[0] - 1:,} documents, V = {V:,}")
    a, ta = timed(lambda: np.argsort(w, kind="stable"), repeats)
    b, tb = timed(lambda: stable_order(w, V), repeats)
    print(f"  word-major order: argsort {ta:.1f} ms, stable_order {tb:.1f} ms ({ta / tb:.1f}x); "
          f"equal {np.array_equal(a, b)}")
    for P in (2, 4, 8):
        block_of = partition_words(ptr, w, partition_documents(ptr, P), V)
        a, ta = timed(lambda b_=block_of, P_=P: argsort_cells(ptr, w, b_, P_), repeats)
        b, tb = timed(lambda b_=block_of, P_=P: cell_order(ptr, w, b_, P_), repeats)
        same = np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
        print(f"  cells, P = {P}: argsort by key {ta:.1f} ms, cell_order {tb:.1f} ms ({ta / tb:.1f}x); equal {same}")

if __name__ == "__main__":
    main(sys.argv[1:])
