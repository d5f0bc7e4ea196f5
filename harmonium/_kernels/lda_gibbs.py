"""Collapsed Gibbs sampling for LDA: the plain O(K) reference sampler (numba).

Implements the collapsed full conditional of seed 003 ("Collapsed Gibbs
Sampling", Griffiths & Steyvers 2004, eq. 5):

    p(z_i = k | z_-i, w) ∝ (n_dk^-i + alpha_k) (n_wk^-i + beta) / (n_k^-i + V beta)

Counts are stored word-major, ``n_wk[w, k]`` (= n_kw of the papers), so that
the K entries read for one token are contiguous. The sweep is split, as in
tomotopy, into remove / conditional / draw / add. Every kernel here mutates
``z`` and the count arrays in place.
"""

from __future__ import annotations

from numba import njit

from harmonium._kernels.categorical import draw_unnormalised
from harmonium._kernels.lda_stats import count_token


@njit(cache=True, nogil=True)
def collapsed_conditional(p, d, w, n_dk, n_wk, n_k, alpha, beta, v_beta):
    """Fill p[:K] with the unnormalised conditional of a token (d, w) whose own count is removed."""
    K = n_k.shape[0]
    for k in range(K):
        p[k] = (n_dk[d, k] + alpha[k]) * (n_wk[w, k] + beta) / (n_k[k] + v_beta)


@njit(cache=True, nogil=True)
def collapsed_sweep(rng, doc_ptr, words, z, n_dk, n_wk, n_k, alpha, beta, p, d_lo, d_hi):
    """One systematic-scan sweep over the tokens of documents d_lo..d_hi-1; returns the number of changed z.

    Mutates ``z``, ``n_dk``, ``n_wk``, ``n_k`` in place. ``p`` is a float64
    scratch buffer of length K.
    """
    v_beta = beta * n_wk.shape[0]
    K = n_k.shape[0]
    n_changed = 0
    for d in range(d_lo, d_hi):
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            w = words[i]
            old = z[i]
            count_token(d, w, old, n_dk, n_wk, n_k, -1)
            collapsed_conditional(p, d, w, n_dk, n_wk, n_k, alpha, beta, v_beta)
            new = draw_unnormalised(rng, p, K)
            z[i] = new
            count_token(d, w, new, n_dk, n_wk, n_k, 1)
            if new != old:
                n_changed += 1
    return n_changed


@njit(cache=True, nogil=True)
def apply_moves(words, z_before, z_after, n_wk, n_k):
    """Move each token's count from topic z_before[i] to z_after[i] in n_wk and n_k (aligned slices).

    Merges one AD-LDA worker's changes from its tokens' old and new topics, so that no copy of the
    V x K table the workers started from is needed: the sum of these moves is local - base exactly.
    """
    for i in range(words.shape[0]):
        a = z_before[i]
        b = z_after[i]
        if a != b:
            w = words[i]
            n_wk[w, a] -= 1
            n_wk[w, b] += 1
            n_k[a] -= 1
            n_k[b] += 1
