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
            n_dk[d, old] -= 1
            n_wk[w, old] -= 1
            n_k[old] -= 1
            collapsed_conditional(p, d, w, n_dk, n_wk, n_k, alpha, beta, v_beta)
            new = draw_unnormalised(rng, p, K)
            z[i] = new
            n_dk[d, new] += 1
            n_wk[w, new] += 1
            n_k[new] += 1
            if new != old:
                n_changed += 1
    return n_changed


@njit(cache=True, nogil=True)
def fixed_topics_sweep(rng, doc_ptr, words, z, n_dk, phi_wk, alpha, p):
    """One sweep for new documents with the topics held fixed (``transform``).

    p(z_i = k | z_-i, w, phi) ∝ (n_dk^-i + alpha_k) phi_wk. Mutates ``z`` and
    ``n_dk`` in place.
    """
    K = alpha.shape[0]
    for d in range(doc_ptr.shape[0] - 1):
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            w = words[i]
            old = z[i]
            n_dk[d, old] -= 1
            for k in range(K):
                p[k] = (n_dk[d, k] + alpha[k]) * phi_wk[w, k]
            new = draw_unnormalised(rng, p, K)
            z[i] = new
            n_dk[d, new] += 1


@njit(cache=True, nogil=True)
def initial_fixed_topics(rng, doc_ptr, words, z, n_dk, phi_wk, alpha, p):
    """Sequential initialisation for new documents: each token drawn given the ones before it."""
    K = alpha.shape[0]
    for d in range(doc_ptr.shape[0] - 1):
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            w = words[i]
            for k in range(K):
                p[k] = (n_dk[d, k] + alpha[k]) * phi_wk[w, k]
            new = draw_unnormalised(rng, p, K)
            z[i] = new
            n_dk[d, new] += 1


@njit(cache=True, nogil=True)
def accumulate(total, x):
    """total += x elementwise (2-D), without a temporary."""
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            total[i, j] += x[i, j]
