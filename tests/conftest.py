"""Shared fixtures: small synthetic corpora drawn from a known LDA."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from harmonium.corpus import Corpus


def lda_corpus(seed=0, n_topics=5, n_words=60, n_docs=300, doc_length=50):
    """(corpus, phi, theta) sampled from LDA with sparse topics."""
    rng = np.random.default_rng(seed)
    phi = rng.dirichlet(np.full(n_words, 0.1), size=n_topics)
    theta = rng.dirichlet(np.full(n_topics, 0.2), size=n_docs)
    X = np.stack([rng.multinomial(doc_length, theta[d] @ phi) for d in range(n_docs)])
    vocab = [f"w{i:03d}" for i in range(n_words)]
    return Corpus(sp.csr_matrix(X), vocab, doc_ids=[f"doc{d}" for d in range(n_docs)]), phi, theta


@pytest.fixture(scope="session")
def synthetic():
    return lda_corpus()
