"""Whole-state statistics of LDA without temporaries the size of the count tables (numba).

The numpy expressions they replace allocate several float64 copies of the
D x K and V x K tables, which dominated peak memory at K = 1000.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

#: The longest table of log G(c + a) for the counts c = 0, 1, ... that the log-likelihoods below build per call
#: (a count at or past it is computed directly). A table entry is the same ``math.lgamma(c + a)`` the direct
#: call makes, so the sums are bit-identical with or without it; it replaces about 1.5 M lgamma calls an
#: evaluation at Debian K = 100 (the estimators' trace, every ``evaluate_every`` sweeps) by lookups.
LGAMMA_TABLE = 4096


@njit(cache=True, nogil=True, inline="always")
def sort_ascending(a, lo, hi):
    """Sort ``a[lo:hi]`` in place, ascending (insertion sort: for the short, nearly sorted topic lists of a
    document)."""
    for j in range(lo + 1, hi):
        k = a[j]
        i = j
        while i > lo and a[i - 1] > k:
            a[i] = a[i - 1]
            i -= 1
        a[i] = k


@njit(cache=True, nogil=True, inline="always")
def _lgamma_table(a, n_cells):
    """log G(c + a) for c < min(LGAMMA_TABLE, n_cells // 16 + 1): short for small tables (the HDP's beta moves
    call the word term many times on small states)."""
    n = min(LGAMMA_TABLE, n_cells // 16 + 1)
    t = np.empty(n)
    for c in range(n):
        t[c] = math.lgamma(c + a)
    return t


@njit(cache=True, nogil=True, inline="always")
def _lgamma_shifted(c, a, table):
    """log G(c + a) for a count c >= 0, from ``table`` (:func:`_lgamma_table` of a) when c is in it."""
    if c < table.shape[0]:
        return table[c]
    return math.lgamma(c + a)


@njit(cache=True, nogil=True)
def word_log_likelihood(n_wk, n_k, K, beta):
    """log p(w | z, beta) = sum_k [lG(V b) - lG(n_k + V b) + sum_w lG(n_wk + b) - lG(b)] over k < K."""
    V = n_wk.shape[0]
    total = 0.0
    lg_beta = math.lgamma(beta)
    for k in range(K):
        total += math.lgamma(V * beta) - math.lgamma(n_k[k] + V * beta)
    table = _lgamma_table(beta, V * K)
    for w in range(V):
        for k in range(K):
            c = n_wk[w, k]
            if c > 0:
                total += _lgamma_shifted(c, beta, table) - lg_beta
    return total


@njit(cache=True, nogil=True, inline="always")
def _doc_terms(row, topics, m, alpha, lg_alpha, table, table_sum, alpha_sum, lg_alpha_sum):
    """One document's terms of the log joint, sum_k [lG(n_dk + a_k) - lG(a_k)] + lG(sum a) - lG(N_d + sum a),
    over its topics ``topics[:m]`` (ascending: the same order of additions for the dense and the z-built
    counts); ``table`` is None for an asymmetric alpha (then each lG is computed)."""
    total = 0.0
    n_d = 0
    for j in range(m):
        k = topics[j]
        c = row[k]
        n_d += c
        if table is None:
            total += math.lgamma(c + alpha[k]) - lg_alpha[k]
        else:
            total += _lgamma_shifted(c, alpha[0], table) - lg_alpha[k]
    return total + (lg_alpha_sum - _lgamma_shifted(n_d, alpha_sum, table_sum))


@njit(cache=True, nogil=True, inline="always")
def _prior_terms(alpha):
    """(sum alpha, lG(sum alpha), lG(alpha_k) for each k, whether alpha is symmetric)."""
    K = alpha.shape[0]
    alpha_sum = 0.0
    for k in range(K):
        alpha_sum += alpha[k]
    lg_alpha = np.empty(K)
    symmetric = True
    for k in range(K):
        lg_alpha[k] = math.lgamma(alpha[k])
        symmetric = symmetric and alpha[k] == alpha[0]
    return alpha_sum, math.lgamma(alpha_sum), lg_alpha, symmetric


@njit(cache=True, nogil=True)
def collapsed_log_joint(n_dk, n_wk, n_k, alpha, beta):
    """log p(w, z | alpha, beta) with theta and phi integrated out (models.directed.lda).

    Empty cells contribute log G(alpha_k) - log G(alpha_k) = 0 and are skipped; the others are added per
    document in topic order (the order :func:`collapsed_log_joint_assignments` adds them in).
    """
    D, K = n_dk.shape
    alpha_sum, lg_alpha_sum, lg_alpha, symmetric = _prior_terms(alpha)
    table_sum = _lgamma_table(alpha_sum, D * K)
    table = _lgamma_table(alpha[0], D * K)
    topics = np.empty(K, dtype=np.int64)
    total = 0.0
    for d in range(D):
        row = n_dk[d]
        m = 0
        for k in range(K):
            if row[k] > 0:
                topics[m] = k
                m += 1
        if symmetric:
            total += _doc_terms(row, topics, m, alpha, lg_alpha, table, table_sum, alpha_sum, lg_alpha_sum)
        else:
            total += _doc_terms(row, topics, m, alpha, lg_alpha, None, table_sum, alpha_sum, lg_alpha_sum)
    return total + word_log_likelihood(n_wk, n_k, K, beta)


@njit(cache=True, nogil=True)
def collapsed_log_joint_assignments(doc_ptr, z, n_wk, n_k, alpha, beta, row):
    """:func:`collapsed_log_joint` with the document counts rebuilt from ``z``, one document at a time.

    ``row`` is a zeroed (K,) integer scratch (zero again on return). Each document's topics are listed from
    its tokens and sorted (O(N_d + k_d^2), not O(K)), and its terms added in topic order as the dense kernel
    adds them, so the value is bit-identical to it; no D x K table.
    """
    K = n_k.shape[0]
    D = doc_ptr.shape[0] - 1
    alpha_sum, lg_alpha_sum, lg_alpha, symmetric = _prior_terms(alpha)
    table_sum = _lgamma_table(alpha_sum, D * K)
    table = _lgamma_table(alpha[0], D * K)
    topics = np.empty(K + 1, dtype=np.int64)  # one past the list: each token's topic is written there first
    total = 0.0
    for d in range(D):
        m = 0
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            k = z[i]
            topics[m] = k
            m += row[k] == 0
            row[k] += 1
        sort_ascending(topics, 0, m)
        if symmetric:
            total += _doc_terms(row, topics, m, alpha, lg_alpha, table, table_sum, alpha_sum, lg_alpha_sum)
        else:
            total += _doc_terms(row, topics, m, alpha, lg_alpha, None, table_sum, alpha_sum, lg_alpha_sum)
        for j in range(m):
            row[topics[j]] = 0
    return total + word_log_likelihood(n_wk, n_k, K, beta)


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


@njit(cache=True, nogil=True, inline="always")
def count_token(d, w, k, n_dk, n_wk, n_k, delta):
    """Add ``delta`` (+1 or -1) to the counts of a token of word w in document d with topic k."""
    n_dk[d, k] += delta
    n_wk[w, k] += delta
    n_k[k] += delta


@njit(cache=True, nogil=True)
def count_word_assignments(words, z, n_wk, n_k):
    """Fill the (zeroed) n_wk and n_k implied by the assignments z (no document-topic table)."""
    for i in range(z.shape[0]):
        k = z[i]
        n_wk[words[i], k] += 1
        n_k[k] += 1


@njit(cache=True, nogil=True)
def doc_topic_cells(doc_ptr, z, row, cols, vals):
    """The non-zero cells of n_dk, rebuilt from z one document at a time: topic in ``cols``, count in ``vals``.

    ``row`` is a zeroed (K,) integer scratch (zero again on return); ``cols`` and ``vals`` need room for
    sum_d min(N_d, K) cells. Returns how many were written (documents in order, topics increasing).
    """
    K = row.shape[0]
    o = 0
    for d in range(doc_ptr.shape[0] - 1):
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            row[z[i]] += 1
        for k in range(K):
            if row[k] > 0:
                cols[o] = k
                vals[o] = row[k]
                o += 1
                row[k] = 0
    return o


@njit(cache=True, nogil=True)
def count_assignments(doc_ptr, words, z, n_dk, n_wk, n_k):
    """Fill the (zeroed) count tables n_dk, n_wk, n_k implied by the assignments z."""
    for d in range(doc_ptr.shape[0] - 1):
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            k = z[i]
            n_dk[d, k] += 1
            n_wk[words[i], k] += 1
            n_k[k] += 1


# -- sparse Rao-Blackwellised theta sums (harmonium.inference.mcmc.lda.estimates) ----------------------
@njit(cache=True, nogil=True)
def doc_lengths(n_dk, out):
    """out[d] = N_d = sum_k n_dk (the row sums of the document-topic counts)."""
    D, K = n_dk.shape
    for d in range(D):
        n_d = 0
        for k in range(K):
            n_d += n_dk[d, k]
        out[d] = n_d


@njit(cache=True, nogil=True, inline="always")
def _merge_row(counts, b0, inv, per_topic, start, lo, hi, top, val, o, new_top, new_val):
    """Merge one sample's count row into its sorted sparse sum row; returns the next output position.

    Cell k gains (counts[k] + b0) * inv_k (inv_k = inv[k] if ``per_topic`` else inv[0]): a stored cell
    (``top[lo:hi]``, values ``val``) from its value, a cell that gets its first count from ``start[k]``;
    cells with no count stay unstored. Written at ``new_top[o:]`` / ``new_val[o:]`` in topic order.
    """
    K = counts.shape[0]
    j = lo
    nxt = top[j] if j < hi else K
    for k in range(K):
        c = counts[k]
        if k == nxt:
            x = val[j]
            j += 1
            nxt = top[j] if j < hi else K
        elif c != 0:
            x = start[k]
        else:
            continue
        x += (c + b0) * (inv[k] if per_topic else inv[0])
        new_top[o] = k
        new_val[o] = x
        o += 1
    return o


@njit(cache=True, nogil=True)
def sparse_theta_add(n_dk, inv_len, ptr, top, val, new_ptr, new_top, new_val):
    """Merge one sample into the sparse sums: new_val[d, k] = val[d, k] + n_dk[d, k] * inv_len[d].

    Each document's topics are stored in increasing order, and the merge with the row of n_dk is one
    ordered pass. Documents are written one after another from the start of ``new_top`` /
    ``new_val``, which must have room for len(top) + sum_d min(N_d, K) entries; returns the number
    written (new_ptr[D]).
    """
    D, K = n_dk.shape
    zero = np.zeros(K, dtype=val.dtype)
    o = 0
    for d in range(D):
        new_ptr[d] = o
        o = _merge_row(n_dk[d], 0.0, inv_len[d:d + 1], False, zero, ptr[d], ptr[d + 1], top, val, o, new_top, new_val)
    new_ptr[D] = o
    return o


@njit(cache=True, nogil=True)
def sparse_theta_add_assignments(doc_ptr, z, row, inv_len, ptr, top, val, new_ptr, new_top, new_val):
    """:func:`sparse_theta_add` with each document's row of n_dk rebuilt from ``z`` in the (K,) zeroed
    integer scratch ``row`` (zero again on return): the same merge, bit for bit, without a D x K table."""
    D = doc_ptr.shape[0] - 1
    K = row.shape[0]
    zero = np.zeros(K, dtype=val.dtype)
    o = 0
    for d in range(D):
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            row[z[i]] += 1
        new_ptr[d] = o
        o = _merge_row(row, 0.0, inv_len[d:d + 1], False, zero, ptr[d], ptr[d + 1], top, val, o, new_top, new_val)
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            row[z[i]] = 0
    new_ptr[D] = o
    return o


@njit(cache=True, nogil=True)
def sparse_theta_dense(ptr, top, val, doc_len, alphas, weights, out):
    """out[d, k] = theta_hat_dk, rows normalised, from the sparse count sums and the samples' alphas.

    theta_hat_dk ∝ sum_u weights[u] alphas[u, k] / (N_d + sum alphas[u]) + sum_s n_dk^(s) / (N_d + A^(s)),
    the second term being the stored ``val``. Sums are float64; ``out`` may be float32.
    """
    D, K = out.shape
    U = alphas.shape[0]
    row = np.empty(K)
    a_sum = np.empty(U)
    for u in range(U):
        s = 0.0
        for k in range(K):
            s += alphas[u, k]
        a_sum[u] = s
    for d in range(D):
        for k in range(K):
            row[k] = 0.0
        for u in range(U):
            c = weights[u] / (doc_len[d] + a_sum[u])
            for k in range(K):
                row[k] += alphas[u, k] * c
        for j in range(ptr[d], ptr[d + 1]):
            row[top[j]] += val[j]
        total = 0.0
        for k in range(K):
            total += row[k]
        inv = 1.0 / total
        for k in range(K):
            out[d, k] = row[k] * inv


@njit(cache=True, nogil=True)
def column_sums(x_wk):
    """sum_w x_wk[w, k], a new (K,) float64 array (one row-major pass over the (V, K) table)."""
    V, K = x_wk.shape
    tot = np.zeros(K)
    for w in range(V):
        for k in range(K):
            tot[k] += x_wk[w, k]
    return tot


@njit(cache=True, nogil=True)
def normalised_transpose(x_wk, out):
    """out[k, w] = x_wk[w, k] / sum_w x_wk[w, k]: phi_hat (K, V) from the (V, K) sums, no temporaries."""
    V, K = x_wk.shape
    tot = column_sums(x_wk)
    for k in range(K):
        tot[k] = 1.0 / tot[k]
    for w in range(V):
        for k in range(K):
            out[k, w] = x_wk[w, k] * tot[k]


@njit(cache=True, nogil=True)
def row_nonzeros(x, ptr):
    """ptr[0] = 0, ptr[r + 1] = ptr[r] + (non-zero entries of row r of the 2-D ``x``): a CSR pointer."""
    ptr[0] = 0
    for r in range(x.shape[0]):
        n = 0
        for k in range(x.shape[1]):
            if x[r, k] != 0:
                n += 1
        ptr[r + 1] = ptr[r] + n


@njit(cache=True, nogil=True)
def sparse_rows(x, ptr, top, cnt):
    """The non-zero entries of the 2-D ``x`` in CSR form (``ptr`` from :func:`row_nonzeros`): columns
    increasing in ``top``, values in ``cnt``."""
    for r in range(x.shape[0]):
        o = ptr[r]
        for k in range(x.shape[1]):
            if x[r, k] != 0:
                top[o] = k
                cnt[o] = x[r, k]
                o += 1


@njit(cache=True, nogil=True)
def topic_word_from_sparse_counts(ptr, top, cnt, den, beta, out):
    """:func:`topic_word_from_counts` from the CSR non-zero cells of n_wk, bit for bit: an empty cell is
    (0 + beta) / den[k], which is beta / den[k] exactly."""
    K, V = out.shape
    for w in range(V):
        for k in range(K):
            out[k, w] = beta / den[k]
        for j in range(ptr[w], ptr[w + 1]):
            k = top[j]
            out[k, w] = (cnt[j] + beta) / den[k]


@njit(cache=True, nogil=True)
def topic_word_from_counts(n_wk, den, beta, out):
    """out[k, w] = (n_wk[w, k] + beta) / den[k]: E[phi | z, w] (K, V) of the symmetric prior, no temporaries."""
    V, K = n_wk.shape
    for w in range(V):
        for k in range(K):
            out[k, w] = (n_wk[w, k] + beta) / den[k]


# -- sparse Rao-Blackwellised phi sums (harmonium.inference.mcmc.lda.estimates.SparsePhiSum) -------------
# The dense sum is phi_wk_sum[w, k] += (n_wk + beta) * inv_k in float32 (accumulate_phi). A cell whose count
# has been zero in every sample so far holds the same value in every row: the topic's background bg[k], built
# by the same float operations. Only the cells that have held a count are stored; a cell's value is read from
# bg until then. Every stored value goes through exactly the float32 operations of accumulate_phi, so the
# sums, and phi_hat, are bit-identical to the dense ones.
@njit(cache=True, nogil=True)
def sparse_phi_add(n_wk, n_k, beta, bg, ptr, top, val, new_ptr, new_top, new_val):
    """Merge one sample into the sparse phi sums (see above); ``bg`` is updated in place.

    new_val[w, k] = val[w, k] + (n_wk + beta) * inv_k, a new stored cell starting from bg[k]. Each word's
    topics are stored in increasing order. ``new_top`` / ``new_val`` must have room for len(top) + the
    non-zero cells of n_wk; returns the number written (new_ptr[V]).
    """
    V, K = n_wk.shape
    inv = np.empty(K)
    for k in range(K):
        inv[k] = 1.0 / (n_k[k] + V * beta)
    o = 0
    for w in range(V):
        new_ptr[w] = o
        o = _merge_row(n_wk[w], beta, inv, True, bg, ptr[w], ptr[w + 1], top, val, o, new_top, new_val)
    new_ptr[V] = o
    for k in range(K):
        x = bg[k]
        x += (0 + beta) * inv[k]
        bg[k] = x
    return o


@njit(cache=True, nogil=True)
def sparse_phi_row(w, bg, ptr, top, val, row):
    """row[k] = the sum of cell (w, k): its stored value, else the background bg[k]."""
    K = row.shape[0]
    for k in range(K):
        row[k] = bg[k]
    for j in range(ptr[w], ptr[w + 1]):
        row[top[j]] = val[j]


@njit(cache=True, nogil=True)
def sparse_phi_dense(bg, ptr, top, val, out):
    """out (V, K) = the dense sums (what accumulate_phi would hold)."""
    V = out.shape[0]
    for w in range(V):
        sparse_phi_row(w, bg, ptr, top, val, out[w])


@njit(cache=True, nogil=True)
def sparse_phi_topic_word(bg, ptr, top, val, out):
    """out[k, w] = sum[w, k] / sum_w sum[w, k]: normalised_transpose of the dense sums, bit for bit
    (the column sums add the same float32 values in the same order)."""
    K, V = out.shape
    row = np.empty(K, dtype=val.dtype)
    tot = np.zeros(K)
    for w in range(V):
        sparse_phi_row(w, bg, ptr, top, val, row)
        for k in range(K):
            tot[k] += row[k]
    for k in range(K):
        tot[k] = 1.0 / tot[k]
    for w in range(V):
        sparse_phi_row(w, bg, ptr, top, val, row)
        for k in range(K):
            out[k, w] = row[k] * tot[k]
