"""SparseLDA bucket sampling for collapsed Gibbs LDA (Yao, Mimno & McCallum 2009, §3.4).

The collapsed conditional (seed 003; ``lda_gibbs.collapsed_conditional``)

    p(z_i = k | z_-i, w) ∝ (alpha_k + n_dk)(n_wk + beta) / (n_k + V beta)

splits, with c_k = 1 / (n_k + V beta), into three buckets

    s = sum_k  alpha_k beta c_k                    (all K topics, rarely entered)
    r = sum_{k: n_dk > 0}  n_dk beta c_k           (the document's topics)
    q = sum_{k: n_wk > 0}  (alpha_k + n_dk) n_wk c_k   (the word's topics)

so that a draw costs O(k_w) plus, when it falls in the r bucket, O(k_d),
instead of O(K). The draw is exact: the three buckets add up to the
conditional term by term. ``s``, ``r`` and the coefficients
(alpha_k + n_dk) c_k are updated incrementally (O(1) a token); r is
recomputed at every document and s every 256 documents so that rounding
cannot drift.

Per-word lists of topics with n_wk > 0 live in one flat array: word w owns
``wtop[wptr[w] : wptr[w] + wlen[w]]``, capacity min(K, frequency of w).
All functions mutate their array arguments in place.

Document counts: the serial sweep needs only the current document's row of
n_dk. With ``n_dk=None`` it rebuilds that row from the token topics z into a
K-length scratch ``drow`` when it reaches the document (O(N_d), a walk after
``doc_topics`` lists the document's topics) and clears it after (O(k_d)), as
MALLET's ``sampleTopicsForOneDoc`` does; no D x K table is needed. The
word-partitioned sweep visits a document once per word block and keeps the
dense n_dk. The arithmetic is the same either way, so the same uniforms give
the same z.
"""

from __future__ import annotations

from numba import njit


@njit(cache=True, nogil=True, inline="always")
def _build_word_list(n_wk, w, wptr, wtop, wlen):
    K = n_wk.shape[1]
    base = wptr[w]
    m = 0
    if wptr[w + 1] > base:
        for k in range(K):
            if n_wk[w, k] > 0:
                # insertion into the descending run wtop[base:base+m]
                j = base + m
                while j > base and n_wk[w, wtop[j - 1]] < n_wk[w, k]:
                    wtop[j] = wtop[j - 1]
                    j -= 1
                wtop[j] = k
                m += 1
    wlen[w] = m


@njit(cache=True, nogil=True)
def build_word_lists(n_wk, wptr, wtop, wlen):
    """Fill the per-word lists of non-zero topics from the dense counts, largest count first.

    The order makes the walk through the q bucket stop early (Yao et al. 2009
    keep the lists sorted for the same reason); it does not affect which
    topic a uniform maps to in distribution, only how fast it is found.
    """
    for w in range(n_wk.shape[0]):
        _build_word_list(n_wk, w, wptr, wtop, wlen)


@njit(cache=True, nogil=True)
def build_block_word_lists(n_wk, block_words, wptr, wtop, wlen):
    """:func:`build_word_lists` for the words ``block_words`` only (the other words' lists are left as they are)."""
    for j in range(block_words.shape[0]):
        _build_word_list(n_wk, block_words[j], wptr, wtop, wlen)


@njit(cache=True, nogil=True, inline="always")
def list_remove(lst, base, length, k):
    """Remove value k from lst[base:base+length] (swap with last); returns the new length."""
    for j in range(base, base + length):
        if lst[j] == k:
            lst[j] = lst[base + length - 1]
            return length - 1
    return length


@njit(cache=True, nogil=True, inline="always")
def doc_topics(doc_ptr, z, d, in_doc, dtop):
    """List the distinct topics of document d's tokens in ``dtop``, marking them in ``in_doc``; returns how many."""
    dlen = 0
    for i in range(doc_ptr[d], doc_ptr[d + 1]):
        k = z[i]
        if in_doc[k] == 0:
            in_doc[k] = 1
            dtop[dlen] = k
            dlen += 1
    return dlen


@njit(cache=True, nogil=True, inline="always")
def word_bucket_pick(u, qbuf, wtop, base, n):
    """The topic of the word bucket (SparseLDA's q) whose cumulative mass ``qbuf[j]`` first exceeds u.

    The bucket's topics are ``wtop[base : base + n]``; the last one when rounding leaves u above them all.
    """
    for j in range(n):
        if u < qbuf[j]:
            return wtop[base + j]
    return wtop[base + n - 1]


@njit(cache=True, nogil=True, inline="always")
def doc_row_bucket_pick(u, row, dtop, dlen, beta, c):
    """The topic of the document bucket (SparseLDA's r: n_dk beta c_k over d's topics ``dtop[:dlen]``, with
    ``row`` = n_dk[d]) at which the running mass first exceeds u; the last on rounding, -1 when the document
    has no topic."""
    acc = 0.0
    for j in range(dlen):
        k = dtop[j]
        acc += row[k] * beta * c[k]
        if u < acc:
            return k
    return dtop[dlen - 1] if dlen > 0 else -1


@njit(cache=True, nogil=True, inline="always")
def doc_bucket_pick(u, n_dk, d, dtop, dlen, beta, c):
    """:func:`doc_row_bucket_pick` over document d's row of the (D, K) table ``n_dk`` (the HDP sweep's form)."""
    return doc_row_bucket_pick(u, n_dk[d], dtop, dlen, beta, c)


@njit(cache=True, nogil=True)
def _s_total(alpha, beta, c):
    s = 0.0
    for k in range(alpha.shape[0]):
        s += alpha[k] * beta * c[k]
    return s


@njit(cache=True, nogil=True)
def _sweep(rng, doc_ptr, words, z, n_dk, n_wk, n_k, alpha, beta, d_lo, d_hi, order, cell_ptr, n_blocks, block,
           wptr, wtop, wlen, c, qcoef, qbuf, dtop, in_doc, drow):
    """The sweep of :func:`sparse_sweep` (``order`` and ``cell_ptr`` None) and :func:`sparse_sweep_cell`.

    numba compiles one version per argument types and prunes the ``is None`` branches, so the
    serial sweep carries no cell lookups. ``row`` is document d's row of the counts: ``n_dk[d]``, or,
    when ``n_dk`` is None, the scratch ``drow`` (zero on entry and exit, the dtype of n_dk's rows)
    filled from z at the document's start.
    """
    K = n_k.shape[0]
    v_beta = beta * n_wk.shape[0]
    for k in range(K):
        c[k] = 1.0 / (n_k[k] + v_beta)
        qcoef[k] = alpha[k] * c[k]
    s = _s_total(alpha, beta, c)
    n_changed = 0
    for d in range(d_lo, d_hi):
        if (d - d_lo) % 256 == 0:
            s = _s_total(alpha, beta, c)
        if cell_ptr is None:
            lo = doc_ptr[d]
            hi = doc_ptr[d + 1]
        else:
            lo = cell_ptr[d * n_blocks + block]
            hi = cell_ptr[d * n_blocks + block + 1]
            if lo == hi:
                continue
        # the document's counts, topic list and q coefficients
        dlen = doc_topics(doc_ptr, z, d, in_doc, dtop)
        if n_dk is None:
            row = drow
            for i in range(doc_ptr[d], doc_ptr[d + 1]):
                row[z[i]] += 1
        else:
            row = n_dk[d]
        r = 0.0
        for j in range(dlen):
            k = dtop[j]
            qcoef[k] = (alpha[k] + row[k]) * c[k]
            r += row[k] * beta * c[k]
        for j0 in range(lo, hi):
            if order is None:
                i = j0
            else:
                i = order[j0]
            w = words[i]
            old = z[i]
            # remove the token
            s -= alpha[old] * beta * c[old]
            r -= row[old] * beta * c[old]
            n_k[old] -= 1
            c[old] = 1.0 / (n_k[old] + v_beta)
            s += alpha[old] * beta * c[old]
            row[old] -= 1
            r += row[old] * beta * c[old]
            if row[old] == 0:
                dlen = list_remove(dtop, 0, dlen, old)
                in_doc[old] = 0
            qcoef[old] = (alpha[old] + row[old]) * c[old]
            n_wk[w, old] -= 1
            if n_wk[w, old] == 0:
                wlen[w] = list_remove(wtop, wptr[w], wlen[w], old)
            # buckets
            q = 0.0
            base = wptr[w]
            for j in range(wlen[w]):
                k = wtop[base + j]
                q += qcoef[k] * n_wk[w, k]
                qbuf[j] = q
            u = rng.random() * (s + r + q)
            new = -1
            if u < q:
                new = word_bucket_pick(u, qbuf, wtop, base, wlen[w])
            elif u < q + r:
                new = doc_row_bucket_pick(u - q, row, dtop, dlen, beta, c)
            else:
                u -= q + r
                acc = 0.0
                new = K - 1
                for k in range(K):
                    acc += alpha[k] * beta * c[k]
                    if u < acc:
                        new = k
                        break
            # add the token back with its new topic
            z[i] = new
            s -= alpha[new] * beta * c[new]
            r -= row[new] * beta * c[new]
            n_k[new] += 1
            c[new] = 1.0 / (n_k[new] + v_beta)
            s += alpha[new] * beta * c[new]
            if row[new] == 0:
                dtop[dlen] = new
                dlen += 1
                in_doc[new] = 1
            row[new] += 1
            r += row[new] * beta * c[new]
            qcoef[new] = (alpha[new] + row[new]) * c[new]
            if n_wk[w, new] == 0:
                wtop[wptr[w] + wlen[w]] = new
                wlen[w] += 1
            n_wk[w, new] += 1
            if new != old:
                n_changed += 1
        # restore the document-free coefficients
        for j in range(dlen):
            k = dtop[j]
            qcoef[k] = alpha[k] * c[k]
            in_doc[k] = 0
            if n_dk is None:
                row[k] = 0
    return n_changed


@njit(cache=True, nogil=True)
def sparse_sweep(rng, doc_ptr, words, z, n_dk, n_wk, n_k, alpha, beta, d_lo, d_hi,
                 wptr, wtop, wlen, c, qcoef, qbuf, dtop, in_doc, drow):
    """One systematic-scan sweep over documents d_lo..d_hi-1; returns the number of changed z.

    Scratch (length K): ``c``, ``qcoef``, ``qbuf`` float64; ``dtop`` int32;
    ``in_doc`` uint8 (all zero on entry and exit); ``drow`` the document's counts when ``n_dk`` is
    None (zero on entry and exit; with an ``n_dk``, unused but of the dtype of n_dk).
    ``wptr`` (V+1), ``wtop``, ``wlen`` (V) must come from :func:`build_word_lists`
    on the same ``n_wk``. ``n_dk`` is the (D, K) table, updated in place, or None: each
    document's counts are then rebuilt from ``z`` (module docstring).
    """
    return _sweep(rng, doc_ptr, words, z, n_dk, n_wk, n_k, alpha, beta, d_lo, d_hi, None, None, 0, 0,
                  wptr, wtop, wlen, c, qcoef, qbuf, dtop, in_doc, drow)


@njit(cache=True, nogil=True)
def sparse_sweep_cell(rng, doc_ptr, words, z, n_dk, n_wk, n_k, alpha, beta, d_lo, d_hi, order, cell_ptr,
                      n_blocks, block, wptr, wtop, wlen, c, qcoef, qbuf, dtop, in_doc, drow):
    """:func:`sparse_sweep` over the tokens of documents d_lo..d_hi-1 whose words lie in word block ``block``.

    Document d's tokens of block b are ``order[cell_ptr[d * n_blocks + b] : cell_ptr[d * n_blocks + b + 1]]``
    (positions in the token stream, in stream order). Used by the word-partitioned parallel sampler
    (harmonium.inference.mcmc.lda.parallel_gibbs): only the rows of n_wk of the block's words are read
    or written, and only their word lists must be current. Same scratch as :func:`sparse_sweep`.
    """
    return _sweep(rng, doc_ptr, words, z, n_dk, n_wk, n_k, alpha, beta, d_lo, d_hi, order, cell_ptr, n_blocks, block,
                  wptr, wtop, wlen, c, qcoef, qbuf, dtop, in_doc, drow)
