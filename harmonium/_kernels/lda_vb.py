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
* :func:`cvb0q_sweep`: the same sweep with the responsibilities stored in fixed
  point (uint8 or uint16 summing exactly to a scale), integer counts that stay
  exactly the sums of the stored values, and no stored n_dk (issue 21).

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


# -- CVB0 with quantised responsibilities (issue 21) -------------------------------------------
# gamma_j is stored in fixed point: q_jk / S with q_jk unsigned integers that sum exactly to the scale S
# (255 for uint8, 65535 for uint16). The counts are int64 in units of 1 / S and always equal the sums
# of c_j q_jk of the stored values (plus S times the seed pseudo-counts): a sweep subtracts each entry's
# stored old values and adds its stored new ones, so no rounding drift enters them. n_dk is not stored:
# a document's row is rebuilt from its entries when the sweep reaches it. No fastmath here, so that the
# numpy twin (tests/kernels/test_lda_vb_parity.py) reproduces the integers exactly.


@njit(cache=True, nogil=True)
def cvb0q_doc_row(indptr, indices, data, d, q, nd):
    """nd[k] = sum over document d's entries of c_j q_jk (int64, in units of 1 / S; overwrites nd)."""
    K = nd.shape[0]
    for k in range(K):
        nd[k] = 0
    for j in range(indptr[d], indptr[d + 1]):
        c = np.int64(data[j])
        g = q[j]
        for k in range(K):
            nd[k] += c * np.int64(g[k])


_GOLDEN = 0.6180339887498949  # (sqrt 5 - 1) / 2: offsets salt + j G mod 1 spread evenly over the entries j


@njit(cache=True, nogil=True)
def cvb0q_sweep(indptr, indices, data, d_lo, d_hi, q, n_wk, n_k, alpha, beta, v_beta, scale, salt=-1.0):
    """One CVB0 sweep over documents d_lo..d_hi-1 with quantised responsibilities (in place on q, n_wk, n_k).

    Each entry's update is that of :func:`cvb0_sweep` (Asuncion et al. 2009 eq. 7) with
    gamma_old = q_j / S: p_k ∝ (n_wk^- + beta)(n_dk^- + alpha_k) / (n_k^- + V beta), where ^- removes
    one copy of gamma_old (exactly, in integer units). The new values are rounded by cumulative
    (systematic) rounding, q_k = round(S P_k) - round(S P_{k-1}) with P_k the running sum of p, the
    last topic taking the rest: they sum to S exactly and |q_k - S p_k| < 1. The counts then move by
    c (q_new - q_old) in integers. n_dk of the document is rebuilt from its entries first
    (:func:`cvb0q_doc_row`). Returns the mean over entries of sum_k |gamma_new - gamma_old|.
    """
    K = alpha.shape[0]
    inv = 1.0 / scale
    nd = np.zeros(K, np.int64)
    v = np.empty(K)
    change = 0
    n_entries = 0
    for d in range(d_lo, d_hi):
        cvb0q_doc_row(indptr, indices, data, d, q, nd)
        for j in range(indptr[d], indptr[d + 1]):
            c = np.int64(data[j])
            nw = n_wk[indices[j]]
            g = q[j]
            total = 0.0
            for k in range(K):
                old = np.int64(g[k])
                x = ((nw[k] - old) * inv + beta) * ((nd[k] - old) * inv + alpha[k]) / ((n_k[k] - old) * inv + v_beta)
                v[k] = x
                total += x
            f = scale / total
            if salt < 0.0:
                u = 0.5
            else:
                u = salt + j * _GOLDEN
                u -= math.floor(u)
            cum = 0.0
            prev = np.int64(0)
            for k in range(K):
                cum += v[k] * f
                cur = np.int64(scale) if k == K - 1 else np.int64(math.floor(cum + u))
                new = cur - prev
                prev = cur
                old = np.int64(g[k])
                delta = c * (new - old)
                change += abs(new - old)
                nd[k] += delta
                nw[k] += delta
                n_k[k] += delta
                g[k] = new
            n_entries += 1
    if n_entries == 0:
        return 0.0
    return change * inv / n_entries


@njit(cache=True, nogil=True)
def cvb0q_counts(indptr, indices, data, q, n_wk, n_k):
    """n_wk, n_k += sum of c_j q_j (int64, units of 1 / S; in place). n_dk is never stored."""
    D = indptr.shape[0] - 1
    K = n_k.shape[0]
    for d in range(D):
        for j in range(indptr[d], indptr[d + 1]):
            c = np.int64(data[j])
            w = indices[j]
            for k in range(K):
                v = c * np.int64(q[j, k])
                n_wk[w, k] += v
                n_k[k] += v


@njit(cache=True, nogil=True)
def cvb0q_doc_topic(indptr, indices, data, d_lo, d_hi, q, scale, alpha, out, normalise):
    """Rows d_lo..d_hi-1 of out (D, K): the expected counts n_dk = sum_j c_j q_jk / S, or with
    ``normalise`` theta_dk = (n_dk + alpha_k) / (N_d + sum alpha) (in place on out)."""
    K = alpha.shape[0]
    inv = 1.0 / scale
    nd = np.zeros(K, np.int64)
    for d in range(d_lo, d_hi):
        cvb0q_doc_row(indptr, indices, data, d, q, nd)
        row = out[d]
        if normalise:
            norm = 0.0
            for k in range(K):
                norm += nd[k] * inv + alpha[k]
            for k in range(K):
                row[k] = (nd[k] * inv + alpha[k]) / norm
        else:
            for k in range(K):
                row[k] = nd[k] * inv


@njit(cache=True, nogil=True, fastmath=_FAST)
def cvb0q_log_likelihood(indptr, indices, data, d_lo, d_hi, q, scale, alpha, phi_wk):
    """:func:`cvb0_log_likelihood` with each document's n_dk rebuilt from its quantised entries."""
    K = alpha.shape[0]
    inv = 1.0 / scale
    nd = np.zeros(K, np.int64)
    t = np.empty(K)
    total = 0.0
    for d in range(d_lo, d_hi):
        cvb0q_doc_row(indptr, indices, data, d, q, nd)
        norm = 0.0
        for k in range(K):
            t[k] = nd[k] * inv + alpha[k]
            norm += t[k]
        lnorm = math.log(norm)
        for j in range(indptr[d], indptr[d + 1]):
            row = phi_wk[indices[j]]
            s = 0.0
            for k in range(K):
                s += t[k] * row[k]
            total += data[j] * (math.log(s) - lnorm)
    return total
