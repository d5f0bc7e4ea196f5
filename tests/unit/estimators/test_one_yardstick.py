"""One yardstick (issue 19 item 5): every estimator's ``.perplexity(X)`` is held-out per-word perplexity of WHOLE
documents, the number ``harmonium.evaluation.perplexity`` computes, with the estimator named in the result.
Document completion stays available as ``.completion_perplexity`` on the topic models, and is a different number."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from harmonium.corpus import Corpus, train_test_split
from harmonium.estimators import HDP, LDA, DualWingHarmonium, ReplicatedSoftmax
from harmonium.evaluation import CompletionResult, PerplexityResult, document_completion, perplexity
from harmonium.evaluation.left_to_right import left_to_right
from harmonium.evaluation.partition import exact_log_partition, harmonium_log_likelihood
from tests.conftest import lda_corpus

AIS = {"n_ais_runs": 10, "n_temperatures": 200}


@pytest.fixture(scope="module")
def split():
    corpus, _, _ = lda_corpus(seed=5, n_topics=3, n_words=30, n_docs=120, doc_length=12)
    rng = np.random.default_rng(0)
    corpus = Corpus(corpus.counts, corpus.vocabulary, features=rng.normal(size=(corpus.n_docs, 2)))
    return train_test_split(corpus, 0.25, random_state=0)


@pytest.fixture(scope="module")
def fitted(split):
    train, _ = split
    return {
        "LDA": LDA(3, n_iter=30, random_state=0).fit(train),
        "HDP": HDP(initial_topics=3, n_iter=20, random_state=0).fit(train),
        "ReplicatedSoftmax": ReplicatedSoftmax(4, n_iter=3, random_state=0, **AIS).fit(train),
        "DualWingHarmonium": DualWingHarmonium(3, n_iter=3, random_state=0, **AIS).fit(train),
    }


@pytest.mark.parametrize("name", ["LDA", "HDP", "ReplicatedSoftmax", "DualWingHarmonium"])
def test_every_estimator_reports_the_evaluation_layers_number(fitted, split, name):
    model, (_, test) = fitted[name], split
    res = model.perplexity(test, random_state=3)
    ref = perplexity(model, test, random_state=3)
    assert isinstance(res, PerplexityResult) and res.estimator == name == ref.estimator
    for field in ("perplexity", "log_likelihood", "std_error", "n_tokens", "n_docs", "method"):
        assert getattr(res, field) == getattr(ref, field), field
    np.testing.assert_array_equal(res.per_document.log_likelihood, ref.per_document.log_likelihood)
    # whole documents: every token of every test document is scored
    assert res.n_tokens == test.n_tokens and res.n_docs == test.n_docs
    assert res.perplexity == pytest.approx(np.exp(-res.log_likelihood / test.n_tokens), rel=1e-12)
    assert np.isfinite(res.perplexity) and res.perplexity > 1


def test_lda_whole_documents_is_left_to_right_with_its_alpha(fitted, split):
    lda, (_, test) = fitted["LDA"], split
    res = lda.perplexity(test, n_particles=7, random_state=1)
    manual = left_to_right((lda.topic_word_, lda.alpha_), test, n_particles=7, random_state=1)
    assert res.method.startswith("left_to_right")
    np.testing.assert_array_equal(res.per_document.log_likelihood, manual.log_likelihood)
    assert res.perplexity == pytest.approx(np.exp(-manual.log_likelihood.sum() / test.n_tokens), rel=1e-12)


def test_hdp_whole_documents_use_the_new_topic_pool_and_take_n_particles(fitted, split):
    hdp, (_, test) = fitted["HDP"], split
    res = hdp.perplexity(test, n_particles=5, random_state=2)
    manual = left_to_right(hdp.predictive_topics(), test, n_particles=5, random_state=2)
    np.testing.assert_array_equal(res.per_document.log_likelihood, manual.log_likelihood)
    # the particles really reach HDP's left-to-right: another count gives another estimate
    assert hdp.perplexity(test, n_particles=2, random_state=2).log_likelihood != res.log_likelihood


def test_rsm_whole_documents_with_exact_log_z_per_length(fitted, split):
    rsm, (_, test) = fitted["ReplicatedSoftmax"], split
    res = rsm.perplexity(test, n_runs=50, n_temperatures=500)
    model = rsm.model_.with_params(rsm.model_.params, dtype=np.float64)
    lz = exact_log_partition(model, np.unique(test.doc_lengths))
    ll, _ = harmonium_log_likelihood(model, (sp.csr_matrix(test.counts, dtype=np.float64),), lz)
    # AIS log Z within 0.05 nats a document of the exact one
    assert abs(res.log_likelihood - ll.sum()) < 0.05 * test.n_docs
    # the AIS settings reach the estimate (cached per setting): fewer runs, another number
    assert rsm.perplexity(test, n_runs=3, n_temperatures=20).log_likelihood != res.log_likelihood


def test_harmonium_options_it_does_not_take_are_refused(fitted, split):
    from harmonium.errors import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="takes no option 'n_particles'"):
        fitted["ReplicatedSoftmax"].perplexity(split[1], n_particles=5)


@pytest.mark.parametrize("name", ["LDA", "HDP"])
def test_document_completion_keeps_its_own_name(fitted, split, name):
    model, (_, test) = fitted[name], split
    comp = model.completion_perplexity(test, observed_fraction=0.5, random_state=0)
    assert isinstance(comp, CompletionResult)
    if name == "LDA":
        ref = document_completion(model, test, observed_fraction=0.5, random_state=0)
        assert comp == ref
    # only the held-out half of the tokens is scored: not the whole-document number
    assert comp.n_tokens < test.n_tokens
    assert comp.perplexity != model.perplexity(test).perplexity
