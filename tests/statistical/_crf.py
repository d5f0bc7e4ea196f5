"""Exact draws from the Chinese restaurant franchise (Teh et al. 2006), the HDP prior of the Geweke tests."""

from __future__ import annotations

import numpy as np


def crf_draw(rng, rows, alpha, gamma):
    """Chinese restaurant franchise: states of items whose CPT rows are ``rows`` (one restaurant per row, dishes
    shared through the global tables), and tau | m ~ Dir(m, gamma) (last entry the unused mass)."""
    rest, dish_tables, z = {}, [], []
    for r in rows:
        sizes, dishes = rest.setdefault(r, ([], []))
        wt = np.array(sizes + [alpha])
        t = int(np.searchsorted(np.cumsum(wt), rng.random() * wt.sum(), side="right"))
        if t == len(sizes):
            wd = np.array(dish_tables + [gamma])
            k = int(np.searchsorted(np.cumsum(wd), rng.random() * wd.sum(), side="right"))
            if k == len(dish_tables):
                dish_tables.append(0)
            dish_tables[k] += 1
            sizes.append(0)
            dishes.append(k)
        sizes[t] += 1
        z.append(dishes[t])
    g = np.append(rng.gamma(np.array(dish_tables, dtype=float)), rng.gamma(gamma))
    return np.array(z), g / g.sum()
