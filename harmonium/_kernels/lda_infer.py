"""Topic proportions of new documents with the topics fixed (``LDA.transform``), numba.

With phi fixed, theta_d integrated out, the conditional of token i of document d is

    p(z_i = k | z_-i, w, phi) ∝ (n_dk^-i + alpha_k) phi_kw = alpha_k phi_kw + n_dk^-i phi_kw

(seed 003's collapsed conditional with B known). The first term depends on the
word only, so its cumulative sum over k is tabulated once per distinct word
(``a_cum``) and drawn by binary search; the second runs over the document's
topics only. A draw costs O(log K + k_d) instead of O(K); it is exact.
:func:`fixed_topics_sweep_rows` keeps no D x K counts: a document's row is
rebuilt from z when the sweep reaches it (as the training sweep does,
:mod:`harmonium._kernels.lda_sparse`). Functions mutate their array
arguments in place.
"""

from __future__ import annotations

from numba import njit

from harmonium._kernels.lda_sparse import _u, doc_topics, list_remove


@njit(cache=True, nogil=True)
def word_prior_tables(phi_wk, alpha, a_cum):
    """a_cum[w, k] = sum_{k' <= k} alpha_k' phi_{k' w} for every row w of ``phi_wk`` (the words' cumulative prior
    terms; the caller passes the rows of the words it will draw)."""
    K = alpha.shape[0]
    for w in range(phi_wk.shape[0]):
        acc = 0.0
        for k in range(K):
            acc += alpha[k] * phi_wk[w, k]
            a_cum[w, k] = acc


@njit(cache=True, nogil=True)
def _search(row, u):
    """First k with u < row[k] (row non-decreasing, u < row[-1])."""
    lo, hi = 0, row.shape[0] - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if u < row[_u(mid)]:
            hi = mid
        else:
            lo = mid + 1
    return lo


@njit(cache=True, nogil=True, inline="always")
def _fixed_topics_doc(rng, doc_ptr, words, z, row, d, phi_wk, a_cum, initialise, dtop, rbuf, in_doc):
    """Document d's tokens redrawn (or drawn, ``initialise``) against its counts ``row`` (K,); returns how many
    topics the document holds at the end, listed in ``dtop`` (``in_doc`` is zero again on return)."""
    K = row.shape[0]
    dlen = 0 if initialise else doc_topics(doc_ptr, z, d, in_doc, dtop)
    for i in range(doc_ptr[d], doc_ptr[d + 1]):
        w = words[_u(i)]
        if not initialise:
            old = z[_u(i)]
            row[_u(old)] -= 1
            if row[_u(old)] == 0:
                dlen = list_remove(dtop, 0, dlen, old)
                in_doc[_u(old)] = 0
        arow = a_cum[w]
        prow = phi_wk[w]
        a = arow[_u(K - 1)]
        r = 0.0
        for j in range(dlen):
            k = dtop[_u(j)]
            r += row[_u(k)] * prow[_u(k)]
            rbuf[_u(j)] = r
        u = rng.random() * (a + r)
        if a + r <= 0.0:
            # every topic gives the word probability 0 (only with foreign phi): draw uniformly
            new = min(int(rng.random() * K), K - 1)
        elif u < a:
            new = _search(arow, u)
        else:
            u -= a
            new = dtop[dlen - 1]
            for j in range(dlen):
                if u < rbuf[_u(j)]:
                    new = dtop[_u(j)]
                    break
        z[_u(i)] = new
        if row[_u(new)] == 0:
            dtop[_u(dlen)] = new
            dlen += 1
            in_doc[_u(new)] = 1
        row[_u(new)] += 1
    for j in range(dlen):
        in_doc[_u(dtop[_u(j)])] = 0
    return dlen


@njit(cache=True, nogil=True)
def fixed_topics_sweep_sparse(rng, doc_ptr, words, z, n_dk, phi_wk, a_cum,
                              d_lo, d_hi, initialise, dtop, rbuf, in_doc):
    """One sweep over documents d_lo..d_hi-1 with the topics fixed, against the (D, K) counts ``n_dk``.

    ``initialise=True`` draws every token given only the tokens before it (z
    and n_dk must be zero); otherwise each token is removed and redrawn.
    ``phi_wk`` (rows by word id) and ``a_cum`` (:func:`word_prior_tables` of it) are read at row ``words[i]``.
    ``dtop`` (K int32), ``rbuf`` (K float64) and ``in_doc`` (K uint8, zero on entry and exit) are scratch.
    """
    for d in range(d_lo, d_hi):
        _fixed_topics_doc(rng, doc_ptr, words, z, n_dk[d], d, phi_wk, a_cum, initialise, dtop, rbuf, in_doc)


@njit(cache=True, nogil=True)
def fixed_topics_sweep_rows(rng, doc_ptr, words, z, phi_wk, a_cum, d_lo, d_hi, initialise, dtop, rbuf,
                            in_doc, drow, total, accumulate):
    """:func:`fixed_topics_sweep_sparse` without a D x K count table: each document's counts are rebuilt from z
    into the (K,) scratch ``drow`` (zero on entry and exit) and cleared after. With ``accumulate``,
    total[d, k] += n_dk after the document's draws (what :func:`accumulate_rows` adds after the sweep).

    The same draws in the same order: the same uniforms give the same z, and ``total`` the same sums.
    """
    for d in range(d_lo, d_hi):
        if not initialise:
            for i in range(doc_ptr[d], doc_ptr[d + 1]):
                drow[_u(z[_u(i)])] += 1
        dlen = _fixed_topics_doc(rng, doc_ptr, words, z, drow, d, phi_wk, a_cum, initialise, dtop, rbuf, in_doc)
        for j in range(dlen):
            k = dtop[j]
            if accumulate:
                total[d, k] += drow[k]
            drow[k] = 0


@njit(cache=True, nogil=True)
def accumulate_rows(total, x, lo, hi):
    """total[lo:hi] += x[lo:hi] (2-D), without a temporary."""
    for i in range(lo, hi):
        for j in range(x.shape[1]):
            total[i, j] += x[i, j]
