"""Parity of the SparseLDA sweeps with plain-numpy twins (same buckets, same list order, same uniforms).

Also the word-partitioned parallel sweep (parallel_gibbs.PartitionedSparse): a sequential twin that
runs each round's shards one after another, each against the shared n_dk and n_wk and its own copy of
n_k, must give the same assignments and tables; a schedule that does not rotate the word blocks must not.
"""

from __future__ import annotations

import numpy as np
import pytest

from harmonium._kernels import lda_sparse
from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs
from harmonium.inference.mcmc.lda import parallel_gibbs as pg
from harmonium.models.directed.lda import counts_from_assignments, make_model
from harmonium.parallel.threads import child_generators, round_block

from .test_lda_gibbs_parity import _random_problem


def reference_word_lists(n_wk):
    V, K = n_wk.shape
    return [sorted((k for k in range(K) if n_wk[w, k] > 0), key=lambda k, w=w: -n_wk[w, k]) for w in range(V)]


def reference_sparse_sweep(rng, doc_ptr, words, z, n_dk, n_wk, n_k, alpha, beta):
    cells = [(d, range(doc_ptr[d], doc_ptr[d + 1])) for d in range(len(doc_ptr) - 1)]
    reference_sparse_cells(rng, doc_ptr, words, z, n_dk, n_wk, n_k, alpha, beta, cells, reference_word_lists(n_wk))


M64 = (1 << 64) - 1


def reference_uniforms(rng):
    """The kernel's uniforms for one call: xoshiro256+ (Blackman & Vigna 2021), its state four SplitMix64
    outputs (Steele et al. 2014) from one draw of ``rng``; written here from the published algorithms."""
    x = int(rng.integers(0, 2**63 - 1))
    s = []
    for _ in range(4):
        x = (x + 0x9E3779B97F4A7C15) & M64
        y = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & M64
        y = ((y ^ (y >> 27)) * 0x94D049BB133111EB) & M64
        s.append(y ^ (y >> 31))
    while True:
        yield (((s[0] + s[3]) & M64) >> 11) / 2.0**53
        t = (s[1] << 17) & M64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = ((s[3] << 45) & M64) | (s[3] >> 19)


def reference_sparse_cells(rng, doc_ptr, words, z, n_dk, n_wk, n_k, alpha, beta, cells, wl, doc_lists=None):
    """The sparse sweep over ``cells``, (document, token positions) pairs in order, with word lists ``wl``.

    A document's topic list is found from z (first occurrence order) at each visit, or, with the dict
    ``doc_lists``, at its first visit only, in ascending order (what ``refresh_doc_lists`` leaves), and then
    kept there between visits (in place, swap-remove and append). A word's list keeps the token's old topic
    in place while the token is drawn (its count one lower, possibly zero); the entry leaves (swap with the
    last) after the draw if the count is still zero.
    """
    V, K = n_wk.shape
    c = 1.0 / (n_k + V * beta)
    uniforms = reference_uniforms(rng)
    for d, positions in cells:
        if len(positions) == 0:
            continue
        dl = list(dict.fromkeys(int(k) for k in z[doc_ptr[d]:doc_ptr[d + 1]]))
        if doc_lists is not None:
            dl = doc_lists.setdefault(d, sorted(dl))
        for i in positions:
            w, old = words[i], z[i]
            n_k[old] -= 1
            c[old] = 1.0 / (n_k[old] + V * beta)
            n_dk[d, old] -= 1
            if n_dk[d, old] == 0:
                j = dl.index(old)
                dl[j] = dl[-1]
                dl.pop()
            n_wk[w, old] -= 1
            q = np.cumsum([(alpha[k] + n_dk[d, k]) * c[k] * n_wk[w, k] for k in wl[w]]) if wl[w] else np.zeros(0)
            r = np.cumsum([n_dk[d, k] * beta * c[k] for k in dl]) if dl else np.zeros(0)
            s = np.cumsum(alpha * beta * c)
            qt, rt = (q[-1] if len(q) else 0.0), (r[-1] if len(r) else 0.0)
            u = next(uniforms) * (s[-1] + rt + qt)
            if u < qt:
                new = wl[w][int(np.searchsorted(q, u, side="right"))]
            elif u < qt + rt:
                new = dl[int(np.searchsorted(r, u - qt, side="right"))]
            else:
                new = min(int(np.searchsorted(s, u - qt - rt, side="right")), K - 1)
            if new != old and n_wk[w, old] == 0:
                j = wl[w].index(old)
                wl[w][j] = wl[w][-1]
                wl[w].pop()
            z[i] = new
            n_k[new] += 1
            c[new] = 1.0 / (n_k[new] + V * beta)
            if n_dk[d, new] == 0:
                dl.append(new)
            n_dk[d, new] += 1
            if n_wk[w, new] == 0 and new != old:  # old's entry is still in place
                wl[w].append(new)
            n_wk[w, new] += 1


@pytest.mark.parametrize("doc_counts", [True, False])
def test_sparse_sweep_matches_reference(doc_counts):
    # without the table (doc_counts=False) the row of n_dk is rebuilt from z at each document and cleared
    # after: same draws, same z, same n_wk, n_k
    for seed in range(3):
        tokens, z, alpha, K, V = _random_problem(seed, D=9, V=13, K=5)
        beta = 0.05
        model = make_model(K, V, alpha, beta)
        state = cgs.state_from_assignments(tokens, model, z.copy(), doc_counts=doc_counts)
        assert (state.n_dk is None) is (not doc_counts)
        ref = [a.copy() for a in counts_from_assignments(tokens.doc_ptr, tokens.words, z, K, V)]
        zb = z.copy()
        sweep = cgs.sparse_sweep(model, tokens)
        ra, rb = np.random.default_rng(seed), np.random.default_rng(seed)
        for _ in range(3):
            sweep(ra, state, 0, len(tokens.doc_ptr) - 1)
            reference_sparse_sweep(rb, tokens.doc_ptr, tokens.words, zb, *ref, alpha, beta)
            np.testing.assert_array_equal(state.z, zb)
            for a, b in zip(state[1:], ref, strict=True):
                if a is not None:
                    np.testing.assert_array_equal(a, b)
            if not doc_counts:
                assert not sweep.doc_row.any()  # zero on exit


def _packed_lists(n_wk, builder=None):
    """The packed word lists of ``n_wk``, decoded: one [(count, topic), ...] a word, in list order."""
    V, K = n_wk.shape
    freq = np.maximum(n_wk.sum(axis=1), 1)
    wptr = np.concatenate([[0], np.cumsum(np.minimum(freq, K))]).astype(np.int64)
    wlist, wlen = np.empty(int(wptr[-1]), np.int64), np.empty(V, np.int32)
    (builder or lda_sparse.build_word_lists)(n_wk, wptr, wlist, wlen)
    bits = lda_sparse.topic_bits(K)
    return [[(int(v) >> bits, int(v) & ((1 << bits) - 1)) for v in wlist[wptr[w]:wptr[w] + wlen[w]]] for w in range(V)]


def test_word_lists_pack_exactly_the_nonzero_counts_largest_first():
    tokens, z, alpha, K, V = _random_problem(4, D=9, V=13, K=5)
    n_wk = counts_from_assignments(tokens.doc_ptr, tokens.words, z, K, V)[1]
    lists = _packed_lists(n_wk)
    for w in range(V):
        assert [k for _, k in lists[w]] == reference_word_lists(n_wk)[w]  # count descending, ties topic ascending
        assert [n for n, _ in lists[w]] == [n_wk[w, k] for _, k in lists[w]]


def test_word_lists_hold_counts_beyond_the_topic_bits():
    # counts far above 2**bits and the largest topic id must not bleed into each other
    n_wk = np.zeros((2, 1000), dtype=np.int32)
    n_wk[0, 999], n_wk[0, 3], n_wk[1, 512] = 2**31 - 1, 1024, 7
    assert lda_sparse.topic_bits(1000) == 10 and lda_sparse.topic_bits(1024) == 10
    assert lda_sparse.topic_bits(1025) == 11 and lda_sparse.topic_bits(1) == 1
    assert _packed_lists(n_wk) == [[(2**31 - 1, 999), (1024, 3)], [(7, 512)]]


def _linear_smoothing_pick(u, alpha, beta, c):
    return min(int(np.searchsorted(np.cumsum(alpha * beta * c), u, side="right")), len(alpha) - 1)


@pytest.mark.parametrize("K", [1, 7, 40, 1000])
def test_smoothing_pick_by_blocks_matches_the_topic_walk(K):
    rng = np.random.default_rng(K)
    alpha, beta, c = rng.uniform(0.01, 1.0, K), 0.3, 1.0 / rng.integers(1, 500, K)
    shift = max(3, (lda_sparse.topic_bits(K) + 1) // 2)
    sblk = np.empty(((K - 1) >> shift) + 1)
    s = lda_sparse.smoothing_blocks(alpha, beta, c, sblk, shift)
    np.testing.assert_allclose(sblk.sum(), s, rtol=1e-12)
    for u in rng.uniform(0, s, 500):
        assert lda_sparse.smoothing_pick(u, alpha, beta, c, sblk, shift) == _linear_smoothing_pick(u, alpha, beta, c)


def test_negative_control_stale_smoothing_block_misplaces_draws():
    # one block's mass left at its old value (an update forgotten): draws past it land in the wrong topics
    K = 40
    rng = np.random.default_rng(1)
    alpha, beta, c = rng.uniform(0.01, 1.0, K), 0.3, 1.0 / rng.integers(1, 500, K)
    sblk = np.empty(5)
    s = lda_sparse.smoothing_blocks(alpha, beta, c, sblk, 3)
    sblk[1] *= 1.5
    wrong = sum(lda_sparse.smoothing_pick(u, alpha, beta, c, sblk, 3) != _linear_smoothing_pick(u, alpha, beta, c)
                for u in rng.uniform(0, s, 500))
    assert wrong > 50


def test_sparse_sweep_with_many_smoothing_draws_matches_reference():
    # K = 40 (five smoothing blocks) and a large alpha * beta: the s bucket takes a good share of the draws
    tokens, z, _, K, V = _random_problem(11, D=15, V=13, K=40)
    alpha, beta = np.full(K, 3.0), 2.0
    model = make_model(K, V, alpha, beta)
    state = cgs.state_from_assignments(tokens, model, z.copy(), doc_counts=False)
    ref = [a.copy() for a in counts_from_assignments(tokens.doc_ptr, tokens.words, z, K, V)]
    zb = z.copy()
    sweep = cgs.sparse_sweep(model, tokens)
    ra, rb = np.random.default_rng(5), np.random.default_rng(5)
    for _ in range(3):
        sweep(ra, state, 0, len(tokens.doc_ptr) - 1)
        reference_sparse_sweep(rb, tokens.doc_ptr, tokens.words, zb, *ref, alpha, beta)
        np.testing.assert_array_equal(state.z, zb)
        np.testing.assert_array_equal(state.n_wk, ref[1])
        np.testing.assert_array_equal(state.n_k, ref[2])


def reference_partitioned_sweep(rngs, tokens, z, n_dk, n_wk, n_k, alpha, beta, layout, keep_doc_lists=True):
    """One word-partitioned sweep, sequentially: P rounds; in round r shard p samples block (p + r) mod P.

    With ``keep_doc_lists`` (the kernel on a state with an n_dk table) each document's topic list is kept
    between its visits: sorted at the sweep's first visit, then only updated in place; without (a state with
    no table) it is found from z at each visit."""
    P = len(layout.doc_parts)
    doc_lists: dict | None = {} if keep_doc_lists else None
    wl = reference_word_lists(n_wk)  # the kernel builds block b's lists when round 0 first reaches it: same lists
    for r in range(P):
        start = n_k.copy()
        worker_n_k = []
        for p, (lo, hi) in enumerate(layout.doc_parts):
            b = round_block(p, r, P)
            ptr, D = layout.cell_ptr, len(tokens.doc_ptr) - 1
            cells = [(d, layout.order[ptr[b * D + d]:ptr[b * D + d + 1]]) for d in range(lo, hi)]
            own = start.copy()
            reference_sparse_cells(rngs[p], tokens.doc_ptr, tokens.words, z, n_dk, n_wk, own, alpha, beta, cells, wl,
                                   doc_lists)
            worker_n_k.append(own)
        n_k[:] = start + sum(own - start for own in worker_n_k)


def partitioned_twin_agreement(sampler, n_threads, reference, seeds=range(3), doc_counts=True):
    """(agree, moved): whether the threaded word-partitioned sweep of ``sampler`` and its sequential twin
    ``reference(rngs, tokens, z, n_dk, n_wk, n_k, alpha, beta, layout)`` agree for 3 sweeps on each problem
    (a state with the n_dk table, or without: then the twin's n_dk must equal the counts of the kernel's z),
    and how many tokens the kernel moved."""
    moved = 0
    for seed in seeds:
        tokens, z, alpha, K, V = _random_problem(seed, D=12, V=13, K=5)
        model = make_model(K, V, alpha, 0.05)
        state = cgs.state_from_assignments(tokens, model, z.copy(), doc_counts=doc_counts)
        ref = [a.copy() for a in counts_from_assignments(tokens.doc_ptr, tokens.words, z, K, V)]
        zb = z.copy()
        kernel = pg.build_kernel(sampler=sampler, n_threads=n_threads, compute_log_joint=False)
        layout = pg.word_partition(tokens, V, n_threads)
        ra, rb = np.random.default_rng(seed), np.random.default_rng(seed)
        for _ in range(3):
            z_before = state.z.copy()
            state, _ = kernel(ra, state, tokens, model)
            reference(child_generators(rb, n_threads), tokens, zb, *ref, alpha, 0.05, layout)
            moved += int((state.z != z_before).sum())
            n_dk = state.n_dk if doc_counts else counts_from_assignments(tokens.doc_ptr, tokens.words, state.z, K, V)[0]
            tables = zip((n_dk, state.n_wk, state.n_k), ref, strict=True)
            if not (np.array_equal(state.z, zb) and all(np.array_equal(a, b) for a, b in tables)):
                return False, moved
    return True, moved


def _partitioned_matches_reference(n_threads, seeds=range(3), doc_counts=True):
    """Whether the threaded SparseLDA kernel and the sequential twin agree (:func:`partitioned_twin_agreement`)."""
    def reference(*args):
        reference_partitioned_sweep(*args, keep_doc_lists=doc_counts)

    return partitioned_twin_agreement("sparse", n_threads, reference, seeds, doc_counts)[0]


@pytest.mark.parametrize("doc_counts", [True, False])
def test_partitioned_sweep_matches_sequential_reference(doc_counts):
    # doc_counts=False: no D x K table, each document's row rebuilt from z at each visit (LDA's default)
    assert _partitioned_matches_reference(2, doc_counts=doc_counts)
    assert _partitioned_matches_reference(3, doc_counts=doc_counts)


def test_negative_control_partitioned_doc_row_not_cleared_fails(monkeypatch):
    # without the table, a worker whose document-row scratch keeps a count from one visit into the next
    real = pg.PartitionedSparse.cell

    def leaky(self, *args, **kwargs):
        out = real(self, *args, **kwargs)
        self.scratch[args[3]][5][0] += 1  # args[3]: the worker's shard p
        return out

    monkeypatch.setattr(pg.PartitionedSparse, "cell", leaky)
    assert not _partitioned_matches_reference(2, seeds=[0], doc_counts=False)


def test_negative_control_unrotated_blocks_fail_the_reference(monkeypatch):
    # each shard samples its own word block in every round: half the tokens are never redrawn
    monkeypatch.setattr(pg, "round_block", lambda part, round_, n_parts: part)
    assert not _partitioned_matches_reference(2)


@pytest.mark.parametrize("keep_doc_lists, table", [(False, True), (True, True), (False, False)])
def test_sparse_sweep_cell_matches_reference(keep_doc_lists, table):
    # one cell at a time, against the shared tables: the kernel the partitioned sweep calls; with
    # keep_doc_lists each document's topic list is found once (refresh_doc_lists) and kept across the blocks;
    # without the table (n_dk None) each visit rebuilds the document's row from z into the scratch
    for seed in range(3):
        tokens, z, alpha, K, V = _random_problem(seed, D=10, V=13, K=5)
        layout = pg.word_partition(tokens, V, 2)
        a = [c.copy() for c in counts_from_assignments(tokens.doc_ptr, tokens.words, z, K, V)]
        b = [c.copy() for c in a]
        za, zb = z.copy(), z.copy()
        freq = np.bincount(tokens.words, minlength=V)
        wptr = np.concatenate([[0], np.cumsum(np.minimum(freq, K))]).astype(np.int64)
        wtop, wlen = np.empty(int(wptr[-1]), np.int64), np.zeros(V, np.int32)
        scratch = (np.empty(K), np.empty(K), np.empty(K), np.empty(K, np.int32), np.zeros(K, np.uint8),
                   np.zeros(K, a[0].dtype))
        lo, hi = layout.doc_parts[1]
        docs = (None, None, None)
        if keep_doc_lists:
            dptr = np.concatenate([[0], np.cumsum(np.minimum(np.diff(tokens.doc_ptr), K))]).astype(np.int64)
            docs = (dptr, np.empty(int(dptr[-1]), np.int32), np.zeros(len(tokens.doc_ptr) - 1, np.int32))
            assert lda_sparse.refresh_doc_lists(tokens.doc_ptr, za, a[0], lo, hi, *docs, scratch[4]) == hi - lo
        ref_doc_lists = {} if keep_doc_lists else None
        for block in (0, 1):
            lda_sparse.build_block_word_lists(a[1], layout.block_words[block], wptr, wtop, wlen)
            lda_sparse.sparse_sweep_cell(np.random.default_rng(seed), tokens.doc_ptr, tokens.words, za,
                                         a[0] if table else None, a[1], a[2], alpha,
                                         0.05, lo, hi, layout.order, layout.cell_ptr, block,
                                         layout.block_words[block], wptr, wtop, wlen,
                                         *scratch, *docs)
            if not table:  # the row scratch is zero between visits; the counts are those of z
                assert not scratch[5].any()
                a[0] = counts_from_assignments(tokens.doc_ptr, tokens.words, za, K, V)[0]
            D = len(tokens.doc_ptr) - 1
            cells = [(d, layout.order[layout.cell_ptr[block * D + d]:layout.cell_ptr[block * D + d + 1]])
                     for d in range(lo, hi)]
            reference_sparse_cells(np.random.default_rng(seed), tokens.doc_ptr, tokens.words, zb, *b, alpha, 0.05,
                                   cells, reference_word_lists(b[1]), ref_doc_lists)
            np.testing.assert_array_equal(za, zb)
            for x, y in zip(a, b, strict=True):
                np.testing.assert_array_equal(x, y)



def _doc_free_follows_dense(seed, spoil=None):
    """Whether the sweep without n_dk follows the dense-table sweep (same uniforms), document by document.

    ``spoil(sweep, tokens, state, d)`` acts on the document-row scratch after document d (negative control).
    """
    tokens, z, alpha, K, V = _random_problem(seed, D=12, V=13, K=5)
    model = make_model(K, V, alpha, 0.05)
    dense = cgs.state_from_assignments(tokens, model, z.copy())
    free = cgs.state_from_assignments(tokens, model, z.copy(), doc_counts=False)
    sa, sb = cgs.sparse_sweep(model, tokens), cgs.sparse_sweep(model, tokens)
    ra, rb = np.random.default_rng(seed), np.random.default_rng(seed)
    for _ in range(3):
        for d in range(len(tokens.doc_ptr) - 1):
            sa(ra, dense, d, d + 1)
            sb(rb, free, d, d + 1)
            if spoil is not None:
                spoil(sb, tokens, free, d)
        if not (np.array_equal(dense.z, free.z) and np.array_equal(dense.n_wk, free.n_wk)):
            return False
    return True


def test_sparse_sweep_without_doc_table_follows_the_dense_sweep():
    assert all(_doc_free_follows_dense(seed) for seed in range(3))


def test_negative_control_doc_row_not_cleared_fails():
    # a scratch that keeps each document's counts into the next (the clear at the document's end forgotten)
    def keep_counts(sweep, tokens, state, d):
        np.add.at(sweep.doc_row, state.z[tokens.doc_ptr[d]:tokens.doc_ptr[d + 1]], 1)

    assert not any(_doc_free_follows_dense(seed, keep_counts) for seed in range(3))


def test_sparse_sweep_gives_the_same_chain_with_and_without_doc_table():
    # same uniforms, same z: the dense path and the rebuilt rows are one sampler
    tokens, z, alpha, K, V = _random_problem(7, D=30, V=20, K=8)
    model = make_model(K, V, alpha, 0.1)
    dense = cgs.state_from_assignments(tokens, model, z.copy())
    free = cgs.state_from_assignments(tokens, model, z.copy(), doc_counts=False)
    kernel = cgs.build_kernel(sampler="sparse", compute_log_joint=True)
    ra, rb = np.random.default_rng(3), np.random.default_rng(3)
    for _ in range(5):
        dense, ia = kernel(ra, dense, tokens, model)
        free, ib = kernel(rb, free, tokens, model)
        np.testing.assert_array_equal(dense.z, free.z)
        np.testing.assert_array_equal(dense.n_wk, free.n_wk)
        assert ia.log_joint == ib.log_joint and ia.n_changed == ib.n_changed
    assert free.n_dk is None


def _lists_of(wptr, wlist, wlen):
    return [list(wlist[wptr[w]:wptr[w] + wlen[w]]) for w in range(len(wlen))]


def _list_arrays(tokens, K, V, doc_dtype=np.int16):
    """Empty word lists for ``tokens`` (frequencies, wptr, wlist, wlen), a second pair for a reference build,
    and the sweep's scratch (documents' counts of ``doc_dtype``)."""
    freq = np.bincount(tokens.words, minlength=V)
    wptr = np.concatenate([[0], np.cumsum(np.minimum(freq, K))]).astype(np.int64)
    wlist, wlen = np.empty(int(wptr[-1]), np.int64), np.zeros(V, np.int32)
    scratch = (np.empty(K), np.empty(K), np.empty(K), np.empty(K, np.int32), np.zeros(K, np.uint8),
               np.zeros(K, doc_dtype))
    return freq, wptr, wlist, wlen, np.empty_like(wlist), np.zeros_like(wlen), scratch


def test_refreshed_word_lists_equal_rebuilt_lists():
    # first call (no lists), after sweeps (lists in step but unsorted), after n_wk changed outside the sweep
    tokens, z, alpha, K, V = _random_problem(8, D=20, V=13, K=6)
    model = make_model(K, V, alpha, 0.05)
    state = cgs.state_from_assignments(tokens, model, z.copy(), doc_counts=False)
    freq, wptr, wlist, wlen, ref, ref_len, scratch = _list_arrays(tokens, K, V)
    rng = np.random.default_rng(0)
    rebuilt = []
    for step in range(4):
        rebuilt.append(lda_sparse.refresh_word_lists(state.n_wk, freq, wptr, wlist, wlen))
        lda_sparse.build_word_lists(state.n_wk, wptr, ref, ref_len)
        assert _lists_of(wptr, wlist, wlen) == _lists_of(wptr, ref, ref_len)
        lda_sparse.sparse_sweep(rng, tokens.doc_ptr, tokens.words, state.z, None, state.n_wk, state.n_k, alpha,
                                0.05, 0, len(tokens.doc_ptr) - 1, wptr, wlist, wlen, *scratch)
        if step == 2:  # one count of word w moves to another topic, outside the sweep
            w = int(np.argmax(freq))
            k0 = int(np.flatnonzero(state.n_wk[w])[0])
            state.n_wk[w, k0] -= 1
            state.n_wk[w, (k0 + 1) % K] += 1
    assert rebuilt[0] == np.count_nonzero(freq) and rebuilt[1] == rebuilt[2] == 0 and rebuilt[3] == 1


def test_refreshed_block_word_lists_equal_rebuilt_block_lists():
    # the word-partitioned sweep's refresh: the block's lists equal a rebuild, the other words' are not touched
    tokens, z, alpha, K, V = _random_problem(10, D=20, V=13, K=6)
    layout = pg.word_partition(tokens, V, 2)
    n_dk, n_wk, n_k = (c.copy() for c in counts_from_assignments(tokens.doc_ptr, tokens.words, z, K, V))
    z = z.copy()
    freq, wptr, wlist, wlen, ref, ref_len, scratch = _list_arrays(tokens, K, V, n_dk.dtype)
    rng = np.random.default_rng(0)
    rebuilt = []
    for _ in range(3):
        for block in (0, 1):
            words = layout.block_words[block]
            others = np.setdiff1d(np.arange(V), words)
            before = [_lists_of(wptr, wlist, wlen)[w] for w in others]
            rebuilt.append(lda_sparse.refresh_block_word_lists(n_wk, freq, words, wptr, wlist, wlen))
            lda_sparse.build_block_word_lists(n_wk, words, wptr, ref, ref_len)
            got, want = _lists_of(wptr, wlist, wlen), _lists_of(wptr, ref, ref_len)
            assert [got[w] for w in words] == [want[w] for w in words]
            assert [got[w] for w in others] == before
            for lo, hi in layout.doc_parts:
                lda_sparse.sparse_sweep_cell(rng, tokens.doc_ptr, tokens.words, z, n_dk, n_wk, n_k, alpha, 0.05,
                                             lo, hi, layout.order, layout.cell_ptr, block, words, wptr, wlist,
                                             wlen, *scratch, None, None, None)
    # the first refresh of each block builds every list of its words; later ones keep them (the sweep kept step)
    assert rebuilt[0] + rebuilt[1] == np.count_nonzero(freq) and sum(rebuilt[2:]) == 0


def _short_list_survives(check_totals):
    """Whether a list missing a non-zero topic (every listed count right) is kept by the refresh."""
    tokens, z, alpha, K, V = _random_problem(9, D=20, V=13, K=6)
    n_wk = counts_from_assignments(tokens.doc_ptr, tokens.words, z, K, V)[1]
    freq = np.bincount(tokens.words, minlength=V)
    wptr = np.concatenate([[0], np.cumsum(np.minimum(freq, K))]).astype(np.int64)
    wlist, wlen = np.empty(int(wptr[-1]), np.int64), np.zeros(V, np.int32)
    lda_sparse.build_word_lists(n_wk, wptr, wlist, wlen)
    w = int(np.argmax(wlen))
    wlen[w] -= 1  # the list loses its last entry
    totals = freq.copy()
    if not check_totals:
        totals[w] -= wlist[wptr[w] + wlen[w]] >> lda_sparse.topic_bits(K)
    lda_sparse.refresh_word_lists(n_wk, totals, wptr, wlist, wlen)
    return wlen[w] < np.count_nonzero(n_wk[w])


def test_refresh_rebuilds_a_list_missing_a_topic():
    assert not _short_list_survives(check_totals=True)


def test_negative_control_refresh_without_row_totals_keeps_a_short_list():
    # with totals that match the short list (as if the refresh did not check the row's total), it stays
    assert _short_list_survives(check_totals=False)


def test_refresh_doc_lists_keeps_current_lists_and_rebuilds_the_others():
    # the first call finds every list; a list in another order is kept (and sorted); a list missing a topic,
    # and one with a duplicate, are found again from z; every list ends sorted
    tokens, z, alpha, K, V = _random_problem(11, D=15, V=13, K=6)
    n_dk = counts_from_assignments(tokens.doc_ptr, tokens.words, z, K, V)[0]
    D = len(tokens.doc_ptr) - 1
    dptr = np.concatenate([[0], np.cumsum(np.minimum(np.diff(tokens.doc_ptr), K))]).astype(np.int64)
    dlist, dlens, in_doc = np.empty(int(dptr[-1]), np.int32), np.zeros(D, np.int32), np.zeros(K, np.uint8)

    def lists():
        return [list(dlist[dptr[d]:dptr[d] + dlens[d]]) for d in range(D)]

    def topics(d):  # what the refresh leaves: the document's distinct topics, ascending
        return sorted(set(int(k) for k in z[tokens.doc_ptr[d]:tokens.doc_ptr[d + 1]]))

    assert lda_sparse.refresh_doc_lists(tokens.doc_ptr, z, n_dk, 0, D, dptr, dlist, dlens, in_doc) == D
    assert lists() == [topics(d) for d in range(D)]
    many = [d for d in range(D) if dlens[d] >= 2]
    a, b = many[0], many[1]
    dlist[dptr[a]], dlist[dptr[a] + 1] = dlist[dptr[a] + 1], dlist[dptr[a]]  # same topics, other order: kept
    dlens[b] -= 1  # a topic missing
    assert lda_sparse.refresh_doc_lists(tokens.doc_ptr, z, n_dk, 0, D, dptr, dlist, dlens, in_doc) == 1
    assert lists()[a] == topics(a) and lists()[b] == topics(b)
    dlist[dptr[b] + 1] = dlist[dptr[b]]  # a duplicate
    assert lda_sparse.refresh_doc_lists(tokens.doc_ptr, z, n_dk, 0, D, dptr, dlist, dlens, in_doc) == 1
    assert lists()[b] == topics(b)
    assert not in_doc.any()
