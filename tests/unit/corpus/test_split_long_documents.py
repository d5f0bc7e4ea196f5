"""split_long_documents: pieces of at most max_length random tokens, every token kept (issue 17)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from harmonium.corpus import Corpus, split_long_documents
from harmonium.errors import InvalidParameterError


def _corpus():
    counts = np.array([[3, 0, 2, 0],      # 5 tokens: kept
                       [500, 500, 0, 0],  # 1,000 tokens in word-id order: 10 pieces of 100
                       [0, 1, 0, 0],      # 1 token: kept
                       [40, 30, 20, 11]])  # 101 tokens: 2 pieces of 51 and 50
    return Corpus(sp.csr_matrix(counts), ["a", "b", "c", "d"], doc_ids=["x", "y", "z", "w"],
                  labels=np.array([0, 1, 2, 3]))


def test_pieces_keep_every_token_and_the_document_order():
    c = _corpus()
    out = split_long_documents(c, 100, random_state=0)
    lengths = np.asarray(out.doc_lengths)
    np.testing.assert_array_equal(lengths, [5] + [100] * 10 + [1, 51, 50])
    parent = np.array([0] + [1] * 10 + [2, 3, 3])
    m = out.counts.toarray()
    for d in range(c.n_docs):
        np.testing.assert_array_equal(m[parent == d].sum(axis=0), c.counts.toarray()[d])
    np.testing.assert_array_equal(m[0], c.counts.toarray()[0])
    np.testing.assert_array_equal(out.labels, [0] + [1] * 10 + [2, 3, 3])
    assert list(out.doc_ids[:3]) == ["x", "y#0", "y#1"] and list(out.doc_ids[-3:]) == ["z", "w#0", "w#1"]
    assert split_long_documents(c, 1000) is c


def test_pieces_are_random_subsamples_not_runs_of_the_word_order():
    # a piece of 100 tokens of the 1,000-token document holds Hypergeometric(1000, 500, 100) tokens of word "a":
    # mean 50, sd 4.74; runs of the stored (word-id) order would hold 100 or 0
    out = split_long_documents(_corpus(), 100, random_state=1)
    a = out.counts.toarray()[1:11, 0]
    sd = np.sqrt(100 * 0.25 * 900 / 999)
    assert np.all(np.abs(a - 50) < 5 * sd), a


def test_bad_max_length_is_refused():
    with pytest.raises(InvalidParameterError, match="max_length"):
        split_long_documents(_corpus(), 0)
