"""Brute-force conditionals of an ISBN from its closed-form joint p(z, x | tau) (seed 002 §2-5).

Independent of the engine's sequential predictive terms: each latent CPT row is a
Dirichlet-multinomial (HDP: parameters alpha tau_k, a state unused by the others weighs tau_u),
a Chinese restaurant (DP, a state private to one row) or a symmetric Dirichlet-multinomial;
each observed CPT row contributes its conjugate marginal likelihood A(eta + S) - A(eta) + sum log h.
The conditional of item i's joint latent state is the ratio of joints over all configurations.
"""

from __future__ import annotations

import itertools

import numpy as np
from scipy.special import gammaln

from harmonium.inference.mcmc.isbn.gibbs import NEW
from harmonium.models.directed import isbn


def _rows(node, z, index, n):
    return [tuple(int(z[p][m]) for p in node.parents) + tuple(int(index[x][m]) for x in node.index)
            for m in range(n)]


def _active(net, b, present, n):
    """Items at which latent node b has a present observed descendant (else it dangles, integrated out)."""
    if net.node(b).per:
        return np.ones(n, dtype=bool)
    out = np.zeros(n, dtype=bool)
    for c in net.nodes:
        if b in c.parents:
            out |= present.get(c.name, np.ones(n, dtype=bool)) if isinstance(c, isbn.Observed) else _active(
                net, c.name, present, n)
    return out


def log_joint(net, z, index, observed, tau, present=None, psi=None):
    """log p(z, x | tau, psi); tau[b] = ({label: weight}, tau_u) for HDP nodes; present[a]: items that carry x^a;
    psi[a] = {parent states: psi row} of RandomEffects nodes (a row of parent states absent there: psi
    integrated out, exact for the single observation a fresh state carries)."""
    n = len(next(iter(z.values())))
    present = present or {}
    lp = 0.0
    families: dict = {}  # a tied node's rows join its base node's CPT
    for node in net.latent:
        fam = families.setdefault(node.tied or node.name, {})
        rows = _rows(node, z, index, n)
        items = np.flatnonzero(_active(net, node.name, present, n))
        if node.per:  # one value per group: count it once, at the group's first item
            keys = [tuple(int(index[x][m]) for x in node.per) for m in range(n)]
            items = [keys.index(key) for key in dict.fromkeys(keys)]
        for m in items:
            fam.setdefault(rows[m], []).append(int(z[node.name][m]))
    for base, groups in families.items():
        pr = net.node(base).prior
        node = net.node(base)
        if isinstance(pr, isbn.DP):
            owner = {}
            for r, labs in groups.items():
                for k in set(labs):
                    if owner.setdefault(k, r) != r:
                        return -np.inf  # a DP state lives under one row only (the state space forks)
        for row, labs in groups.items():
            ks, cnt = np.unique(labs, return_counts=True)
            tot = cnt.sum()
            if isinstance(pr, isbn.H2DP):  # mean rho_{.|g} of the row's outer index value g
                _, _, rho, rho_u = tau[node.name]
                g = row[len(node.parents)]
                a = np.array([pr.alpha * rho[g].get(int(k), rho_u[g]) for k in ks])
                lp += np.sum(gammaln(a + cnt) - gammaln(a)) + gammaln(pr.alpha) - gammaln(pr.alpha + tot)
            elif isinstance(pr, isbn.HDP):
                w, wu = tau[node.name][:2]
                a = np.array([pr.alpha * w.get(int(k), wu) for k in ks])
                lp += np.sum(gammaln(a + cnt) - gammaln(a)) + gammaln(pr.alpha) - gammaln(pr.alpha + tot)
            elif isinstance(pr, isbn.DP):
                lp += len(ks) * np.log(pr.alpha) + np.sum(gammaln(cnt)) + gammaln(pr.alpha) - gammaln(pr.alpha + tot)
            else:
                a = pr.alpha / pr.n_states
                lp += np.sum(gammaln(a + cnt) - gammaln(a)) + gammaln(pr.alpha) - gammaln(pr.alpha + tot)
    for node in net.observed:
        c, h = isbn.item_stats(node, observed[node.name])
        rows = _rows(node, z, index, n)
        here = present.get(node.name, np.ones(n, dtype=bool))
        for r in {rows[m] for m in range(n) if here[m]}:
            sel = np.array([m for m in range(n) if rows[m] == r and here[m]])
            if isinstance(node.prior, isbn.RandomEffects):  # Dirichlet-multinomial with alpha = beta psi_{.|l}
                row_psi = (psi or {}).get(node.name, {}).get(r[: len(node.parents)])
                a = node.prior.base.alpha if row_psi is None else node.prior.beta * row_psi
                cnt = c[0][sel].sum(axis=0)
                lp += float(np.sum(gammaln(a + cnt) - gammaln(a)) + gammaln(a.sum()) - gammaln(a.sum() + cnt.sum()))
                continue
            S = tuple(part[sel].sum(axis=0)[None] for part in c)
            zero = tuple(np.zeros_like(s) for s in S)
            lp += float(isbn.log_partition_of(node.prior, S)[0] - isbn.log_partition_of(node.prior, zero)[0])
            lp += float(h[sel].sum())
    return lp


def conditional(net, order, z, index, observed, tau, i, present=None, psi=None):
    """{configuration in ``order`` (NEW for a fresh state): probability} of item i's latent states."""
    n = len(z[order[0]])
    others = [m for m in range(n) if m != i]
    choices, tau_eff = [], {}
    family = {b: [c for c in order if (net.node(c).tied or c) == (net.node(b).tied or b)] for b in order}
    for b in order:
        node = net.node(b)
        if node.per or not _active(net, b, present or {}, n)[i]:  # evidence for item i, or dangling
            choices.append([int(z[b][i])])
            if isinstance(node.prior, isbn.HDP):
                tau_eff[b] = tau[b]
            continue
        if isinstance(node.prior, isbn.Dirichlet):
            choices.append(list(range(node.prior.n_states)))
            continue
        act = {c: _active(net, c, present or {}, n) for c in family[b]}
        alive = sorted(set().union(*(set(z[c][[m for m in others if act[c][m]]].tolist()) for c in family[b])))
        choices.append(alive + [NEW])
        if isinstance(node.prior, isbn.HDP):
            w, wu = tau[b][:2]
            tau_eff[b] = ({k: w[k] for k in alive}, wu + sum(v for k, v in w.items() if k not in alive))
        if isinstance(node.prior, isbn.H2DP):  # a retired state's weight returns to every rho_{u|g}
            rho, rho_u = tau[b][2:]
            tau_eff[b] += ({g: {k: r[k] for k in alive} for g, r in rho.items()},
                           {g: rho_u[g] + sum(v for k, v in r.items() if k not in alive) for g, r in rho.items()})
    out = {}
    for cfg in itertools.product(*choices):
        zz = {b: np.array(z[b], copy=True) for b in order}
        for b, k in zip(order, cfg, strict=True):
            zz[b][i] = max(int(z[c].max()) for c in family[b]) + 1 if k == NEW else k
        out[cfg] = log_joint(net, zz, index, observed, tau_eff, present, psi)
    m = max(out.values())
    tot = sum(np.exp(v - m) for v in out.values())
    return {k: np.exp(v - m) / tot for k, v in out.items()}


def psi_dicts(engine):
    """The engine's RandomEffects rows psi_{.|l} as brute-force input."""
    return {a: dict(ost.psi) for a, ost in engine.obs.items() if ost.beta_re is not None}


def tau_dicts(engine):
    """The engine's HDP weights as brute-force input."""
    return {b: (dict(st.tau), st.tau_u, {g: dict(r) for g, r in st.rho.items()}, dict(st.rho_u))
            for b, st in engine.lat.items() if st.tau}


def agrees(engine, i, want, *, use="ffbs", rtol=1e-9, atol=1e-12):
    configs, p = engine.ffbs_conditional(i) if use == "ffbs" else engine.joint_conditional(i)
    got = dict(zip(configs, p, strict=True))
    keys = set(got) | {k for k, v in want.items() if v > 0}
    return all(np.isclose(got.get(k, 0.0), want.get(k, 0.0), rtol=rtol, atol=atol) for k in keys)


def group_conditional(net, z, index, observed, tau, b, members, present=None):
    """{value of group node b for the items ``members`` (NEW: a fresh state): probability}, by ratios of joints."""
    others = np.setdiff1d(np.arange(len(z[b])), members)
    node = net.node(b)
    if isinstance(node.prior, isbn.Dirichlet):
        choices = list(range(node.prior.n_states))
    else:
        choices = sorted(set(z[b][others].tolist())) + [NEW]
    tau_eff = dict(tau)
    if isinstance(node.prior, isbn.HDP):
        w, wu = tau[b][:2]
        alive = set(z[b][others].tolist())
        tau_eff[b] = ({k: v for k, v in w.items() if k in alive}, wu + sum(v for k, v in w.items() if k not in alive))
    out = {}
    for k in choices:
        zz = {c: np.array(v, copy=True) for c, v in z.items()}
        zz[b][members] = int(z[b].max()) + 1 if k == NEW else k
        out[k] = log_joint(net, zz, index, observed, tau_eff, present)
    m = max(out.values())
    tot = sum(np.exp(v - m) for v in out.values())
    return {k: np.exp(v - m) / tot for k, v in out.items()}
