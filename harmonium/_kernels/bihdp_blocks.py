"""Collapsed Gibbs over customer and item groups with binomial blocks, non-purchases in aggregate (numba).

The BiHDP of seed 002 (Fig. 2a, §7) in its one-group-per-customer, one-group-per-item limit (the infinite
relational model; docs/guides/hdp-isbn.md, "The §7 observation model"): customer j is in group g = z1[j], item
i in group h = z2[i], and the number of j's T_j transactions that hold item i is n_ji ~ Binomial(T_j, p_gh)
with p_gh ~ Beta(a, b) integrated out. With S_gh = sum of n_ji and N_gh = sum of T_j over the pairs of block
(g, h), the collapsed likelihood is prod_gh B(a + S_gh, b + N_gh - S_gh) / B(a, b) (times the binomial
coefficients, which do not depend on the groups). Both sides have Chinese-restaurant priors.

The two sides are symmetric. Give each element e (a customer or an item) a weight w_e and each group the sum
W of its members' weights: customers weigh T_j, items weigh 1. Then N_gh = W1[g] W2[h] for every block, and
moving element e from one group to another changes S by e's purchases per group of the other side (read
from e's row of the sparse counts) and N by w_e W_other[h]. Conditional of e (seed 002 eq. 1 with F of
eq. 2, Beta-binomial predictive of e's whole row of pairs):

    p(z_e = g | rest) ∝ m_g^-e prod_h B(a + S_gh + s_h, b + F_gh + f_h) / B(a + S_gh, b + F_gh)
    p(z_e = new | rest) ∝ alpha prod_h B(a + s_h, b + f_h) / B(a, b)

with s_h = e's purchases in other-side group h, f_h = w_e W_other[h] - s_h (e's non-purchases there),
F_gh = W[g] W_other[h] - S_gh. One element costs O(nnz_e + K_self K_other); a sweep over both sides
O(nnz + (n_customers + n_items) K1 K2), never O(n_customers n_items).

Group ids live in ``perm``: ``perm[:K]`` are the used ids, ``perm[K:]`` the free ones, ``pos`` its inverse.
The block matrix ``S`` is indexed (self group, other group); the item side passes ``S.T``. Every kernel here
mutates its arrays in place.
"""

from __future__ import annotations

import math

from numba import njit

from harmonium._kernels.categorical import draw_unnormalised


@njit(cache=True, nogil=True)
def log_beta(x, y):
    """log B(x, y)."""
    return math.lgamma(x) + math.lgamma(y) - math.lgamma(x + y)


@njit(cache=True, nogil=True)
def block_delta(S_gh, F_gh, s, f, a, b):
    """log B(a + S + s, b + F + f) - log B(a + S, b + F): the Beta-binomial predictive of s successes and f
    failures given S and F; the lgamma(a + S) terms cancel when s = 0."""
    if s == 0:
        if f == 0:
            return 0.0
        return (math.lgamma(b + F_gh + f) - math.lgamma(b + F_gh)
                - math.lgamma(a + b + S_gh + F_gh + f) + math.lgamma(a + b + S_gh + F_gh))
    return log_beta(a + S_gh + s, b + F_gh + f) - log_beta(a + S_gh, b + F_gh)


@njit(cache=True, nogil=True)
def gather(e, ptr, idx, cnt, z_other, s):
    """s[h] += e's purchases in other-side group h (s must be zero on entry); returns e's total purchases."""
    tot = 0
    for t in range(ptr[e], ptr[e + 1]):
        s[z_other[idx[t]]] += cnt[t]
        tot += cnt[t]
    return tot


@njit(cache=True, nogil=True)
def element_logits(w_e, s, S, W, n, perm, K, W_o, perm_o, K_o, alpha, a, b, out):
    """Unnormalised log conditional of one removed element: ``out[k]`` for the used group ``perm[k]``,
    k < K, and ``out[K]`` for a new group (eq. above). ``s`` holds the element's purchases per other-side
    group id; ``S``, ``W``, ``n`` must already exclude the element."""
    lb0 = log_beta(a, b)
    new = math.log(alpha)
    for q in range(K_o):
        h = perm_o[q]
        sh = s[h]
        fh = w_e * W_o[h] - sh
        if sh != 0 or fh != 0:
            new += log_beta(a + sh, b + fh) - lb0
    out[K] = new
    for k in range(K):
        g = perm[k]
        acc = math.log(n[g])
        Wg = W[g]
        for q in range(K_o):
            h = perm_o[q]
            S_gh = S[g, h]
            acc += block_delta(S_gh, Wg * W_o[h] - S_gh, s[h], w_e * W_o[h] - s[h], a, b)
        out[k] = acc


@njit(cache=True, nogil=True)
def _draw_log(rng, logp, n):
    """Index k < n with probability exp(logp[k]) / sum; overwrites logp[:n] by the cumulative weights."""
    m = logp[0]
    for k in range(1, n):
        if logp[k] > m:
            m = logp[k]
    for k in range(n):
        logp[k] = math.exp(logp[k] - m)
    return draw_unnormalised(rng, logp, n)


@njit(cache=True, nogil=True)
def remove_element(e, w_e, ptr, idx, cnt, z, z_o, S, W, n, perm, pos, K):
    """Take element e out of its group (S row, W, n); retire the group if it empties. Returns the new K."""
    g = z[e]
    for t in range(ptr[e], ptr[e + 1]):
        S[g, z_o[idx[t]]] -= cnt[t]
    W[g] -= w_e
    n[g] -= 1
    if n[g] == 0:
        k = pos[g]
        last = perm[K - 1]
        perm[k] = last
        pos[last] = k
        perm[K - 1] = g
        pos[g] = K - 1
        K -= 1
    return K


@njit(cache=True, nogil=True)
def add_element(e, g, w_e, ptr, idx, cnt, z, z_o, S, W, n):
    """Put element e into group g (which must be used, i.e. among perm[:K])."""
    z[e] = g
    for t in range(ptr[e], ptr[e + 1]):
        S[g, z_o[idx[t]]] += cnt[t]
    W[g] += w_e
    n[g] += 1


@njit(cache=True, nogil=True)
def sweep_side(rng, order, start, ptr, idx, cnt, w, z, z_o, S, W, n, perm, pos, K, W_o, perm_o, K_o,
               alpha, a, b, s, logp):
    """Resample z[e] for e in ``order[start:]`` from its full conditional, in that order.

    Stops before an element when every group id is used (K == capacity), so that the caller can grow the
    arrays and resume. ``s`` (capacity of the other side, zero) and ``logp`` (capacity + 1) are scratch.
    Returns (number of elements of ``order`` done, K, changed labels).
    """
    cap = perm.shape[0]
    changed = 0
    for r in range(start, order.shape[0]):
        e = order[r]
        g_old = z[e]
        if K == cap and n[g_old] > 1:
            return r, K, changed
        gather(e, ptr, idx, cnt, z_o, s)
        K = remove_element(e, w[e], ptr, idx, cnt, z, z_o, S, W, n, perm, pos, K)
        element_logits(w[e], s, S, W, n, perm, K, W_o, perm_o, K_o, alpha, a, b, logp)
        k = _draw_log(rng, logp, K + 1)
        if k == K:
            g = perm[K]
            K += 1
        else:
            g = perm[k]
        add_element(e, g, w[e], ptr, idx, cnt, z, z_o, S, W, n)
        if g != g_old:
            changed += 1
        for t in range(ptr[e], ptr[e + 1]):
            s[z_o[idx[t]]] = 0
    return order.shape[0], K, changed


@njit(cache=True, nogil=True)
def log_likelihood(S, W1, W2, perm1, K1, perm2, K2, a, b):
    """sum over used blocks of log B(a + S, b + N - S) - log B(a, b), N = W1[g] W2[h] (no binomial
    coefficients)."""
    lb0 = log_beta(a, b)
    tot = 0.0
    for k in range(K1):
        g = perm1[k]
        for q in range(K2):
            h = perm2[q]
            N = W1[g] * W2[h]
            if N > 0:
                tot += log_beta(a + S[g, h], b + N - S[g, h]) - lb0
    return tot


@njit(cache=True, nogil=True)
def block_counts(ptr, idx, cnt, z1, z2, S):
    """S[g, h] = sum of counts over the pairs of block (g, h), from the customers' rows (S zeroed here)."""
    S[:, :] = 0
    for j in range(ptr.shape[0] - 1):
        g = z1[j]
        for t in range(ptr[j], ptr[j + 1]):
            S[g, z2[idx[t]]] += cnt[t]
