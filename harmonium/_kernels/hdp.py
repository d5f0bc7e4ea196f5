"""Direct-assignment Gibbs sampler for the HDP (numba).

Teh, Jordan, Beal & Blei (2006), §5.3, as summarised in seed 002 §4 (eqs. 1-3):
the document CPTs pi_j and the topics phi_k are integrated out; the state is
the topic of every token z and the global weights tau = (tau_1..tau_K, tau_u),
tau_u being the mass of the infinitely many unused topics. One iteration:

* z | tau (seed 002 eq. 1 with F of eq. 2 the Dirichlet-multinomial predictive):
  p(z_i = k) ∝ (n_dk^-i + alpha tau_k) (n_wk^-i + beta) / (n_k^-i + V beta) for
  the K used topics and p(z_i = new) ∝ alpha tau_u / V. A new topic takes
  tau_new = b tau_u, tau_u <- (1 - b) tau_u with b ~ Beta(1, gamma); a topic
  left empty gives its weight back to tau_u (the state keeps used topics only);
* table counts m_dk ~ A[n_dk, alpha tau_k] (Antoniak; seed 002 §4, the "v_kl" Bernoullis);
* tau ~ D[m_.1, ..., m_.K, gamma] (seed 002 §4 and eq. 3 with one level).

Counts are word-major (``n_wk[w, k]``) as in :mod:`harmonium._kernels.lda_gibbs`.
Arrays have a capacity (columns) beyond the K used topics; ``tau`` has one more
entry than the capacity, ``tau[K]`` being tau_u. Every kernel here mutates its
arrays in place.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from harmonium._kernels import lda_stats
from harmonium._kernels.categorical import draw_unnormalised
from harmonium._kernels.lda_sparse import doc_bucket_pick, doc_topics, list_remove, word_bucket_pick
from harmonium._kernels.lda_stats import (
    count_token,
    word_log_likelihood,  # noqa: F401 - the HDP word term, khdp.word_log_likelihood
)


@njit(cache=True, nogil=True)
def antoniak(rng, n, a):
    """S ~ A[n, a]: occupied tables after n customers of a CRP with concentration a (seed 002 §4).

    sum_{t=1..n} Bernoulli(a / (a + t - 1)); the first customer always opens a
    table (so S >= 1 whenever n >= 1, even if a underflowed to 0).
    """
    if n <= 0:
        return 0
    s = 1
    for t in range(1, n):
        if rng.random() * (a + t) < a:
            s += 1
    return s


@njit(cache=True, nogil=True)
def sample_tables(rng, n_dk, K, alpha, tau, m_k):
    """m_k[k] = sum_d m_dk with m_dk ~ A[n_dk, alpha tau_k], k < K (fills ``m_k[:K]``); returns sum_k m_k."""
    D = n_dk.shape[0]
    for k in range(K):
        m_k[k] = 0
    total = 0
    for d in range(D):
        for k in range(K):
            c = n_dk[d, k]
            if c > 0:
                m = antoniak(rng, c, alpha * tau[k])
                m_k[k] += m
                total += m
    return total


@njit(cache=True, nogil=True)
def sample_tau(rng, m_k, K, gamma, tau):
    """tau[:K+1] ~ Dirichlet(m_1, ..., m_K, gamma), from gamma variates (tau[K] = tau_u).

    Every used topic has m_k >= 1, so the normaliser is positive; a gamma
    draw of tau_u that underflows to 0 only means no new topic this sweep.
    """
    total = 0.0
    for k in range(K):
        g = rng.gamma(float(m_k[k]), 1.0)
        tau[k] = g
        total += g
    g = rng.gamma(gamma, 1.0)
    tau[K] = g
    total += g
    for k in range(K + 1):
        tau[k] /= total


@njit(cache=True, nogil=True)
def da_conditional(p, d, w, n_dk, n_wk, n_k, K, tau, alpha, beta, v_beta):
    """Fill p[:K+1] with the unnormalised conditional of token (d, w) whose own count is removed.

    p[k] = (n_dk + alpha tau_k)(n_wk + beta)/(n_k + V beta), k < K (seed 002 eq. 1-2);
    p[K] = alpha tau_u / V, a new topic (the prior predictive beta / (V beta) of an empty one).
    """
    for k in range(K):
        p[k] = (n_dk[d, k] + alpha * tau[k]) * (n_wk[w, k] + beta) / (n_k[k] + v_beta)
    p[K] = alpha * tau[K] * beta / v_beta


@njit(cache=True, nogil=True, inline="always")
def remove_token(d, w, k, n_dk, n_wk, n_k, tau, K):
    """Take a token of word w in document d out of topic k; if that empties k, its stick joins tau_u = tau[K]."""
    count_token(d, w, k, n_dk, n_wk, n_k, -1)
    if n_k[k] == 0:
        tau[K] += tau[k]
        tau[k] = 0.0


@njit(cache=True, nogil=True)
def _doc_of(doc_ptr, i):
    """The document d with doc_ptr[d] <= i < doc_ptr[d + 1] (binary search)."""
    lo = 0
    hi = doc_ptr.shape[0] - 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if doc_ptr[mid] <= i:
            lo = mid
        else:
            hi = mid
    return lo


@njit(cache=True, nogil=True)
def da_sweep(rng, doc_ptr, words, z, n_dk, n_wk, n_k, tau, K, alpha, beta, gamma, p, i_start):
    """Resample z_i for tokens i_start..N-1 in order; returns (K, n_changed, n_new, i_next).

    Mutates ``z``, the counts and ``tau`` in place. Stops early, with
    ``i_next < N``, before a token when all ``n_k.shape[0]`` columns are in use
    (the caller grows the arrays and calls again from ``i_next``; the chain does
    not depend on the capacity); otherwise ``i_next == N``. Emptied topics stay as dead columns (n_k = 0, tau = 0,
    weight 0) until :func:`compact`. ``p`` is scratch of length >= capacity + 1.
    """
    cap = n_k.shape[0]
    V = n_wk.shape[0]
    v_beta = V * beta
    N = words.shape[0]
    n_changed = 0
    n_new = 0
    d = _doc_of(doc_ptr, i_start)
    for i in range(i_start, N):
        while i >= doc_ptr[d + 1]:
            d += 1
        if K >= cap:
            return K, n_changed, n_new, i
        w = words[i]
        old = z[i]
        remove_token(d, w, old, n_dk, n_wk, n_k, tau, K)
        da_conditional(p, d, w, n_dk, n_wk, n_k, K, tau, alpha, beta, v_beta)
        new = draw_unnormalised(rng, p, K + 1)
        if new == K:
            b = rng.beta(1.0, gamma)
            tau[K + 1] = (1.0 - b) * tau[K]
            tau[K] = b * tau[K]
            K += 1
            n_new += 1
        z[i] = new
        count_token(d, w, new, n_dk, n_wk, n_k, 1)
        if new != old:
            n_changed += 1
    return K, n_changed, n_new, N


@njit(cache=True, nogil=True)
def _move_columns(n, remap, K, new_k):
    """Column k < K of the count table ``n`` moves to column remap[k] (>= 0, <= k); columns new_k..K-1 become 0."""
    for r in range(n.shape[0]):
        for k in range(K):
            j = remap[k]
            if j >= 0 and j != k:
                n[r, j] = n[r, k]
        for k in range(new_k, K):
            n[r, k] = 0


@njit(cache=True, nogil=True)
def compact(z, n_dk, n_wk, n_k, tau, K, remap):
    """Drop the empty topics among the first K columns, keeping the order of the others; returns the new K.

    Mutates ``z``, the counts and ``tau`` (tau_u moves to the new tau[K]).
    ``remap`` is int scratch of length >= K.
    """
    new_k = 0
    for k in range(K):
        if n_k[k] > 0:
            remap[k] = new_k
            new_k += 1
        else:
            remap[k] = -1
    if new_k == K:
        return K
    for k in range(K):
        j = remap[k]
        if j >= 0 and j != k:
            n_k[j] = n_k[k]
            tau[j] = tau[k]
    tau_u = tau[K]
    for k in range(new_k, K + 1):
        tau[k] = 0.0
    tau[new_k] = tau_u
    for k in range(new_k, K):
        n_k[k] = 0
    _move_columns(n_dk, remap, K, new_k)
    _move_columns(n_wk, remap, K, new_k)
    for i in range(z.shape[0]):
        z[i] = remap[z[i]]
    return new_k


@njit(cache=True, nogil=True)
def assignment_log_prior(doc_ptr, n_dk, K, alpha, tau):
    """log p(z | tau, alpha), pi_j integrated out:

    sum_d [lG(a) - lG(a + N_d) + sum_k lG(n_dk + a tau_k) - lG(a tau_k)].
    """
    total = 0.0
    lg_a = math.lgamma(alpha)
    for d in range(n_dk.shape[0]):
        total += lg_a - math.lgamma(alpha + (doc_ptr[d + 1] - doc_ptr[d]))
        for k in range(K):
            c = n_dk[d, k]
            if c > 0:
                at = alpha * tau[k]
                total += math.lgamma(c + at) - math.lgamma(at)
    return total


@njit(cache=True, nogil=True)
def count_assignments(doc_ptr, words, z, n_dk, n_wk, n_k):
    """Zero the count tables and fill them from ``z`` (:func:`lda_stats.count_assignments`)."""
    n_dk[:] = 0
    n_wk[:] = 0
    n_k[:] = 0
    lda_stats.count_assignments(doc_ptr, words, z, n_dk, n_wk, n_k)


# -- sparse buckets -------------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def build_word_lists(n_wk, K, wptr, wtop, wlen):
    """Per-word lists of the topics k < K with n_wk > 0; word w owns ``wtop[wptr[w]:wptr[w]+wlen[w]]``.

    ``wptr`` comes from the word frequencies (a word has at most as many topics as tokens), so
    the lists never overflow when topics are created.
    """
    V = n_wk.shape[0]
    for w in range(V):
        base = wptr[w]
        m = 0
        if wptr[w + 1] > base:
            for k in range(K):
                if n_wk[w, k] > 0:
                    wtop[base + m] = k
                    m += 1
        wlen[w] = m


@njit(cache=True, nogil=True)
def _s_total(tau, K, alpha, beta, c):
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    s3 = 0.0
    k = 0
    while k + 3 < K:
        s0 += tau[k] * c[k]
        s1 += tau[k + 1] * c[k + 1]
        s2 += tau[k + 2] * c[k + 2]
        s3 += tau[k + 3] * c[k + 3]
        k += 4
    while k < K:
        s0 += tau[k] * c[k]
        k += 1
    return alpha * beta * ((s0 + s1) + (s2 + s3))


@njit(cache=True, nogil=True)
def da_sparse_sweep(rng, doc_ptr, words, z, n_dk, n_wk, n_k, tau, K, alpha, beta, gamma, i_start,
                    wptr, wtop, wlen, c, qcoef, qbuf, dtop, in_doc, carry_f, carry_i):
    """:func:`da_sweep` with the conditional split into SparseLDA buckets (Yao, Mimno & McCallum 2009).

    With c_k = 1 / (n_k + V beta), the weights of seed 002 eq. 1-2 add up term by term to

        q = sum_{k: n_wk > 0} (n_dk + alpha tau_k) n_wk c_k   (the word's topics)
        r = sum_{k: n_dk > 0} n_dk beta c_k                    (the document's topics)
        s = sum_k alpha tau_k beta c_k                         (all used topics, rarely entered)
        new = alpha tau_u / V                                  (a new topic)

    so a draw is exact and costs O(k_w + k_d) instead of O(K). Same return
    value and early stop as :func:`da_sweep`. Scratch: ``c``, ``qcoef``,
    ``qbuf`` (float64) and ``dtop`` (int), ``in_doc`` (uint8, all zero on
    entry), length >= capacity + 1; the word lists from :func:`build_word_lists`
    on the current counts. ``carry_f`` (float64[2]) and ``carry_i`` (int64[2])
    carry (s, r) and (length of dtop, resume flag) across an early stop: called
    again with the flag set (and ``dtop`` kept), the sweep resumes bit-identically.
    """
    cap = n_k.shape[0]
    V = n_wk.shape[0]
    v_beta = V * beta
    inv_v = 1.0 / V
    N = words.shape[0]
    n_changed = 0
    n_new = 0
    d0 = _doc_of(doc_ptr, i_start)
    resume = carry_i[1] == 1
    carry_i[1] = 0
    s = 0.0
    r = 0.0
    dlen = 0
    if resume:
        s = carry_f[0]
        r = carry_f[1]
        dlen = carry_i[0]
        for j in range(dlen):
            in_doc[dtop[j]] = 1
    for k in range(K):
        c[k] = 1.0 / (n_k[k] + v_beta)
        at = alpha * tau[k]
        if resume and in_doc[k] == 1:
            qcoef[k] = (at + n_dk[d0, k]) * c[k]
        else:
            qcoef[k] = at * c[k]
    for d in range(d0, doc_ptr.shape[0] - 1):
        if not (resume and d == d0):
            # s from scratch at every document: no rounding drift
            s = _s_total(tau, K, alpha, beta, c)
            dlen = doc_topics(doc_ptr, z, d, in_doc, dtop)
            r = 0.0
            for j in range(dlen):
                k = dtop[j]
                qcoef[k] = (alpha * tau[k] + n_dk[d, k]) * c[k]
                r += n_dk[d, k] * beta * c[k]
        for i in range(max(i_start, doc_ptr[d]), doc_ptr[d + 1]):
            if K >= cap:
                carry_f[0] = s
                carry_f[1] = r
                carry_i[0] = dlen
                carry_i[1] = 1
                return K, n_changed, n_new, i
            w = words[i]
            old = z[i]
            # remove the token
            at = alpha * tau[old]
            s -= at * beta * c[old]
            r -= n_dk[d, old] * beta * c[old]
            n_k[old] -= 1
            c[old] = 1.0 / (n_k[old] + v_beta)
            n_dk[d, old] -= 1
            if n_k[old] == 0:
                tau[K] += tau[old]
                tau[old] = 0.0
                at = 0.0
            s += at * beta * c[old]
            r += n_dk[d, old] * beta * c[old]
            if n_dk[d, old] == 0:
                dlen = list_remove(dtop, 0, dlen, old)
                in_doc[old] = 0
            qcoef[old] = (at + n_dk[d, old]) * c[old]
            n_wk[w, old] -= 1
            if n_wk[w, old] == 0:
                wlen[w] = list_remove(wtop, wptr[w], wlen[w], old)
            # buckets
            q = 0.0
            base = wptr[w]
            row = n_wk[w]
            for j in range(wlen[w]):
                k = wtop[base + j]
                q += qcoef[k] * row[k]
                qbuf[j] = q
            new_mass = alpha * tau[K] * inv_v
            u = rng.random() * (q + r + s + new_mass)
            new = -1
            if u < q:
                new = word_bucket_pick(u, qbuf, wtop, base, wlen[w])
            elif u < q + r:
                new = doc_bucket_pick(u - q, n_dk, d, dtop, dlen, beta, c)
            elif u < q + r + s:
                u -= q + r
                acc = 0.0
                last = -1
                for k in range(K):
                    t = alpha * tau[k] * beta * c[k]
                    if t > 0.0:
                        last = k
                        acc += t
                        if u < acc:
                            new = k
                            break
                if new < 0:
                    new = last
            if new < 0:  # a new topic (or rounding left nothing in the s bucket)
                b = rng.beta(1.0, gamma)
                tau[K + 1] = (1.0 - b) * tau[K]
                tau[K] = b * tau[K]
                new = K
                c[new] = 1.0 / v_beta
                qcoef[new] = alpha * tau[new] * c[new]
                s += alpha * tau[new] * beta * c[new]
                K += 1
                n_new += 1
            # add the token back with its new topic
            z[i] = new
            at = alpha * tau[new]
            s -= at * beta * c[new]
            r -= n_dk[d, new] * beta * c[new]
            n_k[new] += 1
            c[new] = 1.0 / (n_k[new] + v_beta)
            s += at * beta * c[new]
            if n_dk[d, new] == 0:
                dtop[dlen] = new
                dlen += 1
                in_doc[new] = 1
            n_dk[d, new] += 1
            r += n_dk[d, new] * beta * c[new]
            qcoef[new] = (at + n_dk[d, new]) * c[new]
            if n_wk[w, new] == 0:
                wtop[wptr[w] + wlen[w]] = new
                wlen[w] += 1
            n_wk[w, new] += 1
            if new != old:
                n_changed += 1
        for j in range(dlen):
            k = dtop[j]
            qcoef[k] = alpha * tau[k] * c[k]
            in_doc[k] = 0
    return K, n_changed, n_new, N


@njit(cache=True, nogil=True)
def da_sweep_sparse(rng, doc_ptr, words, z, n_dk, n_wk, n_k, tau, K, alpha, beta, gamma, p, i_start):
    """:func:`da_sparse_sweep` with the signature of :func:`da_sweep` (``p`` unused): builds its own lists.

    The word lists and scratch cost O(N + V K + capacity) per call, small next to the sweep. After
    an early stop a second call restarts the document's buckets (exact, but not the same bits as
    one call; the estimators use :func:`da_sparse_sweep`, which carries them).
    """
    V = n_wk.shape[0]
    cap = n_k.shape[0]
    wptr = np.zeros(V + 1, dtype=np.int64)
    for i in range(words.shape[0]):
        wptr[words[i] + 1] += 1
    for w in range(V):
        wptr[w + 1] += wptr[w]
    wtop = np.empty(max(words.shape[0], 1), dtype=np.int32)
    wlen = np.zeros(V, dtype=np.int64)
    build_word_lists(n_wk, K, wptr, wtop, wlen)
    c = np.zeros(cap + 1)
    qcoef = np.zeros(cap + 1)
    qbuf = np.zeros(cap + 1)
    dtop = np.zeros(cap + 1, dtype=np.int32)
    in_doc = np.zeros(cap + 1, dtype=np.uint8)
    return da_sparse_sweep(rng, doc_ptr, words, z, n_dk, n_wk, n_k, tau, K, alpha, beta, gamma, i_start,
                           wptr, wtop, wlen, c, qcoef, qbuf, dtop, in_doc, np.zeros(2), np.zeros(2, dtype=np.int64))
