"""The common held-out likelihood interface: inputs, dispatch, the model hook, perplexity."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from harmonium.corpus import Corpus, train_test_split
from harmonium.errors import CorpusError, InvalidParameterError
from harmonium.evaluation import (
    LogLikelihoodResult,
    exact_log_likelihood,
    left_to_right,
    log_likelihood,
    perplexity,
)

PHI = np.array([[0.5, 0.3, 0.1, 0.1], [0.1, 0.1, 0.4, 0.4], [0.25, 0.25, 0.25, 0.25]])
ALPHA = np.array([0.3, 0.6, 0.2])


def _corpus(seed=0, D=12, V=4, rate=1.0):
    X = np.random.default_rng(seed).poisson(rate, size=(D, V))
    X[3] = 0  # an empty document
    return Corpus(sp.csr_matrix(X))


class TopicModel:
    topic_word_ = PHI
    alpha_ = ALPHA


@pytest.mark.parametrize("method", ["left_to_right", "importance_prior", "importance_iterated", "annealed"])
def test_every_method_agrees_with_the_exact_value(method):
    corpus = _corpus()
    exact = exact_log_likelihood(TopicModel(), corpus).log_likelihood
    extra = {"n_temperatures": 20} if method == "annealed" else {}
    res = log_likelihood(TopicModel(), corpus, method=method, n_particles=400, random_state=1, **extra)
    assert isinstance(res, LogLikelihoodResult) and res.n_particles == 400
    nonempty = corpus.doc_lengths > 0
    err = (res.log_likelihood - exact)[nonempty]
    assert np.all(np.abs(err) < 5 * res.std_error[nonempty] + 1e-9)
    assert res.log_likelihood[3] == 0.0 and res.std_error[3] == 0.0


def test_model_tuple_and_array_inputs_agree():
    corpus = _corpus()
    a = log_likelihood(TopicModel(), corpus, n_particles=5, random_state=3)
    b = log_likelihood((PHI, ALPHA), corpus, n_particles=5, random_state=3)
    c = log_likelihood(PHI, corpus, alpha=ALPHA, n_particles=5, random_state=3)
    np.testing.assert_array_equal(a.log_likelihood, b.log_likelihood)
    np.testing.assert_array_equal(a.log_likelihood, c.log_likelihood)
    d = log_likelihood(PHI, corpus, alpha=0.4, n_particles=5, random_state=3)
    assert not np.array_equal(a.log_likelihood, d.log_likelihood)


def test_perplexity_is_exp_of_minus_the_mean_log_likelihood_per_token():
    corpus = _corpus()
    res = perplexity(TopicModel(), corpus, method="exact")
    exact = exact_log_likelihood(TopicModel(), corpus)
    assert res.log_likelihood == pytest.approx(exact.total)
    assert res.perplexity == pytest.approx(np.exp(-exact.total / corpus.n_tokens))
    assert res.n_tokens == corpus.n_tokens and res.n_docs == corpus.n_docs - 1
    assert res.std_error == 0 and res.perplexity_interval == pytest.approx((res.perplexity, res.perplexity))


def test_jensen_gap_predicts_the_downward_bias_of_log_estimates():
    corpus = _corpus(D=60, rate=2.0)
    exact = exact_log_likelihood(TopicModel(), corpus).total
    res = left_to_right(TopicModel(), corpus, n_particles=10, random_state=2)
    reps = [left_to_right(TopicModel(), corpus, n_particles=10, random_state=s).total for s in range(40)]
    bias = np.mean(reps) - exact
    assert bias < 0
    assert 0.5 * res.jensen_gap < -bias < 2 * res.jensen_gap  # measured: 3.1 +- 0.3 against 2.2


def test_uniform_topics_have_perplexity_v():
    V = 6
    res = perplexity((np.full((2, V), 1 / V), np.ones(2)), _corpus(V=V), n_particles=3)
    assert res.perplexity == pytest.approx(V)
    assert res.std_error == pytest.approx(0.0, abs=1e-12)


def test_threads_give_reproducible_results():
    corpus = _corpus(D=40)
    a = left_to_right(TopicModel(), corpus, n_particles=4, random_state=5, n_jobs=2)
    b = left_to_right(TopicModel(), corpus, n_particles=4, random_state=5, n_jobs=2)
    np.testing.assert_array_equal(a.log_likelihood, b.log_likelihood)
    c = log_likelihood(TopicModel(), corpus, method="annealed", n_particles=3, n_temperatures=5, n_jobs=2)
    assert np.all(np.isfinite(c.log_likelihood))


def test_per_position_combination_and_its_standard_error():
    res = left_to_right(TopicModel(), _corpus(), n_particles=8, combine="per_position", random_state=0)
    assert res.method == "left_to_right/per_position"
    lengths = _corpus().doc_lengths
    assert np.all(res.std_error[lengths > 1] > 0)
    assert np.all(res.std_error[lengths <= 1] == 0)  # one token: p_1 = sum_k alpha_k phi_kw / sum alpha, exactly
    one = left_to_right(TopicModel(), _corpus(), n_particles=1, random_state=0)
    assert np.all(np.isnan(one.std_error[_corpus().doc_lengths > 0]))


# -- the hook for models that bring their own likelihood (harmoniums) ---------------------------------------
class Harmonium:
    def __init__(self, kind):
        self.kind = kind
        self.seen = None

    def log_likelihood_documents(self, corpus, random_state=None):
        self.seen = random_state
        ll = -np.arange(corpus.n_docs, dtype=float)
        if self.kind == "array":
            return ll
        if self.kind == "pair":
            return ll, np.full(corpus.n_docs, 0.5)
        if self.kind == "bad":
            return ll[:-1]
        return LogLikelihoodResult(ll, np.zeros_like(ll), corpus.doc_lengths, "ais", 7)


@pytest.mark.parametrize("kind", ["array", "pair", "result"])
def test_auto_dispatches_to_the_model_hook(kind):
    corpus = _corpus()
    model = Harmonium(kind)
    res = log_likelihood(model, corpus, random_state=9)
    np.testing.assert_array_equal(res.log_likelihood, -np.arange(corpus.n_docs))
    assert model.seen == 9
    assert perplexity(model, corpus, random_state=9).log_likelihood == pytest.approx(res.total)


def test_hook_errors_are_reported():
    with pytest.raises(InvalidParameterError, match="one log-likelihood per document"):
        log_likelihood(Harmonium("bad"), _corpus())
    with pytest.raises(InvalidParameterError, match="has no topic_word_"):
        log_likelihood(Harmonium("array"), _corpus(), method="left_to_right")


def test_hook_without_random_state_is_called_with_the_corpus_only():
    class Plain:
        def log_likelihood_documents(self, corpus):
            return np.zeros(corpus.n_docs)

    assert log_likelihood(Plain(), _corpus()).total == 0.0


# -- input errors --------------------------------------------------------------------------------------------
def test_parameter_errors_name_the_function_and_the_range():
    with pytest.raises(InvalidParameterError, match="The 'n_particles' parameter of left_to_right must be an int >= 1"):
        left_to_right(TopicModel(), _corpus(), n_particles=0)
    with pytest.raises(InvalidParameterError, match="'method' parameter of log_likelihood"):
        log_likelihood(TopicModel(), _corpus(), method="harmonic_mean")
    with pytest.raises(InvalidParameterError, match="'alpha' parameter of left_to_right"):
        left_to_right(PHI, _corpus(), alpha=[1.0, -1.0, 1.0])
    with pytest.raises(InvalidParameterError, match="needs the Dirichlet prior alpha"):
        left_to_right(PHI, _corpus())
    with pytest.raises(InvalidParameterError, match="topic 1 sums to"):
        left_to_right((PHI * [[1], [2], [1]], ALPHA), _corpus())


def test_corpus_errors():
    with pytest.raises(CorpusError, match="the corpus has 5 words and the topics 4"):
        log_likelihood(TopicModel(), _corpus(V=5))
    with pytest.raises(CorpusError, match="expects a harmonium Corpus"):
        perplexity(TopicModel(), np.ones((2, 4)))
    with pytest.raises(InvalidParameterError, match="limit"):
        exact_log_likelihood((np.full((6, 4), 0.25), np.ones(6)), Corpus(sp.csr_matrix(np.full((1, 4), 30))))


def test_fitted_lda_is_scored_by_term(synthetic):
    from harmonium.estimators import LDA

    corpus, _, _ = synthetic
    train, test = train_test_split(corpus[:120], 0.25, random_state=0)
    lda = LDA(5, n_iter=30, random_state=0).fit(train)
    res = perplexity(lda, test, n_particles=5, random_state=0)
    assert 1 < res.perplexity < corpus.n_words
    # the same documents over a permuted vocabulary are matched by term
    perm = np.random.default_rng(0).permutation(corpus.n_words)
    shuffled = Corpus(test.counts[:, perm], [test.vocabulary[int(i)] for i in perm])
    again = perplexity(lda, shuffled, n_particles=5, random_state=0)
    assert again.perplexity == pytest.approx(res.perplexity, rel=1e-12)
