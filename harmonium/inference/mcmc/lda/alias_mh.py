"""Alias-table Metropolis-Hastings for collapsed LDA (LightLDA style, exact), O(1) a token.

Yuan et al. 2015, "LightLDA: Big Topic Models on Modest Compute Clusters",
§3: cycle proposals. Each token i (document d, word w, current topic s; all
counts below exclude token i) takes ``mh_steps`` Metropolis-Hastings steps,
alternating the word proposal and the doc proposal, towards

    p(k) ∝ (n_dk + alpha_k)(n_wk + beta) / (n_k + V beta),

    q_w(k) ∝ (m_wk + beta) / (m_k + V beta)    (alias table, m = counts outside the phase),
    q_d(k) ∝ n_dk + alpha_k                    (topic of a random other token of d, or alpha),

    A(s -> t) = min(1, p(t) q(s) / (p(s) q(t))).

A sweep runs in two phases (documents at even, then odd offsets); the word
tables of a phase are built from the tokens outside it, so both proposals
are functions of z_-i and every step is reversible with respect to
p(z_i | z_-i, w). The details, and why LightLDA's start-of-sweep tables would
not be exact, are in :mod:`harmonium._kernels.lda_alias_mh`.

:func:`make_sweep` plugs into :data:`collapsed_gibbs.SAMPLERS` as
``"alias_mh"``. :func:`target`, :func:`word_proposal`, :func:`doc_proposal`
and :func:`mh_step` expose the formulas the kernel evaluates (they call the
same compiled functions) so tests can build exact transition matrices.
"""

from __future__ import annotations

import numpy as np

from harmonium._kernels import lda_alias_mh as kern
from harmonium.corpus.corpus import TokenStream
from harmonium.models.directed.lda import LDAModel, add_seed_counts, counts_without_token


def make_sweep(model: LDAModel, tokens: TokenStream, *, mh_steps: int = 2, compiled=None):
    """The alias/MH sweep ``sweep(rng, state, d_lo, d_hi) -> n_changed``.

    Scratch is allocated here, once. ``compiled`` replaces
    :func:`harmonium._kernels.lda_alias_mh.alias_mh_sweep` (same signature);
    tests pass deliberately broken sweeps here. The sweep mutates the state's
    arrays in place.
    """
    if int(mh_steps) < 1:
        raise ValueError(f"The 'mh_steps' parameter of the alias_mh sampler must be an int >= 1. Got {mh_steps!r}.")
    mh_steps = int(mh_steps)
    fn = kern.alias_mh_sweep if compiled is None else compiled
    K, V = model.n_topics, model.n_words
    freq = np.bincount(tokens.words, minlength=V)
    if model.seeds is not None:  # seeded rows of n_wk have up to this many more non-zero topics
        freq = freq + model.seeds.per_word(V)
    wptr = np.zeros(V + 1, dtype=np.int64)
    np.cumsum(np.minimum(freq, K), out=wptr[1:])
    n_slots = int(wptr[-1])
    wlen = np.zeros(V, dtype=np.int32)
    word_mass = np.zeros(V, dtype=np.float64)
    tab_topic = np.empty(n_slots, dtype=np.int32)
    tab_alias = np.empty(n_slots, dtype=np.int32)
    tab_prob = np.empty(n_slots, dtype=np.float64)
    n_other = np.empty((V, K), dtype=np.int32)
    n_other_k = np.empty(K, dtype=np.int64)
    c_other, beta_prob, alpha_prob = (np.empty(K, dtype=np.float64) for _ in range(3))
    beta_alias, alpha_alias, small, large = (np.empty(K, dtype=np.int32) for _ in range(4))
    alpha = np.ascontiguousarray(model.alpha, dtype=np.float64)
    beta = float(model.beta)

    def sweep(rng, state, d_lo: int, d_hi: int) -> int:
        return fn(rng, tokens.doc_ptr, tokens.words, state.z, state.n_dk, state.n_wk, state.n_k, alpha, beta,
                  int(d_lo), int(d_hi), mh_steps, n_other, n_other_k, c_other, wptr, wlen, tab_topic, tab_prob,
                  tab_alias, word_mass, beta_prob, beta_alias, alpha_prob, alpha_alias, small, large)

    return sweep


# ---- the formulas, for exact transition matrices on tiny corpora --------------------------------


def target(state, tokens: TokenStream, model: LDAModel, i: int) -> np.ndarray:
    """Unnormalised p(z_i = . | z_-i, w), by the kernel's :func:`target_weight`."""
    d, w, _, n_dk, n_wk, n_k = counts_without_token(state, tokens, i, model.seeds)
    v_beta = model.beta * model.n_words
    return np.array([kern.target_weight(d, w, k, n_dk, n_wk, n_k, model.alpha, model.beta, v_beta)
                     for k in range(model.n_topics)])


def doc_proposal(state, tokens: TokenStream, model: LDAModel, i: int) -> np.ndarray:
    """Normalised q_d(.) for token i, by the kernel's :func:`doc_weight` (token i excluded)."""
    d, _, _, n_dk, _, _ = counts_without_token(state, tokens, i)
    q = np.array([kern.doc_weight(d, k, n_dk, model.alpha) for k in range(model.n_topics)])
    return q / q.sum()


def word_proposal(state, tokens: TokenStream, model: LDAModel, i: int, d_lo: int = 0, d_hi: int | None = None):
    """Normalised q_w(.) for token i in a sweep over d_lo..d_hi-1, by the kernel's :func:`other_counts` and
    :func:`word_weight` (m = counts of the tokens outside token i's phase)."""
    if d_hi is None:
        d_hi = tokens.doc_ptr.shape[0] - 1
    d = int(np.searchsorted(tokens.doc_ptr, i, side="right") - 1)
    w = int(tokens.words[i])
    n_other = np.empty_like(state.n_wk)
    n_other_k = np.empty(model.n_topics, dtype=np.int64)
    n_wk, n_k = state.n_wk.copy(), state.n_k.copy()
    add_seed_counts(n_wk, n_k, model.seeds)
    kern.other_counts(tokens.doc_ptr, tokens.words, state.z, n_wk, n_k, d_lo, d_hi, (d - d_lo) % 2,
                      n_other, n_other_k)
    c = 1.0 / (n_other_k + model.beta * model.n_words)
    q = np.array([kern.word_weight(w, k, n_other, c, model.beta) for k in range(model.n_topics)])
    return q / q.sum()


def acceptance(p_s: float, p_t: float, q_s: float, q_t: float) -> float:
    """min(1, p(t) q(s) / (p(s) q(t))), the kernel's :func:`acceptance_probability`."""
    return float(kern.acceptance_probability(p_s, p_t, q_s, q_t))


def mh_step(p: np.ndarray, q: np.ndarray, s: int) -> np.ndarray:
    """Distribution of z_i after one MH step from topic s with target p and proposal q (both over K)."""
    out = np.zeros(len(q))
    for t in range(len(q)):
        if t == s:
            out[s] += q[t]
            continue
        a = acceptance(p[s], p[t], q[s], q[t])
        out[t] += q[t] * a
        out[s] += q[t] * (1.0 - a)
    return out
