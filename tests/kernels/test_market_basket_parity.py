"""Parity of harmonium._kernels.market_basket.fill_transactions with a plain-Python twin.

Also runs under NUMBA_DISABLE_JIT=1.
"""

from __future__ import annotations

import numpy as np

from harmonium._kernels.market_basket import fill_transactions


def reference_fill(sizes, targets, coins, put_anyway):
    """Transaction t's itemsets, as lists of stream indices; None once the stream runs out."""
    out, queue = [], list(range(sizes.size))
    for t, target in enumerate(targets):
        if not queue:
            return out, t
        basket = [queue.pop(0)]  # an empty transaction takes the itemset on hand
        used = sizes[basket[0]]
        while used < target:
            if not queue:
                return out, t
            if used + sizes[queue[0]] <= target:
                used += sizes[queue[0]]
                basket.append(queue.pop(0))
            else:
                if coins[t] < put_anyway:
                    basket.append(queue.pop(0))
                break
        out.append(basket)
    return out, len(targets)


def test_fill_matches_reference():
    rng = np.random.default_rng(0)
    for _trial in range(20):
        sizes = 1 + rng.poisson(rng.uniform(0.2, 4.0), rng.integers(1, 400))
        targets = 1 + rng.poisson(rng.uniform(0.5, 6.0), rng.integers(1, 150))
        coins = rng.random(targets.size)
        bounds = np.full(targets.size + 1, -1, dtype=np.int64)
        n = fill_transactions(sizes, targets, coins, 0.5, bounds)
        ref, n_ref = reference_fill(sizes, targets, coins, 0.5)
        assert n == n_ref
        got = [list(range(bounds[t], bounds[t + 1])) for t in range(n)]
        assert got == ref[:n]
