"""scikit-learn and gensim interop, with duck-typed fakes (the libraries are optional)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pytest
import scipy.sparse as sp

from harmonium.corpus import Corpus, Vocabulary
from harmonium.corpus.interop import from_gensim, from_sklearn, to_gensim, to_sklearn
from harmonium.errors import CorpusError, InvalidParameterError

TERMS = ["apple", "pear", "plum", "fig", "kiwi"]
X = np.array([[2, 0, 1, 0, 0], [0, 0, 0, 0, 0], [0, 3, 0, 1, 7]])


class FakeVectorizer:
    """What from_sklearn uses of a fitted CountVectorizer."""

    def __init__(self, terms):
        self.vocabulary_ = {t: i for i, t in enumerate(terms)}

    def get_feature_names_out(self, input_features=None):
        out = np.empty(len(self.vocabulary_), dtype=object)
        for t, i in self.vocabulary_.items():
            out[i] = t
        return out


class FakeDictionary(Mapping):
    """A gensim.corpora.Dictionary look-alike: a Mapping id -> token."""

    def __init__(self, terms):
        self.token2id = {t: i for i, t in enumerate(terms)}
        self._id2token = dict(enumerate(terms))

    def __getitem__(self, i):
        return self._id2token[i]

    def __iter__(self):
        return iter(self._id2token)

    def __len__(self):
        return len(self._id2token)


# ---------------------------------------------------------------------------
# scikit-learn
# ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "vocab",
    [FakeVectorizer(TERMS), FakeVectorizer(TERMS).vocabulary_, TERMS, Vocabulary(TERMS),
     np.array(TERMS), dict(enumerate(TERMS))],
    ids=["vectorizer", "vocabulary_", "list", "Vocabulary", "array", "id2term"],
)
def test_from_sklearn_vocabulary_kinds(vocab):
    c = from_sklearn(sp.csr_matrix(X), vocab)
    assert c.vocabulary.terms == TERMS
    assert all(type(t) is str for t in c.vocabulary)
    np.testing.assert_array_equal(c.counts.toarray(), X)
    assert c.counts.indices.dtype == np.int32 and c.counts.indptr.dtype == np.int32


@pytest.mark.parametrize("make", [np.asarray, sp.csr_matrix, sp.csc_matrix, sp.csr_array],
                         ids=["dense", "csr", "csc", "csr_array"])
def test_from_sklearn_matrix_kinds_and_no_mutation(make):
    x = make(X.astype(np.int64))
    c = from_sklearn(x, TERMS, labels=["a", "b", "c"], doc_ids=["d0", "d1", "d2"])
    assert isinstance(c.counts, sp.csr_matrix)
    np.testing.assert_array_equal(c.counts.toarray(), X)
    assert list(c.labels) == ["a", "b", "c"] and list(c.doc_ids) == ["d0", "d1", "d2"]
    if sp.issparse(x):
        np.testing.assert_array_equal(x.toarray(), X)  # the caller's matrix is intact
        assert x.dtype == np.int64


@pytest.mark.parametrize(
    ("x", "vocab", "error", "message"),
    [
        (X, TERMS[:4], CorpusError, "X has 5 columns but the vocabulary has 4 terms"),
        (np.where(X == 7, -7, X), TERMS, CorpusError,
         "non-negative integers; document 2 has count -7"),
        (X * 0.5, TERMS, CorpusError, "document 0 has count .*0.5.*from_sklearn"),
        (X, {"apple": 0, "pear": 2}, CorpusError, "must number its 2 terms 0..1"),
        (X, {0: "apple", 1: 7}, CorpusError, "maps id 1 to 7, which is not a str"),
        (X, "apple pear", InvalidParameterError, "fitted vectorizer, a mapping or a sequence"),
        (X, 5, InvalidParameterError, "Got int"),
        (X, ["a", "b", "a", "c", "d"], CorpusError, "'a' appears twice"),
        (np.ones(3), TERMS, CorpusError, "2-D"),
    ],
)
def test_from_sklearn_errors(x, vocab, error, message):
    with pytest.raises(error, match=message):
        from_sklearn(x, vocab)


def test_from_sklearn_rejects_unknown_metadata():
    with pytest.raises(InvalidParameterError, match="unexpected keyword argument 'label'"):
        from_sklearn(X, TERMS, label=[1, 2, 3])


def test_to_sklearn_round_trip_and_copy():
    c = Corpus(sp.csr_matrix(X), TERMS)
    m, terms = to_sklearn(c)
    assert isinstance(m, sp.csr_matrix) and terms == TERMS
    assert m.indices.dtype == m.indptr.dtype  # what scipy's own routines expect
    m.tocoo()  # works, unlike on mixed index dtypes
    np.testing.assert_array_equal(m.toarray(), X)
    assert not np.shares_memory(m.data, c.counts.data)
    shared, _ = to_sklearn(c, copy=False)
    assert np.shares_memory(shared.data, c.counts.data)
    again = from_sklearn(m, terms)
    np.testing.assert_array_equal(again.counts.toarray(), X)
    with pytest.raises(InvalidParameterError, match="must be a Corpus"):
        to_sklearn(X)


def test_real_count_vectorizer():
    text = pytest.importorskip("sklearn.feature_extraction.text")
    docs = ["apple pear apple", "", "plum pear pear fig"]
    vec = text.CountVectorizer()
    x = vec.fit_transform(docs)
    c = from_sklearn(x, vec)
    assert c.document(0) == [("apple", 2), ("pear", 1)]
    assert c.document(1) == []
    assert from_sklearn(x, vec.vocabulary_).vocabulary == c.vocabulary
    m, terms = to_sklearn(c)
    np.testing.assert_array_equal(m.toarray(), x.toarray())
    assert terms == list(vec.get_feature_names_out())


# ---------------------------------------------------------------------------
# gensim
# ---------------------------------------------------------------------------
BOW = [[(0, 2), (2, 1)], [], [(1, 3), (3, 1), (4, 7)]]


@pytest.mark.parametrize(
    "id2word",
    [dict(enumerate(TERMS)), FakeDictionary(TERMS), TERMS, Vocabulary(TERMS)],
    ids=["dict", "Dictionary", "list", "Vocabulary"],
)
def test_from_gensim(id2word):
    c = from_gensim(BOW, id2word, labels=[0, 1, 0])
    assert c.vocabulary.terms == TERMS
    np.testing.assert_array_equal(c.counts.toarray(), X)
    assert list(c.labels) == [0, 1, 0]


def test_from_gensim_placeholder_vocabulary_generators_and_float_counts():
    docs = (((w, float(n)) for w, n in doc) for doc in BOW)  # MmCorpus yields float counts
    c = from_gensim(docs)
    assert c.vocabulary == Vocabulary.range(5)
    np.testing.assert_array_equal(c.counts.toarray(), X)
    assert from_gensim([]).n_docs == 0
    assert from_gensim([[], []]).counts.shape == (2, 0)


def test_from_gensim_sums_repeats_and_sorts():
    c = from_gensim([[(3, 1), (1, 2), (3, 4), (0, 0)]], TERMS[:4])
    assert c.document(0) == [("pear", 2), ("fig", 5)]


@pytest.mark.parametrize(
    ("docs", "message"),
    [
        ([[(0, 1)], [(1, 1)], [(7, 1)]], "word id 7 >= vocabulary size 5 in document 2 (from_gensim)"),
        ([[(0, 1)], [(1, -2)]], "negative count -2 for word id 1 in document 1 (from_gensim)"),
        ([[(0, 1)], [(1, 2.5)]], "non-integer count 2.5 for word id 1 in document 1"),
        ([[(0, 1)], [(1, float("nan"))]], "non-integer count nan for word id 1 in document 1"),
        ([[(0, 1)], [(-1, 2)]], "negative word id -1 in document 1 (from_gensim)"),
        ([[(0, 1)], [(1.5, 2)]], "word id 1.5 in document 1 (from_gensim) is not an integer"),
        ([[(0, 1)], [("pear", 2)]], "word id 'pear' in document 1 (from_gensim) is not an"),
        ([[(0, 1)], [(1, "2")]], "non-integer count '2' for word id 1 in document 1"),
        ([[(0, 1)], [(1, 2, 3)]], "entry (1, 2, 3) in document 1 (from_gensim) is not a"),
        ([[(0, 1)], [(1, 2), 5]], "entry 5 in document 1 (from_gensim) is not a"),
        ([[(0, 1), (1, 2**40)]], "exceeds 2**31-1 in document 0"),
    ],
)
def test_from_gensim_errors_name_the_document(docs, message):
    import re

    with pytest.raises(CorpusError, match=re.escape(message)):
        from_gensim(docs, TERMS)


def test_from_gensim_bad_id2word():
    with pytest.raises(CorpusError, match="must number its 2 terms 0..1.*compactify"):
        from_gensim(BOW, {0: "apple", 3: "fig"})
    with pytest.raises(InvalidParameterError, match="unexpected keyword argument"):
        from_gensim(BOW, TERMS, doc_id=["x"])


def test_to_gensim_round_trip():
    c = Corpus(sp.csr_matrix(X), TERMS)
    docs, id2word = to_gensim(c)
    assert docs == BOW
    assert all(type(w) is int and type(n) is int for doc in docs for w, n in doc)
    assert id2word == dict(enumerate(TERMS))
    back = from_gensim(docs, id2word)
    np.testing.assert_array_equal(back.counts.toarray(), X)
    assert back.vocabulary == c.vocabulary
    with pytest.raises(InvalidParameterError, match="must be a Corpus"):
        to_gensim(BOW)


def test_real_gensim_dictionary():
    corpora = pytest.importorskip("gensim.corpora")
    texts = [["apple", "pear", "apple"], [], ["plum", "pear"]]
    d = corpora.Dictionary(texts)
    bow = [d.doc2bow(t) for t in texts]
    c = from_gensim(bow, d)
    assert c.document(0) == [("apple", 2), ("pear", 1)]
    docs, id2word = to_gensim(c)
    assert docs == bow and id2word == dict(d.items())
