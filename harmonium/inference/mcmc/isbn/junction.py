"""The junction tree of an ISBN item's factor graph, and FFBS on it (seed 002 §4).

Seed 002 samples all assignment variables of a data item jointly "by forward-filtering
backward-sampling on the Bayes net (tree) or its junction tree". The factors of eq. 1 (one per latent
node b over {b} + parents(b), one per observed node over its parents) have the same scopes for every
item, so the junction tree is built once per network:

* the interaction graph joins every pair of nodes that share a factor; it is triangulated by greedy
  min-fill elimination, and each eliminated node with its remaining neighbours is a clique (the
  non-maximal ones are dropped);
* the cliques are joined by a maximum-weight spanning tree on separator sizes (Kruskal), which has
  the running-intersection property for the cliques of a triangulated graph (Jensen & Jensen 1994);
* every factor scope lies in some clique (it is a clique of the interaction graph), to which the
  factor is assigned.

Per item, :func:`forward_filter` multiplies each clique's factors and passes messages from the leaves
to the root (log domain, sums over the variables a clique does not share with its parent);
:func:`backward_sample` draws the root clique's variables jointly from its belief, then every other
clique's remaining variables given its separator, root to leaves. The cost is the sum over cliques
of their table sizes: on a tree-shaped network the cliques are the factors, as in plain FFBS.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class JunctionTree:
    """Cliques (tuples of node names), ``parent[c]`` (-1 at a root), ``order`` (parents before children)."""

    cliques: tuple
    parent: tuple
    order: tuple

    def separator(self, c: int) -> tuple:
        """Variables clique c shares with its parent (in c's order); () at a root."""
        p = self.parent[c]
        return () if p < 0 else tuple(v for v in self.cliques[c] if v in self.cliques[p])

    def home(self, scope) -> int:
        """The first clique that holds every variable of ``scope``."""
        s = set(scope)
        for c, clique in enumerate(self.cliques):
            if s <= set(clique):
                return c
        raise ValueError(f"no clique holds the scope {scope}")


def build(nodes, scopes) -> JunctionTree:
    """The junction tree of the factor graph with variables ``nodes`` and factor ``scopes`` (see module doc)."""
    nodes = list(nodes)
    adj = {v: set() for v in nodes}
    for scope in scopes:
        for a in scope:
            adj[a].update(u for u in scope if u != a)
    rank = {v: r for r, v in enumerate(nodes)}
    left, cliques = set(nodes), []
    while left:
        def fill(v):
            nb = [u for u in adj[v] if u in left]
            return sum(1 for x in range(len(nb)) for y in range(x + 1, len(nb)) if nb[y] not in adj[nb[x]])
        v = min(left, key=lambda u: (fill(u), len(adj[u] & left), rank[u]))
        nb = [u for u in adj[v] if u in left]
        for a in nb:
            adj[a].update(u for u in nb if u != a)
        cliques.append(tuple(sorted([v, *nb], key=rank.__getitem__)))
        left.remove(v)
    maximal = []
    for c in cliques:
        if not any(set(c) < set(d) or (set(c) == set(d) and d in maximal) for d in cliques if d is not c):
            maximal.append(c)
    # Kruskal on separator sizes: a maximum-weight spanning forest
    edges = sorted(((len(set(a) & set(b)), i, j) for i, a in enumerate(maximal) for j, b in enumerate(maximal)
                    if i < j and set(a) & set(b)), key=lambda e: (-e[0], e[1], e[2]))
    comp = list(range(len(maximal)))

    def find(x):
        while comp[x] != x:
            comp[x] = comp[comp[x]]
            x = comp[x]
        return x

    nbrs = {i: [] for i in range(len(maximal))}
    for _, i, j in edges:
        a, b = find(i), find(j)
        if a != b:
            comp[a] = b
            nbrs[i].append(j)
            nbrs[j].append(i)
    parent, order, seen = [-1] * len(maximal), [], set()
    for root in range(len(maximal)):
        if root in seen:
            continue
        seen.add(root)
        queue = [root]
        while queue:
            c = queue.pop(0)
            order.append(c)
            for d in nbrs[c]:
                if d not in seen:
                    seen.add(d)
                    parent[d] = c
                    queue.append(d)
    return JunctionTree(tuple(maximal), tuple(parent), tuple(order))


def lse(a: np.ndarray, axis=None) -> np.ndarray:
    """log sum exp along ``axis`` (-inf for an all -inf slice; plain numpy, cheaper than scipy's for tiny tables)."""
    m = np.max(a, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)) + m
    return np.squeeze(out, axis=axis) if axis is not None else out.reshape(())


def expand(table: np.ndarray, fscope, scope, shape) -> np.ndarray:
    """A factor over ``fscope`` broadcast to the axes ``scope`` (a superset) of shape ``shape``."""
    perm = sorted(range(len(fscope)), key=lambda a: scope.index(fscope[a]))
    t = np.transpose(table, perm)
    full = [1] * len(scope)
    for a in perm:
        full[scope.index(fscope[a])] = table.shape[a]
    return np.broadcast_to(t.reshape(full), shape)


def forward_filter(jt: JunctionTree, dom: dict, factors, combine=None) -> list:
    """Clique beliefs (log tables over each clique, its factors times its children's messages), leaves first.

    ``factors``: [(scope, log table)] with axes following the scope and entries the domains ``dom``.
    ``combine(table, factor)`` adds a factor to a clique table (default +; tests swap in a broken one).
    """
    combine = combine or np.add
    shapes = [tuple(len(dom[v]) for v in c) for c in jt.cliques]
    belief = [np.zeros(s) for s in shapes]
    for scope, table in factors:
        c = jt.home(scope)
        belief[c] = combine(belief[c], expand(table, scope, jt.cliques[c], shapes[c]))
    for c in reversed(jt.order):
        p = jt.parent[c]
        if p < 0:
            continue
        sep = jt.separator(c)
        out_axes = tuple(a for a, v in enumerate(jt.cliques[c]) if v not in sep)
        msg = lse(belief[c], axis=out_axes) if out_axes else belief[c]
        belief[p] = belief[p] + expand(msg, sep, jt.cliques[p], shapes[p])
    return belief


def _residual(jt: JunctionTree, c: int, belief: np.ndarray, pos: dict):
    """(free variables of clique c, log p(free | separator values in pos)) as a flat table."""
    sep = set(jt.separator(c))
    index = tuple(pos[v] if v in sep else slice(None) for v in jt.cliques[c])
    sub = belief[index]
    free = tuple(v for v in jt.cliques[c] if v not in sep)
    flat = sub.reshape(-1)
    return free, sub.shape, flat - lse(flat)


def backward_sample(jt: JunctionTree, belief: list, rng: np.random.Generator, draw) -> dict:
    """{variable: position in its domain}: each clique's free variables given its separator, root first."""
    pos: dict = {}
    for c in jt.order:
        free, shape, logp = _residual(jt, c, belief[c], pos)
        if free:
            flat = draw(np.exp(logp), rng)
            for v, j in zip(free, np.unravel_index(flat, shape), strict=True):
                pos[v] = int(j)
    return pos


def log_prob(jt: JunctionTree, belief: list, pos: dict) -> float:
    """log of the probability that :func:`backward_sample` returns the configuration ``pos``."""
    lp = 0.0
    for c in jt.order:
        free, shape, logp = _residual(jt, c, belief[c], pos)
        if free:
            lp += logp[np.ravel_multi_index(tuple(pos[v] for v in free), shape)]
    return float(lp)
