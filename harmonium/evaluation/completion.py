"""Held-out perplexity by document completion.

Document completion (Wallach et al. 2009, §4; Rosen-Zvi et al. 2004): every
test document is split into an observed part, from which its topic
proportions theta_d are inferred with the topics fixed, and a held-out part,
which is scored:

    log p(w_held | w_obs) ≈ sum_d sum_{w in held_d} n_dw log sum_k theta_dk phi_kw
    perplexity = exp( - log p(w_held | w_obs) / N_held )

The same code scores every system (ours and the peers') so the numbers are
comparable. Never the harmonic-mean estimator.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from harmonium.corpus.corpus import Corpus
from harmonium.corpus.splits import completion_split
from harmonium.errors import CorpusError


class CompletionResult(NamedTuple):
    """Outcome of a document-completion evaluation."""

    perplexity: float
    log_likelihood: float
    n_tokens: int
    n_docs: int


def held_out_log_likelihood(
    theta: np.ndarray, topic_word: np.ndarray, held_out: Corpus, *, chunk: int = 1 << 16
) -> float:
    """``sum_{d,w} n_dw log sum_k theta_dk phi_kw`` over the held-out counts.

    Parameters
    ----------
    theta : (D, K) array
        Topic proportions per document (rows sum to 1).
    topic_word : (K, V) array
        Topic-word distributions phi (rows sum to 1).
    held_out : Corpus
        Counts to score; row d belongs to theta[d].
    """
    m = held_out.counts
    if theta.shape[0] != m.shape[0]:
        raise CorpusError(f"theta has {theta.shape[0]} rows for {m.shape[0]} held-out documents.")
    if topic_word.shape[1] != m.shape[1]:
        raise CorpusError(f"topic_word has {topic_word.shape[1]} words; the held-out corpus has {m.shape[1]}.")
    rows = np.repeat(np.arange(m.shape[0]), np.diff(m.indptr))
    phi_t = np.ascontiguousarray(topic_word.T)
    total = 0.0
    for lo in range(0, m.nnz, chunk):
        hi = min(lo + chunk, m.nnz)
        prob = np.einsum("ij,ij->i", theta[rows[lo:hi]], phi_t[m.indices[lo:hi]])
        total += float(np.dot(m.data[lo:hi], np.log(prob)))
    return total


def completion_perplexity(theta: np.ndarray, topic_word: np.ndarray, held_out: Corpus) -> CompletionResult:
    """Perplexity of ``held_out`` given per-document theta and the topics."""
    n = held_out.n_tokens
    if n == 0:
        raise CorpusError("the held-out corpus has no tokens; nothing to score.")
    ll = held_out_log_likelihood(theta, topic_word, held_out)
    return CompletionResult(float(np.exp(-ll / n)), ll, n, held_out.n_docs)


def document_completion(model, corpus: Corpus, *, observed_fraction: float = 0.5, random_state=0) -> CompletionResult:
    """Document-completion perplexity of a fitted topic model on test documents.

    ``model`` needs ``transform(corpus) -> theta`` and ``topic_word_``. The
    split of each document's tokens is seeded by ``random_state`` so that every
    model is scored on the same held-out tokens.
    A corpus over another vocabulary than the model's ``vocabulary_`` is
    matched to it by word first (:meth:`harmonium.corpus.Corpus.match_vocabulary`).
    """
    vocabulary = getattr(model, "vocabulary_", None)
    if vocabulary is not None and isinstance(corpus, Corpus):
        corpus = corpus.match_vocabulary(vocabulary, "document_completion")
    observed, held = completion_split(corpus, observed_fraction, random_state=random_state)
    keep = (observed.doc_lengths > 0) & (held.doc_lengths > 0)
    observed, held = observed[keep], held[keep]
    theta = model.transform(observed)
    return completion_perplexity(theta, model.topic_word_, held)
