"""Parity of the HCRF sum-product kernels with a plain-numpy twin (harmonium._kernels.hcrf).

The twin is textbook log-space belief propagation with scipy's logsumexp, one
sequence and one class at a time. Cases cover chains and trees, moderate
weights, weights hundreds of nats apart (which make the scaled passes hand
over to the log-space path) and forbidden transitions (-inf).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import logsumexp

from harmonium._kernels import hcrf as kh

# -- the twin -------------------------------------------------------------------------------------


def twin_sum_product(phi, A, parent):
    """(log Z, node (T, H), edge (T, H, H)) by log-space BP; parent[t] < t, root 0."""
    T, H = phi.shape
    children = [[] for _ in range(T)]
    for t in range(1, T):
        children[parent[t]].append(t)
    inside = phi.astype(float).copy()
    msg = np.zeros((T, H))
    for t in range(T - 1, 0, -1):
        msg[t] = logsumexp(A + inside[t][None, :], axis=1)
        inside[parent[t]] += msg[t]
    log_z = logsumexp(inside[0])
    outside = np.zeros((T, H))
    edge = np.zeros((T, H, H))
    for t in range(1, T):
        p = parent[t]
        rest = outside[p] + phi[p] + sum((msg[s] for s in children[p] if s != t), np.zeros(H))
        outside[t] = logsumexp(rest[:, None] + A, axis=0)
        edge[t] = np.exp(rest[:, None] + A + inside[t][None, :] - log_z)
    node = np.exp(inside + outside - log_z)
    return log_z, node, edge


def tables(trans):
    C, H, _ = trans.shape
    out = (np.empty((C, H, H)), np.empty((C, H)), np.empty((C, H, H)), np.empty((C, H)), np.empty((C, H, H)),
           np.empty(C))
    kh.scaled_transitions(trans, *out)
    return out


def pairs_of(trans):
    pairs = np.argwhere(np.isfinite(trans).any(axis=0)).astype(np.int64)
    all_max = trans.max(axis=(1, 2))
    E = np.exp(trans[:, pairs[:, 0], pairs[:, 1]] - all_max[:, None]).T.copy()
    return pairs, E


# -- data -----------------------------------------------------------------------------------------

CHAIN4 = np.array([-1, 0, 1, 2])
TREE6 = np.array([-1, 0, 0, 1, 1, 2])  # breadth-first: children of a node are consecutive


def problem(seed, C=3, H=3, scale=1.0, forbid=False, lengths=(1, 4, 6, 3), trees=(None, None, TREE6, None)):
    """Stacked node log-potentials (n_positions, H, C) with start/end added, parents, leaves, trans."""
    rng = np.random.default_rng(seed)
    parents, leaf = [], []
    for T, tree in zip(lengths, trees, strict=True):
        par = np.arange(T) - 1 if tree is None else tree[:T]
        parents.append(par)
        lf = np.ones(T, bool)
        lf[par[par >= 0]] = False
        leaf.append(lf)
    seq_ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    base = rng.normal(0, scale, size=(seq_ptr[-1], H, C))
    start = rng.normal(0, scale, size=(H, C))
    end = rng.normal(0, scale, size=(H, C))
    trans = rng.normal(0, scale, size=(C, H, H))
    if forbid:
        i, j = np.indices((H, H))
        trans[:, ~((j == i) | (j == i + 1))] = -np.inf
    lbias = rng.normal(0, 1, size=C)
    return dict(base=base, start=start, end=end, trans=trans, lbias=lbias, seq_ptr=seq_ptr,
                parent=np.concatenate(parents).astype(np.int64), leaf=np.concatenate(leaf), C=C, H=H)


def full_potentials(pb):
    """Twin of prepare_block's sum: base + start at roots + end at leaves (n_positions, H, C)."""
    phi = pb["base"].copy()
    phi[pb["seq_ptr"][:-1]] += pb["start"]
    phi[pb["leaf"]] += pb["end"]
    return phi


CASES = [dict(seed=0), dict(seed=1, scale=3.0), dict(seed=2, forbid=True), dict(seed=3, scale=400.0),
         dict(seed=4, scale=400.0, forbid=True), dict(seed=5, C=2, H=2)]


# -- tests ----------------------------------------------------------------------------------------


def test_scaled_transitions_with_forbidden_entries():
    trans = np.random.default_rng(0).normal(size=(2, 3, 3))
    trans[0, 1, :] = -np.inf  # a row without any allowed move
    trans[1, :, 2] = -np.inf
    e_row, row_max, e_col, col_max, e_all, all_max = tables(trans)
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(np.nan_to_num(np.exp(trans - row_max[:, :, None])), e_row, rtol=1e-14)
        np.testing.assert_allclose(np.nan_to_num(np.exp(trans - col_max[:, None, :])), e_col, rtol=1e-14)
    np.testing.assert_allclose(np.exp(trans - all_max[:, None, None]), e_all, rtol=1e-14)
    np.testing.assert_array_equal(row_max[0, 1], -np.inf)
    np.testing.assert_array_equal(e_row[0, 1], 0.0)


@pytest.mark.parametrize("case", CASES)
def test_sum_product_matches_twin(case):
    pb = problem(**case)
    phi_all = full_potentials(pb)
    tabs = tables(pb["trans"])
    for n in range(len(pb["seq_ptr"]) - 1):
        a, b = pb["seq_ptr"][n], pb["seq_ptr"][n + 1]
        par = pb["parent"][a:b]
        for c in range(pb["C"]):
            phi = np.ascontiguousarray(phi_all[a:b, :, c])
            node = np.empty((b - a, pb["H"]))
            edge = np.empty((b - a, pb["H"], pb["H"]))
            lz = kh.sum_product(phi, pb["trans"][c], *(t[c] for t in tabs), par, node, edge)
            tlz, tnode, tedge = twin_sum_product(phi, pb["trans"][c], par)
            np.testing.assert_allclose(lz, tlz, rtol=1e-12, atol=1e-9)
            np.testing.assert_allclose(node, tnode, atol=1e-10)
            np.testing.assert_allclose(edge, tedge, atol=1e-10)


@pytest.mark.parametrize("case", CASES[:2])
def test_prepare_block_shifts_rows_to_max_zero(case):
    pb = problem(**case)
    phi = pb["base"].copy()
    shift = np.empty(phi.shape[::2])
    kh.prepare_block(phi, pb["seq_ptr"], pb["leaf"], 0, len(pb["seq_ptr"]) - 1, pb["start"], pb["end"], shift)
    want = full_potentials(pb)
    np.testing.assert_allclose(phi + shift[:, None, :], want, atol=1e-12)
    np.testing.assert_allclose(phi.max(axis=1), 0.0, atol=0)


def _prepared(pb):
    phi = pb["base"].copy()
    shift = np.empty((phi.shape[0], phi.shape[2]))
    kh.prepare_block(phi, pb["seq_ptr"], pb["leaf"], 0, len(pb["seq_ptr"]) - 1, pb["start"], pb["end"], shift)
    return phi, np.exp(phi), shift


def _twin_block(pb, y):
    """Loss, per-class weighted node marginals gamma, g_start, g_end, g_trans (C, H, H), g_lbias, scores."""
    phi_all = full_potentials(pb)
    C, H = pb["C"], pb["H"]
    gamma = np.zeros_like(phi_all)
    g_start, g_end, g_trans, g_lbias = np.zeros((H, C)), np.zeros((H, C)), np.zeros((C, H, H)), np.zeros(C)
    scores = np.zeros((len(pb["seq_ptr"]) - 1, C))
    loss = 0.0
    for n in range(len(pb["seq_ptr"]) - 1):
        a, b = pb["seq_ptr"][n], pb["seq_ptr"][n + 1]
        par = pb["parent"][a:b]
        res = [twin_sum_product(phi_all[a:b, :, c], pb["trans"][c], par) for c in range(C)]
        s = pb["lbias"] + np.array([r[0] for r in res])
        scores[n] = s
        loss += logsumexp(s) - s[y[n]]
        w = np.exp(s - logsumexp(s))
        w[y[n]] -= 1
        g_lbias += w
        for c, (_, node, edge) in enumerate(res):
            gamma[a:b, :, c] = w[c] * node
            g_start[:, c] += w[c] * node[0]
            g_end[:, c] += w[c] * node[pb["leaf"][a:b]].sum(axis=0)
            g_trans[c] += w[c] * edge.sum(axis=0)
    return loss, gamma, g_start, g_end, g_trans, g_lbias, scores


@pytest.mark.parametrize("case", CASES)
def test_log_scores_block_matches_twin(case):
    pb = problem(**case)
    phi, psi, shift = _prepared(pb)
    e_row, row_max, _, _, _, all_max = tables(pb["trans"])
    pairs, E = pairs_of(pb["trans"])
    n = len(pb["seq_ptr"]) - 1
    out = np.empty((n, pb["C"]))
    kh.log_scores_block(phi, psi, shift, pb["seq_ptr"], pb["parent"], 0, n, pb["trans"], pb["lbias"], e_row,
                        row_max, pairs, E, all_max, out)
    *_, scores = _twin_block(pb, np.zeros(n, dtype=np.int64))
    np.testing.assert_allclose(out, scores, rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("case", CASES)
def test_loss_grad_block_matches_twin(case):
    pb = problem(**case)
    n = len(pb["seq_ptr"]) - 1
    y = np.random.default_rng(case["seed"]).integers(0, pb["C"], size=n)
    phi, psi, shift = _prepared(pb)
    tabs = tables(pb["trans"])
    pairs, E = pairs_of(pb["trans"])
    C, H, K = pb["C"], pb["H"], pairs.shape[0]
    gamma = np.full_like(phi, np.nan)
    g = [np.zeros((H, C)), np.zeros((H, C)), np.zeros((K, C)), np.zeros(C)]
    # two blocks, as two threads would run them
    loss = sum(kh.loss_grad_block(phi, psi, shift, pb["seq_ptr"], pb["parent"], pb["leaf"], y, lo, hi, pb["trans"],
                                  pb["lbias"], *tabs, pairs, E, gamma, *g) for lo, hi in ((0, 2), (2, n)))
    t_loss, t_gamma, t_start, t_end, t_trans, t_lbias, _ = _twin_block(pb, y)
    np.testing.assert_allclose(loss, t_loss, rtol=1e-11)
    np.testing.assert_allclose(gamma, t_gamma, atol=1e-10)
    np.testing.assert_allclose(g[0], t_start, atol=1e-10)
    np.testing.assert_allclose(g[1], t_end, atol=1e-10)
    np.testing.assert_allclose(g[2], t_trans[:, pairs[:, 0], pairs[:, 1]].T, atol=1e-10)
    np.testing.assert_allclose(g[3], t_lbias, atol=1e-12)
    if np.isfinite(pb["trans"]).all():
        assert K == H * H


def _scaled_up(pb, n):
    phi, psi, shift = _prepared(pb)
    pairs, E = pairs_of(pb["trans"])
    a, b = pb["seq_ptr"][n], pb["seq_ptr"][n + 1]
    T, H, C = b - a, pb["H"], pb["C"]
    bufs = (np.empty((T, H, C)), np.empty((T, C)), np.empty((T, C)), np.empty((T, H, C)), np.empty(C), np.empty(C))
    ok = np.empty(C, dtype=np.bool_)
    log_z = np.empty(C)
    all_max = pb["trans"].max(axis=(1, 2))
    kh.scaled_upward(psi, shift, a, T, pairs, E, all_max, pb["parent"][a:b], *bufs, ok, log_z)
    return ok, log_z, (psi, a, T, pairs, E, bufs)


def test_scaled_passes_exact_for_moderate_weights():
    pb = problem(seed=7, scale=2.0)
    phi_all = full_potentials(pb)
    for n in range(len(pb["seq_ptr"]) - 1):
        ok, log_z, (psi, a, T, pairs, E, bufs) = _scaled_up(pb, n)
        assert ok.all()
        par = pb["parent"][a:a + T]
        H, C = pb["H"], pb["C"]
        node = np.empty((T, H, C))
        edge = np.empty((pairs.shape[0], C))
        ok2 = ok.copy()
        kh.scaled_downward(psi, a, T, pairs, E, par, bufs[0], bufs[3], np.empty((T, H, C)), np.empty((H, C)),
                           np.empty((pairs.shape[0], C)), np.empty(C), ok2, node, edge)
        assert ok2.all()
        for c in range(C):
            tlz, tnode, tedge = twin_sum_product(phi_all[a:a + T, :, c], pb["trans"][c], par)
            np.testing.assert_allclose(log_z[c], tlz, rtol=1e-12)
            np.testing.assert_allclose(node[:, :, c], tnode, atol=1e-12)
            np.testing.assert_allclose(edge[:, c], tedge.sum(axis=0)[pairs[:, 0], pairs[:, 1]], atol=1e-12)


def test_scaled_upward_reports_failure_on_extreme_weights():
    """Transitions 2000 nats apart underflow the scaled sums: the pass must say so (the blocks then use log space)."""
    pb = problem(seed=8, C=2, H=3, lengths=(5,), trees=(None,))
    pb["trans"][:] = 0.0
    pb["trans"][:, :, 0] = -2000.0  # moving into state 0 is all but impossible ...
    pb["base"][:, 0, :] += 2500.0  # ... but state 0 dominates every position
    ok, _, _ = _scaled_up(pb, 0)
    assert not ok.any()
