"""AD-LDA (the approximate collapsed, data-parallel sampler): partitioning, determinism, merged counts."""

from __future__ import annotations

import numpy as np
import pytest

from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs
from harmonium.inference.mcmc.lda import parallel_gibbs as pg
from harmonium.models.directed.lda import counts_from_assignments, make_model
from harmonium.parallel.threads import partition_documents
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


@pytest.mark.parametrize("sampler", ["plain", "sparse"])
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


def test_negative_control_unmerged_worker_counts_break_the_invariant(problem, monkeypatch):
    monkeypatch.setattr(pg, "apply_moves", lambda *args: None)
    a = _run(problem, 2, 7)
    tokens, model = problem
    n_wk = counts_from_assignments(tokens.doc_ptr, tokens.words, a.z, model.n_topics, model.n_words)[1]
    assert not np.array_equal(a.n_wk, n_wk)
