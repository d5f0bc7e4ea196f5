"""Held-out likelihood against brute force, and document completion bookkeeping."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from harmonium.corpus import Corpus
from harmonium.errors import CorpusError
from harmonium.evaluation import completion_perplexity, document_completion, held_out_log_likelihood


def test_held_out_log_likelihood_brute_force():
    rng = np.random.default_rng(0)
    D, K, V = 6, 3, 9
    theta = rng.dirichlet(np.ones(K), size=D)
    phi = rng.dirichlet(np.ones(V), size=K)
    X = rng.poisson(1.0, size=(D, V))
    brute = sum(X[d, w] * np.log(theta[d] @ phi[:, w]) for d in range(D) for w in range(V) if X[d, w])
    got = held_out_log_likelihood(theta, phi, Corpus(sp.csr_matrix(X)), chunk=4)
    assert got == pytest.approx(brute, rel=1e-12)
    res = completion_perplexity(theta, phi, Corpus(sp.csr_matrix(X)))
    assert res.perplexity == pytest.approx(np.exp(-brute / X.sum()), rel=1e-12)
    assert res.n_tokens == X.sum()


def test_uniform_model_has_perplexity_v():
    V = 7
    X = sp.csr_matrix(np.random.default_rng(1).poisson(2.0, size=(5, V)))
    res = completion_perplexity(np.full((5, 2), 0.5), np.full((2, V), 1 / V), Corpus(X))
    assert res.perplexity == pytest.approx(V)


def test_document_completion_scores_only_held_out_tokens():
    V = 4

    class Uniform:
        topic_word_ = np.full((1, V), 1 / V)

        def transform(self, c):
            return np.ones((c.n_docs, 1))

    X = sp.csr_matrix(np.array([[4, 0, 0, 2], [1, 1, 1, 1], [1, 0, 0, 0]]))
    res = document_completion(Uniform(), Corpus(X), observed_fraction=0.5, random_state=0)
    assert res.n_tokens == 3 + 2  # halves of 6 and 4; the 1-token document has nothing on one side
    assert res.n_docs == 2
    assert res.perplexity == pytest.approx(V)


def test_shape_mismatch_is_reported():
    with pytest.raises(CorpusError, match="theta has 2 rows for 3"):
        held_out_log_likelihood(np.ones((2, 1)), np.ones((1, 2)) / 2, Corpus(sp.csr_matrix(np.ones((3, 2), int))))
