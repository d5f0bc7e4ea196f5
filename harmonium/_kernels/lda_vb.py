"""Variational inference for LDA over CSR document-term counts (numba).

* :func:`vb_estep`: the per-document E-step of batch and online VB, seed 004
  eqs. 4 and 6 / Hoffman et al. (2010) Algorithm 1-2: alternate
  phi_dwk ∝ exp{E[log theta_dk] + E[log beta_kw]} and
  gamma_dk = alpha_k + sum_w n_dw phi_dwk until the mean absolute change of
  gamma_d is below ``tol``; then add n_dw phi_dwk into the (V, K) sufficient
  statistics (eq. 5 without the prior).
* :func:`vb_doc_bound`: the document part of the ELBO with phi at its optimum
  given gamma and lambda (Blei et al. 2003 appendix A.3; Hoffman et al. 2010 eq. 3).
* :func:`cvb0_sweep`: one sweep of CVB0 (Asuncion et al. 2009 eq. 7, the
  zeroth-order collapsed VB of Teh et al. 2007) over the nonzero entries of
  a document range. Tokens of one word in one document share gamma; the
  update of one token removes that token's own contribution.

Arrays are word-major ((V, K)) so that the K numbers read for one entry are
contiguous. Kernels mutate their output arrays in place and say so.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from harmonium._kernels.lda_stats import column_sums

# Reassociation lets LLVM vectorise the K-long dot products (the E-step's inner loops); no
# assumptions about NaN or infinities are made. Results depend on the build, not on the run.
_FAST = {"reassoc", "contract"}


@njit(cache=True, nogil=True)
def digamma(x):
    """psi(x) for x > 0 (|error| < 2e-13 against scipy).

    Branch-free: psi(x) = psi(x + 6) - sum_{i<6} 1/(x + i), the sum taken as one
    fraction (one division instead of six), then the asymptotic series at
    y = x + 6 >= 6 through the y^-14 term (next term < 2e-13 at y = 6). The
    E-step evaluates it K times per document iteration, where it dominates.
    """
    if x >= 1e6:  # the series alone is exact to rounding; x**6 would overflow near 1e51
        num = 0.0
        den = 1.0
        y = x
    else:
        num = 0.0
        den = 1.0
        for i in range(6):
            xi = x + i
            num = num * xi + den
            den = den * xi
        y = x + 6.0
    inv2 = 1.0 / (y * y)
    series = inv2 * (1.0 / 12 - inv2 * (1.0 / 120 - inv2 * (1.0 / 252 - inv2 * (
        1.0 / 240 - inv2 * (1.0 / 132 - inv2 * (691.0 / 32760 - inv2 * (1.0 / 12)))))))
    return math.log(y) - 0.5 / y - series - num / den


@njit(cache=True, nogil=True)
def exp_elog_beta_wordmajor(lam_wk, out_wk):
    """out[w, k] = exp(psi(lambda_kw) - psi(sum_w lambda_kw)) with lambda stored word-major (V, K) (in place)."""
    V, K = lam_wk.shape
    col = column_sums(lam_wk)
    for k in range(K):
        col[k] = digamma(col[k])
    for w in range(V):
        for k in range(K):
            out_wk[w, k] = math.exp(digamma(lam_wk[w, k]) - col[k])


@njit(cache=True, nogil=True, fastmath=_FAST)
def _exp_elog_theta(gamma_d, out):
    K = gamma_d.shape[0]
    s = 0.0
    for k in range(K):
        s += gamma_d[k]
    ps = digamma(s)
    for k in range(K):
        out[k] = math.exp(digamma(gamma_d[k]) - ps)


@njit(cache=True, nogil=True, fastmath=_FAST)
def vb_estep(indptr, indices, data, d_lo, d_hi, row0, eb_wk, alpha, gamma, sstats_wk, max_iter, tol, collect):
    """E-step for documents d_lo..d_hi-1; gamma row ``d - row0`` belongs to document d.

    ``gamma`` holds the starting values and receives the result (in place);
    with ``collect`` the statistics sum_d n_dw phi_dwk are added into
    ``sstats_wk`` (in place). Returns the total number of inner iterations.
    """
    K = alpha.shape[0]
    et = np.empty(K)
    acc = np.empty(K)
    total_iter = 0
    for d in range(d_lo, d_hi):
        g = gamma[d - row0]
        lo = indptr[d]
        hi = indptr[d + 1]
        if lo == hi:
            for k in range(K):
                g[k] = alpha[k]
            continue
        for _ in range(max_iter):
            _exp_elog_theta(g, et)
            for k in range(K):
                acc[k] = 0.0
            for j in range(lo, hi):
                row = eb_wk[indices[j]]
                norm = 1e-100
                for k in range(K):
                    norm += et[k] * row[k]
                c = data[j] / norm
                for k in range(K):
                    acc[k] += c * row[k]
            change = 0.0
            for k in range(K):
                new = alpha[k] + et[k] * acc[k]
                change += abs(new - g[k])
                g[k] = new
            total_iter += 1
            if change / K < tol:
                break
        if collect:
            _exp_elog_theta(g, et)
            for j in range(lo, hi):
                w = indices[j]
                row = eb_wk[w]
                norm = 1e-100
                for k in range(K):
                    norm += et[k] * row[k]
                c = data[j] / norm
                out = sstats_wk[w]
                for k in range(K):
                    out[k] += c * et[k] * row[k]
    return total_iter


@njit(cache=True, nogil=True, fastmath=_FAST)
def vb_doc_bound(indptr, indices, data, d_lo, d_hi, row0, elog_beta_wk, alpha, gamma):
    """Document terms of the ELBO, with phi optimal for (gamma, lambda):

    sum_d [ sum_w n_dw log sum_k exp(E log theta_dk + E log beta_kw)
            + log G(sum alpha) - sum_k log G(alpha_k) + sum_k (alpha_k - gamma_dk) E log theta_dk
            + sum_k log G(gamma_dk) - log G(sum_k gamma_dk) ].
    """
    K = alpha.shape[0]
    elt = np.empty(K)
    tmp = np.empty(K)
    a_sum = 0.0
    lg_a = 0.0
    for k in range(K):
        a_sum += alpha[k]
        lg_a += math.lgamma(alpha[k])
    const = math.lgamma(a_sum) - lg_a
    total = 0.0
    for d in range(d_lo, d_hi):
        g = gamma[d - row0]
        s = 0.0
        for k in range(K):
            s += g[k]
        ps = digamma(s)
        part = const - math.lgamma(s)
        for k in range(K):
            elt[k] = digamma(g[k]) - ps
            part += (alpha[k] - g[k]) * elt[k] + math.lgamma(g[k])
        for j in range(indptr[d], indptr[d + 1]):
            row = elog_beta_wk[indices[j]]
            m = -np.inf
            for k in range(K):
                tmp[k] = elt[k] + row[k]
                if tmp[k] > m:
                    m = tmp[k]
            acc = 0.0
            for k in range(K):
                acc += math.exp(tmp[k] - m)
            part += data[j] * (m + math.log(acc))
        total += part
    return total


@njit(cache=True, nogil=True, fastmath=_FAST)
def cvb0_sweep(indptr, indices, data, d_lo, d_hi, gamma, n_dk, n_wk, n_k, alpha, beta, v_beta):
    """One CVB0 sweep over the entries of documents d_lo..d_hi-1 (in place on all arrays).

    For the entry (d, w) with count c and shared responsibilities gamma_j,
    each token's update is (Asuncion et al. 2009 eq. 7)
    gamma_jk ∝ (n_wk^- + beta)(n_dk^- + alpha_k) / (n_k^- + V beta),
    where ^- removes that one token (one copy of gamma_j); the expected counts
    then change by c (gamma_new - gamma_old). ``gamma`` is (nnz, K) float32
    indexed by entry; the counts are float64. Returns the mean absolute change
    of gamma over the entries (a convergence measure).
    """
    K = alpha.shape[0]
    p = np.empty(K)
    change = 0.0
    n_entries = 0
    for d in range(d_lo, d_hi):
        nd = n_dk[d]
        for j in range(indptr[d], indptr[d + 1]):
            c = data[j]
            nw = n_wk[indices[j]]
            g = gamma[j]
            total = 0.0
            for k in range(K):
                old = g[k]
                v = (nw[k] - old + beta) * (nd[k] - old + alpha[k]) / (n_k[k] - old + v_beta)
                if v < 0.0:  # rounding can take n - gamma a hair below zero
                    v = 0.0
                p[k] = v
                total += v
            inv = 1.0 / total
            diff_sum = 0.0
            for k in range(K):
                new = p[k] * inv
                delta = c * (new - g[k])
                diff_sum += abs(new - g[k])
                nd[k] += delta
                nw[k] += delta
                n_k[k] += delta
                g[k] = new
            change += diff_sum
            n_entries += 1
    if n_entries == 0:
        return 0.0
    return change / n_entries


@njit(cache=True, nogil=True)
def cvb0_counts(indptr, indices, data, gamma, n_dk, n_wk, n_k):
    """Expected counts from entry responsibilities: n_dk, n_wk, n_k += sum of c * gamma_j (in place)."""
    D = indptr.shape[0] - 1
    K = n_k.shape[0]
    for d in range(D):
        for j in range(indptr[d], indptr[d + 1]):
            c = data[j]
            w = indices[j]
            for k in range(K):
                v = c * gamma[j, k]
                n_dk[d, k] += v
                n_wk[w, k] += v
                n_k[k] += v


@njit(cache=True, nogil=True, fastmath=_FAST)
def point_log_likelihood(indptr, indices, data, d_lo, d_hi, theta, phi_wk):
    """sum over entries of n_dw log sum_k theta_dk phi_wk (the training fit at point estimates)."""
    K = theta.shape[1]
    total = 0.0
    for d in range(d_lo, d_hi):
        t = theta[d]
        for j in range(indptr[d], indptr[d + 1]):
            row = phi_wk[indices[j]]
            s = 0.0
            for k in range(K):
                s += t[k] * row[k]
            total += data[j] * math.log(s)
    return total


@njit(cache=True, nogil=True, fastmath=_FAST)
def cvb0_log_likelihood(indptr, indices, data, d_lo, d_hi, n_dk, alpha, phi_wk):
    """:func:`point_log_likelihood` at CVB0's theta_dk = (n_dk + alpha_k) / (N_d + sum alpha), each row
    made on the fly from the expected counts (no D x K theta)."""
    K = alpha.shape[0]
    total = 0.0
    for d in range(d_lo, d_hi):
        nd = n_dk[d]
        norm = 0.0
        for k in range(K):
            norm += nd[k] + alpha[k]
        inv = 1.0 / norm
        for j in range(indptr[d], indptr[d + 1]):
            row = phi_wk[indices[j]]
            s = 0.0
            for k in range(K):
                s += (nd[k] + alpha[k]) * row[k]
            total += data[j] * math.log(s * inv)
    return total
