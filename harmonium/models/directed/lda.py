"""Latent Dirichlet allocation: what is modelled.

Seed 003, "Latent Dirichlet Allocation": document d draws topic proportions
theta_d ~ Dir(alpha), each topic k draws a word distribution
phi_k ~ Dir(beta) over V words, and every token i of d draws
z_i ~ Cat(theta_d), w_i ~ Cat(phi_{z_i}).

With theta and phi integrated out (seed 003, "Collapsed Gibbs Sampling"):

    log p(w, z) = sum_d [ log G(sum_k a_k) - log G(N_d + sum_k a_k)
                          + sum_k log G(n_dk + a_k) - log G(a_k) ]
                + sum_k [ log G(V b) - log G(n_k + V b)
                          + sum_w log G(n_wk + b) - log G(b) ]

and the posterior means given z are
theta_dk = (n_dk + a_k) / (N_d + sum a) and phi_kw = (n_wk + b) / (n_k + V b).
Names follow docs/notation.md (``n_wk[w, k]`` is the papers' n_kw).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from harmonium._kernels import lda_stats


class LDAModel(NamedTuple):
    """Hyperparameters of LDA: ``alpha`` (K,) Dirichlet prior of theta_d, ``beta`` symmetric prior of phi_k."""

    alpha: np.ndarray
    beta: float
    n_words: int

    @property
    def n_topics(self) -> int:
        return self.alpha.shape[0]


def make_model(n_topics: int, n_words: int, alpha, beta: float) -> LDAModel:
    """An :class:`LDAModel` with ``alpha`` broadcast to a float64 vector of length K."""
    a = np.broadcast_to(np.asarray(alpha, dtype=np.float64), (n_topics,)).copy()
    return LDAModel(a, float(beta), int(n_words))


def doc_count_dtype(doc_ptr) -> np.dtype:
    """int16 for n_dk while every document has fewer than 2**15 tokens, else int32.

    n_dk is the largest table on corpora of many short documents (D x K);
    int16 halves it. Counts never exceed the document's length.
    """
    longest = int(np.diff(doc_ptr).max()) if doc_ptr.shape[0] > 1 else 0
    return np.dtype(np.int16) if longest < 2**15 else np.dtype(np.int32)


def counts_from_assignments(doc_ptr, words, z, n_topics: int, n_words: int):
    """Count tables (n_dk, n_wk, n_k) implied by topic assignments ``z``.

    n_wk and n_k are int32; n_dk has the dtype of :func:`doc_count_dtype`.
    """
    n_dk = np.zeros((doc_ptr.shape[0] - 1, n_topics), dtype=doc_count_dtype(doc_ptr))
    n_wk = np.zeros((n_words, n_topics), dtype=np.int32)
    n_k = np.zeros(n_topics, dtype=np.int32)
    lda_stats.count_assignments(doc_ptr, words, z, n_dk, n_wk, n_k)
    return n_dk, n_wk, n_k


def collapsed_log_joint(n_dk, n_wk, n_k, model: LDAModel) -> float:
    """log p(w, z | alpha, beta) with theta and phi integrated out (see module docstring).

    Computed by :func:`harmonium._kernels.lda_stats.collapsed_log_joint`
    without D x K temporaries; tests/kernels checks it against the scipy
    ``gammaln`` expression of the module docstring.
    """
    return float(lda_stats.collapsed_log_joint(n_dk, n_wk, n_k, model.alpha, float(model.beta)))


def topic_word_mean(n_wk, n_k, beta: float) -> np.ndarray:
    """E[phi | z, w]: (K, V) array, phi_kw = (n_wk + beta) / (n_k + V beta)."""
    V = n_wk.shape[0]
    return ((n_wk.T + beta) / (n_k[:, None] + V * beta)).astype(np.float64)


def doc_topic_mean(n_dk, alpha) -> np.ndarray:
    """E[theta | z]: (D, K) array, theta_dk = (n_dk + alpha_k) / (N_d + sum alpha)."""
    num = n_dk + alpha[None, :]
    return num / num.sum(axis=1, keepdims=True)
