"""Draws from discrete distributions given unnormalised weights (numba)."""

from __future__ import annotations

from numba import njit


@njit(cache=True, nogil=True)
def draw_unnormalised(rng, p, n):
    """Index k in [0, n) with probability p[k] / sum(p[:n]).

    Turns ``p[:n]`` into its cumulative sum in place (callers rebuild it for the
    next draw) and inverts one uniform by linear search. All p[k] >= 0, sum > 0.
    """
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
def draw_from_cumulative(rng, cum, total, n):
    """Index k in [0, n) with probability (cum[k] - cum[k-1]) / total, from a prefix sum ``cum``.

    One uniform, inverted by linear search; uniform over [0, n) when ``total`` is 0 (every weight
    underflowed), so a caller never gets an out-of-range index.
    """
    u = rng.random()
    if total <= 0.0:
        return min(int(u * n), n - 1)
    u *= total
    for k in range(n - 1):
        if u < cum[k]:
            return k
    return n - 1
