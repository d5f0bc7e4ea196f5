"""The HDP estimator and its direct-assignment kernel: seeds, resume, growth, persistence, no NaN, bad input."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import harmonium
from harmonium._kernels import hdp as khdp
from harmonium._kernels import hdp_split_merge as ksm
from harmonium.corpus import Corpus, train_test_split
from harmonium.errors import CorpusError, InvalidParameterError
from harmonium.estimators.hdp import HDP
from harmonium.evaluation import document_completion, log_likelihood
from harmonium.inference.mcmc.isbn import hdp as da
from harmonium.models.directed.hdp import HDPModel
from tests.conftest import lda_corpus


def test_fit_shapes_trace_and_quality(synthetic):
    corpus, _, _ = synthetic
    train, test = train_test_split(corpus, 0.2, random_state=0)
    m = HDP(initial_topics=2, n_iter=40, random_state=0).fit(train)
    K = m.n_topics_
    assert K >= 2 and m.topic_word_.shape == (K, corpus.n_words)
    np.testing.assert_allclose(m.topic_word_.sum(axis=1), 1.0)
    np.testing.assert_allclose(m.doc_topic_.sum(axis=1), 1.0, rtol=1e-5)
    assert m.tau_.shape == (K + 1,) and np.isclose(m.tau_.sum(), 1.0)
    assert m.n_topics_trace_.shape == (40,) and m.n_topics_trace_[-1] == K
    assert m.trace_["iteration"] == [10, 20, 30, 40]
    for key in ("log_likelihood", "log_joint", "doc_concentration", "corpus_concentration"):
        assert np.all(np.isfinite(m.trace_[key])), key
    assert m.trace_["log_likelihood"][-1] > m.trace_["log_likelihood"][0]
    # held-out: the shared document completion and the log_likelihood hook, far better than uniform
    perp = m.perplexity(test).perplexity
    assert np.isfinite(perp) and perp < 0.6 * corpus.n_words
    ll = log_likelihood(m, test, n_particles=5)
    assert np.all(np.isfinite(ll.log_likelihood)) and ll.perplexity < 0.6 * corpus.n_words
    theta = m.transform(test)
    assert theta.shape == (test.n_docs, K) and np.allclose(theta.sum(axis=1), 1.0)


def test_same_seed_same_run_and_other_seed_differs(synthetic):
    corpus, _, _ = synthetic
    a = HDP(n_iter=8, random_state=3).fit(corpus)
    b = HDP(n_iter=8, random_state=3).fit(corpus)
    c = HDP(n_iter=8, random_state=4).fit(corpus)
    np.testing.assert_array_equal(a.topic_word_, b.topic_word_)
    assert a.trace_["log_joint"] == b.trace_["log_joint"]
    np.testing.assert_array_equal(a.transform(corpus[:20]), b.transform(corpus[:20]))
    assert a.trace_["log_joint"] != c.trace_["log_joint"]


@pytest.mark.parametrize("sampler", ["sparse", "plain"])
def test_capacity_growth_does_not_change_the_chain(synthetic, sampler):
    corpus, _, _ = synthetic
    tokens = corpus.tokens()
    model = HDPModel(0.05, corpus.n_words)
    kernel = da.build_kernel(sampler=sampler, sample_alpha=True, sample_gamma=True)
    runs = []
    for capacity in (2, 200):
        rng = np.random.default_rng(11)
        z = rng.integers(0, 1, size=tokens.words.shape[0])
        st = da.state_from_assignments(tokens, model, z, [0.5, 0.5], 2.0, 3.0, capacity=capacity)
        for _ in range(5):
            st, info = kernel(rng, st, tokens, model)
            # count invariants after every iteration
            K = st.n_topics
            assert np.all(st.n_k[:K] > 0) and np.all(st.n_k[K:] == 0) and st.z.max() < K
            np.testing.assert_array_equal(st.n_dk[:, :K].sum(axis=1), np.diff(tokens.doc_ptr))
            assert st.n_k[:K].sum() == tokens.words.shape[0] and np.isclose(st.tau[: K + 1].sum(), 1.0)
        runs.append(st)
    assert runs[0].capacity < runs[1].capacity and runs[0].n_topics > 2
    np.testing.assert_array_equal(runs[0].z, runs[1].z)
    K = runs[0].n_topics
    np.testing.assert_array_equal(runs[0].tau[: K + 1], runs[1].tau[: K + 1])


@pytest.mark.parametrize("unit", ["token", "document", "alternate", "mixed"])
def test_split_merge_moves_keep_the_counts_and_ignore_the_capacity(synthetic, unit):
    corpus, _, _ = synthetic
    tokens = corpus.tokens()
    model = HDPModel(0.05, corpus.n_words)
    kernel = da.build_kernel(sample_alpha=True, sample_gamma=True, split_merge_proposals=20, split_merge_launch=2,
                             split_merge_unit=unit)
    runs, moves = [], 0
    for capacity in (2, 200):
        rng = np.random.default_rng(8)
        z = np.zeros(tokens.words.shape[0], dtype=np.int32)
        st = da.state_from_assignments(tokens, model, z, [0.5, 0.5], 1.0, 1.0, capacity=capacity)
        for _ in range(6):
            st, info = kernel(rng, st, tokens, model)
            moves += info.n_split + info.n_merge
            K = st.n_topics
            assert np.all(st.n_k[:K] > 0) and np.all(st.n_k[K:] == 0) and st.z.max() < K
            n_dk, n_wk, n_k = (np.zeros_like(a) for a in (st.n_dk, st.n_wk, st.n_k))
            khdp.count_assignments(tokens.doc_ptr, tokens.words, st.z, n_dk, n_wk, n_k)
            np.testing.assert_array_equal(n_dk, st.n_dk)
            np.testing.assert_array_equal(n_wk, st.n_wk)
            assert np.isclose(st.tau[: K + 1].sum(), 1.0) and np.all(st.tau[:K] > 0) and np.all(st.tau[K + 1:] == 0)
        runs.append(st)
    assert moves > 0
    np.testing.assert_array_equal(runs[0].z, runs[1].z)
    m = HDP(1, split_merge=10, n_iter=4, evaluate_every=1, split_merge_unit=unit,
            random_state=0).fit(corpus)  # the estimator's path
    assert sum(m.trace_["n_split"]) > 0 and len(m.trace_["n_merge"]) == 4


def test_document_block_merges_join_the_halves_of_a_topic_that_token_merges_cannot():
    """A planted topic split in two by documents (even / odd), as the extra topics of a chain started with too
    many are (benchmarks/isbn/README.md, "Merges from above"): block proposals merge the halves back, token
    proposals (the control) cannot, because their reverse split must regenerate the halves token by token."""
    corpus, phi, theta = lda_corpus(seed=0, n_topics=4)
    tokens = corpus.tokens()
    doc = np.repeat(np.arange(corpus.n_docs), np.diff(tokens.doc_ptr))
    planted = np.argmax(theta[doc] * phi[:, tokens.words].T, axis=1).astype(np.int32)
    z = planted.copy()
    z[(z == 0) & (doc % 2 == 0)] = 4
    model = HDPModel(0.05, corpus.n_words)
    tau = np.append(np.bincount(z) / z.shape[0] * 0.95, 0.05)
    merges = {}
    for unit in ("token", "document"):
        st = da.state_from_assignments(tokens, model, z, tau, 1.0, 1.0)
        st, _, merges[unit] = da.split_merge(np.random.default_rng(0), st, tokens, model, 300, 5, unit=unit)
        if unit == "document":
            assert st.n_topics == 4
            # the same clustering as the planted one: the halves joined, nothing else moved
            pairs = np.unique(np.stack([planted, st.z]), axis=1)
            assert pairs.shape[1] == 4
    assert merges == {"token": 0, "document": 1}


def test_mixed_merges_join_halves_that_share_documents():
    """As above, but 16 documents hold tokens of both halves (every other topic-0 token of the documents
    d = 1 mod 10 moved to the other half), as every pair of extra topics on tests4 does (benchmarks/isbn/README.md,
    "Merges from above"): block proposals reject the merge (no block-aligned pair) and token proposals cannot
    regenerate the halves; mixed proposals (each block as a whole or token by token, q summing both paths)
    merge them back to the planted clustering."""
    corpus, phi, theta = lda_corpus(seed=0, n_topics=4)
    tokens = corpus.tokens()
    doc = np.repeat(np.arange(corpus.n_docs), np.diff(tokens.doc_ptr))
    planted = np.argmax(theta[doc] * phi[:, tokens.words].T, axis=1).astype(np.int32)
    z = planted.copy()
    z[(z == 0) & (doc % 2 == 0)] = 4
    z[(z == 0) & (doc % 10 == 1) & (np.arange(z.shape[0]) % 2 == 0)] = 4
    both = np.intersect1d(doc[z == 0], doc[z == 4])
    assert both.shape[0] == 16
    model = HDPModel(0.05, corpus.n_words)
    tau = np.append(np.bincount(z) / z.shape[0] * 0.95, 0.05)
    merges = {}
    for unit in ("token", "document", "mixed"):
        st = da.state_from_assignments(tokens, model, z.copy(), tau, 1.0, 1.0)
        st, _, merges[unit] = da.split_merge(np.random.default_rng(0), st, tokens, model, 300, 5, unit=unit)
        if unit == "mixed":
            assert st.n_topics == 4
            assert np.unique(np.stack([planted, st.z]), axis=1).shape[1] == 4
    assert merges == {"token": 0, "document": 0, "mixed": 1}


def test_split_merge_from_one_topic_finds_the_planted_topics():
    """The 4-topic corpus of test_classification.py: plain Gibbs from one topic stays short of 4 topics
    holding > 1% of the tokens; with split-merge moves it reaches them (benchmarks/isbn/hdp_planted.py)."""
    corpus, _, _ = lda_corpus(seed=4, n_docs=400, n_topics=4)
    tokens = corpus.tokens()
    N = tokens.words.shape[0]
    model = HDPModel(0.01, corpus.n_words)
    found = {}
    for sm in (0, 10):
        rng = np.random.default_rng(1)
        st = da.init(rng, tokens, model, n_topics=1)
        kernel = da.build_kernel(sample_alpha=True, sample_gamma=True, compute_log_joint=False,
                                 split_merge_proposals=sm, split_merge_launch=3)
        for _ in range(60):
            st, _ = kernel(rng, st, tokens, model)
        found[sm] = int(np.count_nonzero(st.n_k[: st.n_topics] > 0.01 * N))
    assert found[0] < 4 and found[10] == 4, found


def test_topic_index_groups_tokens_by_topic():
    z = np.random.default_rng(3).integers(0, 5, size=200).astype(np.int32)
    order, kstart = np.empty(200, np.int64), np.empty(7, np.int64)
    ksm.build_topic_index(z, 5, order, kstart)
    np.testing.assert_array_equal(order, np.argsort(z, kind="stable"))
    np.testing.assert_array_equal(kstart[:6], np.concatenate([[0], np.cumsum(np.bincount(z, minlength=5))]))


def test_beta_resampling_finds_the_planted_topic_word_prior():
    """The 4-topic corpus (phi ~ Dir(0.1)) from beta = 0.01 and one topic: beta | z, w settles near 0.1."""
    corpus, _, _ = lda_corpus(seed=4, n_docs=400, n_topics=4)
    tokens = corpus.tokens()
    model = HDPModel(0.01, corpus.n_words)
    rng = np.random.default_rng(1)
    st = da.init(rng, tokens, model, n_topics=1)
    kernel = da.build_kernel(sample_alpha=True, sample_gamma=True, compute_log_joint=False, split_merge_proposals=10,
                             split_merge_launch=3, sample_beta=True)
    betas = []
    for _ in range(40):
        st, _ = kernel(rng, st, tokens, model)
        betas.append(st.beta)
    assert 0.05 < np.mean(betas[20:]) < 0.2 and st.n_topics <= 5, (np.mean(betas[20:]), st.n_topics)
    assert da.topic_word(st, model)[0].sum() == pytest.approx(1.0)


def test_split_merge_schedule_stops_the_moves_and_resumes_bit_identically(synthetic, tmp_path):
    """split_merge_iterations=5: moves in iterations 1-5 only; a run resumed at 3 counts the schedule from 3,
    and a schedule as long as the run is the unscheduled chain."""
    corpus, _, _ = synthetic
    kw = dict(initial_topics=1, split_merge=10, split_merge_launch=3, n_iter=12, evaluate_every=1, random_state=2)
    m = HDP(**kw, split_merge_iterations=5).fit(corpus)
    splits = np.asarray(m.trace_["n_split"]) + np.asarray(m.trace_["n_merge"])
    assert splits[:5].sum() > 0 and splits[5:].sum() == 0, splits
    every = HDP(**kw).fit(corpus)
    assert (np.asarray(every.trace_["n_split"])[5:] + np.asarray(every.trace_["n_merge"])[5:]).sum() > 0
    np.testing.assert_array_equal(HDP(**kw, split_merge_iterations=12).fit(corpus).topic_word_, every.topic_word_)
    ckpt = tmp_path / "schedule.ckpt"
    HDP(**kw, split_merge_iterations=5, checkpoint_path=ckpt).fit(corpus, callback=lambda it, n, info: it == 3)
    resumed = HDP(**kw, split_merge_iterations=5, checkpoint_path=ckpt).fit(corpus, resume=True)
    assert resumed.resumed_from_ == 3
    np.testing.assert_array_equal(resumed.topic_word_, m.topic_word_)
    np.testing.assert_array_equal(resumed.n_topics_trace_, m.n_topics_trace_)
    with pytest.raises(InvalidParameterError, match="split_merge_iterations"):
        HDP(**kw, split_merge_iterations=6, checkpoint_path=ckpt).fit(corpus, resume=True)


def test_recommended_setting_recovers_the_planted_topics():
    """The guide's setting for finding the number of topics (initial_topics=1, 3 split-merge proposals of 20
    launch scans in the first 100 of 200 iterations, beta resampled) on the 4-topic corpus: 4 topics hold
    > 1% of the tokens and K over the second half is within ±20% of 4; without the moves, fewer are found."""
    corpus, _, _ = lda_corpus(seed=4, n_docs=400, n_topics=4)
    lengths = corpus.doc_lengths.astype(np.float64)
    kw = dict(initial_topics=1, split_merge=3, split_merge_launch=20, split_merge_iterations=100,
              sample_topic_word_prior=True, n_iter=200, evaluate_every=50, random_state=0)
    found = {}
    for sm in (3, 0):
        m = HDP(**{**kw, "split_merge": sm}).fit(corpus)
        sizes = (m.doc_topic_ * lengths[:, None]).sum(axis=0)
        found[sm] = (int(np.count_nonzero(sizes > 0.01 * lengths.sum())), float(m.n_topics_trace_[100:].mean()))
    assert found[3][0] == 4 and 3.2 <= found[3][1] <= 4.8, found
    assert found[0][0] < 4, found


def test_checkpoint_resume_is_bit_identical(synthetic, tmp_path):
    corpus, _, _ = synthetic
    straight = HDP(n_iter=10, evaluate_every=2, random_state=5).fit(corpus)
    ckpt = tmp_path / "run.ckpt"
    interrupted = HDP(n_iter=10, evaluate_every=2, random_state=5, checkpoint_path=ckpt, checkpoint_every=4)
    interrupted.fit(corpus, callback=lambda it, n, info: it == 5)
    assert interrupted.n_iter_ == 5
    resumed = HDP(n_iter=10, evaluate_every=2, random_state=5, checkpoint_path=ckpt, checkpoint_every=4)
    resumed.fit(corpus, resume=True)
    np.testing.assert_array_equal(resumed.topic_word_, straight.topic_word_)
    np.testing.assert_array_equal(resumed.n_topics_trace_, straight.n_topics_trace_)
    assert resumed.rng_state_ == straight.rng_state_
    with pytest.raises(InvalidParameterError, match="topic_word_prior"):
        HDP(n_iter=10, topic_word_prior=0.5, checkpoint_path=ckpt).fit(corpus, resume=True)
    with pytest.raises(CorpusError, match="different corpus"):
        HDP(n_iter=10, evaluate_every=2, checkpoint_path=ckpt).fit(corpus[:50], resume=True)


def test_estimator_resamples_beta_and_resumes_bit_identically(tmp_path):
    """HDP(sample_topic_word_prior=True): beta_ moves from 0.01 toward the planted 0.1, the topics use it,
    and a resumed run continues the resampled beta (from the checkpoint) bit for bit."""
    corpus, _, _ = lda_corpus(seed=4, n_docs=400, n_topics=4)
    kw = dict(initial_topics=1, split_merge=10, split_merge_launch=3, sample_topic_word_prior=True, n_iter=30,
              evaluate_every=5, random_state=1)
    m = HDP(**kw).fit(corpus)
    assert 0.05 < m.beta_ < 0.2, m.beta_
    assert HDP(**{**kw, "sample_topic_word_prior": False}).fit(corpus).beta_ == 0.01
    ckpt = tmp_path / "beta.ckpt"
    HDP(**kw, checkpoint_path=ckpt, checkpoint_every=10).fit(corpus, callback=lambda it, n, info: it == 15)
    resumed = HDP(**kw, checkpoint_path=ckpt, checkpoint_every=10).fit(corpus, resume=True)
    assert resumed.resumed_from_ == 15 and resumed.beta_ == m.beta_  # the stop wrote a checkpoint
    np.testing.assert_array_equal(resumed.topic_word_, m.topic_word_)
    with pytest.raises(InvalidParameterError, match="sample_topic_word_prior"):
        HDP(**{**kw, "sample_topic_word_prior": False}, checkpoint_path=ckpt).fit(corpus, resume=True)


def test_save_load_round_trip(synthetic, tmp_path):
    corpus, _, _ = synthetic
    m = HDP(n_iter=6, random_state=1).fit(corpus)
    m.save(tmp_path / "hdp.hmn")
    back = harmonium.load(tmp_path / "hdp.hmn")
    assert isinstance(back, HDP) and back.n_topics_ == m.n_topics_
    np.testing.assert_array_equal(back.topic_word_, m.topic_word_)
    np.testing.assert_array_equal(back.alpha_, m.alpha_)
    assert back.new_topic_weight_ == m.new_topic_weight_
    np.testing.assert_array_equal(back.transform(corpus[:10]), m.transform(corpus[:10]))
    assert document_completion(back, corpus[:30]).perplexity > 0


@pytest.mark.parametrize("kwargs", [
    {"corpus_concentration": 1e-8, "doc_concentration": 1e-8, "sample_concentrations": False},
    {"corpus_concentration": 1e4, "doc_concentration": 1e4, "topic_word_prior": 1e-6,
     "sample_concentrations": False},
    {"doc_concentration_prior": (1e-3, 1e3), "corpus_concentration_prior": (1e-3, 1e3)},
])
def test_extreme_settings_never_nan(kwargs):
    # one-token documents, a repeated word, and a long document
    counts = sp.csr_matrix(np.array([[1, 0, 0], [0, 3, 0], [40, 2, 1], [0, 0, 1]]))
    corpus = Corpus(counts, ["a", "b", "c"])
    m = HDP(n_iter=15, evaluate_every=1, random_state=0, **kwargs).fit(corpus)
    for key in ("log_likelihood", "log_joint", "doc_concentration", "corpus_concentration"):
        assert np.all(np.isfinite(m.trace_[key])), (key, m.trace_[key])
    assert np.all(np.isfinite(m.topic_word_)) and np.all(np.isfinite(m.doc_topic_))
    assert np.isfinite(m.perplexity(corpus).perplexity)


def test_bad_input_gets_one_clear_error(synthetic):
    corpus, _, _ = synthetic
    with pytest.raises(InvalidParameterError, match="'initial_topics' parameter of HDP must be an int >= 1"):
        HDP(initial_topics=0).fit(corpus)
    with pytest.raises(InvalidParameterError, match="'doc_concentration_prior' parameter of HDP"):
        HDP(doc_concentration_prior=(1.0, -2.0)).fit(corpus)
    with pytest.raises(InvalidParameterError, match="'topic_word_prior' parameter of HDP"):
        HDP(topic_word_prior=0).fit(corpus)
    with pytest.raises(InvalidParameterError, match="'split_merge' parameter of HDP must be an int >= 0"):
        HDP(split_merge=-1).fit(corpus)
    with pytest.raises(InvalidParameterError, match="'topic_word_hyperprior' parameter of HDP"):
        HDP(topic_word_hyperprior=(0.0, 1.0)).fit(corpus)
    with pytest.raises(InvalidParameterError, match="'sample_topic_word_prior' parameter of HDP must be a bool"):
        HDP(sample_topic_word_prior="yes").fit(corpus)
    with pytest.raises(InvalidParameterError, match="'split_merge_launch' parameter of HDP must be an int >= 0"):
        HDP(split_merge_launch=1.5).fit(corpus)
    with pytest.raises(InvalidParameterError, match="'split_merge_unit' parameter of HDP must be one of 'token'"):
        HDP(split_merge_unit="documents").fit(corpus)
    with pytest.raises(InvalidParameterError, match="'split_merge_unit' argument of build_kernel"):
        da.build_kernel(split_merge_unit="block")
    empty = Corpus(sp.csr_matrix(np.array([[1, 2], [0, 0]])), ["a", "b"])
    with pytest.raises(CorpusError, match="document 1 is empty"):
        HDP().fit(empty)
    with pytest.raises(InvalidParameterError, match="resume"):
        HDP().fit(corpus, resume=True)
