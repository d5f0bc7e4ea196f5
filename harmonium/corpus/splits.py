"""Seeded held-out splits.

* :func:`train_test_split` holds out whole documents.
* :func:`completion_split` ("document completion", Wallach et al. 2009 §4)
  splits the tokens of each document into an observed part, used to infer the
  document's topic proportions, and a held-out part that is scored.
* :func:`split_long_documents` cuts documents longer than a maximum into pieces
  of random tokens (for training Replicated Softmax on corpora with a few very
  long documents).
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


def split_long_documents(corpus: Corpus, max_length: int, random_state=None) -> Corpus:
    """Cut every document longer than ``max_length`` tokens into pieces of at most ``max_length``.

    A document of N_d > ``max_length`` tokens becomes ceil(N_d / max_length) documents of
    near-equal length (sizes differ by at most one); its tokens are dealt to the pieces
    uniformly at random (a random permutation, then consecutive runs), so each piece is a
    random subsample of the document without replacement. Shorter documents are unchanged.
    Pieces take the place of their document, in order; they repeat its labels, features and
    tags, and their ids are ``"<doc id>#<piece>"`` (without ids: none). Every token is kept.

    Why: in Replicated Softmax the hidden biases are scaled by the document length D, so one
    CD update moves a document's hidden input by about lr D^2 / B through the biases alone
    (B the batch size). On Debian documents of >= 50 tokens one training document of 4,351
    tokens (lr D^2 / B = 568, against 0.14 at the mean length 68) drove every hidden unit
    into saturation on every document and kept the model at the unigram perplexity; dropping
    or splitting the documents above 1,000 tokens let it train (benchmarks/harmoniums/README.md,
    issue 17). Train on the split corpus; score the test documents whole.

    Parameters
    ----------
    corpus : Corpus
    max_length : int >= 1
    random_state : int, Generator or None

    Returns
    -------
    Corpus
        ``corpus`` itself if no document is longer than ``max_length``.
    """
    validate_params(
        "split_long_documents",
        {"max_length": max_length, "random_state": random_state},
        {"max_length": [Interval("int", 1, None)], "random_state": [RANDOM_STATE]},
    )
    rng, _ = check_random_state(random_state, "split_long_documents")
    n_d = np.asarray(corpus.doc_lengths, dtype=np.int64)
    n_pieces = np.maximum(1, -(-n_d // int(max_length)))
    if np.all(n_pieces == 1):
        return corpus
    ts = corpus.tokens()
    rows, cols = [], []
    first_row = np.concatenate([[0], np.cumsum(n_pieces)])
    for d in range(corpus.n_docs):
        words = ts.words[ts.doc_ptr[d]:ts.doc_ptr[d + 1]]
        if n_pieces[d] > 1:
            words = rng.permutation(words)
            sizes = np.full(n_pieces[d], n_d[d] // n_pieces[d])
            sizes[: n_d[d] % n_pieces[d]] += 1
            rows.append(first_row[d] + np.repeat(np.arange(n_pieces[d]), sizes))
        else:
            rows.append(np.full(words.shape[0], first_row[d]))
        cols.append(words)
    r, c = np.concatenate(rows), np.concatenate(cols)
    m = sp.csr_matrix((np.ones(r.shape[0], dtype=np.int32), (r, c)), shape=(int(first_row[-1]), corpus.n_words))
    m.sum_duplicates()
    parent = np.repeat(np.arange(corpus.n_docs), n_pieces)
    piece = np.arange(parent.shape[0]) - first_row[parent]
    doc_ids = None
    if corpus.doc_ids is not None:
        doc_ids = [str(corpus.doc_ids[p]) if n_pieces[p] == 1 else f"{corpus.doc_ids[p]}#{k}"
                   for p, k in zip(parent, piece, strict=True)]
    return Corpus(
        m, corpus.vocabulary, doc_ids=doc_ids,
        labels=None if corpus.labels is None else corpus.labels[parent],
        features=None if corpus.features is None else corpus.features[parent],
        feature_names=corpus.feature_names,
        tags=None if corpus.tags is None else corpus.tags[parent],
        tag_names=corpus.tag_names,
    )
