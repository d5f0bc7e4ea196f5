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

from numba import njit


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


@njit(cache=True, nogil=True)
def _draw(rng, p, n):
    total = 0.0
    for k in range(n):
        total += p[k]
        p[k] = total
    u = rng.random() * total
    for k in range(n - 1):
        if u < p[k]:
            return k
    return n - 1


@njit(cache=True, nogil=True)
def da_sweep(rng, doc_ptr, words, z, n_dk, n_wk, n_k, tau, K, alpha, beta, gamma, p, i_start):
    """Resample z_i for tokens i_start..N-1 in order; returns (K, n_changed, n_new, i_next).

    Mutates ``z``, the counts and ``tau`` in place. Stops early, with
    ``i_next < N``, before a token when all ``n_k.shape[0]`` columns are in use
    (the caller grows the arrays and calls again from ``i_next``); otherwise
    ``i_next == N``. Emptied topics stay as dead columns (n_k = 0, tau = 0,
    weight 0) until :func:`compact`. ``p`` is scratch of length >= capacity + 1.
    """
    cap = n_k.shape[0]
    V = n_wk.shape[0]
    v_beta = V * beta
    n_docs = doc_ptr.shape[0] - 1
    N = words.shape[0]
    n_changed = 0
    n_new = 0
    # the document holding token i_start
    lo = 0
    hi = n_docs
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if doc_ptr[mid] <= i_start:
            lo = mid
        else:
            hi = mid
    d = lo
    for i in range(i_start, N):
        while i >= doc_ptr[d + 1]:
            d += 1
        if K >= cap:
            return K, n_changed, n_new, i
        w = words[i]
        old = z[i]
        n_dk[d, old] -= 1
        n_wk[w, old] -= 1
        n_k[old] -= 1
        if n_k[old] == 0:
            tau[K] += tau[old]
            tau[old] = 0.0
        da_conditional(p, d, w, n_dk, n_wk, n_k, K, tau, alpha, beta, v_beta)
        new = _draw(rng, p, K + 1)
        if new == K:
            b = rng.beta(1.0, gamma)
            tau[K + 1] = (1.0 - b) * tau[K]
            tau[K] = b * tau[K]
            K += 1
            n_new += 1
        z[i] = new
        n_dk[d, new] += 1
        n_wk[w, new] += 1
        n_k[new] += 1
        if new != old:
            n_changed += 1
    return K, n_changed, n_new, N


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
    for d in range(n_dk.shape[0]):
        for k in range(K):
            j = remap[k]
            if j >= 0 and j != k:
                n_dk[d, j] = n_dk[d, k]
        for k in range(new_k, K):
            n_dk[d, k] = 0
    for w in range(n_wk.shape[0]):
        for k in range(K):
            j = remap[k]
            if j >= 0 and j != k:
                n_wk[w, j] = n_wk[w, k]
        for k in range(new_k, K):
            n_wk[w, k] = 0
    for i in range(z.shape[0]):
        z[i] = remap[z[i]]
    return new_k


@njit(cache=True, nogil=True)
def word_log_likelihood(n_wk, n_k, K, beta):
    """log p(w | z, beta) = sum_k [lG(V b) - lG(n_k + V b) + sum_w lG(n_wk + b) - lG(b)] over k < K."""
    V = n_wk.shape[0]
    total = 0.0
    lg_beta = math.lgamma(beta)
    for k in range(K):
        total += math.lgamma(V * beta) - math.lgamma(n_k[k] + V * beta)
    for w in range(V):
        for k in range(K):
            c = n_wk[w, k]
            if c > 0:
                total += math.lgamma(c + beta) - lg_beta
    return total


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
    """Zero the count tables and fill them from ``z``."""
    n_dk[:] = 0
    n_wk[:] = 0
    n_k[:] = 0
    for d in range(doc_ptr.shape[0] - 1):
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            k = z[i]
            n_dk[d, k] += 1
            n_wk[words[i], k] += 1
            n_k[k] += 1
