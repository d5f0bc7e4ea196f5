"""Split-merge Metropolis-Hastings moves for the HDP direct-assignment sampler (numba).

Jain & Neal (2004) restricted Gibbs split-merge, with the table counts summed out, on the state of
``harmonium._kernels.hdp`` (``z``, ``n_dk``, ``n_wk``, ``n_k``, ``tau`` with tau_u last; seed 002 §4).
Three units of a restricted scan, one kernel each: single tokens (``split_merge``, optionally with
Dahl's sequentially allocated launch), a document's block of the two topics' tokens
(``split_merge_blocks``), and a mixture of the two whose proposal probability sums both paths
(``split_merge_mixed``). A proposal touches only the tokens of its one or two topics, gathered from the
topic index (``build_topic_index``). ``harmonium.inference.mcmc.isbn.hdp.split_merge`` drives them;
``tests/statistical/test_hdp_exact.py`` checks each against the enumerated posterior, with broken twins
selected by the kernels' ``broken`` argument.

References
----------
S. Jain and R. Neal. A split-merge Markov chain Monte Carlo procedure for the Dirichlet process mixture
model. JCGS 13(1), 2004.
D. B. Dahl. Sequentially-allocated merge-split sampler for conjugate and nonconjugate Dirichlet process
mixture models. Tech. report, Texas A&M, 2005.
Y. W. Teh, M. I. Jordan, M. J. Beal, D. M. Blei. Hierarchical Dirichlet processes. JASA 2006, §5.3.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def build_topic_index(z, K, order, kstart):
    """Group the tokens by topic: topic k's tokens are ``order[kstart[k]:kstart[k + 1]]``, in increasing order.

    A stable counting sort, O(N + K); ``order`` has length >= N and ``kstart`` >= K + 1.
    :func:`split_merge` gathers a proposal's tokens from it and rebuilds it after an accepted move.
    """
    for k in range(K + 1):
        kstart[k] = 0
    N = z.shape[0]
    for t in range(N):
        kstart[z[t] + 1] += 1
    for k in range(K):
        kstart[k + 1] += kstart[k]
    for t in range(N):  # kstart[k] is topic k's cursor in this pass and ends at topic k + 1's start
        k = z[t]
        order[kstart[k]] = t
        kstart[k] += 1
    for k in range(K, 0, -1):
        kstart[k] = kstart[k - 1]
    kstart[0] = 0


@njit(cache=True, nogil=True, inline="always")
def _sm_place_token(rng, s, d, w, draw, x, side, ndx, nwx, nx, alpha_rho, beta, v_beta):
    """Put token s (document d, word w; out of the counts) on side x, or, with ``draw``, on a side drawn with
    probability proportional to (n_dx + alpha rho)(n_wx + beta)/(n_x + V beta); sets ``side[s]``, adds it to the
    counts and returns the log probability of that side."""
    p0 = (ndx[d, 0] + alpha_rho) * (nwx[w, 0] + beta) / (nx[0] + v_beta)
    p1 = (ndx[d, 1] + alpha_rho) * (nwx[w, 1] + beta) / (nx[1] + v_beta)
    if draw:
        x = 0 if rng.random() * (p0 + p1) < p0 else 1
    side[s] = x
    ndx[d, x] += 1
    nwx[w, x] += 1
    nx[x] += 1
    return math.log((p0 if x == 0 else p1) / (p0 + p1))


@njit(cache=True, nogil=True)
def _sm_allocate(rng, S, n_s, doc_of, words, side, ndx, nwx, nx, alpha_rho, beta, v_beta):
    """Sequential allocation (Dahl 2003): the tokens ``S[:n_s]``, in order, each to side x with probability
    proportional to (n_dx + alpha rho)(n_wx + beta)/(n_x + V beta), the counts holding the tokens placed so far."""
    for s in range(n_s):
        _sm_place_token(rng, s, doc_of[S[s]], words[S[s]], True, 0, side, ndx, nwx, nx, alpha_rho, beta, v_beta)


@njit(cache=True, nogil=True)
def _sm_scan(rng, S, n_s, doc_of, words, side, target, ndx, nwx, nx, alpha_rho, beta, v_beta, forced):
    """One restricted Gibbs scan over the tokens ``S[:n_s]`` between sides 0 and 1; returns its log probability.

    Token t (document d, word w) goes to side x with probability proportional to
    (n_dx + alpha rho)(n_wx + beta)/(n_x + V beta), counts without t. ``forced``:
    instead of drawing, put each token on ``target[s]`` and score that (the
    probability that a scan from the current sides ends in ``target``).
    """
    logq = 0.0
    for s in range(n_s):
        t = S[s]
        d = doc_of[t]
        w = words[t]
        x = side[s]
        ndx[d, x] -= 1
        nwx[w, x] -= 1
        nx[x] -= 1
        p0 = (ndx[d, 0] + alpha_rho) * (nwx[w, 0] + beta) / (nx[0] + v_beta)
        p1 = (ndx[d, 1] + alpha_rho) * (nwx[w, 1] + beta) / (nx[1] + v_beta)
        x = target[s] if forced else (0 if rng.random() * (p0 + p1) < p0 else 1)
        side[s] = x
        logq += math.log((p0 if x == 0 else p1) / (p0 + p1))
        ndx[d, x] += 1
        nwx[w, x] += 1
        nx[x] += 1
    return logq


@njit(cache=True, nogil=True)
def _topic_log_terms(docs, n_docs_touched, wlist, n_words_touched, ndx, nwx, nx, x, alpha_tau, beta, v_beta):
    """The factors of one topic in the target of :func:`split_merge`, over the touched documents and words.

    sum_d [lG(n_dx + alpha tau) - lG(alpha tau)] + lG(V beta) - lG(n_x + V beta) + sum_w [lG(n_wx + beta) - lG(beta)]
    for side x = 0 or 1, or x = 2: both sides together (the merged topic).
    """
    n = nx[0] + nx[1] if x == 2 else nx[x]
    return (_rows_log_terms(docs, n_docs_touched, ndx, x, alpha_tau) + math.lgamma(v_beta) - math.lgamma(n + v_beta)
            + _rows_log_terms(wlist, n_words_touched, nwx, x, beta))


@njit(cache=True, nogil=True)
def _rows_log_terms(rows, n_rows, counts, x, a):
    """sum_j [lG(c_j + a) - lG(a)] over rows[:n_rows] of the two-column ``counts``; c_j is column x, or for x = 2
    both columns together (terms with c_j = 0 vanish)."""
    total = 0.0
    lg_a = math.lgamma(a)
    for j in range(n_rows):
        r = rows[j]
        c = counts[r, 0] + counts[r, 1] if x == 2 else counts[r, x]
        if c > 0:
            total += math.lgamma(c + a) - lg_a
    return total


@njit(cache=True, nogil=True)
def _log_beta_pdf(u, a, b):
    return (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
            + (a - 1.0) * math.log(u) + (b - 1.0) * math.log(1.0 - u))


@njit(cache=True, nogil=True, inline="always")
def _sm_pick_pair(rng, N, S):
    """Draw two distinct tokens i, j uniformly at random into ``S[0]``, ``S[1]``."""
    i = int(rng.random() * N)
    j = int(rng.random() * (N - 1))
    if j >= i:
        j += 1
    S[0] = i
    S[1] = j


@njit(cache=True, nogil=True, inline="always")
def _sm_gather(order, kstart, ki, kj, split, i, j, S, n_s):
    """Append to ``S[n_s:]`` the tokens of topic ki (and kj unless ``split``) but i and j, in increasing order
    (one segment of the topic index, or two merged); returns the new length."""
    a = kstart[ki]
    a_end = kstart[ki + 1]
    b = kstart[kj] if not split else 0
    b_end = kstart[kj + 1] if not split else 0
    while a < a_end or b < b_end:
        if b >= b_end or (a < a_end and order[a] < order[b]):
            t = order[a]
            a += 1
        else:
            t = order[b]
            b += 1
        if t != i and t != j:
            S[n_s] = t
            n_s += 1
    return n_s


@njit(cache=True, nogil=True, inline="always")
def _sm_pair_topics(rng, N, z, order, kstart, S):
    """i and j (:func:`_sm_pick_pair`) in ``S[0]``, ``S[1]``, then the other tokens of their topic(s) in increasing
    order (:func:`_sm_gather`); returns the length of S."""
    _sm_pick_pair(rng, N, S)
    i = S[0]
    j = S[1]
    return _sm_gather(order, kstart, z[i], z[j], z[i] == z[j], i, j, S, 2)


@njit(cache=True, nogil=True, inline="always")
def _sm_touch(x, mark, lst, n):
    """Append x to ``lst[:n]`` unless marked, marking it; returns the new length."""
    if mark[x] == 0:
        mark[x] = 1
        lst[n] = x
        n += 1
    return n


@njit(cache=True, nogil=True, inline="always")
def _sm_place_pair(S, doc_of, words, side, ndx, nwx, nx):
    """Fix i (``S[0]``) on side 0 and j (``S[1]``) on side 1 and count them."""
    for s in range(2):
        side[s] = s
        ndx[doc_of[S[s]], s] += 1
        nwx[words[S[s]], s] += 1
        nx[s] += 1


@njit(cache=True, nogil=True)
def split_merge(rng, doc_of, words, z, n_dk, n_wk, n_k, tau, K, alpha, beta, gamma, n_launch,
                S, side, target, ndx, nwx, docs, wlist, dmark, wmark, order, kstart, sequential, broken):
    """One Metropolis-Hastings split-merge proposal on (z, tau); returns (K, outcome).

    ``outcome``: 0 rejected, 1 split accepted, 2 merge accepted. The target is

        p(z, tau | w) ∝ gamma^K prod_k tau_k^-1 tau_u^(gamma - 1)
                        prod_d prod_k G(n_dk + alpha tau_k)/G(alpha tau_k) prod_k DirMult(n_.k. | beta),

    the CRF joint of :mod:`harmonium.models.directed.hdp` with the table counts summed out
    against tau | m ~ Dir(m_.1, ..., m_.K, gamma) (alpha, gamma fixed). Restricted Gibbs
    split-merge (Jain & Neal 2004): two distinct tokens i, j uniformly at random and S, the
    other tokens of their topic(s); a launch state puts S at random on i's side (0) or j's (1)
    and improves it by ``n_launch`` restricted scans (:func:`_sm_scan`, document term
    weighted by alpha tau / 2 for both sides, tau the weight of the topic or of the two merged).
    With ``sequential``, the launch state is instead drawn by sequential allocation
    (:func:`_sm_allocate`; Dahl 2003, 2005, "sequentially-allocated merge-split"): i and j
    alone on their sides, then each other token of S in turn given those placed before it,
    then the ``n_launch`` scans. On a topic of thousands of tokens a random launch is
    symmetric and the scans barely break it; the sequential one grows the two sides from i's
    and j's documents and words. Either way the launch depends on S, i and j only, never on
    the current split, so it is the same for a split and for the merge that reverses it, and q
    (the final scan) is all the ratio needs (Jain & Neal 2004, §3).

    * i, j in one topic k: a final scan draws the split (probability q);
      u ~ Beta(D_0, D_1), D_x the documents holding side x, gives the weights u tau_k and
      (1 - u) tau_k. Acceptance ratio p(split) / p(merged) * tau_k / (q Beta(u; D_0, D_1)),
      tau_k the Jacobian of (tau_k, u) -> (u tau_k, (1 - u) tau_k).
    * i, j in topics k_i != k_j: merge them with weight tau_i + tau_j; q is the probability
      that the final scan from the launch state gives the current split, u = tau_i / (tau_i + tau_j);
      the acceptance ratio is the inverse of the split's.

    Beta(D_0, D_1) is p(u | split) in the limit of small alpha tau. Needs ``K < n_k.shape[0]``
    (a free column for a split); the merged topic keeps k_i's column and the last used column
    moves into k_j's. Scratch: ``S``, ``side``, ``target`` (int, length >= N), ``ndx`` (D, 2) and
    ``nwx`` (V, 2) int64 all zero, ``docs`` (>= D), ``wlist`` (>= V) int, ``dmark`` (D) and
    ``wmark`` (V) uint8 all zero; left as found. ``order``, ``kstart``: the tokens by topic
    (:func:`build_topic_index`), built by the caller and rebuilt here after an accepted move, so
    that a proposal costs O(|S| (n_launch + 1)) plus the touched documents and words, not O(N);
    an accepted move costs O(N + D + V) more. ``broken`` is for the tests' negative controls
    only: 1 leaves q out of the ratio, 2 leaves out the Jacobian, 3 launches a merge from the
    current split (which depends on the state the reverse split does not see), 4 keeps the
    topic index stale after an accepted move.
    """
    V = n_wk.shape[0]
    v_beta = V * beta
    n_s = _sm_pair_topics(rng, words.shape[0], z, order, kstart, S)  # i, j, the other tokens of their topic(s)
    ki = z[S[0]]
    kj = z[S[1]]
    split = ki == kj
    tau_m = tau[ki] if split else tau[ki] + tau[kj]
    alpha_rho = 0.5 * alpha * tau_m
    n_docs_touched = 0
    n_words_touched = 0
    for s in range(n_s):
        n_docs_touched = _sm_touch(doc_of[S[s]], dmark, docs, n_docs_touched)
        n_words_touched = _sm_touch(words[S[s]], wmark, wlist, n_words_touched)
    # launch state
    nx = np.zeros(2, dtype=np.int64)
    rest = S[2:n_s]
    rest_side = side[2:n_s]
    rest_target = target[2:n_s]
    for s in range(n_s):
        target[s] = 0 if z[S[s]] == ki else 1  # the current split (a merge's reverse move); unused for a split
    _sm_place_pair(S, doc_of, words, side, ndx, nwx, nx)
    if broken == 3 and not split:
        for s in range(2, n_s):
            side[s] = target[s]
            ndx[doc_of[S[s]], side[s]] += 1
            nwx[words[S[s]], side[s]] += 1
            nx[side[s]] += 1
    elif sequential:
        _sm_allocate(rng, rest, n_s - 2, doc_of, words, rest_side, ndx, nwx, nx, alpha_rho, beta, v_beta)
    else:
        for s in range(2, n_s):
            x = 0 if rng.random() < 0.5 else 1
            side[s] = x
            ndx[doc_of[S[s]], x] += 1
            nwx[words[S[s]], x] += 1
            nx[x] += 1
    for _ in range(n_launch):
        _sm_scan(rng, rest, n_s - 2, doc_of, words, rest_side, rest_target, ndx, nwx, nx, alpha_rho, beta,
                 v_beta, False)
    # final scan: a split drawn, or the current split scored; the counts then hold the split
    logq = _sm_scan(rng, rest, n_s - 2, doc_of, words, rest_side, rest_target, ndx, nwx, nx, alpha_rho, beta,
                    v_beta, not split)
    return _sm_finish(rng, split, ki, kj, logq, broken != 1, broken != 2, broken != 4, doc_of, words, z, n_dk, n_wk,
                      n_k, tau, K, alpha, beta, gamma, S, n_s, side, ndx, nwx, nx, docs, n_docs_touched, dmark, wlist,
                      n_words_touched, wmark, order, kstart)


@njit(cache=True, nogil=True)
def _sm_finish(rng, split, ki, kj, logq, use_q, use_jacobian, reindex, doc_of, words, z, n_dk, n_wk, n_k, tau, K,
               alpha, beta, gamma, S, n_s, side, ndx, nwx, nx, docs, n_docs_touched, dmark, wlist, n_words_touched,
               wmark, order, kstart):
    """The Metropolis-Hastings step shared by :func:`split_merge` and :func:`split_merge_blocks`; returns (K, outcome).

    On entry ``side[:n_s]`` and the two-column counts ``ndx``, ``nwx``, ``nx`` hold the split (drawn for a split,
    the current one for a merge) and ``logq`` the log probability that the final scan gives it. Draws u, scores
    the ratio (``use_q``, ``use_jacobian`` False only for the tests' broken twins) and, if accepted, writes the
    move into z, the counts and tau; then rebuilds the topic index after an accepted move (unless ``reindex`` is
    False, a negative control) and clears the scratch.
    """
    N = words.shape[0]
    V = n_wk.shape[0]
    v_beta = V * beta
    tau_m = tau[ki] if split else tau[ki] + tau[kj]
    D0 = 0
    D1 = 0
    for jd in range(n_docs_touched):
        d = docs[jd]
        if ndx[d, 0] > 0:
            D0 += 1
        if ndx[d, 1] > 0:
            D1 += 1
    a1 = float(D0)
    a2 = float(D1)
    if split:
        u = rng.beta(a1, a2)
    else:
        u = tau[ki] / tau_m
    outcome = 0
    if 0.0 < u < 1.0 and tau_m > 0.0:
        t0 = u * tau_m
        t1 = (1.0 - u) * tau_m
        # log [p(split) / p(merged)] and the log of the split's proposal terms
        log_target = (math.log(gamma) + math.log(tau_m) - math.log(t0) - math.log(t1)
                      + _topic_log_terms(docs, n_docs_touched, wlist, n_words_touched, ndx, nwx, nx, 0,
                                         alpha * t0, beta, v_beta)
                      + _topic_log_terms(docs, n_docs_touched, wlist, n_words_touched, ndx, nwx, nx, 1,
                                         alpha * t1, beta, v_beta)
                      - _topic_log_terms(docs, n_docs_touched, wlist, n_words_touched, ndx, nwx, nx, 2,
                                         alpha * tau_m, beta, v_beta))
        log_proposal = _log_beta_pdf(u, a1, a2)
        if use_q:
            log_proposal += logq
        if use_jacobian:
            log_proposal -= math.log(tau_m)
        log_ratio = log_target - log_proposal if split else log_proposal - log_target
        if math.log(rng.random()) < log_ratio:
            if split:
                outcome = 1
                new = K
                tau[K + 1] = tau[K]
                tau[new] = t1
                tau[ki] = t0
                for s in range(n_s):
                    if side[s] == 1:
                        t = S[s]
                        z[t] = new
                        n_dk[doc_of[t], ki] -= 1
                        n_dk[doc_of[t], new] += 1
                        n_wk[words[t], ki] -= 1
                        n_wk[words[t], new] += 1
                n_k[ki] -= nx[1]
                n_k[new] += nx[1]
                K += 1
            else:
                outcome = 2
                tau[ki] = tau_m
                for s in range(n_s):
                    if side[s] == 1:
                        t = S[s]
                        z[t] = ki
                        n_dk[doc_of[t], ki] += 1
                        n_wk[words[t], ki] += 1
                for jd in range(n_docs_touched):
                    n_dk[docs[jd], kj] = 0
                for jw in range(n_words_touched):
                    n_wk[wlist[jw], kj] = 0
                n_k[ki] += nx[1]
                last = K - 1
                if kj != last:  # the last used column moves into k_j's
                    for d in range(n_dk.shape[0]):
                        n_dk[d, kj] = n_dk[d, last]
                        n_dk[d, last] = 0
                    for w in range(V):
                        n_wk[w, kj] = n_wk[w, last]
                        n_wk[w, last] = 0
                    for t in range(N):
                        if z[t] == last:
                            z[t] = kj
                    tau[kj] = tau[last]
                n_k[kj] = n_k[last]
                n_k[last] = 0
                tau[last] = tau[K]
                tau[K] = 0.0
                K -= 1
    if outcome != 0 and reindex:
        build_topic_index(z, K, order, kstart)
    _sm_clear(S, n_s, doc_of, words, ndx, nwx, docs, n_docs_touched, dmark, wlist, n_words_touched, wmark)
    return K, outcome


@njit(cache=True, nogil=True)
def _sm_clear(S, n_s, doc_of, words, ndx, nwx, docs, n_docs_touched, dmark, wlist, n_words_touched, wmark):
    """Zero the scratch that a split-merge proposal touched."""
    for s in range(n_s):
        t = S[s]
        ndx[doc_of[t], 0] = 0
        ndx[doc_of[t], 1] = 0
        nwx[words[t], 0] = 0
        nwx[words[t], 1] = 0
    for jd in range(n_docs_touched):
        dmark[docs[jd]] = 0
    for jw in range(n_words_touched):
        wmark[wlist[jw]] = 0


# -- split-merge by document blocks ----------------------------------------------------------------
@njit(cache=True, nogil=True)
def _sm_block_log_weight(S, lo, hi, d, x, words, ndx, nwx, nx, alpha_rho, beta, v_beta, sequential):
    """log of the collapsed weight of putting the block ``S[lo:hi]`` (document d, out of the counts) on side x:

        prod_{t < n} (n_dx + alpha rho + t) * prod_{t < n} (n_{w_t x} + c_t(w_t) + beta) / (n_x + t + V beta),

    the document's rising factorial (alpha rho + n_dx)^(n) times the Dirichlet-multinomial predictive of the
    block's words taken one after the other, c_t(w) the block's tokens of word w before the t-th. The counts are
    left as found. ``sequential`` False: each token scored at the counts without the block, a product of
    independent token terms (only for the tests' negative control of :func:`_sm_block_scan`).
    """
    total = 0.0
    for s in range(lo, hi):
        w = words[S[s]]
        total += math.log((ndx[d, x] + alpha_rho) * (nwx[w, x] + beta) / (nx[x] + v_beta))
        if sequential:
            ndx[d, x] += 1
            nwx[w, x] += 1
            nx[x] += 1
    if sequential:
        for s in range(lo, hi):
            ndx[d, x] -= 1
            nwx[words[S[s]], x] -= 1
            nx[x] -= 1
    return total


@njit(cache=True, nogil=True)
def _sm_move_block(S, lo, hi, d, x, words, side, ndx, nwx, nx, sign):
    """Add (sign 1) or remove (sign -1) the block ``S[lo:hi]`` of document d on side x; adding sets its sides."""
    for s in range(lo, hi):
        w = words[S[s]]
        ndx[d, x] += sign
        nwx[w, x] += sign
        nx[x] += sign
        if sign > 0:
            side[s] = x


@njit(cache=True, nogil=True)
def _sm_block_scan(rng, S, bptr, docs, n_blocks, b0, b1, words, side, target, ndx, nwx, nx, alpha_rho, beta, v_beta,
                   forced, q_broken):
    """One restricted Gibbs scan over the blocks of :func:`split_merge_blocks` but b0 and b1 (fixed on sides 0
    and 1); returns its log probability.

    Block b (document ``docs[b]``, tokens ``S[bptr[b]:bptr[b + 1]]``) moves as one: side x with probability
    proportional to :func:`_sm_block_log_weight` (exp), the other blocks' counts as they stand. ``forced``: put
    each block on ``target`` of its first token and score that instead of drawing. ``q_broken`` (the tests'
    negative control only): draw as above but score the draw as a product of independent token terms, so that
    q is not the probability of the proposal made.
    """
    logq = 0.0
    for b in range(n_blocks):
        if b == b0 or b == b1:
            continue
        lo = bptr[b]
        hi = bptr[b + 1]
        d = docs[b]
        _sm_move_block(S, lo, hi, d, side[lo], words, side, ndx, nwx, nx, -1)
        l0 = _sm_block_log_weight(S, lo, hi, d, 0, words, ndx, nwx, nx, alpha_rho, beta, v_beta, True)
        l1 = _sm_block_log_weight(S, lo, hi, d, 1, words, ndx, nwx, nx, alpha_rho, beta, v_beta, True)
        m = max(l0, l1)
        lse = m + math.log(math.exp(l0 - m) + math.exp(l1 - m))
        if forced:
            x = target[lo]
        else:
            x = 0 if rng.random() < math.exp(l0 - lse) else 1
        if q_broken:
            l0 = _sm_block_log_weight(S, lo, hi, d, 0, words, ndx, nwx, nx, alpha_rho, beta, v_beta, False)
            l1 = _sm_block_log_weight(S, lo, hi, d, 1, words, ndx, nwx, nx, alpha_rho, beta, v_beta, False)
            m = max(l0, l1)
            lse = m + math.log(math.exp(l0 - m) + math.exp(l1 - m))
        logq += (l0 if x == 0 else l1) - lse
        _sm_move_block(S, lo, hi, d, x, words, side, ndx, nwx, nx, 1)
    return logq


@njit(cache=True, nogil=True)
def split_merge_blocks(rng, doc_of, words, z, n_dk, n_wk, n_k, tau, K, alpha, beta, gamma, n_launch,
                       S, side, target, ndx, nwx, docs, wlist, dmark, wmark, order, kstart, bptr, broken):
    """One Metropolis-Hastings split-merge proposal on (z, tau) whose unit is a document's block; returns
    (K, outcome) as :func:`split_merge`, with the same target, the same tau handling and the same arguments
    (plus ``bptr``, int scratch of length >= D + 1).

    Jain & Neal's (2004) restricted Gibbs split-merge with a coarser unit: S is every token of the topic(s) of
    two random distinct tokens i and j, and its *blocks* are the documents' shares of S (all of document d's
    tokens in topics {k_i, k_j}), which always move together. i's block is fixed on side 0 and j's on side 1
    (if i and j share a document, the proposal is rejected: one block cannot be on both sides); every other
    block starts on a random side, then ``n_launch`` restricted scans (:func:`_sm_block_scan`) and a final scan
    give the split and its probability q, one factor per block. The block's conditional is the exact collapsed
    ratio for moving all its tokens together (:func:`_sm_block_log_weight`), with the document term weighted by
    alpha tau / 2 for both sides as in :func:`split_merge` (the block holds all of d's tokens in the pair, so
    that term is the same on both sides).

    A split proposes only block-aligned splits, so a merge of k_i and k_j is reversible only when every
    document holds tokens of at most one of them: otherwise it is rejected. When it is, q is the probability
    that the final block scan from the launch reproduces the current split; u = tau_i / (tau_i + tau_j) and the
    ratio is that of :func:`split_merge` (:func:`_sm_finish`). The launch depends on S, i and j only.

    Any block conditional would give an exact move so long as q is the probability of the proposal made (Jain &
    Neal 2004); the exact collapsed one makes the proposals likely to be accepted.

    ``broken`` is for the tests' negative controls only: 1 draws the blocks by the exact ratio but scores q as a
    product of independent token terms (q not the proposal's probability), 2 takes a merge's q from the token
    scan (:func:`_sm_scan` forced over every token of S) and does not reject unaligned merges.
    """
    V = n_wk.shape[0]
    v_beta = V * beta
    _sm_pick_pair(rng, words.shape[0], S)
    i = S[0]
    j = S[1]
    if doc_of[i] == doc_of[j]:
        return K, 0
    ki = z[i]
    kj = z[j]
    split = ki == kj
    # every token of topics ki and kj in increasing order (so by document); -1: none left out
    n_s = _sm_gather(order, kstart, ki, kj, split, -1, -1, S, 0)
    # blocks: the runs of one document in S; docs[blk] is block blk's document
    n_blocks = 0
    n_words_touched = 0
    b_i = -1
    b_j = -1
    aligned = True
    for s in range(n_s):
        t = S[s]
        d = doc_of[t]
        target[s] = 0 if z[t] == ki else 1
        if s == 0 or d != doc_of[S[s - 1]]:
            bptr[n_blocks] = s
            docs[n_blocks] = d
            n_blocks += 1
        elif target[s] != target[s - 1]:
            aligned = False
        if t == i:
            b_i = n_blocks - 1
        if t == j:
            b_j = n_blocks - 1
        n_words_touched = _sm_touch(words[t], wmark, wlist, n_words_touched)
    bptr[n_blocks] = n_s
    nx = np.zeros(2, dtype=np.int64)
    if not (split or aligned or broken == 2):  # an unaligned merge: not reversible by a block split
        _sm_clear(S, n_s, doc_of, words, ndx, nwx, docs, n_blocks, dmark, wlist, n_words_touched, wmark)
        return K, 0
    tau_m = tau[ki] if split else tau[ki] + tau[kj]
    alpha_rho = 0.5 * alpha * tau_m
    q_broken = broken == 1
    # launch: i's block on side 0, j's on side 1, the others at random, then the restricted scans
    for blk in range(n_blocks):
        x = 0 if blk == b_i else 1 if blk == b_j else (0 if rng.random() < 0.5 else 1)
        _sm_move_block(S, bptr[blk], bptr[blk + 1], docs[blk], x, words, side, ndx, nwx, nx, 1)
    for _ in range(n_launch):
        _sm_block_scan(rng, S, bptr, docs, n_blocks, b_i, b_j, words, side, target, ndx, nwx, nx, alpha_rho,
                       beta, v_beta, False, q_broken)
    if split or broken != 2:
        logq = _sm_block_scan(rng, S, bptr, docs, n_blocks, b_i, b_j, words, side, target, ndx, nwx, nx,
                              alpha_rho, beta, v_beta, not split, q_broken)
    else:
        logq = _sm_scan(rng, S, n_s, doc_of, words, side, target, ndx, nwx, nx, alpha_rho, beta, v_beta, True)
    return _sm_finish(rng, split, ki, kj, logq, True, True, True, doc_of, words, z, n_dk, n_wk, n_k, tau, K, alpha,
                      beta, gamma, S, n_s, side, ndx, nwx, nx, docs, n_blocks, dmark, wlist, n_words_touched, wmark,
                      order, kstart)


# -- split-merge by a mixture of document blocks and tokens ------------------------------------------
@njit(cache=True, nogil=True)
def _sm_token_path(rng, S, lo, hi, d, words, side, ndx, nwx, nx, alpha_rho, beta, v_beta, draw):
    """Place the tokens ``S[lo:hi]`` of document d (out of the counts) one after the other, each on side x with
    probability proportional to (n_dx + alpha rho)(n_wx + beta)/(n_x + V beta) given the tokens placed before
    it; returns the log probability of the sides. ``draw`` False: place token s on ``side[s]`` and score that.
    The counts end holding the block."""
    logp = 0.0
    for s in range(lo, hi):  # not _sm_place_token: through it this loop, the mixed proposal's hot one, ran 2x slower
        w = words[S[s]]
        p0 = (ndx[d, 0] + alpha_rho) * (nwx[w, 0] + beta) / (nx[0] + v_beta)
        p1 = (ndx[d, 1] + alpha_rho) * (nwx[w, 1] + beta) / (nx[1] + v_beta)
        if draw:
            side[s] = 0 if rng.random() * (p0 + p1) < p0 else 1
        x = side[s]
        logp += math.log((p0 if x == 0 else p1) / (p0 + p1))
        ndx[d, x] += 1
        nwx[w, x] += 1
        nx[x] += 1
    return logp


@njit(cache=True, nogil=True)
def _sm_move_tokens(S, lo, hi, d, words, side, ndx, nwx, nx, sign):
    """Add (sign 1) or remove (sign -1) the tokens ``S[lo:hi]`` of document d, each on its ``side``."""
    for s in range(lo, hi):
        x = side[s]
        ndx[d, x] += sign
        nwx[words[S[s]], x] += sign
        nx[x] += sign


@njit(cache=True, nogil=True)
def _sm_mixed_scan(rng, S, bptr, n_blocks, doc_of, words, side, target, ndx, nwx, nx, alpha_rho, beta, v_beta, rho,
                   forced, broken):
    """One restricted scan over the blocks of :func:`split_merge_mixed`; returns its log probability.

    Block b (tokens ``S[bptr[b]:bptr[b + 1]]``, all in one document d) is taken out of the counts, then with
    probability rho goes to one side as a whole (side x with probability P_x proportional to the exact collapsed
    block weight, :func:`_sm_block_log_weight`), otherwise its tokens are placed one by one by the token
    conditionals given those placed before (:func:`_sm_token_path`, probability T(y)). The block's new sides y
    have the probability of both paths together,

        rho [P_0 1{y all 0} + P_1 1{y all 1}] + (1 - rho) T(y),

    and that is the factor the scan contributes to q. ``forced``: put the block on ``target`` and score that.
    ``broken`` (the tests' negative controls only): 1 scores only the path taken (for ``forced``, the block path
    when y is all on one side, else the token path), 2 scores T(y) as a product of token terms at the counts
    without the block (drawn sequentially all the same).
    """
    logq = 0.0
    log_rho = math.log(rho) if rho > 0.0 else -np.inf
    log_1rho = math.log(1.0 - rho) if rho < 1.0 else -np.inf
    for b in range(n_blocks):
        lo = bptr[b]
        hi = bptr[b + 1]
        d = doc_of[S[lo]]
        _sm_move_tokens(S, lo, hi, d, words, side, ndx, nwx, nx, -1)
        l0 = _sm_block_log_weight(S, lo, hi, d, 0, words, ndx, nwx, nx, alpha_rho, beta, v_beta, True)
        l1 = _sm_block_log_weight(S, lo, hi, d, 1, words, ndx, nwx, nx, alpha_rho, beta, v_beta, True)
        m = max(l0, l1)
        lse = m + math.log(math.exp(l0 - m) + math.exp(l1 - m))
        block_path = False
        if forced:
            for s in range(lo, hi):
                side[s] = target[s]
            draw = False
        elif rng.random() < rho:
            block_path = True
            x = 0 if rng.random() < math.exp(l0 - lse) else 1
            for s in range(lo, hi):
                side[s] = x
            draw = False
        else:
            draw = True
        if broken == 2:  # the control: draw as usual, score the token path at the counts without the block
            log_t = 0.0
            if draw:
                _sm_token_path(rng, S, lo, hi, d, words, side, ndx, nwx, nx, alpha_rho, beta, v_beta, True)
                _sm_move_tokens(S, lo, hi, d, words, side, ndx, nwx, nx, -1)
            for s in range(lo, hi):
                w = words[S[s]]
                p0 = (ndx[d, 0] + alpha_rho) * (nwx[w, 0] + beta) / (nx[0] + v_beta)
                p1 = (ndx[d, 1] + alpha_rho) * (nwx[w, 1] + beta) / (nx[1] + v_beta)
                log_t += math.log((p0 if side[s] == 0 else p1) / (p0 + p1))
            _sm_move_tokens(S, lo, hi, d, words, side, ndx, nwx, nx, 1)
        else:
            log_t = _sm_token_path(rng, S, lo, hi, d, words, side, ndx, nwx, nx, alpha_rho, beta, v_beta, draw)
        x = side[lo]
        uniform = True
        for s in range(lo + 1, hi):
            if side[s] != x:
                uniform = False
        log_b = (l0 if x == 0 else l1) - lse
        if broken == 1:
            if forced:
                block_path = uniform
            logq += log_rho + log_b if block_path else log_1rho + log_t
        elif uniform:
            a = log_rho + log_b
            c = log_1rho + log_t
            m = max(a, c)
            logq += m + math.log(math.exp(a - m) + math.exp(c - m))
        else:
            logq += log_1rho + log_t
    return logq


@njit(cache=True, nogil=True)
def split_merge_mixed(rng, doc_of, words, z, n_dk, n_wk, n_k, tau, K, alpha, beta, gamma, n_launch,
                      S, side, target, ndx, nwx, docs, wlist, dmark, wmark, order, kstart, bptr, rho, broken):
    """One Metropolis-Hastings split-merge proposal on (z, tau) whose unit is a document's block of the two
    topics' tokens, moved either as a whole or token by token; returns (K, outcome) as :func:`split_merge`, with
    the same target, the same tau handling and the same arguments (plus ``bptr``, int scratch of length
    >= D + 1, and ``rho`` in [0, 1]).

    Restricted Gibbs split-merge (Jain & Neal 2004): two distinct tokens i and j uniformly at random, i fixed on
    side 0 and j on side 1, and S, the other tokens of their topic(s), cut into blocks: the runs of one document
    (a document's share of the pair but i and j). The launch puts every block on a random side as a whole and
    improves it by ``n_launch`` restricted scans (:func:`_sm_mixed_scan`); a final scan draws the split (or, for
    a merge, is scored at the current split). In a scan each block is drawn from a mixture: with probability rho
    as one unit by its exact collapsed conditional (as in :func:`split_merge_blocks`), otherwise token by token
    by the token conditionals (as in :func:`split_merge`). q, the probability of the proposal actually made, is
    the product over blocks of the probability of the block's sides summed over both paths, rho P_block 1{block
    on one side} + (1 - rho) P_tokens; the final scan's q is all the Metropolis-Hastings ratio needs because the
    launch depends on S, i and j only (Jain & Neal 2004, §3). Unlike :func:`split_merge_blocks`, a merge is never
    impossible: a document holding both topics contributes its token path, one holding one topic both paths,
    and i and j may share a document. rho = 1 is a block proposal (a merge of a pair that shares a document then
    has q = 0 and is rejected). rho = 0 is not the token proposal of :func:`split_merge`: its token path takes the
    whole block out and places its tokens in turn, each given the block's tokens placed before it (sequential
    allocation within the document, Dahl 2003), whereas a Gibbs token scan scores each token given all the
    others; the first makes a block that lies on one side cost about one token's factor, the second one per
    token (benchmarks/isbn/README.md, "Split-merge by a mixture of block and tokens").

    ``broken`` is for the tests' negative controls only (:func:`_sm_mixed_scan`): 1 scores q by the path taken
    instead of the mixture, 2 scores the token path as independent token terms.
    """
    n_s = _sm_pair_topics(rng, words.shape[0], z, order, kstart, S)
    ki = z[S[0]]
    kj = z[S[1]]
    split = ki == kj
    V = n_wk.shape[0]
    v_beta = V * beta
    tau_m = tau[ki] if split else tau[ki] + tau[kj]
    alpha_rho = 0.5 * alpha * tau_m
    n_docs_touched = 0
    n_words_touched = 0
    n_blocks = 0
    for s in range(n_s):
        t = S[s]
        d = doc_of[t]
        w = words[t]
        target[s] = 0 if z[t] == ki else 1  # the current split (a merge's reverse move); unused for a split
        n_docs_touched = _sm_touch(d, dmark, docs, n_docs_touched)
        n_words_touched = _sm_touch(w, wmark, wlist, n_words_touched)
        if s >= 2 and (s == 2 or d != doc_of[S[s - 1]]):  # blocks: S[2:] is in increasing order, so by document
            bptr[n_blocks] = s - 2
            n_blocks += 1
    bptr[n_blocks] = n_s - 2
    nx = np.zeros(2, dtype=np.int64)
    _sm_place_pair(S, doc_of, words, side, ndx, nwx, nx)
    rest = S[2:n_s]
    rest_side = side[2:n_s]
    rest_target = target[2:n_s]
    for blk in range(n_blocks):
        x = 0 if rng.random() < 0.5 else 1
        for s in range(bptr[blk], bptr[blk + 1]):
            rest_side[s] = x
        _sm_move_tokens(rest, bptr[blk], bptr[blk + 1], doc_of[rest[bptr[blk]]], words, rest_side, ndx, nwx, nx, 1)
    for _ in range(n_launch):
        _sm_mixed_scan(rng, rest, bptr, n_blocks, doc_of, words, rest_side, rest_target, ndx, nwx, nx, alpha_rho,
                       beta, v_beta, rho, False, broken)
    logq = _sm_mixed_scan(rng, rest, bptr, n_blocks, doc_of, words, rest_side, rest_target, ndx, nwx, nx,
                          alpha_rho, beta, v_beta, rho, not split, broken)
    return _sm_finish(rng, split, ki, kj, logq, True, True, True, doc_of, words, z, n_dk, n_wk, n_k, tau, K, alpha,
                      beta, gamma, S, n_s, side, ndx, nwx, nx, docs, n_docs_touched, dmark, wlist, n_words_touched,
                      wmark, order, kstart)
