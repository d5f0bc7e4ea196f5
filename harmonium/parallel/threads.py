"""Thread-level data parallelism for the numba kernels (which release the GIL).

Work is split into contiguous blocks of documents with about equal numbers of
tokens; each block gets its own child Generator drawn from the caller's
stream, so that results depend on the seed and the number of threads only,
never on scheduling.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np


def partition_documents(doc_ptr: np.ndarray, n_parts: int) -> list[tuple[int, int]]:
    """At most ``n_parts`` contiguous document ranges [lo, hi) with about equal token counts."""
    n_docs = doc_ptr.shape[0] - 1
    n_parts = max(1, min(n_parts, max(n_docs, 1)))
    targets = doc_ptr[-1] * np.arange(1, n_parts) / n_parts
    cuts = np.searchsorted(doc_ptr, targets, side="left").clip(0, n_docs)
    bounds = [0, *sorted(int(c) for c in cuts), n_docs]
    return [(bounds[p], bounds[p + 1]) for p in range(n_parts)]


def child_generators(rng: np.random.Generator, n: int) -> list[np.random.Generator]:
    """``n`` Generators seeded from ``rng`` (which advances by n draws)."""
    seeds = rng.integers(0, np.iinfo(np.int64).max, size=n)
    return [np.random.Generator(np.random.PCG64(int(s))) for s in seeds]


def run_blocks(fn: Callable, args: Sequence[tuple]) -> list:
    """``[fn(*a) for a in args]``, one thread per block when there is more than one."""
    if len(args) == 1:
        return [fn(*args[0])]
    with ThreadPoolExecutor(max_workers=len(args)) as pool:
        futures = [pool.submit(fn, *a) for a in args]
        return [f.result() for f in futures]
