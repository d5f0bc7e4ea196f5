"""The parallel collapsed samplers (word-partitioned sparse, AD-LDA): partitioning, determinism, merged counts."""

from __future__ import annotations

import numpy as np
import pytest

from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs
from harmonium.inference.mcmc.lda import parallel_gibbs as pg
from harmonium.models.directed.lda import counts_from_assignments, make_model
from harmonium.parallel.threads import cell_order, partition_documents, partition_words, round_block
from tests.conftest import lda_corpus


@pytest.fixture(scope="module")
def problem():
    corpus, _, _ = lda_corpus(seed=3, n_docs=200)
    tokens = corpus.tokens()
    return tokens, make_model(5, corpus.n_words, 0.1, 0.05)


def _run(problem, n_threads, seed, sweeps=4, sampler="sparse"):
    tokens, model = problem
    rng = np.random.default_rng(seed)
    state = cgs.init(rng, tokens, model)
    kernel = pg.build_kernel(sampler=sampler, n_threads=n_threads, compute_log_joint=False)
    for _ in range(sweeps):
        state, info = kernel(rng, state, tokens, model)
    return state


def test_partition_covers_documents_with_balanced_tokens(problem):
    tokens, _ = problem
    for n in (1, 2, 3, 7):
        parts = partition_documents(tokens.doc_ptr, n)
        assert parts[0][0] == 0 and parts[-1][1] == len(tokens.doc_ptr) - 1
        assert all(a[1] == b[0] for a, b in zip(parts, parts[1:], strict=False))
        sizes = [tokens.doc_ptr[hi] - tokens.doc_ptr[lo] for lo, hi in parts]
        assert max(sizes) - min(sizes) <= 2 * np.diff(tokens.doc_ptr).max()


def test_one_thread_is_the_exact_serial_sampler(problem):
    tokens, model = problem
    rng = np.random.default_rng(1)
    s1 = cgs.init(rng, tokens, model)
    cgs.build_kernel(sampler="sparse", compute_log_joint=False)(rng, s1, tokens, model)
    s2 = _run(problem, 1, 1, sweeps=1)
    np.testing.assert_array_equal(s1.z, s2.z)


@pytest.mark.parametrize("sampler", ["plain", "sparse", "fplus"])
def test_same_seed_and_threads_identical_and_counts_consistent(problem, sampler):
    a = _run(problem, 2, 7, sampler=sampler)
    b = _run(problem, 2, 7, sampler=sampler)
    np.testing.assert_array_equal(a.z, b.z)
    tokens, model = problem
    expected = counts_from_assignments(tokens.doc_ptr, tokens.words, a.z, model.n_topics, model.n_words)
    for got, want in zip(a[1:], expected, strict=True):
        np.testing.assert_array_equal(got, want)
    c = _run(problem, 3, 7, sampler=sampler)
    assert not np.array_equal(a.z, c.z)  # another thread count is another (documented) stream


@pytest.mark.parametrize(("sampler", "merge", "table"), [
    ("plain", "apply_moves", 2),  # AD-LDA: the workers' n_wk moves are not merged
    ("sparse", "merge_topic_totals", 3),  # word-partitioned: the workers' n_k changes are not added
    ("fplus", "merge_topic_totals", 3),
])
def test_negative_control_unmerged_worker_counts_break_the_invariant(problem, monkeypatch, sampler, merge, table):
    monkeypatch.setattr(pg, merge, lambda *args: None)
    a = _run(problem, 2, 7, sampler=sampler)
    tokens, model = problem
    want = counts_from_assignments(tokens.doc_ptr, tokens.words, a.z, model.n_topics, model.n_words)[table - 1]
    assert not np.array_equal(a[table], want)


def test_word_blocks_balance_every_round_and_cells_list_each_token_once(problem):
    tokens, model = problem
    D = len(tokens.doc_ptr) - 1
    for P in (2, 3):
        parts = partition_documents(tokens.doc_ptr, P)
        block_of = partition_words(tokens.doc_ptr, tokens.words, parts, model.n_words)
        cells = np.zeros((P, P), dtype=np.int64)  # cells[p, b]: tokens of shard p in block b
        freq = np.zeros((P, model.n_words), dtype=np.int64)
        for p, (lo, hi) in enumerate(parts):
            ws = tokens.words[tokens.doc_ptr[lo]:tokens.doc_ptr[hi]]
            np.add.at(cells[p], block_of[ws], 1)
            freq[p] = np.bincount(ws, minlength=model.n_words)
        for r in range(P):
            sizes = [cells[p, round_block(p, r, P)] for p in range(P)]
            # within a round the shards' cells differ by at most the largest single-word count (greedy placement)
            assert max(sizes) - min(sizes) <= freq.max(), (P, r, sizes)
        assert sorted({round_block(p, r, P) for p in range(P)} == set(range(P)) for r in range(P)) == [True] * P
        order, ptr = cell_order(tokens.doc_ptr, tokens.words, block_of, P)
        assert sorted(order.tolist()) == list(range(tokens.words.shape[0]))
        for d in range(D):
            for b in range(P):
                got = order[ptr[b * D + d]:ptr[b * D + d + 1]].tolist()
                want = [i for i in range(tokens.doc_ptr[d], tokens.doc_ptr[d + 1]) if block_of[tokens.words[i]] == b]
                assert got == want


def test_auto_runs_the_word_partitioned_sweep(problem, monkeypatch):
    from harmonium.inference.mcmc.lda import fplus

    # "auto" is SparseLDA's family (resolve_sampler), and with a rule that never picks F+LDA each sweep is the
    # word-partitioned SparseLDA sweep (not AD-LDA's)
    monkeypatch.setattr(fplus, "fplus_is_cheaper", lambda *stats: False)
    a = _run(problem, 2, 11, sampler="auto")
    b = _run(problem, 2, 11, sampler="sparse")
    np.testing.assert_array_equal(a.z, b.z)


@pytest.mark.parametrize("n_threads", [1, 2, 3])
def test_auto_rule_counts_the_sparse_sweeps_document_visits(problem, monkeypatch, n_threads):
    # the rule's per-document term: D / N on one thread, P D / N for the word-partitioned sweep (one visit a block)
    from harmonium.inference.mcmc.lda import fplus

    seen = []
    monkeypatch.setattr(fplus, "fplus_is_cheaper", lambda k_w, k_d, visits, K: seen.append((visits, K)) or False)
    tokens, model = problem
    _run(problem, n_threads, 5, sweeps=2, sampler="auto")
    D, N = len(tokens.doc_ptr) - 1, len(tokens.words)
    assert seen == [(pytest.approx(n_threads * D / N), model.n_topics)] * 2


def test_auto_runs_the_word_partitioned_fplus_sweep_where_its_rule_picks_it(problem, monkeypatch):
    from harmonium.inference.mcmc.lda import fplus

    picks = iter([True, False, True, True])
    monkeypatch.setattr(fplus, "fplus_is_cheaper", lambda k_w, k_d, *rest: next(picks))
    tokens, model = problem
    made = []
    real = pg.PartitionedAuto.__init__
    monkeypatch.setattr(pg.PartitionedAuto, "__init__", lambda self, *a: made.append(self) or real(self, *a))
    a = _run(problem, 2, 13, sampler="auto")
    assert made[-1].choices == ["fplus", "sparse", "fplus", "fplus"]
    assert made[-1].sparse.runner is made[-1].fplus.runner  # one set of worker threads for both sweeps
    # the same chain as the two word-partitioned sweeps run in that order
    rng = np.random.default_rng(13)
    b = cgs.init(rng, tokens, model)
    sweeps = {s: pg.build_kernel(sampler=s, n_threads=2, compute_log_joint=False) for s in ("fplus", "sparse")}
    for s in ("fplus", "sparse", "fplus", "fplus"):
        b, _ = sweeps[s](rng, b, tokens, model)
    np.testing.assert_array_equal(a.z, b.z)
    np.testing.assert_array_equal(a.n_wk, b.n_wk)
    np.testing.assert_array_equal(a.n_k, b.n_k)


def test_a_new_model_for_the_same_tokens_keeps_the_layout_and_samples_the_new_model(problem, monkeypatch):
    tokens, model = problem
    calls = []
    real = pg.word_partition
    monkeypatch.setattr(pg, "word_partition", lambda *a: calls.append(a) or real(*a))
    updated = make_model(model.n_topics, model.n_words, 0.5, 0.02)  # as after a hyperparameter update
    kernel = pg.build_kernel(sampler="sparse", n_threads=2, compute_log_joint=False)
    rng = np.random.default_rng(3)
    state, _ = kernel(rng, cgs.init(rng, tokens, model), tokens, model)
    twin, twin_rng = type(state)(*(a.copy() for a in state)), np.random.default_rng()
    twin_rng.bit_generator.state = rng.bit_generator.state
    state, _ = kernel(rng, state, tokens, updated)
    assert len(calls) == 1  # the layout was made once, for the first model
    twin, _ = pg.build_kernel(sampler="sparse", n_threads=2, compute_log_joint=False)(twin_rng, twin, tokens, updated)
    np.testing.assert_array_equal(state.z, twin.z)  # the same sweep as a kernel that only saw the updated model


def test_large_vocabularies_are_partitioned_in_runs_of_consecutive_words():
    """Runs of WORD_GROUP consecutive ids share a block (no n_wk row boundary between the blocks of a round
    inside a run), and every round stays balanced to within the largest run's count."""
    from harmonium.parallel.threads import WORD_GROUP, word_group_size

    rng = np.random.default_rng(0)
    V, D = 40_000, 3_000
    lengths = rng.integers(5, 60, size=D)
    doc_ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    words = (rng.zipf(1.3, size=int(doc_ptr[-1])) - 1) % V  # heavy head, long tail
    rng.shuffle(words)
    words = words.astype(np.int32)
    P = 2
    assert word_group_size(V, P) == WORD_GROUP == 64
    assert word_group_size(200, P) == 1  # small vocabularies stay word by word
    parts = partition_documents(doc_ptr, P)
    block_of = partition_words(doc_ptr, words, parts, V)
    runs = block_of[: V - V % WORD_GROUP].reshape(-1, WORD_GROUP)
    assert (runs == runs[:, :1]).all()
    assert len(set(block_of.tolist())) == P
    run_count = np.bincount(words // WORD_GROUP)
    cells = np.zeros((P, P), dtype=np.int64)
    for p, (lo, hi) in enumerate(parts):
        np.add.at(cells[p], block_of[words[doc_ptr[lo]:doc_ptr[hi]]], 1)
    for r in range(P):
        sizes = [cells[p, round_block(p, r, P)] for p in range(P)]
        assert max(sizes) - min(sizes) <= run_count.max(), (r, sizes)
    # group=1 is the word-by-word placement: neighbouring ids land in different blocks
    single = partition_words(doc_ptr, words, parts, V, group=1)
    seen = np.flatnonzero(np.bincount(words, minlength=V))  # unseen words all go to block 0
    assert (single[seen[:-1]] != single[seen[1:]]).mean() > 0.3
