"""Vocabulary, Corpus (CSR counts, token stream, metadata) and the seeded splits."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from harmonium.corpus import Corpus, Vocabulary, completion_split, train_test_split
from harmonium.errors import CorpusError, InvalidParameterError


def small():
    X = np.array([[2, 0, 1], [0, 0, 0], [1, 3, 0], [0, 1, 1]])
    return Corpus(X, ["a", "b", "c"], doc_ids=["d0", "d1", "d2", "d3"], labels=["x", "y", "x", "y"],
                  features=np.arange(8.0).reshape(4, 2), feature_names=["f", "g"],
                  tags=sp.csr_matrix(np.array([[1, 0], [0, 1], [1, 1], [0, 0]])), tag_names=["t1", "t2"])


def test_vocabulary_basics():
    v = Vocabulary(["apple", "pear"])
    assert v.index("pear") == 1 and v[0] == "apple" and "apple" in v and len(v) == 2
    assert v.get("fig") is None and list(v.encode(["pear", "fig", "apple"])) == [1, 0]
    assert v == Vocabulary(["apple", "pear"]) and v != Vocabulary(["pear", "apple"])
    with pytest.raises(CorpusError, match="appears twice"):
        Vocabulary(["a", "b", "a"])
    with pytest.raises(CorpusError, match="must be str"):
        Vocabulary(["a", 3])
    with pytest.raises(KeyError, match="fig"):
        v.index("fig")


def test_counts_tokens_and_lengths():
    c = small()
    assert (c.n_docs, c.n_words, c.n_tokens) == (4, 3, 9)
    np.testing.assert_array_equal(c.doc_lengths, [3, 0, 4, 2])
    ts = c.tokens()
    assert ts.words.dtype == np.int32 and ts.doc_ptr.dtype == np.int64
    np.testing.assert_array_equal(ts.doc_ptr, [0, 3, 3, 7, 9])
    np.testing.assert_array_equal(ts.words, [0, 0, 2, 0, 1, 1, 1, 1, 2])
    assert c.counts.data.dtype == np.int32 and c.counts.indptr.dtype == c.counts.indices.dtype == np.int32
    assert c.counts.tocoo().nnz == 6  # scipy operations work on the canonical layout
    assert c.document(0) == [("a", 2), ("c", 1)]


def test_caller_matrix_is_not_modified():
    X = sp.csr_matrix(np.array([[1, 2], [0, 3]], dtype=np.int64))
    X.indptr = X.indptr.astype(np.int64)
    X.indices = X.indices.astype(np.int64)
    Corpus(X)
    assert X.data.dtype == X.indptr.dtype == X.indices.dtype == np.int64
    np.testing.assert_array_equal(X.toarray(), [[1, 2], [0, 3]])


def test_subsetting_keeps_metadata():
    c = small()
    s = c[[2, 0]]
    assert list(s.doc_ids) == ["d2", "d0"] and list(s.labels) == ["x", "x"]
    np.testing.assert_array_equal(s.features, [[4.0, 5.0], [0.0, 1.0]])
    np.testing.assert_array_equal(s.tags.toarray(), [[1, 1], [1, 0]])
    d = c.drop_empty()
    assert d.n_docs == 3 and list(d.doc_ids) == ["d0", "d2", "d3"]
    assert list(c.empty_documents()) == [1]


def test_reindex_matches_by_term():
    c = small()
    r = c.reindex(Vocabulary(["c", "z", "a"]))
    np.testing.assert_array_equal(r.counts.toarray(), [[1, 0, 2], [0, 0, 0], [0, 0, 1], [1, 0, 0]])


@pytest.mark.parametrize(
    ("counts", "vocab", "match"),
    [
        (np.array([[1, -1]]), None, "non-negative integers; document 0 has count -1"),
        (np.array([[0, 1], [-1, -5]]), None, "document 1 has count -1 for word id 0"),
        (np.array([[1.0, 0.5]]), None, "non-negative integers; document 0 has count 0.5"),
        (np.array([[1.0, np.nan]]), None, "non-negative integers"),
        (np.array(["a"]), None, "2-D"),
        (sp.csr_matrix(([1], ([0], [4])), shape=(1, 5)), ["a", "b"], "word id 4 >= vocabulary size 2 in document 0"),
        ("not counts", None, "scipy.sparse matrix or a 2-D array"),
    ],
)
def test_bad_counts(counts, vocab, match):
    with pytest.raises(CorpusError, match=match):
        Corpus(counts, vocab)


def test_bad_metadata():
    X = np.ones((2, 2), int)
    with pytest.raises(CorpusError, match="doc_ids must have one entry per document"):
        Corpus(X, doc_ids=["a"])
    with pytest.raises(CorpusError, match="features must have shape"):
        Corpus(X, features=np.ones((3, 1)))
    with pytest.raises(CorpusError, match="feature_names has 1 names for 2"):
        Corpus(X, features=np.ones((2, 2)), feature_names=["f"])


def test_train_test_split_is_seeded_and_disjoint():
    c = Corpus(np.ones((50, 3), int), doc_ids=[str(i) for i in range(50)])
    tr, te = train_test_split(c, 0.2, random_state=1)
    tr2, te2 = train_test_split(c, 0.2, random_state=1)
    assert te.n_docs == 10 and tr.n_docs == 40
    assert set(tr.doc_ids).isdisjoint(te.doc_ids) and list(te.doc_ids) == list(te2.doc_ids)
    assert list(train_test_split(c, 0.2, random_state=2)[1].doc_ids) != list(te.doc_ids)
    with pytest.raises(InvalidParameterError, match="'test_size' parameter of train_test_split"):
        train_test_split(c, 1.5)
    with pytest.raises(ValueError, match="at least one document on each side"):
        train_test_split(c[:1], 0.5)


def test_completion_split_partitions_every_document():
    rng = np.random.default_rng(0)
    c = Corpus(sp.csr_matrix(rng.poisson(2.0, size=(30, 12))))
    obs, held = completion_split(c, 0.5, random_state=3)
    np.testing.assert_array_equal((obs.counts + held.counts).toarray(), c.counts.toarray())
    np.testing.assert_array_equal(obs.doc_lengths, np.round(0.5 * c.doc_lengths))
    obs2, _ = completion_split(c, 0.5, random_state=3)
    np.testing.assert_array_equal(obs.counts.toarray(), obs2.counts.toarray())
    obs3, _ = completion_split(c, 0.5, random_state=4)
    assert (obs3.counts != obs.counts).nnz > 0
