"""Every estimator entry point that scores new documents maps them to the model's vocabulary by word.

A corpus over another vocabulary used to be read id for id (or, matched by term, silently emptied: LDA
returned a uniform theta). Now: unknown words are dropped with a VocabularyMismatchWarning giving their
share, no known word is a VocabularyMismatchError, and bare word ids beyond the vocabulary are an error.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from harmonium.corpus import Corpus, Vocabulary
from harmonium.errors import VocabularyMismatchError, VocabularyMismatchWarning

WORDS = [f"w{i:02d}" for i in range(12)]


@pytest.fixture(scope="module")
def train():
    rng = np.random.default_rng(0)
    counts = rng.poisson(0.8, size=(30, 12)) + np.eye(30, 12, dtype=int)
    return Corpus(counts, WORDS)


def _lda(corpus):
    from harmonium.estimators import LDA

    return LDA(3, n_iter=5, random_state=0).fit(corpus)


def _hdp(corpus):
    from harmonium.estimators import HDP

    return HDP(n_iter=3, random_state=0).fit(corpus)


def _rsm(corpus):
    from harmonium.estimators import ReplicatedSoftmax

    return ReplicatedSoftmax(3, n_iter=2, batch_size=10, random_state=0).fit(corpus)


def _efh(corpus):
    from harmonium.estimators import EFH

    return EFH(3, n_iter=2, batch_size=10, random_state=0).fit(corpus)


def _befh(corpus):
    from harmonium.estimators import BayesianEFH

    return BayesianEFH(2, n_iter=2, batch_size=10, n_chains=1, n_warmup=2, n_samples=2, thin=1,
                       random_state=0).fit(corpus)


def _lsi(corpus):
    from harmonium.evaluation import LSI

    return LSI(2).fit(corpus)


FITS = {"LDA": _lda, "HDP": _hdp, "ReplicatedSoftmax": _rsm, "EFH": _efh, "BayesianEFH": _befh, "LSI": _lsi}
_fitted: dict = {}


def fitted(name, train):
    if name not in _fitted:
        _fitted[name] = FITS[name](train)
    return _fitted[name]


def _entry_points(name):
    """(label, call(model, corpus)) for every method of ``name`` that scores new documents."""
    calls = [("transform", lambda m, c: m.transform(c))]
    if name in ("LDA", "HDP"):
        calls.append(("perplexity", lambda m, c: m.perplexity(c, n_particles=2, random_state=0)))
        calls.append(("completion_perplexity",
                      lambda m, c: m.completion_perplexity(c, observed_fraction=0.5, random_state=0)))
        calls.append(("document_completion", _document_completion))
    if name in ("LDA", "HDP", "ReplicatedSoftmax"):
        calls.append(("report_data", _report_data))
    return calls


def _document_completion(model, corpus):
    from harmonium.evaluation import document_completion

    return document_completion(model, corpus, random_state=0)


def _report_data(model, corpus):
    from harmonium.report.data import report_data

    return report_data(model, corpus, n_words=3)


CASES = [(name, label, call) for name in FITS for label, call in _entry_points(name)]


def _foreign(train):
    """The training documents with every word renamed: no word in common."""
    return Corpus(train.counts, [w.upper() for w in WORDS])


def _half_known(train):
    """Training documents whose last 4 words are renamed: the model knows 8 of the 12."""
    return Corpus(train.counts, WORDS[:8] + ["zz0", "zz1", "zz2", "zz3"])


@pytest.mark.parametrize(("name", "label", "call"), CASES, ids=[f"{n}.{lab}" for n, lab, _ in CASES])
def test_no_known_word_is_an_error(train, name, label, call):
    model = fitted(name, train)
    with pytest.raises(VocabularyMismatchError, match="none of the .* tokens of the corpus is a word of the model"):
        call(model, _foreign(train))


@pytest.mark.parametrize(("name", "label", "call"), CASES, ids=[f"{n}.{lab}" for n, lab, _ in CASES])
def test_unknown_words_warn_with_their_share(train, name, label, call):
    model = fitted(name, train)
    half = _half_known(train)
    dropped = int(train.counts[:, 8:].sum())
    share = f"{dropped / train.n_tokens:.1%}"
    with pytest.warns(VocabularyMismatchWarning, match=rf"{share} of the corpus's tokens \({dropped} of "
                      rf"{train.n_tokens}\)"):
        call(model, half)


@pytest.mark.parametrize("name", list(FITS))
def test_transform_matches_by_word(train, name):
    model = fitted(name, train)
    order = np.random.default_rng(1).permutation(len(WORDS))
    shuffled = Corpus(train.counts[:, order], [WORDS[i] for i in order])  # same documents, other word ids
    kw = {"random_state": 3} if name in ("LDA", "HDP") else {}
    with warnings.catch_warnings():
        warnings.simplefilter("error", VocabularyMismatchWarning)
        np.testing.assert_array_equal(model.transform(shuffled, **kw), model.transform(train, **kw))


@pytest.mark.parametrize("name", list(FITS))
def test_bare_ids_beyond_the_vocabulary_are_an_error(train, name):
    model = fitted(name, train)
    wide = Corpus(np.hstack([train.counts.toarray(), np.ones((train.n_docs, 2), dtype=int)]))
    with pytest.raises(VocabularyMismatchError, match="word id 12 in document 0 is beyond the model's vocabulary "
                       "of 12 words"):
        model.transform(wide)


def test_lda_no_longer_returns_uniform_theta_for_a_foreign_corpus(train):
    # the finding: theta of 0.2 everywhere, no warning
    model = fitted("LDA", train)
    with pytest.raises(VocabularyMismatchError):
        model.transform(_foreign(train))
    assert Vocabulary(WORDS) == model.vocabulary_
