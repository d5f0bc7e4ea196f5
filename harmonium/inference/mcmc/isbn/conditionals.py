"""Full conditionals of one item as plain functions (seed 002 eq. 1), for the exact tests of every engine.

Every HDP-family engine exposes the joint conditional of one item's latent states in one format:
(configurations, probabilities), a configuration being a tuple of state labels over the network's topological
order with ``NEW`` (-1) for a new state. This module holds what the engines share to produce it:

* :func:`tabulate`: the enumeration of all configurations over each node's domain, scored by a function of
  the configuration's positions (the FFBS, junction-tree and variable-elimination routes of
  :class:`~harmonium.inference.mcmc.isbn.gibbs.ISBNSampler` score it by their backward-sampling tables);
* :func:`look`: remove item i, compute, put it back exactly (states it retired revived with their weights);
* :func:`single_node`: the one-node case (the HDP topic model), from a vector over the used states and a new
  one, as :func:`harmonium.inference.mcmc.isbn.hdp.conditional` returns it.

Tests compare these with enumeration from the closed-form joint (tests/statistical/test_isbn_ffbs.py,
test_isbn_compiled.py, test_hdp_exact.py).
"""

from __future__ import annotations

import itertools

import numpy as np

NEW = -1


def tabulate(order, dom: dict, log_prob) -> tuple[list, np.ndarray]:
    """(configurations, probabilities) over the product of the domains ``dom[b]`` (labels of node b) in ``order``;
    ``log_prob(pos)`` scores a configuration given as {node: position in its domain}."""
    configs = list(itertools.product(*(dom[b] for b in order)))
    where = {b: {k: j for j, k in enumerate(dom[b])} for b in order}
    logp = np.array([log_prob({b: where[b][k] for b, k in zip(order, c, strict=True)}) for c in configs],
                    dtype=np.float64)
    return configs, np.exp(logp)


def look(engine, i: int, compute):
    """``compute(i)`` with item i removed from ``engine`` (an ISBNSampler), then item i added back and the states
    its removal retired revived exactly; returns what ``compute`` returned."""
    engine._remove(i)
    try:
        return compute(i)
    finally:
        engine._add(i)
        engine._revive(i)


def single_node(p: np.ndarray, labels: np.ndarray) -> tuple[list, np.ndarray]:
    """(configurations, probabilities) of a one-node network from ``p`` over the used states (labels ``labels``,
    in the order of ``p``) and a new state last."""
    configs = [(int(k),) for k in labels] + [(NEW,)]
    return configs, np.asarray(p, dtype=np.float64)
