"""Corpus.match_vocabulary: new documents meet a model's vocabulary word by word, never id by id."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from harmonium.corpus import Corpus, Vocabulary
from harmonium.errors import CorpusError, VocabularyMismatchError, VocabularyMismatchWarning

MODEL = Vocabulary(["apple", "banana", "cherry", "date"])


def test_same_vocabulary_is_the_corpus_itself():
    c = Corpus(np.array([[1, 2, 0, 0]]), MODEL)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert c.match_vocabulary(MODEL, "t") is c


def test_words_are_matched_by_term_not_by_id():
    c = Corpus(np.array([[3, 0, 1], [0, 2, 0]]), ["date", "apple", "banana"], doc_ids=["x", "y"], labels=["p", "q"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every word known: no warning
        out = c.match_vocabulary(MODEL, "t")
    assert out.vocabulary == MODEL
    np.testing.assert_array_equal(out.counts.toarray(), [[0, 1, 0, 3], [2, 0, 0, 0]])
    assert list(out.doc_ids) == ["x", "y"] and list(out.labels) == ["p", "q"]


def test_unknown_words_are_dropped_with_a_warning_giving_their_share():
    # 3 of 8 tokens are words the model lacks
    c = Corpus(np.array([[2, 1, 0], [0, 0, 5]]), ["zebra", "yak", "apple"])
    with pytest.warns(VocabularyMismatchWarning, match=r"LDA.transform: 37\.5% of the corpus's tokens \(3 of 8\)"
                      r".*dropped.*'zebra', 'yak'"):
        out = c.match_vocabulary(MODEL, "LDA.transform")
    np.testing.assert_array_equal(out.counts.toarray(), [[0, 0, 0, 0], [5, 0, 0, 0]])


def test_unknown_words_without_tokens_give_no_warning():
    c = Corpus(np.array([[0, 4]]), ["zebra", "apple"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = c.match_vocabulary(MODEL, "t")
    assert out.n_tokens == 4


def test_no_known_word_is_an_error_that_names_the_fix():
    c = Corpus(np.array([[2, 1], [0, 5]]), ["zebra", "yak"])
    with pytest.raises(VocabularyMismatchError, match=r"HDP.perplexity: none of the 8 tokens.*another vocabulary"
                       r".*'yak', 'zebra'.*vocabulary file the model was trained with"):
        c.match_vocabulary(MODEL, "HDP.perplexity")
    assert issubclass(VocabularyMismatchError, CorpusError)


def test_a_model_without_vocabulary_asks_for_word_ids():
    c = Corpus(np.array([[2, 1]]), ["zebra", "yak"])
    with pytest.raises(VocabularyMismatchError, match="fitted on bare word ids 0..3"):
        c.match_vocabulary(Vocabulary.range(4), "t")


def test_bare_ids_are_the_models_ids():
    c = Corpus(np.array([[1, 0, 2], [0, 3, 0]]))  # no vocabulary: placeholder terms "0".."2"
    assert c.vocabulary.is_range and not MODEL.is_range
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = c.match_vocabulary(MODEL, "t")
    assert out.vocabulary == MODEL
    np.testing.assert_array_equal(out.counts.toarray(), [[1, 0, 2, 0], [0, 3, 0, 0]])


def test_bare_ids_beyond_the_vocabulary_are_an_error():
    c = Corpus(np.array([[1, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 2]]))
    with pytest.raises(VocabularyMismatchError, match=r"word id 5 in document 1 is beyond the model's vocabulary of "
                       r"4 words.*no vocabulary \(bare word ids\)"):
        c.match_vocabulary(MODEL, "t")


def test_reindex_stays_silent_for_deliberate_subsets():
    c = Corpus(np.array([[2, 1, 4]]), ["zebra", "yak", "apple"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = c.reindex(Vocabulary(["apple"]))
    assert out.n_tokens == 4
