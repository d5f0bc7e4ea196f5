"""Alias-table Metropolis-Hastings sweep for collapsed LDA, O(1) a token (numba).

After Yuan et al. 2015, "LightLDA: Big Topic Models on Modest Compute
Clusters" (WWW '15), §3 (cycle proposals), made exact. The target is the
collapsed conditional (seed 003; ``lda_gibbs.collapsed_conditional``), with
the counts of token i removed:

    p(k) = p(z_i = k | z_-i, w) ∝ (n_dk + alpha_k)(n_wk + beta) / (n_k + V beta).

Two proposals alternate (word, doc, word, doc, ...) ``mh_steps`` times a
token. Each is a Metropolis-Hastings step from the current topic s to a
proposed t, accepted with probability

    A(s -> t) = min(1, p(t) q(s) / (p(s) q(t))).                          (1)

Doc proposal (LightLDA eq. 3), from the current counts of the OTHER tokens
of the document:

    q_d(k) ∝ n_dk + alpha_k,                                              (2)

drawn in O(1) without a table: with probability (N_d - 1) / (N_d - 1 +
sum alpha) the topic of a uniformly chosen other token of d, else a draw
from alpha (uniform when alpha is symmetric, else an alias table over
alpha). The token itself is skipped so that (2) is a function of z_-i.

Word proposal (LightLDA eq. 4), from an alias table:

    q_w(k) ∝ (m_wk + beta) / (m_k + V beta) = m_wk c_k + beta c_k,        (3)

where m are the word-topic counts of the tokens NOT updated in the current
phase. Why not the counts at the start of the sweep, as LightLDA does: those
include token i itself and the earlier values of tokens already resampled in
this sweep, so the proposal would depend on the chain's past and the MH step
would not leave p(z | w) invariant (on the enumerable test posterior a sweep
with start-of-sweep tables moves pi by 0.047 in total variation; see
tests/statistical/test_lda_alias_mh_exact.py). Instead each sweep is two
phases: documents d_lo + 0, 2, 4, ... and then d_lo + 1, 3, 5, ...; the
tables of a phase are built from the counts of every token outside it, which
are constant during the phase and are part of z_-i for every token updated in
it. So (3) is a function of z_-i, each MH step is reversible with respect to
p(z_i | z_-i, w), and the sweep leaves p(z | w) invariant exactly.

(3) is a two-part mixture: a sparse per-word alias table over the topics
with m_wk > 0 (weights m_wk c_k, mass S_w) and one dense alias table over all
K topics (weights beta c_k, mass B), shared by all words. A draw picks the
sparse part with probability S_w / (S_w + B); so P(t = k) = (m_wk + beta)
c_k / (S_w + B), which is (3) normalised. Building a phase's tables costs
O(V K) for the counts scan plus O(sum_w k_w) for the tables; a token costs
O(mh_steps). The unnormalised q of (1) is evaluated in O(1) from m and c.

Every function mutates its array arguments in place; nothing raises.
"""

from __future__ import annotations

from numba import njit

from harmonium._kernels.lda_alias import build_alias, draw_alias, prior_table
from harmonium._kernels.lda_stats import count_token


@njit(cache=True, nogil=True)
def target_weight(d, w, k, n_dk, n_wk, n_k, alpha, beta, v_beta):
    """Unnormalised p(z_i = k | z_-i, w) from counts with token i removed."""
    return (n_dk[d, k] + alpha[k]) * (n_wk[w, k] + beta) / (n_k[k] + v_beta)


@njit(cache=True, nogil=True)
def doc_weight(d, k, n_dk, alpha):
    """Unnormalised doc proposal (2): n_dk + alpha_k (token i removed from n_dk)."""
    return n_dk[d, k] + alpha[k]


@njit(cache=True, nogil=True)
def word_weight(w, k, n_other, c_other, beta):
    """Unnormalised word proposal (3): (m_wk + beta) c_k with c_k = 1 / (m_k + V beta)."""
    return (n_other[w, k] + beta) * c_other[k]


@njit(cache=True, nogil=True)
def acceptance_probability(p_s, p_t, q_s, q_t):
    """A(s -> t) of (1)."""
    num = p_t * q_s
    den = p_s * q_t
    if num >= den:
        return 1.0
    return num / den


@njit(cache=True, nogil=True)
def accept(rng, p_s, p_t, q_s, q_t):
    """One uniform decides (1): accept iff U p(s) q(t) < p(t) q(s)."""
    return rng.random() * (p_s * q_t) < p_t * q_s


@njit(cache=True, nogil=True)
def other_counts(doc_ptr, words, z, n_wk, n_k, d_lo, d_hi, parity, n_other, n_other_k):
    """m = counts of all tokens except those of documents d_lo + parity, d_lo + parity + 2, ... < d_hi."""
    V, K = n_wk.shape
    for w in range(V):
        for k in range(K):
            n_other[w, k] = n_wk[w, k]
    for k in range(K):
        n_other_k[k] = n_k[k]
    for d in range(d_lo + parity, d_hi, 2):
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            n_other[words[i], z[i]] -= 1
            n_other_k[z[i]] -= 1


@njit(cache=True, nogil=True)
def build_word_tables(n_other, n_other_k, beta, v_beta, wptr, wlen, tab_topic, tab_prob, tab_alias,
                      word_mass, c_other, beta_prob, beta_alias, small, large):
    """Alias tables of (3) for every word with a slot (wptr[w+1] > wptr[w]); returns the dense mass B.

    Word w's sparse table (topics with m_wk > 0, weights m_wk c_k) lives at
    ``wptr[w]`` in ``tab_topic`` / ``tab_prob`` / ``tab_alias``, ``wlen[w]``
    entries, total ``word_mass[w]`` = S_w. The dense table of weights
    beta c_k is ``beta_prob`` / ``beta_alias``; ``c_other[k]`` = 1 / (m_k + V beta).
    """
    V, K = n_other.shape
    for k in range(K):
        c_other[k] = 1.0 / (n_other_k[k] + v_beta)
        beta_prob[k] = beta * c_other[k]
    b_mass = build_alias(beta_prob, beta_alias, 0, K, small, large)
    for w in range(V):
        base = wptr[w]
        if wptr[w + 1] == base:
            wlen[w] = 0
            word_mass[w] = 0.0
            continue
        m = 0
        for k in range(K):
            if n_other[w, k] > 0:
                tab_topic[base + m] = k
                tab_prob[base + m] = n_other[w, k] * c_other[k]
                m += 1
        wlen[w] = m
        word_mass[w] = build_alias(tab_prob, tab_alias, base, m, small, large) if m > 0 else 0.0
    return b_mass


@njit(cache=True, nogil=True)
def word_step(rng, d, w, s, n_dk, n_wk, n_k, alpha, beta, v_beta, n_other, c_other, wptr, wlen,
              tab_topic, tab_prob, tab_alias, word_mass, b_mass, beta_prob, beta_alias):
    """One MH step (1) with the word proposal (3); counts exclude token i. Returns the new topic."""
    K = n_k.shape[0]
    s_w = word_mass[w]
    if rng.random() * (s_w + b_mass) < s_w:
        base = wptr[w]
        t = tab_topic[base + draw_alias(rng, tab_prob, tab_alias, base, wlen[w])]
    else:
        t = draw_alias(rng, beta_prob, beta_alias, 0, K)
    if t == s:
        return s
    p_s = target_weight(d, w, s, n_dk, n_wk, n_k, alpha, beta, v_beta)
    p_t = target_weight(d, w, t, n_dk, n_wk, n_k, alpha, beta, v_beta)
    q_s = word_weight(w, s, n_other, c_other, beta)
    q_t = word_weight(w, t, n_other, c_other, beta)
    if accept(rng, p_s, p_t, q_s, q_t):
        return t
    return s


@njit(cache=True, nogil=True)
def doc_step(rng, i, d, w, s, doc_ptr, z, n_dk, n_wk, n_k, alpha, alpha_sum, symmetric, beta, v_beta,
             alpha_prob, alpha_alias):
    """One MH step (1) with the doc proposal (2); counts exclude token i. Returns the new topic."""
    K = n_k.shape[0]
    lo = doc_ptr[d]
    n_rest = doc_ptr[d + 1] - lo - 1
    u = rng.random() * (n_rest + alpha_sum)
    if u < n_rest:
        j = int(u)
        if j >= n_rest:
            j = n_rest - 1
        pos = lo + j
        if pos >= i:  # skip token i itself: (2) must not depend on z_i
            pos += 1
        t = z[pos]
    elif symmetric:
        t = int(rng.random() * K)
        if t >= K:
            t = K - 1
    else:
        t = draw_alias(rng, alpha_prob, alpha_alias, 0, K)
    if t == s:
        return s
    p_s = target_weight(d, w, s, n_dk, n_wk, n_k, alpha, beta, v_beta)
    p_t = target_weight(d, w, t, n_dk, n_wk, n_k, alpha, beta, v_beta)
    q_s = doc_weight(d, s, n_dk, alpha)
    q_t = doc_weight(d, t, n_dk, alpha)
    if accept(rng, p_s, p_t, q_s, q_t):
        return t
    return s


@njit(cache=True, nogil=True)
def mh_phase(rng, doc_ptr, words, z, n_dk, n_wk, n_k, alpha, alpha_sum, symmetric, beta, d_lo, d_hi, parity,
             mh_steps, n_other, c_other, wptr, wlen, tab_topic, tab_prob, tab_alias, word_mass, b_mass,
             beta_prob, beta_alias, alpha_prob, alpha_alias):
    """MH updates of the tokens of documents d_lo + parity, + 2, ... < d_hi; returns the number changed."""
    v_beta = beta * n_wk.shape[0]
    n_changed = 0
    for d in range(d_lo + parity, d_hi, 2):
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            w = words[i]
            old = z[i]
            count_token(d, w, old, n_dk, n_wk, n_k, -1)
            s = old
            for step in range(mh_steps):
                if step % 2 == 0:
                    s = word_step(rng, d, w, s, n_dk, n_wk, n_k, alpha, beta, v_beta, n_other, c_other, wptr, wlen,
                                  tab_topic, tab_prob, tab_alias, word_mass, b_mass, beta_prob, beta_alias)
                else:
                    s = doc_step(rng, i, d, w, s, doc_ptr, z, n_dk, n_wk, n_k, alpha, alpha_sum, symmetric, beta,
                                 v_beta, alpha_prob, alpha_alias)
            z[i] = s
            count_token(d, w, s, n_dk, n_wk, n_k, 1)
            if s != old:
                n_changed += 1
    return n_changed


@njit(cache=True, nogil=True)
def alias_mh_sweep(rng, doc_ptr, words, z, n_dk, n_wk, n_k, alpha, beta, d_lo, d_hi, mh_steps,
                   n_other, n_other_k, c_other, wptr, wlen, tab_topic, tab_prob, tab_alias, word_mass,
                   beta_prob, beta_alias, alpha_prob, alpha_alias, small, large):
    """One sweep over documents d_lo..d_hi-1 in two phases (even, then odd offsets); returns the number changed.

    Mutates ``z``, ``n_dk``, ``n_wk``, ``n_k`` and all scratch in place.
    Scratch: ``n_other`` (V, K) int32; ``n_other_k`` (K,) int64; ``c_other``,
    ``beta_prob``, ``alpha_prob`` (K,) float64; ``beta_alias``, ``alpha_alias``,
    ``small``, ``large`` (K,) int32; ``wptr`` (V+1,) int64 with slot sizes
    min(K, frequency of w); ``wlen`` (V,) int32, ``word_mass`` (V,) float64;
    ``tab_topic``, ``tab_alias`` int32 and ``tab_prob`` float64 of length wptr[V].
    """
    alpha_sum, symmetric = prior_table(alpha, alpha_prob, alpha_alias, small, large)
    v_beta = beta * n_wk.shape[0]
    n_changed = 0
    for parity in range(2):
        other_counts(doc_ptr, words, z, n_wk, n_k, d_lo, d_hi, parity, n_other, n_other_k)
        b_mass = build_word_tables(n_other, n_other_k, beta, v_beta, wptr, wlen, tab_topic, tab_prob, tab_alias,
                                   word_mass, c_other, beta_prob, beta_alias, small, large)
        n_changed += mh_phase(rng, doc_ptr, words, z, n_dk, n_wk, n_k, alpha, alpha_sum, symmetric, beta, d_lo,
                              d_hi, parity, mh_steps, n_other, c_other, wptr, wlen, tab_topic, tab_prob, tab_alias,
                              word_mass, b_mass, beta_prob, beta_alias, alpha_prob, alpha_alias)
    return n_changed
