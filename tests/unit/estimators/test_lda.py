"""The LDA estimator: fitting, determinism, checkpoint/resume, persistence, bad input."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import harmonium
from harmonium.corpus import Corpus, train_test_split
from harmonium.errors import CorpusError, InvalidParameterError, ModelFileError, NotFittedError
from harmonium.estimators import LDA
from harmonium.inference.mcmc.lda.infer import infer_fixed_topics


def test_fit_shapes_and_normalisation(synthetic):
    corpus, _, _ = synthetic
    m = LDA(5, n_iter=30, random_state=0).fit(corpus)
    assert m.topic_word_.shape == (5, corpus.n_words)
    assert m.doc_topic_.shape == (corpus.n_docs, 5)
    np.testing.assert_allclose(m.topic_word_.sum(axis=1), 1.0)
    np.testing.assert_allclose(m.doc_topic_.sum(axis=1), 1.0, rtol=1e-6)  # float32
    assert m.n_iter_ == 30 and m.seed_ == 0
    assert m.trace_["iteration"] == [10, 20, 30]
    assert m.log_likelihood_trace_.shape == (3, 2)
    top = m.top_words(4)
    assert len(top) == 5 and all(len(t) == 4 for t in top)
    assert all(w in corpus.vocabulary for t in top for w, _ in t)


def test_log_joint_rises_from_random_start(synthetic):
    corpus, _, _ = synthetic
    m = LDA(5, n_iter=40, evaluate_every=1, random_state=0).fit(corpus)
    ll = m.trace_["log_joint"]
    assert np.mean(ll[-10:]) > np.mean(ll[:3])


def test_recovers_quality_of_true_topics():
    """Held-out perplexity of the fitted model is within 5% of that of the generating topics."""
    from tests.conftest import lda_corpus

    corpus, phi, _ = lda_corpus(seed=1, n_docs=1200, doc_length=80)
    train, test = train_test_split(corpus, 0.25, random_state=0)
    m = LDA(5, doc_topic_prior=0.2, topic_word_prior=0.1, n_iter=150, random_state=0).fit(train)

    class Oracle:
        topic_word_ = phi

        def transform(self, c):
            return infer_fixed_topics(np.random.default_rng(0), c.tokens(), np.ascontiguousarray(phi.T),
                                      np.full(5, 0.2), 50)

    from harmonium.evaluation import document_completion

    fitted = m.completion_perplexity(test).perplexity
    oracle = document_completion(Oracle(), test).perplexity
    assert fitted < 1.05 * oracle
    assert fitted < 0.5 * corpus.n_words  # far better than a uniform model


def test_same_seed_same_result_different_seed_differs(synthetic):
    corpus, _, _ = synthetic
    a = LDA(5, n_iter=10, random_state=3).fit(corpus)
    b = LDA(5, n_iter=10, random_state=3).fit(corpus)
    c = LDA(5, n_iter=10, random_state=4).fit(corpus)
    np.testing.assert_array_equal(a.topic_word_, b.topic_word_)
    assert not np.array_equal(a.topic_word_, c.topic_word_)
    np.testing.assert_array_equal(a.transform(corpus[:20]), b.transform(corpus[:20]))


def test_none_seed_is_recorded_and_reproduces(synthetic):
    corpus, _, _ = synthetic
    a = LDA(5, n_iter=5).fit(corpus)
    assert isinstance(a.seed_, int)
    b = LDA(5, n_iter=5, random_state=a.seed_).fit(corpus)
    np.testing.assert_array_equal(a.topic_word_, b.topic_word_)


def test_checkpoint_resume_is_bit_identical(synthetic, tmp_path):
    corpus, _, _ = synthetic
    straight = LDA(5, n_iter=12, random_state=5).fit(corpus)
    ckpt = tmp_path / "run.ckpt"
    interrupted = LDA(5, n_iter=12, random_state=5, checkpoint_path=ckpt, checkpoint_every=4)
    interrupted.fit(corpus, callback=lambda it, n, info: it == 7)  # "killed" after sweep 7
    assert interrupted.n_iter_ == 7
    resumed = LDA(5, n_iter=12, random_state=5, checkpoint_path=ckpt, checkpoint_every=4)
    resumed.fit(corpus, resume=True)
    assert resumed.n_iter_ == 12
    np.testing.assert_array_equal(resumed.topic_word_, straight.topic_word_)
    np.testing.assert_array_equal(resumed.doc_topic_, straight.doc_topic_)
    # the resumed trace holds every evaluation of the straight run (plus the one at the stop)
    resumed_at = dict(zip(resumed.trace_["iteration"], resumed.trace_["log_joint"], strict=True))
    for it, lj in zip(straight.trace_["iteration"], straight.trace_["log_joint"], strict=True):
        assert resumed_at[it] == lj
    assert resumed.rng_state_ == straight.rng_state_


def test_resume_refuses_other_settings_or_corpus(synthetic, tmp_path):
    corpus, _, _ = synthetic
    ckpt = tmp_path / "run.ckpt"
    LDA(5, n_iter=4, random_state=0, checkpoint_path=ckpt).fit(corpus)
    with pytest.raises(InvalidParameterError, match="n_topics=5"):
        LDA(6, n_iter=8, checkpoint_path=ckpt).fit(corpus, resume=True)
    with pytest.raises(CorpusError, match="different corpus"):
        LDA(5, n_iter=8, checkpoint_path=ckpt).fit(corpus[:100], resume=True)
    with pytest.raises(InvalidParameterError, match="checkpoint_path"):
        LDA(5).fit(corpus, resume=True)


def test_save_load_round_trip(synthetic, tmp_path):
    corpus, _, _ = synthetic
    m = LDA(5, n_iter=10, random_state=1).fit(corpus)
    path = tmp_path / "lda.hmn"
    m.save(path)
    m2 = harmonium.load(path)
    assert isinstance(m2, LDA) and m2.get_params() == m.get_params()
    np.testing.assert_array_equal(m2.topic_word_, m.topic_word_)
    np.testing.assert_array_equal(m2.doc_topic_, m.doc_topic_)
    assert m2.vocabulary_ == m.vocabulary_ and m2.trace_ == m.trace_ and m2.seed_ == m.seed_
    np.testing.assert_array_equal(m2.transform(corpus[:30]), m.transform(corpus[:30]))


def test_load_rejects_pickle_and_truncation(synthetic, tmp_path):
    import pickle

    corpus, _, _ = synthetic
    bad = tmp_path / "model.pkl"
    with open(bad, "wb") as fh:
        pickle.dump({"n_topics": 5}, fh)
    with pytest.raises(ModelFileError, match="pickle"):
        harmonium.load(bad)
    path = tmp_path / "lda.hmn"
    LDA(5, n_iter=2, random_state=1).fit(corpus).save(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelFileError, match="lda.hmn"):
        harmonium.load(path)


def test_transform_matches_by_term_and_handles_empty_docs(synthetic):
    corpus, _, _ = synthetic
    m = LDA(5, n_iter=10, random_state=1).fit(corpus)
    # same documents, columns in reverse order: matched by term, same answer
    rev = Corpus(corpus.counts[:, ::-1], list(reversed(corpus.vocabulary.terms)))
    np.testing.assert_array_equal(m.transform(rev[:10], random_state=0), m.transform(corpus[:10], random_state=0))
    empty = Corpus(sp.csr_matrix((2, corpus.n_words), dtype=np.int32), corpus.vocabulary)
    np.testing.assert_allclose(m.transform(empty), np.full((2, 5), 0.2))


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"n_topics": 0}, r"The 'n_topics' parameter of LDA must be an int >= 1. Got 0."),
        ({"n_topics": 2.5}, "'n_topics'"),
        ({"doc_topic_prior": -1.0}, "'doc_topic_prior' parameter of LDA must be a finite float > 0"),
        ({"topic_word_prior": float("nan")}, "'topic_word_prior'"),
        ({"inference": "magic"}, "'inference' parameter of LDA must be one of 'collapsed_gibbs'"),
        ({"n_iter": 0}, "'n_iter'"),
        ({"random_state": "seed"}, "'random_state'"),
    ],
)
def test_bad_parameters(synthetic, params, match):
    corpus, _, _ = synthetic
    with pytest.raises(InvalidParameterError, match=match):
        LDA(**params).fit(corpus)


def test_bad_corpora():
    with pytest.raises(CorpusError, match="empty corpus"):
        LDA(2).fit(sp.csr_matrix((0, 4), dtype=np.int32))
    with pytest.raises(CorpusError, match="no tokens"):
        LDA(2).fit(sp.csr_matrix((3, 4), dtype=np.int32))
    with pytest.raises(CorpusError, match=r"document 1 is empty .*drop_empty"):
        LDA(2).fit(np.array([[1, 2], [0, 0], [3, 0]]))
    with pytest.raises(CorpusError, match="non-negative integers; document 1 has count -2"):
        LDA(2).fit(np.array([[1, 2], [0, -2]]))
    with pytest.raises(CorpusError, match="non-negative integers; document 0 has count 1.5"):
        LDA(2).fit(np.array([[1.5, 2.0], [1.0, 0.0]]))
    with pytest.raises(CorpusError, match="expects a harmonium Corpus"):
        LDA(2).fit([["a", "b"]])


def test_transform_refuses_a_matrix_of_another_width(synthetic):
    corpus, _, _ = synthetic
    m = LDA(5, n_iter=2, random_state=1).fit(corpus)
    for width in (corpus.n_words - 1, corpus.n_words + 3):  # narrower, or wider with only zeros beyond
        X = sp.csr_matrix(([1], ([0], [2])), shape=(1, width))
        with pytest.raises(CorpusError, match=f"has {width} columns but the model's vocabulary has {corpus.n_words}"):
            m.transform(X)
    assert m.transform(sp.csr_matrix(([1], ([0], [2])), shape=(1, corpus.n_words))).shape == (1, 5)


def test_transform_word_id_beyond_vocabulary(synthetic):
    corpus, _, _ = synthetic
    m = LDA(5, n_iter=2, random_state=1).fit(corpus)
    X = sp.csr_matrix(([1, 1], ([0, 1], [3, corpus.n_words + 5])), shape=(2, corpus.n_words + 6))
    msg = f"word id {corpus.n_words + 5} >= vocabulary size {corpus.n_words} in document 1"
    with pytest.raises(CorpusError, match=msg):
        m.transform(X)


def test_transform_of_a_few_words_copies_only_their_rows_of_phi():
    """transform reads topic_word_ through a view and copies only the documents' words' rows: a 3-word
    document costs kilobytes, not a (V, K) copy of the model (8 MB here; issue 21), with the same theta as
    the kernels given the whole word-major table."""
    import tracemalloc

    from harmonium._kernels import lda_infer

    rng = np.random.default_rng(0)
    V, K = 20_000, 50
    counts = sp.csr_matrix(rng.multinomial(30, np.full(V, 1 / V), size=100))
    m = LDA(K, n_iter=2, random_state=0).fit(counts)
    doc = sp.csr_matrix(([2, 1, 3], ([0, 0, 0], [7, 19_000, 123])), shape=(1, V))
    m.transform(doc)  # kernels loaded
    tracemalloc.start()
    theta = m.transform(doc, random_state=4)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert m.topic_word_.nbytes == V * K * 8
    assert peak < m.topic_word_.nbytes / 20, peak
    # the same draws as the kernels reading the whole (V, K) table by word id
    tokens = Corpus(doc).tokens()
    phi_wk = np.ascontiguousarray(m.topic_word_.T)
    a_cum = np.empty((V, K))
    lda_infer.word_prior_tables(phi_wk, m.alpha_, a_cum)
    z, total = np.zeros(tokens.words.shape[0], dtype=np.int32), np.zeros((1, K))
    scratch = (np.empty(K, dtype=np.int32), np.empty(K), np.zeros(K, dtype=np.uint8), np.zeros(K, dtype=np.int32))
    r = np.random.default_rng(4)
    n_iter = m.n_transform_iter
    args = (tokens.doc_ptr, tokens.words, z, phi_wk, a_cum, 0, 1)
    lda_infer.fixed_topics_sweep_rows(r, *args, True, *scratch, total, False)
    for it in range(n_iter):
        lda_infer.fixed_topics_sweep_rows(r, *args, False, *scratch, total, it >= n_iter // 2)
    total /= n_iter - n_iter // 2
    total += m.alpha_[None, :]
    total /= total.sum(axis=1, keepdims=True)
    np.testing.assert_array_equal(theta, total)


def test_not_fitted():
    with pytest.raises(NotFittedError, match="not fitted"):
        LDA().transform(np.ones((1, 3), dtype=int))
    with pytest.raises(NotFittedError):
        LDA().save("x.hmn")


def test_burn_in_and_thin_count_the_retained_samples(synthetic):
    corpus, _, _ = synthetic
    m = LDA(5, n_iter=20, burn_in=10, thin=3, random_state=0).fit(corpus)
    assert m.n_samples_ == 3  # sweeps 13, 16, 19
    none = LDA(5, n_iter=20, burn_in=20, random_state=0).fit(corpus)
    assert none.n_samples_ == 0
    np.testing.assert_allclose(none.topic_word_.sum(axis=1), 1.0)
    # the averaged estimate differs from the last sample's and still is a distribution
    assert not np.allclose(m.topic_word_, none.topic_word_)
    np.testing.assert_allclose(m.topic_word_.sum(axis=1), 1.0)


@pytest.mark.parametrize("sampler", ["plain", "sparse", "fplus", "auto"])
def test_every_sampler_fits(synthetic, sampler):
    corpus, _, _ = synthetic
    m = LDA(5, sampler=sampler, n_iter=30, random_state=0).fit(corpus)
    assert m.trace_["log_joint"][-1] > m.trace_["log_joint"][0]


def _word_partitioned_path(corpus, n_topics: int, table: bool) -> None:
    """Check that ``LDA(n_topics, n_jobs=2)`` on ``corpus`` runs the word-partitioned sweep with the D x K table
    (documents of at least 2 K tokens on average) or without it (the walk), as the test means it to."""
    from harmonium.inference.mcmc.lda import parallel_gibbs as pgs
    from harmonium.models.directed.lda import make_model

    model = make_model(n_topics, corpus.n_words, 0.1, 0.01)
    assert pgs.needs_doc_counts("auto", model, corpus.tokens(), 2) is table


# synthetic documents hold 50 tokens: K = 5 keeps the table, K = 30 walks each document at each visit
@pytest.mark.parametrize("n_topics, table", [(5, True), (30, False)])
def test_parallel_gibbs_is_reproducible_and_one_thread_is_collapsed(synthetic, n_topics, table):
    corpus, _, _ = synthetic
    _word_partitioned_path(corpus, n_topics, table)
    a = LDA(n_topics, inference="parallel_gibbs", n_jobs=2, n_iter=10, random_state=2).fit(corpus)
    b = LDA(n_topics, inference="parallel_gibbs", n_jobs=2, n_iter=10, random_state=2).fit(corpus)
    np.testing.assert_array_equal(a.topic_word_, b.topic_word_)
    c = LDA(n_topics, inference="parallel_gibbs", n_jobs=1, n_iter=10, random_state=2).fit(corpus)
    d = LDA(n_topics, inference="collapsed_gibbs", n_iter=10, random_state=2).fit(corpus)
    np.testing.assert_array_equal(c.topic_word_, d.topic_word_)


def test_transform_with_threads_is_reproducible(synthetic):
    corpus, _, _ = synthetic
    m = LDA(5, n_iter=10, random_state=1, n_jobs=2).fit(corpus)
    t1, t2 = m.transform(corpus[:50]), m.transform(corpus[:50])
    np.testing.assert_array_equal(t1, t2)
    np.testing.assert_allclose(t1.sum(axis=1), 1.0)


@pytest.mark.parametrize("n_topics, table", [(5, True), (30, False)])
def test_parallel_checkpoint_resume_is_bit_identical(synthetic, tmp_path, n_topics, table):
    corpus, _, _ = synthetic
    _word_partitioned_path(corpus, n_topics, table)
    kw = dict(inference="parallel_gibbs", n_jobs=2, n_iter=12, burn_in=4, thin=2, random_state=5)
    straight = LDA(n_topics, **kw).fit(corpus)
    ckpt = tmp_path / "run.ckpt"
    LDA(n_topics, checkpoint_path=ckpt, checkpoint_every=3, **kw).fit(corpus, callback=lambda it, n, info: it == 7)
    resumed = LDA(n_topics, checkpoint_path=ckpt, checkpoint_every=3, **kw).fit(corpus, resume=True)
    np.testing.assert_array_equal(resumed.topic_word_, straight.topic_word_)
    np.testing.assert_array_equal(resumed.doc_topic_, straight.doc_topic_)
    assert resumed.n_samples_ == straight.n_samples_ == 4


def test_naive_gibbs_fits_and_resumes(synthetic, tmp_path):
    corpus, _, _ = synthetic
    kw = dict(inference="naive_gibbs", n_iter=10, evaluate_every=2, random_state=3)
    straight = LDA(5, **kw).fit(corpus)
    assert straight.trace_["log_joint"][-1] > straight.trace_["log_joint"][0]
    ckpt = tmp_path / "naive.ckpt"
    LDA(5, checkpoint_path=ckpt, **kw).fit(corpus, callback=lambda it, n, info: it == 4)
    resumed = LDA(5, checkpoint_path=ckpt, **kw).fit(corpus, resume=True)
    np.testing.assert_array_equal(resumed.topic_word_, straight.topic_word_)


def test_hyperparameter_optimisation_moves_alpha_and_beta(synthetic, tmp_path):
    corpus, _, _ = synthetic
    kw = dict(n_iter=40, optimize_interval=10, optimize_burn_in=10, random_state=0)
    m = LDA(5, doc_topic_prior=1.0, topic_word_prior=0.5, **kw).fit(corpus)
    assert m.trace_["alpha_sum"][0] == 5.0 and m.trace_["beta"][0] == 0.5
    assert m.alpha_.shape == (5,) and len(set(m.alpha_)) > 1  # asymmetric
    assert m.alpha_.sum() < 5.0 and m.beta_ < 0.5  # the data (alpha 0.2, sparse topics) pull both down
    ckpt = tmp_path / "opt.ckpt"
    LDA(5, doc_topic_prior=1.0, topic_word_prior=0.5, checkpoint_path=ckpt, checkpoint_every=5, **kw).fit(
        corpus, callback=lambda it, n, info: it == 25)
    resumed = LDA(5, doc_topic_prior=1.0, topic_word_prior=0.5, checkpoint_path=ckpt, **kw).fit(corpus, resume=True)
    np.testing.assert_array_equal(resumed.alpha_, m.alpha_)
    np.testing.assert_array_equal(resumed.topic_word_, m.topic_word_)


@pytest.mark.parametrize("inference,sampler", [("collapsed_gibbs", "sparse"), ("collapsed_gibbs", "alias_mh"),
                                               ("collapsed_gibbs", "plain"), ("collapsed_gibbs", "warp"),
                                               ("naive_gibbs", "sparse")])
def test_documents_longer_than_int16_use_int32_doc_counts(inference, sampler):
    from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs
    from harmonium.models.directed.lda import counts_from_assignments, doc_count_dtype

    X = np.array([[20000, 20000, 1], [3, 0, 2]])  # document 0 has 40001 tokens
    corpus = Corpus(X)
    assert doc_count_dtype(corpus.tokens().doc_ptr) == np.int32
    assert doc_count_dtype(corpus[1:].tokens().doc_ptr) == np.int16
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # alias_mh is deprecated (test_alias_mh_is_deprecated)
        m = LDA(3, inference=inference, sampler=sampler, n_iter=3, random_state=0).fit(corpus)
    np.testing.assert_allclose(m.doc_topic_.sum(axis=1), 1.0, rtol=1e-6)
    # the kernels keep int32 document counts consistent with z
    from harmonium.models.directed.lda import make_model

    tokens, model = corpus.tokens(), make_model(3, 3, 0.1, 0.01)
    rng = np.random.default_rng(1)
    state = cgs.init(rng, tokens, model)
    assert state.n_dk.dtype == np.int32
    if inference == "collapsed_gibbs":
        cgs.build_kernel(sampler=sampler, compute_log_joint=False)(rng, state, tokens, model)
        for got, want in zip(state[1:], counts_from_assignments(tokens.doc_ptr, tokens.words, state.z, 3, 3),
                             strict=True):
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("burn_in", [None, 6, 12])
def test_gibbs_fit_keeps_doc_topic_sparse_until_read(synthetic, tmp_path, burn_in):
    """Issue 21: after a Gibbs fit no D x K array is held until doc_topic_ is read; the array made then is
    the Rao-Blackwellised mean, or, with no retained sample (burn_in = n_iter), the final state's
    (n_dk + alpha) / (N_d + sum alpha), computed here from the checkpointed assignments. The default
    (None) averages the last tenth of 12 sweeps: one sample, the last sweep, so the same final state
    (up to the float32 sums)."""
    from harmonium.io import load_checkpoint
    from harmonium.models.directed.lda import counts_from_assignments, doc_topic_mean, topic_word_mean

    corpus, _, _ = synthetic
    path = tmp_path / "c.ckpt"
    m = LDA(6, n_iter=12, burn_in=burn_in, thin=2, checkpoint_path=path, random_state=0).fit(corpus)
    D, K = corpus.n_docs, 6
    assert not [k for k, v in vars(m).items() if isinstance(v, np.ndarray) and v.ndim == 2 and v.shape[0] == D]
    theta = m.doc_topic_
    assert theta.shape == (D, K) and theta.dtype == np.float32
    np.testing.assert_allclose(theta.sum(axis=1), 1.0, rtol=1e-6)
    assert m.doc_topic_ is theta  # made once
    assert m.n_samples_ == {None: 1, 6: 3, 12: 0}[burn_in]
    if burn_in != 6:
        ts = corpus.tokens()
        n_dk, n_wk, n_k = counts_from_assignments(ts.doc_ptr, ts.words, load_checkpoint(path).arrays["z"], K,
                                                  corpus.n_words)
        np.testing.assert_allclose(theta, doc_topic_mean(n_dk, m.alpha_), rtol=1e-6)
        np.testing.assert_allclose(m.topic_word_, topic_word_mean(n_wk, n_k, m.beta_),
                                   rtol=1e-14 if burn_in == 12 else 1e-6)
    m.doc_topic_ = None  # the setter wins over the pending sums
    assert m.doc_topic_ is None


def test_refit_drops_the_previous_doc_topic(synthetic):
    corpus, _, _ = synthetic
    m = LDA(4, n_iter=6, random_state=0).fit(corpus)
    first = m.doc_topic_
    assert "_doc_topic" in vars(m)
    m.set_params(n_topics=3).fit(corpus)
    assert "_doc_topic" not in vars(m)  # not held beside the new sums
    assert m.doc_topic_.shape == (corpus.n_docs, 3) and first.shape[1] == 4


def test_alias_mh_is_deprecated_and_still_fits():
    """sampler="alias_mh" warns once per fit, naming the replacement; the other samplers do not warn."""
    corpus = Corpus(np.array([[3, 0, 2], [1, 4, 0]]))
    with pytest.warns(FutureWarning, match=r'sampler="alias_mh"\) is deprecated.*Use sampler="auto"'):
        m = LDA(2, sampler="alias_mh", n_iter=2, random_state=0).fit(corpus)
    assert m.topic_word_.shape == (2, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        LDA(2, sampler="sparse", n_iter=2, random_state=0).fit(corpus)


@pytest.mark.parametrize("settings", [{}, {"burn_in": 12}, {"optimize_interval": 3, "optimize_burn_in": 3}])
def test_sparse_fit_without_doc_table_is_bit_identical_to_the_table(synthetic, monkeypatch, settings):
    """The serial sparse path keeps no n_dk (issue 21); its fit equals the one with the D x K table, bit for bit."""
    from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs

    corpus, _, _ = synthetic
    made = []
    init = cgs.init

    def recording_init(*args, **kwargs):
        made.append(init(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(cgs, "init", recording_init)
    fits = []
    for needs in (None, True):
        if needs is not None:
            monkeypatch.setattr(cgs, "needs_doc_counts", lambda *a: True)
        fits.append(LDA(5, n_iter=12, thin=2, evaluate_every=3, random_state=1, **settings).fit(corpus))
    assert made[0].n_dk is None and made[1].n_dk is not None
    a, b = fits
    assert a.topic_word_.tobytes() == b.topic_word_.tobytes()
    assert a.doc_topic_.tobytes() == b.doc_topic_.tobytes()
    assert a.alpha_.tobytes() == b.alpha_.tobytes() and a.beta_ == b.beta_
    assert a.trace_.keys() == b.trace_.keys()
    assert all(a.trace_[k] == b.trace_[k] for k in a.trace_ if k != "seconds")


def test_doc_table_kept_only_where_a_sampler_needs_it(synthetic):
    from harmonium.estimators.lda import _algorithm
    from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs
    from harmonium.inference.mcmc.lda import parallel_gibbs as pgs
    from harmonium.models.directed.lda import make_model

    corpus, _, _ = synthetic
    tokens = corpus.tokens()
    mean_length = tokens.words.shape[0] / corpus.n_docs
    # documents shorter than TABLE_TOKENS_PER_TOPIC tokens a topic: the word-partitioned sweep walks them
    K = int(mean_length / pgs.TABLE_TOKENS_PER_TOPIC) + 1
    model = make_model(K, corpus.n_words, 0.1, 0.01)
    cg, pg = "collapsed_gibbs", "parallel_gibbs"
    for inference, sampler, n_jobs, want in [(cg, "sparse", 1, False), (cg, "auto", 1, False), (cg, "plain", 1, True),
                                             (cg, "alias_mh", 1, True), (cg, "warp", 1, True),
                                             (pg, "sparse", 1, False), (pg, "sparse", 2, False),
                                             (pg, "auto", 2, False), (pg, "fplus", 2, False), (cg, "fplus", 1, False),
                                             (pg, "plain", 2, True), (pg, "warp", 2, True)]:
        est = LDA(K, inference=inference, sampler=sampler, n_jobs=n_jobs)
        assert _algorithm(inference).doc_counts(est, model, tokens) is want, (inference, sampler, n_jobs)
    # documents of at least TABLE_TOKENS_PER_TOPIC tokens a topic: the word-partitioned SparseLDA sweep (sparse, and
    # auto's) reads the table instead of walking them; F+LDA's and the 1-thread sweeps still keep none
    K_long = int(mean_length / pgs.TABLE_TOKENS_PER_TOPIC)
    assert K_long >= 1
    long_model = make_model(K_long, corpus.n_words, 0.1, 0.01)
    for inference, sampler, n_jobs, want in [(pg, "sparse", 2, True), (pg, "auto", 2, True), (pg, "sparse", 3, True),
                                             (pg, "fplus", 2, False), (pg, "sparse", 1, False), (cg, "auto", 1, False),
                                             (pg, "warp", 2, True)]:
        est = LDA(K_long, inference=inference, sampler=sampler, n_jobs=n_jobs)
        assert _algorithm(inference).doc_counts(est, long_model, tokens) is want, (inference, sampler, n_jobs, K_long)
    state = cgs.init(np.random.default_rng(0), tokens, model, doc_counts=False)
    with pytest.raises(InvalidParameterError, match="n_dk"):
        cgs.build_kernel(sampler="plain")(np.random.default_rng(0), state, tokens, model)
    with pytest.raises(InvalidParameterError, match="AD-LDA.*sampler='sparse'"):  # the 2-thread plain sweep
        pgs.build_kernel(sampler="plain", n_threads=2)(np.random.default_rng(0), state, tokens, model)
