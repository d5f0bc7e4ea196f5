"""Seeded held-out splits.

* :func:`train_test_split` holds out whole documents.
* :func:`completion_split` ("document completion", Wallach et al. 2009 §4)
  splits the tokens of each document into an observed part, used to infer the
  document's topic proportions, and a held-out part that is scored.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from harmonium._validation import RANDOM_STATE, Interval, validate_params
from harmonium.corpus.corpus import Corpus
from harmonium.parallel.seeds import check_random_state


def train_test_split(corpus: Corpus, test_size: float = 0.2, random_state=None) -> tuple[Corpus, Corpus]:
    """Split documents at random into a training and a test corpus.

    Parameters
    ----------
    corpus : Corpus
    test_size : float in (0, 1)
        Fraction of documents in the test corpus (at least one document each side).
    random_state : int, Generator or None
    """
    validate_params(
        "train_test_split",
        {"test_size": test_size, "random_state": random_state},
        {"test_size": [Interval("real", 0, 1, "neither")], "random_state": [RANDOM_STATE]},
    )
    rng, _ = check_random_state(random_state, "train_test_split")
    n = corpus.n_docs
    n_test = int(round(test_size * n))
    if n < 2 or n_test == 0 or n_test == n:
        raise ValueError(
            f"train_test_split needs at least one document on each side; "
            f"{n} documents with test_size={test_size} gives {n_test} test documents."
        )
    perm = rng.permutation(n)
    test_idx, train_idx = np.sort(perm[:n_test]), np.sort(perm[n_test:])
    return corpus[train_idx], corpus[test_idx]


def completion_split(
    corpus: Corpus, observed_fraction: float = 0.5, random_state=None
) -> tuple[Corpus, Corpus]:
    """Split every document's tokens into an observed and a held-out corpus.

    Each token of document d goes to the observed half independently of word
    identity: exactly ``round(observed_fraction * N_d)`` tokens, chosen
    uniformly without replacement. Both corpora keep all documents, the
    vocabulary and the metadata, so row d of each refers to the same document.

    Returns
    -------
    observed, held_out : Corpus
    """
    validate_params(
        "completion_split",
        {"observed_fraction": observed_fraction, "random_state": random_state},
        {"observed_fraction": [Interval("real", 0, 1, "neither")], "random_state": [RANDOM_STATE]},
    )
    rng, _ = check_random_state(random_state, "completion_split")
    ts = corpus.tokens()
    n_d = np.diff(ts.doc_ptr)
    n_obs = np.round(observed_fraction * n_d).astype(np.int64)
    # a random key per token; within each document the n_obs smallest keys are observed
    keys = rng.random(ts.words.shape[0])
    doc_of = np.repeat(np.arange(corpus.n_docs), n_d)
    order = np.lexsort((keys, doc_of))
    rank = np.empty_like(order)
    rank[order] = np.arange(order.shape[0]) - np.repeat(ts.doc_ptr[:-1], n_d)
    observed_mask = rank < np.repeat(n_obs, n_d)

    def build(mask):
        m = sp.csr_matrix(
            (np.ones(mask.sum(), dtype=np.int32), (doc_of[mask], ts.words[mask])),
            shape=corpus.counts.shape,
        )
        m.sum_duplicates()
        return corpus.with_counts(m)

    return build(observed_mask), build(~observed_mask)
