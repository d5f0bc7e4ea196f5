"""Parity of the word-by-word F+LDA sweep with a plain-numpy twin (same scan, same lists, same uniforms).

The twin draws each token, word by word, from the two terms of Yu et al. (2015): the document's topics in
the order of its (count, topic) list, then all K topics' alpha_k (n_wk + beta) c_k by a cumulative sum in
topic order (what the F+ tree's descent finds). Also the pieces: the tree's pick with a pending change of
one leaf equals the pick on the changed leaves, the sampled list lengths equal their definition, and
``sampler="auto"`` chooses the sweep by its cost rule.
"""

from __future__ import annotations

import numpy as np
import pytest

from harmonium._kernels import lda_fplus
from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs
from harmonium.inference.mcmc.lda import fplus
from harmonium.inference.mcmc.lda import parallel_gibbs as pg
from harmonium.models.directed.lda import counts_from_assignments, make_model
from harmonium.parallel.threads import round_block

from .test_lda_gibbs_parity import _random_problem
from .test_lda_sparse_parity import partitioned_twin_agreement, reference_uniforms


def reference_doc_lists(doc_ptr, z, docs):
    """Each document's [topic, count] list, topics in the order of their first token."""
    lists = {}
    for d in docs:
        zd = [int(k) for k in z[doc_ptr[d]:doc_ptr[d + 1]]]
        lists[d] = [[k, zd.count(k)] for k in dict.fromkeys(zd)]
    return lists


def reference_fplus_tokens(uniforms, visit, doc_of, words, z, n_dk, n_wk, n_k, alpha, beta, lists):
    """Draw the tokens at positions ``visit`` in that order, as one call of the kernel does (c from n_k at the
    call's start, then kept in step); ``lists``: the documents' [topic, count] lists, updated in place."""
    V, K = n_wk.shape
    c = 1.0 / (n_k + V * beta)
    for i in visit:
        w, d, old = int(words[i]), int(doc_of[i]), int(z[i])
        L = lists[d]
        n_wk[w, old] -= 1
        n_k[old] -= 1
        c[old] = 1.0 / (n_k[old] + V * beta)
        doc_term = np.cumsum([(n - (k == old)) * (n_wk[w, k] + beta) * c[k] for k, n in L])
        tree = np.cumsum(alpha * (n_wk[w] + beta) * c)
        acc = doc_term[-1] if len(L) else 0.0
        u = next(uniforms) * (acc + tree[-1])
        if u < acc:
            new = L[int(np.searchsorted(doc_term, u, side="right"))][0]
        else:
            new = min(int(np.searchsorted(tree, u - acc, side="right")), K - 1)
        if new != old:
            z[i] = new
            if n_dk is not None:
                n_dk[d, old] -= 1
                n_dk[d, new] += 1
            j = [k for k, _ in L].index(old)
            L[j][1] -= 1
            if L[j][1] == 0:
                L[j] = L[-1]
                L.pop()
            topics = [k for k, _ in L]
            if new in topics:
                L[topics.index(new)][1] += 1
            else:
                L.append([new, 1])
        n_wk[w, new] += 1
        n_k[new] += 1
        c[new] = 1.0 / (n_k[new] + V * beta)


def reference_fplus_sweep(rng, doc_ptr, words, z, n_dk, n_wk, n_k, alpha, beta):
    D = len(doc_ptr) - 1
    doc_of = np.repeat(np.arange(D), np.diff(doc_ptr))
    lists = reference_doc_lists(doc_ptr, z, range(D))
    reference_fplus_tokens(reference_uniforms(rng), np.argsort(words, kind="stable"), doc_of, words, z, n_dk, n_wk,
                           n_k, alpha, beta, lists)


def reference_partitioned_fplus_sweep(rngs, tokens, z, n_dk, n_wk, n_k, alpha, beta, layout):
    """One word-partitioned F+LDA sweep, sequentially: P rounds; in round r shard p draws its tokens of block
    (p + r) mod P word by word (words ascending, a word's tokens in stream order) against its own n_k, whose
    changes are added at the round's end. Each document's list is made from z at the sweep's start and kept
    through the rounds."""
    P = len(layout.doc_parts)
    doc_ptr, words = tokens.doc_ptr, tokens.words
    doc_of = np.repeat(np.arange(len(doc_ptr) - 1), np.diff(doc_ptr))
    lists = reference_doc_lists(doc_ptr, z, range(len(doc_ptr) - 1))
    block_of = np.empty(n_wk.shape[0], dtype=np.int64)
    for b, ws in enumerate(layout.block_words):
        block_of[ws] = b
    for r in range(P):
        start = n_k.copy()
        worker_n_k = []
        for p, (lo, hi) in enumerate(layout.doc_parts):
            b = round_block(p, r, P)
            pos = np.arange(doc_ptr[lo], doc_ptr[hi])
            pos = pos[block_of[words[pos]] == b]
            visit = pos[np.argsort(words[pos], kind="stable")]
            own = start.copy()
            reference_fplus_tokens(reference_uniforms(rngs[p]), visit, doc_of, words, z, n_dk, n_wk, own, alpha, beta,
                                   lists)
            worker_n_k.append(own)
        n_k[:] = start + sum(own - start for own in worker_n_k)


def _partitioned_fplus_matches_reference(n_threads, doc_counts, seeds=range(3)):
    """Whether the threaded word-partitioned F+LDA sweep and its sequential twin agree for 3 sweeps on each
    problem; False also when no token moved (the comparison would then cover no list or tree update)."""
    agree, moved = partitioned_twin_agreement("fplus", n_threads, reference_partitioned_fplus_sweep, seeds,
                                              doc_counts)
    return agree and moved > 0


@pytest.mark.parametrize("doc_counts", [False, True])
def test_partitioned_fplus_sweep_matches_sequential_reference(doc_counts):
    # doc_counts=False: LDA(n_jobs=2)'s state (no D x K table); True: a state with the table keeps it current
    assert _partitioned_fplus_matches_reference(2, doc_counts)
    assert _partitioned_fplus_matches_reference(3, doc_counts)


def test_negative_control_partitioned_fplus_unrotated_blocks_fail_the_reference(monkeypatch):
    # each shard draws its own word block in every round: half the tokens are never redrawn
    monkeypatch.setattr(pg, "round_block", lambda part, round_, n_parts: part)
    assert not _partitioned_fplus_matches_reference(2, False)


def test_negative_control_partitioned_fplus_lists_rebuilt_each_round_fail_the_reference(monkeypatch):
    # a worker that makes its documents' lists from z again at every round (z is scattered back only after the
    # last round, so the lists lose the round's moves)
    real = pg.PartitionedFPlus.cell

    def stale(self, rng, state, n_k, p, block, first, last, docs=(None, None, None)):
        return real(self, rng, state, n_k, p, block, True, last, docs)

    monkeypatch.setattr(pg.PartitionedFPlus, "cell", stale)
    assert not _partitioned_fplus_matches_reference(2, False)


@pytest.mark.parametrize("doc_counts", [True, False])
def test_fplus_sweep_matches_reference(doc_counts):
    for seed in range(4):
        tokens, z, alpha, K, V = _random_problem(seed, D=9, V=13, K=5)
        beta = 0.05
        model = make_model(K, V, alpha, beta)
        state = cgs.state_from_assignments(tokens, model, z.copy(), doc_counts=doc_counts)
        ref = [a.copy() for a in counts_from_assignments(tokens.doc_ptr, tokens.words, z, K, V)]
        zb = z.copy()
        sweep = fplus.make_sweep(model, tokens)
        ra, rb = np.random.default_rng(seed), np.random.default_rng(seed)
        n_moved = 0
        for _ in range(3):
            z_before = state.z.copy()
            sweep(ra, state, 0, len(tokens.doc_ptr) - 1)
            reference_fplus_sweep(rb, tokens.doc_ptr, tokens.words, zb, ref[0] if doc_counts else None, ref[1], ref[2],
                                  alpha, beta)
            n_moved += int((state.z != z_before).sum())
            np.testing.assert_array_equal(state.z, zb)
            np.testing.assert_array_equal(state.n_wk, ref[1])
            np.testing.assert_array_equal(state.n_k, ref[2])
            if doc_counts:
                np.testing.assert_array_equal(state.n_dk, ref[0])
        assert n_moved > 0  # the sweeps moved tokens: the comparison covers the list and tree updates


def test_fplus_sweep_over_a_document_range_leaves_the_others():
    tokens, z, alpha, K, V = _random_problem(5, D=9, V=13, K=5)
    model = make_model(K, V, alpha, 0.05)
    state = cgs.state_from_assignments(tokens, model, z.copy())
    sweep = fplus.make_sweep(model, tokens)
    lo, hi = int(tokens.doc_ptr[3]), int(tokens.doc_ptr[7])
    sweep(np.random.default_rng(0), state, 3, 7)
    np.testing.assert_array_equal(state.z[:lo], z[:lo])
    np.testing.assert_array_equal(state.z[hi:], z[hi:])
    n_dk, n_wk, n_k = counts_from_assignments(tokens.doc_ptr, tokens.words, state.z, K, V)
    np.testing.assert_array_equal(state.n_dk, n_dk)
    np.testing.assert_array_equal(state.n_wk, n_wk)
    np.testing.assert_array_equal(state.n_k, n_k)


@pytest.mark.parametrize("K", [2, 5, 8, 37])
def test_tree_pick_with_a_pending_leaf_change_is_the_pick_on_the_changed_leaves(K):
    rng = np.random.default_rng(K)
    T, log_t = lda_fplus.tree_size(K)
    assert T >= K and T == 2 ** log_t
    leaves = rng.uniform(0.1, 2.0, size=K)
    f = np.zeros(2 * T)
    for k in range(K):
        lda_fplus.tree_set(f, T, k, leaves[k])
    np.testing.assert_allclose(f[1], leaves.sum(), rtol=1e-12)
    for leaf in range(K):
        delta = -0.5 * leaves[leaf]
        changed = leaves.copy()
        changed[leaf] += delta
        cum = np.cumsum(changed)
        for u in rng.uniform(0, cum[-1], size=50):
            assert lda_fplus.tree_pick(f, T, log_t, u, leaf, delta) == int(np.searchsorted(cum, u, side="right"))


def test_negative_control_tree_pick_without_the_pending_change_differs():
    K = 5
    T, log_t = lda_fplus.tree_size(K)
    leaves = np.array([1.0, 2.0, 0.5, 1.5, 1.0])
    f = np.zeros(2 * T)
    for k in range(K):
        lda_fplus.tree_set(f, T, k, leaves[k])
    changed = leaves.copy()
    changed[1] -= 1.5
    cum = np.cumsum(changed)
    u = 1.7  # in topic 2's mass once topic 1 has lost 1.5, still in topic 1's without the change
    assert int(np.searchsorted(cum, u, side="right")) == 2
    assert lda_fplus.tree_pick(f, T, log_t, u, 1, 0.0) != 2


def test_sampled_list_lengths_are_token_weighted_means():
    tokens, z, alpha, K, V = _random_problem(2, D=30, V=13, K=5)
    _, n_wk, _ = counts_from_assignments(tokens.doc_ptr, tokens.words, z, K, V)
    for stride in (1, 3):
        docs = range(0, len(tokens.doc_ptr) - 1, stride)
        kw, kd, n = 0.0, 0.0, 0
        for d in docs:
            lo, hi = tokens.doc_ptr[d], tokens.doc_ptr[d + 1]
            kw += sum(int((n_wk[w] > 0).sum()) for w in tokens.words[lo:hi])
            kd += len(set(z[lo:hi].tolist())) * (hi - lo)
            n += hi - lo
        row = np.zeros(K, dtype=np.int32)
        got = lda_fplus.sampled_list_lengths(tokens.doc_ptr, tokens.words, z, n_wk, stride, row)
        np.testing.assert_allclose(got, (kw / n, kd / n), rtol=1e-12)
        assert not row.any()


def test_cost_rule_follows_the_measured_crossover():
    # states of benchmarks/lda/results/fplus-crossover-prefetch.jsonl: (k_w, k_d) and which sweep cost less there
    debian, pypi = 57095 / 2078952, 713025 / 4511052  # document visits a token on one thread (D / N)
    # Debian, K = 1000: F+LDA 2x cheaper at sweep 5, SparseLDA 1.3x cheaper at sweep 20
    assert fplus.fplus_is_cheaper(219.9, 36.4, debian, 1000)
    assert not fplus.fplus_is_cheaper(51.0, 28.5, debian, 1000)
    # Debian, K = 100: F+LDA 1.5x cheaper at sweep 2, SparseLDA 1.35x cheaper at sweep 40
    assert fplus.fplus_is_cheaper(75.4, 22.1, debian, 100)
    assert not fplus.fplus_is_cheaper(14.5, 12.2, debian, 100)
    # short documents (PyPI): the per-document term keeps F+LDA longer (sweep 20: 0.56 against 0.72 s), until
    # the words' lists are short (sweep 80: 0.65 against 0.51 s)
    assert fplus.fplus_is_cheaper(35.7, 5.1, pypi, 100)
    assert not fplus.fplus_is_cheaper(10.0, 4.7, pypi, 100)
    assert fplus.fplus_is_cheaper(317.1, 7.7, pypi, 1000)
    # the per-document term is what moves a PyPI state near the crossover (sweep 30) to F+LDA
    assert fplus.fplus_is_cheaper(20.8, 5.0, pypi, 100)
    assert not fplus.fplus_is_cheaper(20.8, 5.0, 0.0, 100)
    # each extra document visit (the word-partitioned sweep's, one a word block) counts
    assert fplus.fplus_is_cheaper(10.0, 4.7, 2 * pypi, 100)


def test_auto_sweep_runs_the_sweep_its_rule_picks(monkeypatch):
    tokens, z, alpha, K, V = _random_problem(3, D=9, V=13, K=5)
    model = make_model(K, V, alpha, 0.05)
    calls = []

    def sparse(rng, state, d_lo, d_hi):
        calls.append("sparse")
        return 0

    sweep = cgs.SAMPLERS["auto"](model, tokens)
    assert isinstance(sweep, fplus.AutoSweep)
    sweep.sparse = sparse
    state = cgs.state_from_assignments(tokens, model, z.copy(), doc_counts=False)
    picks = iter([True, False, True])
    monkeypatch.setattr(fplus, "fplus_is_cheaper", lambda kw, kd, *rest: next(picks))
    for _ in range(3):
        sweep(np.random.default_rng(0), state, 0, len(tokens.doc_ptr) - 1)
    assert sweep.choices == ["fplus", "sparse", "fplus"]
    assert calls == ["sparse"]
    n_dk, n_wk, n_k = counts_from_assignments(tokens.doc_ptr, tokens.words, state.z, K, V)
    np.testing.assert_array_equal(state.n_wk, n_wk)
    np.testing.assert_array_equal(state.n_k, n_k)


def test_int64_document_lists_and_a_released_index_give_the_same_chain():
    # the packed lists are int32 where the longest document's count fits beside the topic bits, else int64;
    # auto's release() drops the index between sweeps, and the next sweep makes it again
    tokens, z, alpha, K, V = _random_problem(6, D=9, V=13, K=5)
    model = make_model(K, V, alpha, 0.05)
    D = len(tokens.doc_ptr) - 1
    runs = []
    for variant in ("int32", "int64", "released"):
        state = cgs.state_from_assignments(tokens, model, z.copy(), doc_counts=False)
        sweep = fplus.make_sweep(model, tokens)
        index = sweep.index(0, D)
        assert index[5].dtype == np.int32 and index[0].dtype == np.int32
        if variant == "int64":
            sweep._index = {(0, D): index[:5] + (index[5].astype(np.int64),) + index[6:]}
        rng = np.random.default_rng(11)
        for _ in range(3):
            if variant == "released":
                sweep.release()
                assert sweep._index == {}
            sweep(rng, state, 0, D)
        runs.append(state.z.copy())
    np.testing.assert_array_equal(runs[0], runs[1])
    np.testing.assert_array_equal(runs[0], runs[2])
