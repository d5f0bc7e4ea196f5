"""Thread-level data parallelism for the numba kernels (which release the GIL).

Work is split into contiguous blocks of documents with about equal numbers of
tokens; each block gets its own child Generator drawn from the caller's
stream, so that results depend on the seed and the number of threads only,
never on scheduling.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, wait

import numpy as np

from harmonium.errors import InvalidParameterError


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


class BlockRunner:
    """:func:`run_blocks` on threads kept between calls, for a kernel that runs many short parallel steps.

    The calling thread runs the first block and ``n_threads - 1`` persistent worker threads run the others,
    so a step costs two hand-offs instead of starting and joining a pool. Results are returned in the order
    of ``args`` and never depend on which thread ran a block. The threads end with :meth:`close`, or when
    the runner is garbage-collected (the owner need not call close).
    """

    def __init__(self, n_threads: int):
        self.n_threads = int(n_threads)
        self._pool = ThreadPoolExecutor(max_workers=self.n_threads - 1, thread_name_prefix="harmonium-block") \
            if self.n_threads > 1 else None
        self._finalizer = weakref.finalize(self, _shutdown, self._pool)

    def __call__(self, fn: Callable, args: Sequence[tuple]) -> list:
        """``[fn(*a) for a in args]``; at most ``n_threads`` blocks."""
        if len(args) > self.n_threads:
            raise InvalidParameterError(f"BlockRunner: {len(args)} blocks for {self.n_threads} threads; pass at most "
                             f"{self.n_threads} blocks a call, or make the runner with more threads.")
        if self._pool is None or len(args) == 1:
            return [fn(*a) for a in args]
        futures = [self._pool.submit(fn, *a) for a in args[1:]]
        try:
            first = fn(*args[0])
        finally:  # the other blocks still write into shared arrays: wait for them before anything else
            wait(futures)
        return [first, *(f.result() for f in futures)]

    def close(self) -> None:
        """End the worker threads (after any blocks they are running)."""
        self._finalizer()


def _shutdown(pool) -> None:
    if pool is not None:
        pool.shutdown(wait=False)


#: Bytes kept free on each side of a :func:`worker_array`: two cache lines, as the adjacent-line prefetcher
#: fetches lines in 128-byte pairs.
WORKER_PAD = 128


def worker_array(shape, dtype=np.float64, fill=None) -> np.ndarray:
    """An array of its own cache lines, for a worker thread's scratch: no other array's data lies within
    :data:`WORKER_PAD` bytes of it.

    Small arrays made one after another (numpy's allocator places them side by side) share the cache lines at
    their boundaries; when two threads write them at once, each write sends the line to the other core (false
    sharing). ``fill``: the initial value (uninitialised if None).
    """
    dtype = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64))
    raw = np.empty(n * dtype.itemsize + 2 * WORKER_PAD + 64, dtype=np.uint8)
    start = WORKER_PAD + (-raw.ctypes.data) % 64
    out = raw[start:start + n * dtype.itemsize].view(dtype).reshape(shape)
    if fill is not None:
        out.fill(fill)
    return out


def round_block(part: int, round_: int, n_parts: int) -> int:
    """The word block that document shard ``part`` samples in round ``round_`` of a word-partitioned sweep.

    Over the ``n_parts`` rounds every shard meets every block once, and within a round no two shards
    share a block (a Latin square), so the workers of a round touch disjoint rows of n_wk.
    """
    return (part + round_) % n_parts


#: Consecutive word ids that :func:`partition_words` keeps in one block (at most; see :func:`word_group_size`).
WORD_GROUP = 64


def word_group_size(n_words: int, n_parts: int) -> int:
    """How many consecutive word ids :func:`partition_words` places together: :data:`WORD_GROUP`, fewer when
    the vocabulary would then have under 128 groups a block (1 for small vocabularies)."""
    return int(min(WORD_GROUP, max(1, n_words // (128 * max(n_parts, 1)))))


def partition_words(doc_ptr: np.ndarray, words: np.ndarray, doc_parts: Sequence[tuple[int, int]],
                    n_words: int, group: int | None = None) -> np.ndarray:
    """Assign each word to one of ``len(doc_parts)`` blocks so that every round of the schedule is balanced.

    In round r shard p samples its tokens of block :func:`round_block` (p, r, P); the round lasts as long
    as its largest such cell. The words are placed in runs of ``group`` consecutive ids (default
    :func:`word_group_size`), greedily, most frequent run first, in the block that adds least to the sum
    over rounds of the largest cell (ties: the lower block). Deterministic. Returns the block of each
    word, int32 of length ``n_words``.

    Why runs: the workers of a round write the rows of n_wk (and the per-word list lengths) of different
    blocks at the same time. Word by word, neighbouring rows fall in different blocks, and the cache lines
    at their boundaries (K = 100: a 400-byte row shares 1-2 of its 7 lines, more with the adjacent-line
    prefetch) pass between the cores at every write. Measured on Debian, K = 100: the 2-thread sweep took
    1.27x the CPU of the serial sweep word by word and 1.11x with runs of 64, against 1.08x for the same
    cells run on one thread (benchmarks/lda/README.md, "Threads").
    """
    P = len(doc_parts)
    G = word_group_size(n_words, P) if group is None else int(group)
    if G < 1:
        raise InvalidParameterError(f"partition_words: 'group' must be a positive number of words; got {group!r}.")
    n_groups = -(-n_words // G)
    freq = np.zeros((P, n_groups), dtype=np.int64)
    for p, (lo, hi) in enumerate(doc_parts):
        freq[p] = np.bincount(words[doc_ptr[lo]:doc_ptr[hi]] // G, minlength=n_groups)
    group_block = np.zeros(n_groups, dtype=np.int32)
    if P > 1:
        src = np.empty((P, P), dtype=np.intp)
        for r in range(P):
            for p in range(P):
                src[r, round_block(p, r, P)] = p  # src[r, b]: the shard that samples block b in round r
        cells = np.zeros((P, P), dtype=np.int64)  # cells[r, b]: tokens of shard src[r, b] in block b
        total = freq.sum(axis=0)
        for g in np.argsort(-total, kind="stable"):
            if total[g] == 0:
                break
            grown = cells + freq[src, g]  # each round's cell of block b if run g joins b
            cost = np.maximum(cells.max(axis=1, keepdims=True), grown).sum(axis=0)
            b = int(np.argmin(cost))
            cells[:, b] = grown[:, b]
            group_block[g] = b
    return np.repeat(group_block, G)[:n_words]


def cell_order(doc_ptr: np.ndarray, words: np.ndarray, block_of: np.ndarray,
               n_blocks: int) -> tuple[np.ndarray, np.ndarray]:
    """The token positions grouped by word block, then by document, in stream order within each group.

    Returns ``(order, cell_ptr)``: document d's tokens of block b are
    ``order[cell_ptr[b * n_docs + d] : cell_ptr[b * n_docs + d + 1]]``. A block's cells of consecutive
    documents are adjacent, so a worker's tokens in a round (its documents' cells of one block) are one run
    of ``order``, through which the sweep looks ahead across documents (the next tokens' word lists).
    """
    from harmonium._kernels.token_order import cell_layout  # numba: loaded on first use, not at import

    n_docs = doc_ptr.shape[0] - 1
    n_blocks = int(n_blocks)
    words = np.ascontiguousarray(words)
    block_of = np.ascontiguousarray(block_of)
    if words.shape[0] and not (0 <= int(words.min()) and int(words.max()) < block_of.shape[0]):
        raise InvalidParameterError(f"cell_order: word ids must lie in 0..{block_of.shape[0] - 1}, the words "
                                    f"block_of holds; got {int(words.min())}..{int(words.max())}.")
    if block_of.shape[0] and not (0 <= int(block_of.min()) and int(block_of.max()) < n_blocks):
        raise InvalidParameterError(f"cell_order: block_of must lie in 0..{n_blocks - 1}.")
    order = np.empty(words.shape[0], dtype=np.int32 if words.shape[0] < 2**31 else np.int64)
    cell_ptr = np.zeros(n_docs * n_blocks + 1, dtype=np.int64)
    cell_layout(doc_ptr, words, block_of, n_blocks, order, cell_ptr)
    return order, cell_ptr
