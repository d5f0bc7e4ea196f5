"""Approximate collapsed Gibbs sampling for LDA over threads: word-partitioned, and AD-LDA.

Seed 003 ("Approximate Collapsed Gibbs Sampling") observes that when each
z_i is drawn given *estimates* of Theta and B from the previous step instead
of the exact current counts, the draws become conditionally independent and
"easily parallelized". Two schemes apply this over P threads; both split the
documents into P shards of about equal token count (a document lives on one
worker, so its counts n_dk are always exact).

**Word-partitioned** (the SparseLDA and F+LDA samplers, ``sampler="sparse"`` and ``"fplus"``, and "auto"
when it picks sparse: then each sweep is the word-partitioned F+LDA or SparseLDA sweep, by the cost rule
of the serial "auto", :class:`PartitionedAuto`).
As tomotopy's PARTITION scheme and the model-parallel blocks of LightLDA (Yuan et al. 2015) do, the
vocabulary is also split into P blocks (:func:`~harmonium.parallel.threads.partition_words`, balanced per
round; runs of consecutive word ids stay together, so that the workers' rows of n_wk share no cache
lines). A sweep is P rounds; in round r shard p samples its tokens whose word lies in block
(p + r) mod P (:func:`~harmonium.parallel.threads.round_block`), with a barrier between rounds. Within a
round the workers touch disjoint rows of n_wk, so every token sees the exact current n_dk and n_wk
rows; only the K topic totals n_k are per worker: each worker starts the round from the shared n_k and
sees its own moves, and the shards' changes are added to n_k at the barrier. No V x K table is copied
or merged. On documents of fewer than :data:`TABLE_TOKENS_PER_TOPIC` K tokens on average no D x K table is
kept: at each visit the worker rebuilds the document's row of n_dk and its topic list from z, as the serial
sweep does (O(N_d) a visit, P visits a sweep). Against a kept table and kept topic lists this measured 1.10x
faster on PyPI at K = 100 and level on Debian, and the fit's peak RSS fell from 620 to 463 MiB on PyPI
(benchmarks/lda/README.md, "Threads without the D x K table"). On longer documents the SparseLDA sweep's state
keeps the table (:func:`needs_doc_counts`, :func:`keeps_doc_table`), and a visit reads the document's row and
its topic list, kept between visits (:func:`~harmonium._kernels.lda_sparse.refresh_doc_lists`), instead of
walking its tokens; so does any state that carries the table (``init(..., doc_counts=True)``).
The F+LDA sweep (:class:`PartitionedFPlus`) runs the same rounds over the same cells, each cell word by
word. This is a less stale approximation than AD-LDA's (which also delays n_wk), but a different chain from the
serial one: besides n_k, a document's tokens are visited block by block, so the scan
order differs from the stream order. The per-word topic lists of the sparse sampler are shared and
outlive a sweep: the worker that samples block b in round 0 refreshes them for block b's words
(:func:`~harmonium._kernels.lda_sparse.refresh_block_word_lists`: a list still in step with n_wk is kept
and re-sorted, any other rebuilt), at the cost of the lists instead of a scan of the block's rows of n_wk.

**AD-LDA** (Newman et al. 2009; the "plain", "alias_mh" and "warp" samplers):
1. each worker p sweeps its shard with an exact collapsed sampler against its
   own copy of the word-topic counts n_wk^(p), n_k^(p) (stale with respect to
   the other blocks for the rest of the sweep);
2. the changes are merged: n_wk <- n_wk + sum_p (n_wk^(p) - n_wk), computed as the moves of
   worker p's tokens from their old to their new topics (no copy of the starting n_wk is kept).

Workers are threads running the numba sweeps with the GIL released. Each
worker gets a child Generator seeded from the main stream at every sweep (one per shard, used in all
rounds), so the same seed and the same number of threads give identical results whatever
the scheduling. With one thread the kernel *is* the exact serial sampler.
The approximation's effect on held-out perplexity is measured in
tests/integration/test_parallel_quality.py; speed in benchmarks/lda/README.md ("Threads").
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from harmonium._kernels import lda_fplus, lda_sparse, lda_warp
from harmonium._kernels.lda_gibbs import apply_moves
from harmonium.corpus.corpus import TokenStream
from harmonium.errors import InvalidParameterError
from harmonium.inference.mcmc.lda import fplus
from harmonium.inference.mcmc.lda.collapsed_gibbs import (
    SAMPLERS,
    CollapsedGibbsInfo,
    CollapsedGibbsState,
    SweepCache,
    check_sampler,
    resolve_sampler,
    word_slots,
)
from harmonium.inference.mcmc.lda.collapsed_gibbs import build_kernel as build_serial_kernel
from harmonium.inference.mcmc.lda.collapsed_gibbs import needs_doc_counts as serial_needs_doc_counts
from harmonium.models.directed.lda import LDAModel, collapsed_log_joint, doc_count_dtype, seeded_counts
from harmonium.parallel.threads import (
    BlockRunner,
    cell_order,
    child_generators,
    partition_documents,
    partition_words,
    round_block,
    run_blocks,
    worker_array,
)

#: Samplers with a word-partitioned sweep; the others run AD-LDA.
WORD_PARTITIONED = ("sparse", "fplus")


class WordPartition(NamedTuple):
    """Document shards, word blocks and the token order of the word-partitioned sweep."""

    doc_parts: list  # P (lo, hi) document ranges
    block_words: list  # P int32 arrays: the words of each block
    order: np.ndarray  # (N,) token positions by block, then document
    cell_ptr: np.ndarray  # (P * D + 1,) int64: block b's cell of document d is order[cell_ptr[b*D+d]:cell_ptr[b*D+d+1]]


def word_partition(tokens: TokenStream, n_words: int, n_parts: int) -> WordPartition:
    """The shards, blocks and cell order of ``tokens`` for ``n_parts`` workers."""
    parts = partition_documents(tokens.doc_ptr, n_parts)
    P = len(parts)
    block_of = partition_words(tokens.doc_ptr, tokens.words, parts, n_words)
    order, cell_ptr = cell_order(tokens.doc_ptr, tokens.words, block_of, P)
    block_words = [np.flatnonzero(block_of == b).astype(np.int32) for b in range(P)]
    return WordPartition(parts, block_words, order, cell_ptr)


class _Partitioned:
    """A word-partitioned sweep ``sweep(rngs, state) -> n_changed``: P rounds over the layout's cells, each
    followed by adding the workers' n_k changes to the shared n_k. Subclasses sample a cell:
    ``cell(rng, state, n_k, p, block, first, last, docs) -> n_changed``, shard p's tokens of ``block``
    against the worker's own ``n_k``; ``first`` / ``last``: the sweep's first / last round."""

    layout: WordPartition
    model: LDAModel

    def docs(self, state: CollapsedGibbsState) -> tuple:
        """What every cell of this sweep also gets (the sparse sweep's kept document lists)."""
        return (None, None, None)

    def __call__(self, rngs, state: CollapsedGibbsState) -> int:
        """One sweep: P rounds, each followed by adding the workers' n_k changes to the shared n_k.

        The rounds run on one :class:`~harmonium.parallel.threads.BlockRunner` kept for the object's life
        (the calling thread samples shard 0, persistent threads the others): starting a thread pool for every
        round cost about 2% of the wall time of a sweep (Debian, K = 100, benchmarks/lda/README.md "Threads").
        """
        P = len(self.layout.doc_parts)
        runner = self.__dict__.get("runner")
        if runner is None:
            runner = self.runner = BlockRunner(P)
        n_changed = 0
        docs = self.docs(state)
        n_k = self.__dict__.get("worker_n_k")  # each worker's topic totals in a round, on lines of their own
        if n_k is None or n_k[0].dtype != state.n_k.dtype:
            n_k = self.worker_n_k = [worker_array(state.n_k.shape, state.n_k.dtype) for _ in range(P)]
        with seeded_counts(state.n_wk, state.n_k, self.model.seeds):
            for r in range(P):
                start = state.n_k.copy()
                for local in n_k:
                    local[:] = start
                n_changed += sum(runner(self.cell, [(rngs[p], state, n_k[p], p, round_block(p, r, P), r == 0,
                                                     r == P - 1, docs) for p in range(P)]))
                merge_topic_totals(state.n_k, start, n_k)
        return n_changed


class PartitionedSparse(_Partitioned):
    """The word-partitioned SparseLDA sweep for one (model, tokens): shared word lists, scratch per worker."""

    def __init__(self, model: LDAModel, tokens: TokenStream, n_parts: int, layout: WordPartition | None = None):
        self.model, self.tokens = model, tokens
        self.layout = word_partition(tokens, model.n_words, n_parts) if layout is None else layout
        K, V = model.n_topics, model.n_words
        self.wptr = np.zeros(V + 1, dtype=np.int64)
        np.cumsum(np.minimum(word_slots(model, tokens), K), out=self.wptr[1:])
        self.wtop = np.empty(int(self.wptr[-1]), dtype=np.int64)  # packed (count, topic) entries
        self.wlen = np.zeros(V, dtype=np.int32)  # all lists empty: the first refresh builds them
        # n_wk's row totals, with which a list that outlived its sweep is checked (seeds add more: rebuilt)
        self.row_sums = np.bincount(tokens.words, minlength=V).astype(np.int64)
        # the last scratch array: the document's row of n_dk, rebuilt from z at each visit (zero between visits;
        # unused when the state has the table, but of its dtype)
        # (each on cache lines of its own, as the workers' topic totals below: no false sharing between workers)
        self.scratch = [(worker_array(K), worker_array(K), worker_array(K), worker_array(K, np.int32),
                         worker_array(K, np.uint8, 0), worker_array(K, doc_count_dtype(tokens.doc_ptr), 0))
                        for _ in self.layout.doc_parts]

    def cell(self, rng, state: CollapsedGibbsState, n_k: np.ndarray, p: int, block: int, first: bool, last: bool,
             docs: tuple = (None, None, None)) -> int:
        """Shard p's tokens of ``block`` against the shared n_wk (and n_dk, if the state has it) and the worker's
        own ``n_k``; ``docs`` are :meth:`doc_lists` when the state has n_dk."""
        m, t, lay = self.model, self.tokens, self.layout
        lo, hi = lay.doc_parts[p]
        if first:  # this worker is the first to sample the block this sweep, and to visit its shard's documents
            lda_sparse.refresh_block_word_lists(state.n_wk, self.row_sums, lay.block_words[block], self.wptr,
                                                self.wtop, self.wlen)
            if state.n_dk is not None:
                lda_sparse.refresh_doc_lists(t.doc_ptr, state.z, state.n_dk, lo, hi, *docs, self.scratch[p][4])
        return lda_sparse.sparse_sweep_cell(
            rng, t.doc_ptr, t.words, state.z, state.n_dk, state.n_wk, n_k, m.alpha, m.beta, lo, hi,
            lay.order, lay.cell_ptr, block, lay.block_words[block], self.wptr, self.wtop,
            self.wlen, *self.scratch[p], *docs)

    def docs(self, state: CollapsedGibbsState) -> tuple:
        return (None, None, None) if state.n_dk is None else self.doc_lists()

    def doc_lists(self) -> tuple:
        """``(dptr, dlist, dlens)``: each document's topic list, kept between its visits when the state has an n_dk
        table (capacity min(N_d, K)). Made at the first call, which :meth:`__call__` makes before the workers
        start; the workers share the arrays and own disjoint documents."""
        lists = self.__dict__.get("_doc_lists")
        if lists is None:
            doc_ptr, K = self.tokens.doc_ptr, self.model.n_topics
            dptr = np.zeros(len(doc_ptr), dtype=np.int64)
            np.cumsum(np.minimum(np.diff(doc_ptr), K), out=dptr[1:])
            lists = self._doc_lists = (dptr, np.empty(int(dptr[-1]), dtype=np.int32),
                                       np.zeros(len(doc_ptr) - 1, dtype=np.int32))  # empty: the refresh finds them
        return lists


class PartitionedFPlus(_Partitioned):
    """The word-partitioned F+LDA sweep: the same shards, blocks and rounds as :class:`PartitionedSparse`; in
    each cell the worker visits its shard's tokens of the block's words word by word
    (:func:`~harmonium._kernels.lda_fplus.fplus_sweep` over ``block_words``). F+Nomad LDA (Yu, Hsieh, Yun,
    Vishwanathan & Dhillon 2015) distributes F+LDA the same way: each worker owns documents, and the rows of
    n_wk move between workers (here in synchronous rounds, there asynchronously).

    Against :class:`PartitionedSparse` on 2 threads, with ``auto`` choosing F+LDA where its rule does: PyPI
    K = 1000 2 threads reach a target 1.59-1.63x faster than one, where the SparseLDA sweep was 0.52-0.66x
    (benchmarks/lda/README.md, "Threads with F+LDA").

    Per shard, one :class:`~harmonium.inference.mcmc.lda.fplus.FPlusSweep` holds the word-major index of the
    shard's tokens and its documents' (count, topic) lists. At the sweep's first round each worker builds its
    documents' lists from z and gathers its z in word-major order; the lists and that z are then the
    worker's own through the rounds (a document lives on one worker), and its last round scatters z back.
    The F+ tree of a word is built once a cell, so a word with tokens in several shards costs a tree per shard
    (O(K) each).
    """

    def __init__(self, model: LDAModel, tokens: TokenStream, n_parts: int, layout: WordPartition | None = None):
        self.model, self.tokens = model, tokens
        self.layout = word_partition(tokens, model.n_words, n_parts) if layout is None else layout
        # one per worker, its scratch on cache lines of its own
        self.shards = [fplus.FPlusSweep(model, tokens, array=worker_array) for _ in self.layout.doc_parts]

    def cell(self, rng, state: CollapsedGibbsState, n_k: np.ndarray, p: int, block: int, first: bool, last: bool,
             docs: tuple = (None, None, None)) -> int:
        """Shard p's tokens of ``block``, word by word, against the shared n_wk and the worker's own ``n_k``."""
        lo, hi = self.layout.doc_parts[p]
        sw = self.shards[p]
        perm, wptr, wdoc, z_w, dptr, dlist, dlen, _ = sw.index(lo, hi)
        if first:
            sw.doc_lists(state.z, lo, hi)
            lda_warp.gather(perm, state.z, z_w)
        n_dk = None if state.n_dk is None else state.n_dk[lo:hi]
        n_changed = lda_fplus.fplus_sweep(rng, wptr, wdoc, z_w, n_dk, state.n_wk, n_k, sw.alpha, sw.beta, dptr, dlist,
                                          dlen, sw.c, sw.buf, sw.f, sw.pick, self.layout.block_words[block])
        if last:
            lda_fplus.scatter(perm, z_w, state.z)
        return int(n_changed)

    def release(self) -> None:
        """Free the shards' word-major indexes and document lists (O(N)); the next sweep makes them again."""
        for sw in self.shards:
            sw.release()


class PartitionedAuto(fplus.AutoSweep):
    """``sampler="auto"`` on P threads where it picks "sparse": each sweep the word-partitioned F+LDA sweep
    while :func:`~harmonium.inference.mcmc.lda.fplus.fplus_is_cheaper` holds for the state (read on the
    same sample of documents as on one thread), else the word-partitioned SparseLDA sweep. The two share
    one layout and one set of worker threads."""

    def __init__(self, model: LDAModel, tokens: TokenStream, n_parts: int, layout: WordPartition | None = None):
        sparse = PartitionedSparse(model, tokens, n_parts, layout)
        fp = PartitionedFPlus(model, tokens, n_parts, sparse.layout)
        super().__init__(model, tokens, sparse, fp)
        self.model, self.layout = model, sparse.layout
        self.doc_visits = len(self.layout.doc_parts)  # the SparseLDA sweep visits a document once a word block

    @property
    def runner(self):
        return self.sparse.__dict__.get("runner")

    @runner.setter
    def runner(self, value) -> None:
        self.sparse.runner = self.fplus.runner = value

    def __call__(self, rngs, state: CollapsedGibbsState) -> int:
        if self.runner is None:
            self.runner = BlockRunner(len(self.layout.doc_parts))
        return self.choose(state, 0, len(self.tokens.doc_ptr) - 1)(rngs, state)


#: The word-partitioned sweep of each sampler in :data:`WORD_PARTITIONED`, and of "auto" where it picks "sparse".
PARTITIONED = {"sparse": PartitionedSparse, "fplus": PartitionedFPlus, "auto": PartitionedAuto}


#: The word-partitioned SparseLDA sweep keeps the (D, K) n_dk table when the documents average at least this many
#: tokens a topic (N / D >= TABLE_TOKENS_PER_TOPIC * K). A visit then reads the document's row and its kept topic
#: list (O(k_d), and a pass over the lists each sweep) instead of walking its tokens (O(N_d)), which pays on long
#: documents: measured on one thread, table / walk CPU 0.905 at N / D = 3.6 K (Debian joined 10 to a document,
#: K = 100; on 2 threads 0.934 in wall time, the sweep 1.86x the serial one against 1.71x), 0.975 at 1.44 K,
#: 1.016 at 0.72 K, 1.026 at 0.36 K (Debian) and 1.021 at 0.36 K (the long documents at K = 1000)
#: (benchmarks/lda/README.md, "Threads: what more threads cost", item 5). At the threshold the int16 table
#: holds at most one byte a token.
TABLE_TOKENS_PER_TOPIC = 2.0


def keeps_doc_table(sampler: str, model: LDAModel, tokens: TokenStream) -> bool:
    """Whether the word-partitioned sweep of ``sampler`` runs on a state with the (D, K) table: SparseLDA's
    ("sparse", and "auto", whose SparseLDA sweeps read it) on documents of at least
    :data:`TABLE_TOKENS_PER_TOPIC` tokens a topic on average; F+LDA's builds its document lists from z at
    every sweep and has no use for it."""
    n_docs = tokens.doc_ptr.shape[0] - 1
    return (resolve_sampler(sampler) == "sparse" and n_docs > 0
            and tokens.words.shape[0] >= TABLE_TOKENS_PER_TOPIC * model.n_topics * n_docs)


def needs_doc_counts(sampler: str, model: LDAModel, tokens: TokenStream, n_threads: int) -> bool:
    """Whether the ``n_threads``-thread sweep of ``sampler`` needs the (D, K) n_dk table in the state: AD-LDA's, and
    the word-partitioned sweep's on long documents (:func:`keeps_doc_table`; on shorter ones it rebuilds each
    document's row from z); with one thread, the serial sweep's need
    (:func:`~harmonium.inference.mcmc.lda.collapsed_gibbs.needs_doc_counts`)."""
    if n_threads == 1:
        return serial_needs_doc_counts(sampler, model, tokens)
    return resolve_sampler(sampler) not in WORD_PARTITIONED or keeps_doc_table(sampler, model, tokens)


def merge_topic_totals(n_k: np.ndarray, start: np.ndarray, worker_n_k: list) -> None:
    """n_k <- start + sum_p (n_k^(p) - start): every worker's moves of a round, added once (in place)."""
    n_k[:] = start
    for local in worker_n_k:
        n_k += local - start


def build_kernel(*, sampler: str = "sparse", n_threads: int = 2, compute_log_joint: bool = True):
    """An approximate collapsed Gibbs sweep over ``n_threads`` workers, each with the exact ``sampler``.

    Word-partitioned for the samplers in :data:`WORD_PARTITIONED`, AD-LDA for the others (module
    docstring). Mutates the state's arrays in place. ``n_threads == 1`` returns the serial
    exact kernel of :mod:`harmonium.inference.mcmc.lda.collapsed_gibbs`.
    """
    check_sampler(sampler)
    if n_threads == 1:
        return build_serial_kernel(sampler=sampler, compute_log_joint=compute_log_joint)
    cache = SweepCache(SAMPLERS[sampler])
    partitioned: dict = {}

    def scheme(model, tokens):
        """The word-partitioned sweep for (model, tokens), or None when the sampler runs AD-LDA."""
        if resolve_sampler(sampler) not in WORD_PARTITIONED:
            return None
        key = (id(model), id(tokens))
        if key not in partitioned:
            # a new model for the same tokens (the estimator's hyperparameter updates) keeps the layout and
            # the threads: the layout depends on the tokens and the vocabulary size only
            previous = partitioned.pop(next(iter(partitioned)), None) if partitioned else None
            reuse = previous is not None and previous.tokens is tokens and previous.model.n_words == model.n_words
            partitioned.clear()
            make = PARTITIONED[sampler]  # "auto" has its own: the per-sweep choice on the word-partitioned sweeps
            partitioned[key] = make(model, tokens, n_threads, previous.layout if reuse else None)
            if reuse and getattr(previous, "runner", None) is not None:
                partitioned[key].runner = previous.runner
        return partitioned[key]

    def adlda(rng, state: CollapsedGibbsState, tokens: TokenStream, model: LDAModel) -> int:
        parts = partition_documents(tokens.doc_ptr, n_threads)
        rngs = child_generators(rng, len(parts))
        # worker 0 works on the shared tables, the others on private copies taken before any worker starts;
        # their changes are merged from their tokens' old and new topics (no copy of the starting tables)
        locals_ = [state] + [
            CollapsedGibbsState(state.z, state.n_dk, state.n_wk.copy(), state.n_k.copy()) for _ in parts[1:]
        ]
        first = int(tokens.doc_ptr[parts[1][0]]) if len(parts) > 1 else 0
        z_before = state.z[first:].copy()
        sweeps = [cache.get(model, tokens, part=p) for p in range(len(parts))]
        for p, sw in enumerate(sweeps):  # sweeps that copy z (warp) take it before any worker writes
            if hasattr(sw, "prepare"):
                sw.prepare(locals_[p])
        n_changed = sum(run_blocks(lambda p, lo, hi: sweeps[p](rngs[p], locals_[p], lo, hi),
                                   [(p, lo, hi) for p, (lo, hi) in enumerate(parts)]))
        locals_.clear()  # the private copies go before the merge
        for lo, hi in parts[1:]:
            i, j = int(tokens.doc_ptr[lo]), int(tokens.doc_ptr[hi])
            apply_moves(tokens.words[i:j], z_before[i - first:j - first], state.z[i:j], state.n_wk, state.n_k)
        return n_changed

    def kernel(rng, state: CollapsedGibbsState, tokens: TokenStream, model: LDAModel):
        sweep = scheme(model, tokens)
        if sweep is None:
            if state.n_dk is None:
                raise InvalidParameterError(
                    f"The {n_threads}-thread Gibbs sampler with sampler={sampler!r} runs AD-LDA, whose workers share "
                    "the state's n_dk table, but this state has none; make it with collapsed_gibbs.init(..., "
                    "doc_counts=True), or use sampler='sparse', whose word-partitioned sweep needs no table.")
            n_changed = adlda(rng, state, tokens, model)
        else:
            n_changed = sweep(child_generators(rng, len(sweep.layout.doc_parts)), state)
        lj = (collapsed_log_joint(state.n_dk, state.n_wk, state.n_k, model, doc_ptr=tokens.doc_ptr, z=state.z)
              if compute_log_joint else float("nan"))
        return state, CollapsedGibbsInfo(lj, int(n_changed))

    return kernel
