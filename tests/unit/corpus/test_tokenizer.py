"""Tokenizer: every option, the fitted attributes, metadata subsetting and bad input."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from harmonium.corpus import Corpus, Vocabulary
from harmonium.corpus.tokenizer import Tokenizer, english_stop_words
from harmonium.errors import CorpusError, InvalidParameterError, NotFittedError

TEXTS = [
    "The cat sat on the mat.",
    "The dog sat on the log; the dog barked.",
    "A cat and a dog.",
    "Zebras!",
]


def as_dicts(corpus: Corpus) -> list[dict[str, int]]:
    """Each document as {term: count}: comparable across vocabularies."""
    return [dict(corpus.document(d)) for d in range(corpus.n_docs)]


# -- tokenize ------------------------------------------------------------------


def test_tokenize_default_lowercases_and_drops_single_characters():
    assert Tokenizer().tokenize("A Cat's 2 lives, 42 HATS") == ["cat", "lives", "42", "hats"]


def test_tokenize_lowercase_false_keeps_case():
    assert Tokenizer(lowercase=False).tokenize("Cat cat") == ["Cat", "cat"]


def test_tokenize_custom_pattern_and_single_group():
    assert Tokenizer(token_pattern=r"\S+").tokenize("a b-c  d.") == ["a", "b-c", "d."]
    assert Tokenizer(token_pattern=r"#(\w+)").tokenize("#Tag and #two") == ["tag", "two"]


def test_tokenize_accepts_utf8_bytes_and_unicode_words():
    assert Tokenizer().tokenize("Ünïcode wörds".encode()) == ["ünïcode", "wörds"]


def test_tokenize_stop_words():
    assert Tokenizer(stop_words="english").tokenize("The cat and the hat") == ["cat", "hat"]
    assert Tokenizer(stop_words=["cat"]).tokenize("The cat") == ["the"]
    # compared after lower-casing; case-sensitive without it
    assert Tokenizer(stop_words={"the"}, lowercase=False).tokenize("The the") == ["The"]


def test_english_stop_words_list():
    words = english_stop_words()
    assert 250 <= len(words) <= 450
    assert {"the", "and", "of", "which", "don", "ll"} <= words
    assert all(w == w.strip().lower() and w for w in words)
    assert "cat" not in words


# -- fit / vocabulary ----------------------------------------------------------


def test_fit_returns_self_and_sorted_vocabulary():
    tok = Tokenizer()
    assert tok.fit(TEXTS) is tok
    terms = list(tok.vocabulary_)
    assert terms == sorted(terms)
    assert set(terms) == {"the", "cat", "sat", "on", "mat", "dog", "log", "barked", "and", "zebras"}
    assert tok.n_fit_documents_ == 4
    df = dict(zip(terms, tok.document_frequency_.tolist(), strict=True))
    assert df["the"] == 2 and df["dog"] == 2 and df["zebras"] == 1 and df["cat"] == 2


def test_fit_transform_counts():
    corpus = Tokenizer().fit_transform(TEXTS)
    assert isinstance(corpus, Corpus)
    assert corpus.n_docs == 4
    docs = as_dicts(corpus)
    assert docs[0] == {"the": 2, "cat": 1, "sat": 1, "on": 1, "mat": 1}
    assert docs[1]["dog"] == 2 and docs[1]["the"] == 3
    assert docs[3] == {"zebras": 1}
    assert list(corpus.doc_ids) == ["0", "1", "2", "3"]
    assert corpus.counts.dtype == np.int32 and corpus.counts.has_sorted_indices


def test_fit_transform_equals_fit_then_transform():
    tok = Tokenizer(stop_words="english", min_df=2)
    a = tok.fit_transform(TEXTS)
    b = Tokenizer(stop_words="english", min_df=2).fit(TEXTS).transform(TEXTS)
    assert a.vocabulary == b.vocabulary
    assert (a.counts != b.counts).nnz == 0


def test_fit_transform_accepts_a_generator():
    corpus = Tokenizer().fit_transform(t for t in TEXTS)
    assert corpus.n_docs == 4


def test_stop_words_english_removed_from_vocabulary():
    tok = Tokenizer(stop_words="english").fit(TEXTS)
    assert "the" not in tok.vocabulary_ and "and" not in tok.vocabulary_
    assert "cat" in tok.vocabulary_


def test_min_df_int_and_float():
    assert list(Tokenizer(min_df=2).fit(TEXTS).vocabulary_) == ["cat", "dog", "on", "sat", "the"]
    # 0.5 of 4 documents = at least 2 documents
    by_count = Tokenizer(min_df=2).fit(TEXTS).vocabulary_
    assert Tokenizer(min_df=0.5).fit(TEXTS).vocabulary_ == by_count
    # 1.0 (float) = every document
    with pytest.raises(CorpusError, match="min_df=1.0"):
        Tokenizer(min_df=1.0).fit(TEXTS)


def test_max_df_int_and_float():
    terms = list(Tokenizer(max_df=1).fit(TEXTS).vocabulary_)
    assert terms == ["and", "barked", "log", "mat", "zebras"]
    by_count = Tokenizer(max_df=1).fit(TEXTS).vocabulary_
    assert Tokenizer(max_df=0.25).fit(TEXTS).vocabulary_ == by_count
    assert len(Tokenizer(max_df=1.0).fit(TEXTS).vocabulary_) == 10


def test_max_features_keeps_most_frequent_ties_alphabetical():
    tok = Tokenizer(max_features=3).fit(TEXTS)
    # the: 5 occurrences, dog: 3, then cat/on/sat with 2 each -> alphabetically "cat"
    assert list(tok.vocabulary_) == ["cat", "dog", "the"]
    assert Tokenizer(max_features=100).fit(TEXTS).vocabulary_ == Tokenizer().fit(TEXTS).vocabulary_


def test_fixed_vocabulary_keeps_order_and_ignores_other_tokens():
    tok = Tokenizer(vocabulary=["dog", "cat", "unicorn"], min_df=3)
    corpus = tok.fit_transform(TEXTS)
    assert list(corpus.vocabulary) == ["dog", "cat", "unicorn"]
    assert corpus.counts.toarray().tolist() == [[0, 1, 0], [2, 0, 0], [1, 1, 0], [0, 0, 0]]
    assert tok.document_frequency_.tolist() == [2, 2, 0]


def test_fixed_vocabulary_accepts_vocabulary_and_stop_words_never_count():
    tok = Tokenizer(vocabulary=Vocabulary(["the", "cat"]), stop_words="english")
    assert tok.fit_transform(TEXTS).counts.toarray()[:, 0].sum() == 0


def test_transform_ignores_unknown_tokens():
    tok = Tokenizer().fit(["apple banana", "banana cherry"])
    corpus = tok.transform(["cherry durian apple apple", "eggplant"])
    assert list(corpus.vocabulary) == ["apple", "banana", "cherry"]
    assert corpus.counts.toarray().tolist() == [[2, 0, 1], [0, 0, 0]]


def test_transform_before_fit_raises():
    with pytest.raises(NotFittedError, match="not fitted"):
        Tokenizer().transform(TEXTS)


# -- min_doc_length and metadata -----------------------------------------------


def test_min_doc_length_drops_documents_and_subsets_metadata():
    tok = Tokenizer(stop_words="english", min_doc_length=2)
    tags = sp.csr_matrix(np.array([[1, 0], [0, 1], [1, 1], [0, 0]]))
    corpus = tok.fit_transform(
        TEXTS,
        labels=["a", "b", "c", "d"],
        features=np.arange(8.0).reshape(4, 2),
        feature_names=["x", "y"],
        tags=tags,
        tag_names=["t0", "t1"],
    )
    # "Zebras!" has one token -> dropped
    assert tok.dropped_.tolist() == [3]
    assert tok.kept_.tolist() == [0, 1, 2]
    assert corpus.n_docs == 3
    assert list(corpus.doc_ids) == ["0", "1", "2"]
    assert list(corpus.labels) == ["a", "b", "c"]
    assert corpus.features.tolist() == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
    assert corpus.feature_names == ["x", "y"]
    assert corpus.tags.toarray().tolist() == [[1, 0], [0, 1], [1, 1]]
    assert list(corpus.tag_names) == ["t0", "t1"]
    # the vocabulary is learned from every document, the dropped one included
    assert "zebras" in corpus.vocabulary


def test_min_doc_length_keeps_input_positions_as_ids_and_given_ids():
    texts = ["one word", "", "two words here", "x"]
    tok = Tokenizer(min_doc_length=1)
    corpus = tok.fit_transform(texts)
    assert list(corpus.doc_ids) == ["0", "2"]
    assert tok.dropped_.tolist() == [1, 3]
    corpus = tok.fit_transform(texts, doc_ids=["a", "b", "c", "d"])
    assert list(corpus.doc_ids) == ["a", "c"]


def test_min_doc_length_zero_keeps_empty_documents():
    tok = Tokenizer()
    corpus = tok.fit_transform(["words here", "", "!"])
    assert corpus.n_docs == 3 and tok.dropped_.size == 0
    assert corpus.doc_lengths.tolist() == [2, 0, 0]


def test_metadata_of_wrong_length_is_rejected():
    with pytest.raises(CorpusError, match="labels has 3 entries for 4 documents"):
        Tokenizer().fit_transform(TEXTS, labels=["a", "b", "c"])


# -- parameter validation ------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"min_df": 0}, "The 'min_df' parameter of Tokenizer must be"),
        ({"min_df": 1.5}, "The 'min_df' parameter of Tokenizer must be"),
        ({"min_df": "2"}, "The 'min_df' parameter of Tokenizer must be"),
        ({"max_df": 0.0}, "The 'max_df' parameter of Tokenizer must be"),
        ({"max_features": 0}, "The 'max_features' parameter of Tokenizer must be"),
        ({"min_doc_length": -1}, "The 'min_doc_length' parameter of Tokenizer must be"),
        ({"lowercase": 1}, "The 'lowercase' parameter of Tokenizer must be a bool"),
        ({"stop_words": "french"}, "The 'stop_words' parameter of Tokenizer must be"),
        ({"stop_words": ["ok", 3]}, "The 'stop_words' parameter of Tokenizer must be"),
        ({"token_pattern": "("}, "The 'token_pattern' parameter of Tokenizer must be a valid"),
        ({"token_pattern": r"(a)(b)"}, "at most one capturing group"),
        ({"vocabulary": "abc"}, "The 'vocabulary' parameter of Tokenizer must be"),
        ({"vocabulary": ["a", "a"]}, "unique str terms"),
        ({"vocabulary": []}, "at least one term"),
        ({"min_df": 3, "max_df": 2}, "The 'max_df' parameter of Tokenizer must be >= min_df=3"),
    ],
)
def test_invalid_parameters(params, match):
    with pytest.raises(InvalidParameterError, match=match):
        Tokenizer(**params).fit(TEXTS)


# -- bad data ------------------------------------------------------------------


def test_no_documents():
    with pytest.raises(CorpusError, match="no documents"):
        Tokenizer().fit([])
    tok = Tokenizer().fit(TEXTS)
    with pytest.raises(CorpusError, match="no documents"):
        tok.transform([])


def test_single_string_instead_of_list():
    with pytest.raises(CorpusError, match="not a single str"):
        Tokenizer().fit("a whole text")


def test_no_token_matches():
    with pytest.raises(CorpusError, match="no token in the 2 documents matches token_pattern"):
        Tokenizer().fit(["!", "a b"])


def test_everything_is_a_stop_word():
    with pytest.raises(CorpusError, match="are stop words; relax stop_words"):
        Tokenizer(stop_words="english").fit(["the and of", "which is it"])


def test_min_df_removes_everything():
    with pytest.raises(CorpusError, match=r"min_df=5 .* Lower min_df"):
        Tokenizer(min_df=5).fit(TEXTS)


def test_max_df_removes_everything():
    with pytest.raises(CorpusError, match=r"max_df=1 .* Raise max_df"):
        Tokenizer(max_df=1).fit(["same words", "same words"])


def test_min_and_max_df_together_remove_everything():
    with pytest.raises(CorpusError, match="together remove all"):
        Tokenizer(min_df=2, max_df=2).fit(["aa bb", "aa cc", "aa dd"])


def test_min_doc_length_drops_everything():
    with pytest.raises(CorpusError, match="fewer than min_doc_length=10"):
        Tokenizer(min_doc_length=10).fit_transform(TEXTS)


@pytest.mark.parametrize("bad", [None, 3.5, float("nan"), ["list"]])
def test_non_str_text_names_the_document(bad):
    with pytest.raises(CorpusError, match="document 2 is a .*not str"):
        Tokenizer().fit(["fine text", "also fine", bad])


def test_non_utf8_bytes_names_the_document():
    with pytest.raises(CorpusError, match=r"document 1 is not valid UTF-8: byte 0xff"):
        Tokenizer().fit([b"good bytes", b"bad \xff bytes"])


def test_repr_shows_non_default_parameters():
    assert repr(Tokenizer(min_df=3)) == "Tokenizer(min_df=3)"
    assert "vocabulary=<fixed>" in repr(Tokenizer(vocabulary=["a"]))


def test_fixed_vocabulary_transforms_without_fit():
    from harmonium.corpus import Tokenizer, Vocabulary

    tok = Tokenizer(vocabulary=Vocabulary(["game", "xml"]))
    c = tok.transform(["An XML game about xml", "nothing here"])
    assert c.vocabulary.terms == ["game", "xml"]
    np.testing.assert_array_equal(c.counts.toarray(), [[1, 2], [0, 0]])
