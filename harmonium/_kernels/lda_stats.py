"""Whole-state statistics of LDA without temporaries the size of the count tables (numba).

The numpy expressions they replace allocate several float64 copies of the
D x K and V x K tables, which dominated peak memory at K = 1000.
"""

from __future__ import annotations

import math

from numba import njit


@njit(cache=True, nogil=True)
def collapsed_log_joint(n_dk, n_wk, n_k, alpha, beta):
    """log p(w, z | alpha, beta) with theta and phi integrated out (models.directed.lda)."""
    D, K = n_dk.shape
    V = n_wk.shape[0]
    alpha_sum = 0.0
    for k in range(K):
        alpha_sum += alpha[k]
    lg_alpha_sum = math.lgamma(alpha_sum)
    total = 0.0
    for d in range(D):
        n_d = 0
        for k in range(K):
            c = n_dk[d, k]
            if c > 0:  # empty cells contribute log G(alpha_k) - log G(alpha_k) = 0
                n_d += c
                total += math.lgamma(c + alpha[k]) - math.lgamma(alpha[k])
        total += lg_alpha_sum - math.lgamma(n_d + alpha_sum)
    lg_beta = math.lgamma(beta)
    total += K * math.lgamma(V * beta)
    for k in range(K):
        total -= math.lgamma(n_k[k] + V * beta)
    for w in range(V):
        for k in range(K):
            c = n_wk[w, k]
            if c > 0:
                total += math.lgamma(c + beta) - lg_beta
    return total


@njit(cache=True, nogil=True)
def accumulate_phi(phi_wk_sum, n_wk, n_k, beta):
    """phi_wk_sum[w, k] += (n_wk + beta) / (n_k + V beta)."""
    V, K = n_wk.shape
    for k in range(K):
        inv = 1.0 / (n_k[k] + V * beta)
        for w in range(V):
            phi_wk_sum[w, k] += (n_wk[w, k] + beta) * inv


@njit(cache=True, nogil=True)
def accumulate_theta(theta_sum, n_dk, alpha):
    """theta_sum[d, k] += (n_dk + alpha_k) / (N_d + sum alpha)."""
    D, K = n_dk.shape
    alpha_sum = 0.0
    for k in range(K):
        alpha_sum += alpha[k]
    for d in range(D):
        n_d = 0
        for k in range(K):
            n_d += n_dk[d, k]
        inv = 1.0 / (n_d + alpha_sum)
        for k in range(K):
            theta_sum[d, k] += (n_dk[d, k] + alpha[k]) * inv


@njit(cache=True, nogil=True)
def count_assignments(doc_ptr, words, z, n_dk, n_wk, n_k):
    """Fill the (zeroed) count tables n_dk, n_wk, n_k implied by the assignments z."""
    for d in range(doc_ptr.shape[0] - 1):
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            k = z[i]
            n_dk[d, k] += 1
            n_wk[words[i], k] += 1
            n_k[k] += 1
