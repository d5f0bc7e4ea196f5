"""Walker alias tables (Vose's construction): O(n) build, O(1) draw (numba).

Walker, "An efficient method for generating discrete random variables with
general distributions", ACM TOMS 3 (1977); the numerically stable build of
Vose, IEEE TSE 17 (1991). Used by the alias/Metropolis-Hastings LDA sampler
(:mod:`harmonium._kernels.lda_alias_mh`, after Yuan et al. 2015, "LightLDA:
Big Topic Models on Modest Compute Clusters").

A table over n outcomes with weights w_0..w_{n-1} (total W) is n bins of
equal mass 1/n; bin j keeps its own outcome with probability ``prob[j]`` and
otherwise yields ``alias[j]``. The table reproduces the weights exactly:

    P(outcome = k) = ( prob[k] + sum_{j: alias[j] = k} (1 - prob[j]) ) / n = w_k / W.

Tables live at an offset ``base`` inside flat arrays, so that many tables
(one per word) share two allocations; ``alias`` holds local indices 0..n-1.
"""

from __future__ import annotations

from numba import njit


@njit(cache=True, nogil=True)
def build_alias(prob, alias, base, n, small, large):
    """Turn weights ``prob[base:base+n]`` into an alias table in place; returns their total W.

    On entry ``prob[base + j]`` holds w_j >= 0; on exit the thresholds, with
    ``alias[base + j]`` the alias of bin j (a local index). ``small`` and
    ``large`` are int scratch of length >= n. If W <= 0 or is not finite
    (never expected) the table becomes uniform and W is returned unchanged, so
    the caller can record the trouble; nothing raises.
    """
    total = 0.0
    for j in range(n):
        total += prob[base + j]
    if not (total > 0.0 and total < 1e308):
        for j in range(n):
            prob[base + j] = 1.0
            alias[base + j] = j
        return total
    scale = n / total
    ns = 0
    nl = 0
    for j in range(n):
        x = prob[base + j] * scale
        prob[base + j] = x
        alias[base + j] = j
        if x < 1.0:
            small[ns] = j
            ns += 1
        else:
            large[nl] = j
            nl += 1
    while ns > 0 and nl > 0:
        ns -= 1
        s = small[ns]
        nl -= 1
        g = large[nl]
        alias[base + s] = g
        x = (prob[base + g] + prob[base + s]) - 1.0
        prob[base + g] = x
        if x < 1.0:
            small[ns] = g
            ns += 1
        else:
            large[nl] = g
            nl += 1
    # leftovers are 1 up to rounding
    while nl > 0:
        nl -= 1
        prob[base + large[nl]] = 1.0
    while ns > 0:
        ns -= 1
        prob[base + small[ns]] = 1.0
    return total


@njit(cache=True, nogil=True)
def draw_alias(rng, prob, alias, base, n):
    """A local index in [0, n) from the table at ``base``: one uniform, O(1).

    u = n * U; bin j = floor(u) (uniform over bins); the fractional part
    u - j decides between j and its alias.
    """
    u = rng.random() * n
    j = int(u)
    if j >= n:
        j = n - 1
    if u - j < prob[base + j]:
        return j
    return alias[base + j]


@njit(cache=True, nogil=True)
def prior_table(alpha, alpha_prob, alpha_alias, small, large):
    """(sum alpha, whether alpha is symmetric); fills the alias table of alpha."""
    K = alpha.shape[0]
    alpha_sum = 0.0
    symmetric = True
    for k in range(K):
        alpha_sum += alpha[k]
        alpha_prob[k] = alpha[k]
        if alpha[k] != alpha[0]:
            symmetric = False
    build_alias(alpha_prob, alpha_alias, 0, K, small, large)
    return alpha_sum, symmetric
