"""Topic proportions of new documents with the topics fixed (``LDA.transform``), numba.

With phi fixed, theta_d integrated out, the conditional of token i of document d is

    p(z_i = k | z_-i, w, phi) ∝ (n_dk^-i + alpha_k) phi_kw = alpha_k phi_kw + n_dk^-i phi_kw

(seed 003's collapsed conditional with B known). The first term depends on the
word only, so its cumulative sum over k is tabulated once per distinct word
(``a_cum``) and drawn by binary search; the second runs over the document's
topics only. A draw costs O(log K + k_d) instead of O(K); it is exact.
Functions mutate their array arguments in place.
"""

from __future__ import annotations

from numba import njit

from harmonium._kernels.lda_sparse import doc_topics, list_remove


@njit(cache=True, nogil=True)
def word_prior_tables(phi_wk, alpha, rows, a_cum):
    """a_cum[j, k] = sum_{k' <= k} alpha_k' phi_{k' w} for w = rows[j]."""
    K = alpha.shape[0]
    for j in range(rows.shape[0]):
        w = rows[j]
        acc = 0.0
        for k in range(K):
            acc += alpha[k] * phi_wk[w, k]
            a_cum[j, k] = acc


@njit(cache=True, nogil=True)
def _search(row, u):
    """First k with u < row[k] (row non-decreasing, u < row[-1])."""
    lo, hi = 0, row.shape[0] - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if u < row[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


@njit(cache=True, nogil=True)
def fixed_topics_sweep_sparse(rng, doc_ptr, words, z, n_dk, phi_wk, word_row, a_cum,
                              d_lo, d_hi, initialise, dtop, rbuf, in_doc):
    """One sweep over documents d_lo..d_hi-1 with the topics fixed.

    ``initialise=True`` draws every token given only the tokens before it (z
    and n_dk must be zero); otherwise each token is removed and redrawn.
    ``word_row[w]`` is the row of ``a_cum`` for word w. ``dtop`` (K int32),
    ``rbuf`` (K float64) and ``in_doc`` (K uint8, zero on entry and exit) are scratch.
    """
    K = n_dk.shape[1]
    for d in range(d_lo, d_hi):
        dlen = 0 if initialise else doc_topics(doc_ptr, z, d, in_doc, dtop)
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            w = words[i]
            if not initialise:
                old = z[i]
                n_dk[d, old] -= 1
                if n_dk[d, old] == 0:
                    dlen = list_remove(dtop, 0, dlen, old)
                    in_doc[old] = 0
            row = a_cum[word_row[w]]
            a = row[K - 1]
            r = 0.0
            for j in range(dlen):
                k = dtop[j]
                r += n_dk[d, k] * phi_wk[w, k]
                rbuf[j] = r
            u = rng.random() * (a + r)
            if a + r <= 0.0:
                # every topic gives the word probability 0 (only with foreign phi): draw uniformly
                new = min(int(rng.random() * K), K - 1)
            elif u < a:
                new = _search(row, u)
            else:
                u -= a
                new = dtop[dlen - 1]
                for j in range(dlen):
                    if u < rbuf[j]:
                        new = dtop[j]
                        break
            z[i] = new
            if n_dk[d, new] == 0:
                dtop[dlen] = new
                dlen += 1
                in_doc[new] = 1
            n_dk[d, new] += 1
        for j in range(dlen):
            in_doc[dtop[j]] = 0


@njit(cache=True, nogil=True)
def accumulate_rows(total, x, lo, hi):
    """total[lo:hi] += x[lo:hi] (2-D), without a temporary."""
    for i in range(lo, hi):
        for j in range(x.shape[1]):
            total[i, j] += x[i, j]
