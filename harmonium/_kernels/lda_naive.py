"""Naive (uncollapsed) Gibbs sampling for LDA (numba).

Seed 003, "(Naive) Gibbs Sampling": one scan draws, in turn,

1. every z_i independently from p(z_i = k | Theta, B, w) ∝ theta_dk phi_kw,
2. every theta_d from Dir(alpha + n_d.),
3. every phi_k from Dir(beta + n_.k) (n_.k = column k of the word-major n_wk).

Dirichlet draws without ``Generator.dirichlet`` (which numba cannot compile):
normalised Gamma variates, built in log space so that tiny shapes cannot give
0 / 0. For a shape a >= 1 the log of ``standard_gamma(a)`` is used (never 0).
For a < 1 the identity G_a = G_{a+1} U^{1/a} (G_{a+1} ~ Gamma(a+1), U ~ U(0, 1]
independent; Marsaglia & Tsang 2000) gives
log G_a = log G_{a+1} + log(U) / a, finite for every a > 0 even where G_a
itself underflows to 0. A Dirichlet is then exp(log G_k - max_j log G_j)
normalised: the largest term is exactly 1, so the sum is >= 1 and never NaN;
components far below the largest underflow to exactly 0, which is their value
to double precision.

Random numbers are consumed in a fixed order (documented on each function) so
that a plain-numpy reference reproduces the draws exactly. Every function here
mutates its output arrays in place.
"""

from __future__ import annotations

import math

from numba import njit

from harmonium._kernels.categorical import draw_unnormalised


@njit(cache=True, nogil=True)
def log_gamma_variate(rng, a):
    """log of a Gamma(a, 1) draw, finite for every a > 0.

    a >= 1: one ``standard_gamma(a)``. a < 1: one ``standard_gamma(a + 1)``
    then one ``random()`` (U = 1 - random() lies in (0, 1]).
    """
    if a >= 1.0:
        return math.log(rng.standard_gamma(a))
    g = rng.standard_gamma(a + 1.0)
    u = 1.0 - rng.random()
    return math.log(g) + math.log(u) / a


@njit(cache=True, nogil=True)
def sweep_z(rng, doc_ptr, words, z, n_dk, n_wk, n_k, theta, phi_wk, p, d_lo, d_hi):
    """Draw z_i | Theta, B for the tokens of documents d_lo..d_hi-1; returns the number of changed z.

    p(z_i = k | Theta, B, w) ∝ theta[d, k] phi_wk[w, k]: the tokens are
    conditionally independent, so the order does not matter for the law; the
    draws are made in token order, one ``random()`` each. Mutates ``z``,
    ``n_dk``, ``n_wk``, ``n_k`` in place. Only rows d_lo..d_hi-1 of ``n_dk``
    are touched, and ``n_wk`` / ``n_k`` are only incremented and decremented,
    so a threaded driver may pass per-thread zero tables (deltas) for them and
    add them up afterwards. ``p`` is a float64 scratch buffer of length K.
    """
    K = n_k.shape[0]
    n_changed = 0
    for d in range(d_lo, d_hi):
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            w = words[i]
            for k in range(K):
                p[k] = theta[d, k] * phi_wk[w, k]
            new = draw_unnormalised(rng, p, K)
            old = z[i]
            if new != old:
                z[i] = new
                n_dk[d, old] -= 1
                n_wk[w, old] -= 1
                n_k[old] -= 1
                n_dk[d, new] += 1
                n_wk[w, new] += 1
                n_k[new] += 1
                n_changed += 1
    return n_changed


@njit(cache=True, nogil=True)
def draw_theta(rng, n_dk, alpha, theta, d_lo, d_hi):
    """theta_d ~ Dir(alpha + n_d.) for d in d_lo..d_hi-1, written into ``theta`` in place.

    Gamma variates are drawn row by row, k = 0..K-1 (see :func:`log_gamma_variate`).
    """
    K = alpha.shape[0]
    for d in range(d_lo, d_hi):
        m = -math.inf
        for k in range(K):
            g = log_gamma_variate(rng, alpha[k] + n_dk[d, k])
            theta[d, k] = g
            if g > m:
                m = g
        s = 0.0
        for k in range(K):
            e = math.exp(theta[d, k] - m)
            theta[d, k] = e
            s += e
        for k in range(K):
            theta[d, k] /= s


@njit(cache=True, nogil=True)
def draw_phi(rng, n_wk, beta, phi_wk, colmax, colsum):
    """phi_k ~ Dir(beta + n_wk[:, k]) for every k, written into the word-major ``phi_wk`` (V, K) in place.

    Gamma variates are drawn in row-major order of ``phi_wk`` (w outer, k
    inner) so that memory is walked contiguously. ``colmax`` and ``colsum``
    are float64 scratch buffers of length K.
    """
    V, K = n_wk.shape[0], n_wk.shape[1]
    for k in range(K):
        colmax[k] = -math.inf
        colsum[k] = 0.0
    for w in range(V):
        for k in range(K):
            g = log_gamma_variate(rng, beta + n_wk[w, k])
            phi_wk[w, k] = g
            if g > colmax[k]:
                colmax[k] = g
    for w in range(V):
        for k in range(K):
            e = math.exp(phi_wk[w, k] - colmax[k])
            phi_wk[w, k] = e
            colsum[k] += e
    for w in range(V):
        for k in range(K):
            phi_wk[w, k] /= colsum[k]


@njit(cache=True, nogil=True)
def naive_scan(rng, doc_ptr, words, z, n_dk, n_wk, n_k, theta, phi_wk, alpha, beta, p, colmax, colsum):
    """One full scan: z | Theta, B (all tokens), then Theta | z, then B | z; returns the number of changed z.

    Mutates ``z``, the count tables, ``theta`` and ``phi_wk`` in place.
    ``p``, ``colmax``, ``colsum`` are float64 scratch buffers of length K.
    """
    n_docs = doc_ptr.shape[0] - 1
    n_changed = sweep_z(rng, doc_ptr, words, z, n_dk, n_wk, n_k, theta, phi_wk, p, 0, n_docs)
    draw_theta(rng, n_dk, alpha, theta, 0, n_docs)
    draw_phi(rng, n_wk, beta, phi_wk, colmax, colsum)
    return n_changed
