"""Annealed importance sampling of log p(w_d | Phi, alpha) over topic assignments (numba).

Wallach, Murray, Salakhutdinov & Mimno (2009), "Evaluation methods for topic
models", §4.2; Neal (2001), "Annealed importance sampling". The intermediate
targets are

    f_t(z) = p(z | alpha) p(w | z, Phi)^{tau_t},   0 = tau_0 < tau_1 < ... < tau_T = 1,

with theta_d integrated out. A run draws z from f_0 = p(z | alpha) (a Polya
urn), then for t = 1 .. T adds (tau_t - tau_{t-1}) log p(w | z, Phi) to its log
weight and, for t < T, moves z by one Gibbs sweep that leaves f_t invariant:

    p_t(z_n = k | z_-n) ∝ (N_k^{-n} + alpha_k) phi_{k w_n}^{tau_t}.

exp(log weight) is an unbiased estimate of p(w | Phi, alpha). Functions mutate
their array arguments in place.
"""

from __future__ import annotations

import math

from numba import njit

from harmonium._kernels.categorical import draw_from_cumulative as _invert


@njit(cache=True, nogil=True)
def _log_lik(words, start, length, z, log_phi_wk):
    s = 0.0
    for n in range(length):
        s += log_phi_wk[words[start + n], z[n]]
    return s


@njit(cache=True, nogil=True)
def ais_documents(rng, doc_ptr, words, log_phi_wk, alpha, taus, d_lo, d_hi, z, n_k, cum, log_w):
    """Annealed importance sampling runs for documents d_lo .. d_hi - 1.

    Parameters
    ----------
    rng : numpy Generator
    doc_ptr, words : the token stream
    log_phi_wk : (V, K) float64
        log phi_{k w} at [w, k] (-inf allowed).
    alpha : (K,) float64
    taus : (T + 1,) float64
        Increasing, taus[0] = 0 and taus[T] = 1.
    z : (max N_d,) int32, n_k : (K,) int32, cum : (K,) float64
        Scratch.
    log_w : (D, S) float64
        Output: the log weight of each of the S runs (rows d_lo .. d_hi - 1).
    """
    S = log_w.shape[1]
    K = alpha.shape[0]
    T = taus.shape[0] - 1
    for d in range(d_lo, d_hi):
        start = doc_ptr[d]
        length = doc_ptr[d + 1] - start
        for s in range(S):
            for k in range(K):
                n_k[k] = 0
            for n in range(length):
                total = 0.0
                for k in range(K):
                    total += n_k[k] + alpha[k]
                    cum[k] = total
                new = _invert(rng, cum, total, K)
                z[n] = new
                n_k[new] += 1
            lw = 0.0
            for t in range(1, T + 1):
                ll = _log_lik(words, start, length, z, log_phi_wk)
                lw += (taus[t] - taus[t - 1]) * ll
                if t == T:
                    break
                tau = taus[t]
                for n in range(length):
                    w = words[start + n]
                    old = z[n]
                    n_k[old] -= 1
                    total = 0.0
                    for k in range(K):
                        total += (n_k[k] + alpha[k]) * math.exp(tau * log_phi_wk[w, k])
                        cum[k] = total
                    new = _invert(rng, cum, total, K)
                    z[n] = new
                    n_k[new] += 1
            log_w[d, s] = lw
