"""Word-by-word F+LDA sweeps for collapsed Gibbs LDA (Yu, Hsieh, Yun, Vishwanathan & Dhillon 2015, §4).

"A Scalable Asynchronous Distributed Algorithm for Topic Modeling" (WWW 2015). The collapsed conditional
(seed 003; ``lda_gibbs.collapsed_conditional``), with the token's counts removed and
c_k = 1 / (n_k + V beta),

    p(z_i = k | z_-i, w) ∝ (alpha_k + n_dk)(n_wk + beta) c_k
                         = n_dk (n_wk + beta) c_k        (the document's topics: O(k_d))
                         + alpha_k (n_wk + beta) c_k     (all K topics, the same for every token of w)

is drawn with the tokens visited word by word (all the tokens of word w, then of w + 1, ...). The second
term does not depend on the document, so while the sweep stays on word w it is kept in an
F+ tree (a binary tree of partial sums over the K leaves, stored as an array: node i holds
f[2i] + f[2i + 1], the root f[1] the total): built once per word in O(K), updated in O(log K) when a
token moves (only the leaves of its old and new topic change, with their n_wk and c_k), and drawn from by
one descent of log K steps. The first term is walked over the document's topic list. A draw costs
O(k_d + log K) instead of SparseLDA's O(k_w + k_d): cheaper while the words' topic lists are long, as
in the first sweeps from a random start at large K (every frequent word then holds up to K topics).

Removing the token changes the leaf of its old topic; the tree is not updated for that: the descent adds
the change ``delta`` to the partial sums on the leaf's path instead, so a token that draws its old topic
again (most tokens once the chain settles) leaves the tree as it was. Only a move writes the two leaves.

Document counts are kept in per-document lists of packed (count, topic) entries, ``n_dk << bits | k``
(``bits = lda_sparse.topic_bits(K)``; int32 where the longest document's count fits, else int64), built
from z at the start of each sweep; the dense n_dk is updated
too when the state has one. The sweep reads and writes z in word-major order (``z_w``: gathered before,
scattered after by the caller). The uniforms are lda_sparse's inlined xoshiro256+ stream, one numpy
Generator draw a sweep. Tested against a plain-numpy twin on the same uniforms
(tests/kernels/test_lda_fplus_parity.py) and for exactness on an enumerable posterior
(tests/statistical/test_lda_fplus_exact.py).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from harmonium._kernels.lda_sparse import _u, packed_list_move, prefetch, topic_bits, xoshiro_next, xoshiro_seed

#: How many word-major positions ahead the sweep prefetches the document entries (``dptr``, ``dlen``) of the token
#: there, and half as far ahead its document's list. Positions run on across words. Against the list alone two
#: ahead, within the word: 1.24x [1.16-1.30] faster sweeps at PyPI K = 1000 and 1.31x at K = 100 (713,025
#: documents, whose entries miss the L2 cache), 1.00x [0.90-1.06] at Debian K = 1000 (57,095); the same z
#: (benchmarks/lda/README.md, "F+LDA: the document entries prefetched").
PREFETCH_DOC = 16


@njit(cache=True, nogil=True)
def tree_size(K):
    """(T, log2 T): the number of leaves of the F+ tree over K topics (the least power of two >= max(K, 2))."""
    T = 2
    log_t = 1
    while T < K:
        T *= 2
        log_t += 1
    return T, log_t


@njit(cache=True, nogil=True)
def build_doc_lists(doc_ptr, z, K, dptr, dlist, dlen, row):
    """Each document's packed (count, topic) list ``dlist[dptr[d] : dptr[d] + dlen[d]]`` from z, topics in the
    order of their first token; ``row`` is a zero int scratch of length K (zero again on exit)."""
    bits = topic_bits(K)
    for d in range(doc_ptr.shape[0] - 1):
        base = dptr[d]
        m = 0
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            k = z[i]
            if row[k] == 0:
                dlist[base + m] = k
                m += 1
            row[k] += 1
        for j in range(m):
            k = dlist[base + j]
            dlist[base + j] = (np.int64(row[k]) << bits) | k  # int64 arithmetic; the list may be int32
            row[k] = 0
        dlen[d] = m


@njit(cache=True, nogil=True, inline="always")
def build_tree(f, T, K, wrow, alpha, beta, c):
    """The F+ tree of one word in O(T): leaves alpha_k (n_wk + beta) c_k for the K topics (``wrow``: its row of
    n_wk; the leaves K..T-1 stay as they are, zero), then every partial sum from the leaves up."""
    for k in range(K):
        f[_u(T + k)] = alpha[_u(k)] * (wrow[_u(k)] + beta) * c[_u(k)]
    for i in range(T - 1, 0, -1):
        f[_u(i)] = f[_u(2 * i)] + f[_u(2 * i + 1)]


@njit(cache=True, nogil=True, inline="always")
def tree_set(f, T, k, v):
    """Set leaf k of the F+ tree ``f`` to v and recompute the sums on its path to the root (O(log T))."""
    i = T + k
    f[_u(i)] = v
    i >>= 1
    while i >= 1:
        f[_u(i)] = f[_u(2 * i)] + f[_u(2 * i + 1)]
        i >>= 1


@njit(cache=True, nogil=True)
def tree_pick(f, T, log_t, u, leaf, delta):
    """The leaf at which the running sum of the F+ tree's leaves (in topic order) first exceeds u, with
    ``delta`` added to leaf ``leaf`` (and so to every partial sum on its path) without writing it."""
    node = T + leaf
    i = 1
    sh = log_t - 1
    while i < T:
        left = f[_u(2 * i)]
        if (node >> sh) == 2 * i:
            left += delta
        if u < left:
            i = 2 * i
        else:
            u -= left
            i = 2 * i + 1
        sh -= 1
    return i - T


@njit(cache=True, nogil=True)
def fplus_sweep(rng, wptr, wdoc, z_w, n_dk, n_wk, n_k, alpha, beta, dptr, dlist, dlen, c, buf, f, pick, wids):
    """One word-by-word sweep over all tokens (word-major positions p, word w at ``wptr[w]:wptr[w + 1]``,
    document ``wdoc[p]``, topic ``z_w[p]``); returns the number of changed z.

    ``wids``: None to visit the words 0..V-1, or the words to visit, in order (the word-partitioned sweep's
    block: only those words' tokens are drawn, and only their rows of n_wk are read or written).

    ``n_dk``: the (D, K) table, kept in step, or None. ``dptr``, ``dlist``, ``dlen`` from
    :func:`build_doc_lists` on the same z; kept in step. Scratch: ``c``, ``buf`` float64 (K), ``f`` float64
    (2 T, :func:`tree_size`). ``pick``: None for :func:`tree_pick`, or a compiled function of its signature (tests
    pass a broken one). A function passed here is typed by its identity, so numba's cache never matches it in a
    new process and the kernel compiles again (1-2 s); with None the cached kernel loads. The leaves of topics
    K..T-1 are zero.
    """
    K = n_k.shape[0]
    V = n_wk.shape[0]
    vb = beta * V
    T = f.shape[0] // 2
    log_t = 0
    while (1 << log_t) < T:
        log_t += 1
    for k in range(K):
        c[k] = 1.0 / (n_k[k] + vb)
    bits = topic_bits(K)
    one = np.int64(1) << bits  # entries are int32 or int64 (whichever the caller found wide enough)
    mask = one - 1
    x0, x1, x2, x3 = xoshiro_seed(rng)
    n_changed = 0
    for k in range(K, T):
        f[T + k] = 0.0
    n_visit = V if wids is None else wids.shape[0]
    n_pos = wdoc.shape[0]
    for jw in range(n_visit):
        w = jw if wids is None else wids[jw]
        lo = wptr[w]
        hi = wptr[w + 1]
        if lo == hi:
            continue
        wrow = n_wk[w]
        build_tree(f, T, K, wrow, alpha, beta, c)
        for p in range(lo, hi):
            # the document of the token PREFETCH_DOC ahead, its list half as far ahead (word-major order
            # reaches the documents at random: three cache misses a token without it)
            if p + PREFETCH_DOC < n_pos:
                ahead = wdoc[_u(p + PREFETCH_DOC)]
                prefetch(dptr, ahead)
                prefetch(dlen, ahead)
            if p + PREFETCH_DOC // 2 < n_pos:
                prefetch(dlist, dptr[_u(wdoc[_u(p + PREFETCH_DOC // 2)])])
            d = wdoc[_u(p)]
            old = z_w[_u(p)]
            # remove the token: its word's and topic's counts (the tree's leaf of old is corrected by delta)
            wrow[_u(old)] -= 1
            n_k[_u(old)] -= 1
            c_was = c[_u(old)]
            c[_u(old)] = 1.0 / (n_k[_u(old)] + vb)
            leaf_old = alpha[_u(old)] * (wrow[_u(old)] + beta) * c[_u(old)]
            delta = leaf_old - f[_u(T + old)]
            # the document term, over the document's list (old's entry counted one lower)
            base = dptr[_u(d)]
            m = dlen[_u(d)]
            acc = 0.0
            at_old = 0
            for j in range(m):
                v = dlist[_u(base + j)]
                k = v & mask
                n = v >> bits
                if k == old:
                    n -= 1
                    at_old = j
                acc += n * (wrow[_u(k)] + beta) * c[_u(k)]
                buf[_u(j)] = acc
            u, x0, x1, x2, x3 = xoshiro_next(x0, x1, x2, x3)
            u *= acc + (f[1] + delta)
            at = -1  # the new topic's position in the document's list, when known
            if u < acc:
                at = m - 1
                for j in range(m):
                    if u < buf[_u(j)]:
                        at = j
                        break
                new = dlist[_u(base + at)] & mask
            else:
                if pick is None:  # pruned at compile time: the kernel compiled for None calls tree_pick directly
                    new = tree_pick(f, T, log_t, u - acc, old, delta)
                else:
                    new = pick(f, T, log_t, u - acc, old, delta)
                if new >= K:  # rounding past the last topic's leaf
                    new = K - 1
            if new == old:  # the state before the removal, as it was
                wrow[_u(old)] += 1
                n_k[_u(old)] += 1
                c[_u(old)] = c_was
                continue
            z_w[_u(p)] = new
            n_changed += 1
            tree_set(f, T, old, leaf_old)
            if n_dk is not None:
                n_dk[d, old] -= 1
                n_dk[d, new] += 1
            # the document's list: old one lower (out at zero, swapped with the last), new one higher
            dlist[_u(base + at_old)] -= one
            dlen[_u(d)] = packed_list_move(dlist, base, m, at_old, at, new, one, mask)
            wrow[_u(new)] += 1
            n_k[_u(new)] += 1
            c[_u(new)] = 1.0 / (n_k[_u(new)] + vb)
            tree_set(f, T, new, alpha[_u(new)] * (wrow[_u(new)] + beta) * c[_u(new)])
    return n_changed


@njit(cache=True, nogil=True)
def scatter(perm, z_w, z):
    """z[perm[p]] = z_w[p]: the word-major topics back in token order."""
    for p in range(perm.shape[0]):
        z[perm[p]] = z_w[p]


@njit(cache=True, nogil=True)
def sampled_list_lengths(doc_ptr, words, z, n_wk, stride, row):
    """(mean k_w, mean k_d) over the tokens of documents 0, stride, 2 stride, ...: the non-zero topics of each
    token's row of n_wk and of its document, what a SparseLDA and an F+LDA draw walk. O(sampled tokens x K);
    ``row`` is a zero int scratch of length K (zero again on exit)."""
    K = n_wk.shape[1]
    sw = 0.0
    sd = 0.0
    n = 0
    for d in range(0, doc_ptr.shape[0] - 1, stride):
        lo = doc_ptr[d]
        hi = doc_ptr[d + 1]
        kd = 0
        for i in range(lo, hi):
            k = z[i]
            if row[k] == 0:
                kd += 1
            row[k] += 1
            w = words[i]
            m = 0
            for k2 in range(K):
                if n_wk[w, k2] > 0:
                    m += 1
            sw += m
        for i in range(lo, hi):
            row[z[i]] = 0
        sd += kd * (hi - lo)
        n += hi - lo
    if n == 0:
        return 0.0, 0.0
    return sw / n, sd / n
