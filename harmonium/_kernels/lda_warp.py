"""WarpLDA-style word-major / document-major Metropolis-Hastings sweep for collapsed LDA, O(1) a token (numba).

After Chen, Li, Zhu & Chen 2016, "WarpLDA: a Cache Efficient O(1) Algorithm
for Latent Dirichlet Allocation" (PVLDB 9(10)), §4, made exact. The target
of every step is the collapsed conditional (seed 003), counts of token i
removed:

    p(k) ∝ (n_dk + alpha_k)(n_wk + beta) / (n_k + V beta).                 (1)

WarpLDA alternates two passes over the tokens. The *word pass* visits the
tokens grouped by word (word-major order) and moves each with the doc
proposal; the *document pass* visits them in document order and moves each
with the word proposal:

    q_doc(k)  ∝ n_dk + alpha_k,     q_word(k) ∝ n_wk + beta.               (2)

Both are drawn in O(1) without tables: with probability (L - 1) / (L - 1 +
mass of the prior) the topic of a uniformly chosen *other* token of the
document (resp. of the word), else a draw from the prior (alpha: uniform
when symmetric, else an alias table; beta: uniform). In the MH ratio
p(t) q(s) / (p(s) q(t)) the factor that the proposal copies cancels, so each
pass reads only the row it is grouped by and the topic totals:

    word pass, doc proposal:  A = min(1, (n_wt + beta)(n_s + V beta) / ((n_ws + beta)(n_t + V beta)))   (3)
    doc pass, word proposal:  A = min(1, (n_dt + alpha_t)(n_s + V beta) / ((n_ds + alpha_s)(n_t + V beta)))  (4)

These are WarpLDA's two acceptance rates. What differs from the paper is
*when* the counts are read. WarpLDA's "delayed update" freezes n_w, n_d and
n_k during a pass (and draws the proposals one pass before they are
accepted); the chain then targets a distribution other than p(z | w) (on
the enumerable test posterior the frozen-count twin fails the one-sweep
chi-square test, tests/statistical/test_lda_warp_exact.py). Here every step
uses the current counts with token i removed, the proposal is drawn at the
step from the current topics of the other tokens, so (2) is a function of
z_-i and (3)/(4) are exact MH ratios: each step is reversible with respect
to p(z_i | z_-i, w) and the sweep leaves p(z | w) invariant. The ratios
(3)/(4) assume the count arrays are the counts of z (the proposal copies
token topics); the Python wrapper checks n_k against the token count.

Memory: the word pass keeps a word-major copy ``z_w`` of the topics
(position p of the word-major order holds token ``perm[p]``; ``wpos`` is the
inverse), so a word proposal reads a neighbouring entry of the same word,
and a doc proposal reads a neighbour in the same document of ``z``. When a
token's topic changes both copies and the third count table are written.

Lookups go through :func:`~harmonium._kernels.lda_sparse._u` (indices known to be >= 0, read without
numba's negative-index wraparound): 1.22x faster at Debian K = 1000 and 1.26x at PyPI K = 3000 in one
process, with the same z (benchmarks/lda/README.md, "auto's rules re-measured on the AMD VM, and the warp
sweep's unsigned indices").

Every function mutates its array arguments in place; nothing raises.
"""

from __future__ import annotations

from numba import njit

from harmonium._kernels.lda_alias import draw_alias, prior_table
from harmonium._kernels.lda_sparse import _u


@njit(cache=True, nogil=True)
def gather(perm, z, z_w):
    """z_w[p] = z[perm[p]]: the word-major copy of the topics."""
    for p in range(perm.shape[0]):
        z_w[_u(p)] = z[_u(perm[_u(p)])]


@njit(cache=True, nogil=True)
def draw_other(rng, self_pos, lo, hi, topics, prior_mass):
    """The token part of (2): the topic of a uniform other entry of topics[lo:hi] (self_pos skipped),
    with probability (hi - lo - 1) / (hi - lo - 1 + prior_mass); -1 (draw from the prior) otherwise."""
    n_rest = hi - lo - 1
    u = rng.random() * (n_rest + prior_mass)
    if u < n_rest:
        pos = lo + int(u)  # u < n_rest, so pos <= hi - 2
        if pos >= self_pos:  # skip the token itself: (2) must not depend on z_i
            pos += 1
        return topics[_u(pos)]
    return -1


@njit(cache=True, nogil=True)
def draw_uniform(rng, K):
    """A uniform topic in [0, K)."""
    t = int(rng.random() * K)
    return K - 1 if t >= K else t


@njit(cache=True, nogil=True)
def doc_move_ratio(w, s, t, n_wk, n_k, beta, v_beta):
    """(numerator, denominator) of (3); counts exclude token i."""
    return ((n_wk[_u(w), _u(t)] + beta) * (n_k[_u(s)] + v_beta),
            (n_wk[_u(w), _u(s)] + beta) * (n_k[_u(t)] + v_beta))


@njit(cache=True, nogil=True)
def word_move_ratio(d, s, t, n_dk, n_k, alpha, v_beta):
    """(numerator, denominator) of (4); counts exclude token i."""
    return ((n_dk[_u(d), _u(t)] + alpha[_u(t)]) * (n_k[_u(s)] + v_beta),
            (n_dk[_u(d), _u(s)] + alpha[_u(s)]) * (n_k[_u(t)] + v_beta))


@njit(cache=True, nogil=True)
def word_pass(rng, doc_ptr, z, n_dk, n_wk, n_k, alpha, alpha_sum, symmetric, beta, mh_steps,
              perm, wword, wdoc, own, z_w, alpha_prob, alpha_alias):
    """Doc-proposal MH steps (3) for the tokens at word-major positions ``own`` (ascending: grouped by word)."""
    K = n_k.shape[0]
    v_beta = beta * n_wk.shape[0]
    for j in range(own.shape[0]):
        p = own[_u(j)]
        w = wword[_u(p)]
        i = perm[_u(p)]
        d = wdoc[_u(p)]
        old = z_w[_u(p)]
        s = old
        n_wk[_u(w), _u(s)] -= 1
        n_k[_u(s)] -= 1
        lo = doc_ptr[_u(d)]
        hi = doc_ptr[_u(d + 1)]
        for _ in range(mh_steps):
            t = draw_other(rng, i, lo, hi, z, alpha_sum)
            if t < 0:
                t = draw_uniform(rng, K) if symmetric else draw_alias(rng, alpha_prob, alpha_alias, 0, K)
            if t != s:
                num, den = doc_move_ratio(w, s, t, n_wk, n_k, beta, v_beta)
                if rng.random() * den < num:
                    s = t
        n_wk[_u(w), _u(s)] += 1
        n_k[_u(s)] += 1
        if s != old:
            n_dk[_u(d), _u(old)] -= 1
            n_dk[_u(d), _u(s)] += 1
            z[_u(i)] = s
            z_w[_u(p)] = s


@njit(cache=True, nogil=True)
def doc_pass(rng, doc_ptr, words, z, n_dk, n_wk, n_k, alpha, beta, d_lo, d_hi, mh_steps, wptr, wpos, z_w):
    """Word-proposal MH steps (4) for the tokens of documents d_lo..d_hi-1, in document order."""
    K = n_k.shape[0]
    v_beta = beta * n_wk.shape[0]
    k_beta = beta * K
    for d in range(d_lo, d_hi):
        for i in range(doc_ptr[_u(d)], doc_ptr[_u(d + 1)]):
            w = words[_u(i)]
            old = z[_u(i)]
            s = old
            n_dk[_u(d), _u(s)] -= 1
            n_k[_u(s)] -= 1
            p = wpos[_u(i)]
            for _ in range(mh_steps):
                t = draw_other(rng, p, wptr[_u(w)], wptr[_u(w + 1)], z_w, k_beta)
                if t < 0:  # beta is symmetric: the prior part is uniform
                    t = draw_uniform(rng, K)
                if t != s:
                    num, den = word_move_ratio(d, s, t, n_dk, n_k, alpha, v_beta)
                    if rng.random() * den < num:
                        s = t
            n_dk[_u(d), _u(s)] += 1
            n_k[_u(s)] += 1
            if s != old:
                n_wk[_u(w), _u(old)] -= 1
                n_wk[_u(w), _u(s)] += 1
                z[_u(i)] = s
                z_w[_u(p)] = s


@njit(cache=True, nogil=True)
def warp_sweep(rng, doc_ptr, words, z, n_dk, n_wk, n_k, alpha, beta, d_lo, d_hi, mh_steps,
               perm, wpos, wptr, wword, wdoc, own, z_w, z0, alpha_prob, alpha_alias, small, large):
    """A word pass over ``own`` then a document pass over d_lo..d_hi-1; returns the number of changed z.

    ``z_w`` must hold z in word-major order on entry (:func:`gather`); both
    stay in step. Mutates ``z``, ``n_dk``, ``n_wk``, ``n_k``, ``z_w`` and the
    scratch ``z0`` (length >= tokens of the range), ``alpha_prob`` (K,)
    float64, ``alpha_alias``, ``small``, ``large`` (K,) int32.
    """
    base = doc_ptr[d_lo]
    for i in range(base, doc_ptr[d_hi]):
        z0[i - base] = z[i]
    alpha_sum, symmetric = prior_table(alpha, alpha_prob, alpha_alias, small, large)
    word_pass(rng, doc_ptr, z, n_dk, n_wk, n_k, alpha, alpha_sum, symmetric, beta, mh_steps,
              perm, wword, wdoc, own, z_w, alpha_prob, alpha_alias)
    doc_pass(rng, doc_ptr, words, z, n_dk, n_wk, n_k, alpha, beta, d_lo, d_hi, mh_steps, wptr, wpos, z_w)
    n_changed = 0
    for i in range(base, doc_ptr[d_hi]):
        if z[i] != z0[i - base]:
            n_changed += 1
    return n_changed
