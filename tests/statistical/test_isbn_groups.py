"""Nodes over a subset of the data indices (seed 002 §5, Fig. 2c's z_j^0): one value per group of items,
resampled by removing the group's items and adding them back one by one at their old values.

Fast tier (deterministic), on a multimedia-like network (a page class z0 per document, a word branch
z1 -> w and a feature branch z2 -> y under it): the engine's conditional of every group's value equals
brute force from the closed-form joint; the per-item FFBS conditional with z0 as evidence equals brute
force and enumeration; sweeps keep groups constant and counts consistent. Negative control: re-adding
the items without updating the counts between them (a product of predictives, not the sequential
probability) fails the group test.
"""

from __future__ import annotations

import numpy as np
import pytest

from harmonium.errors import InvalidParameterError
from harmonium.expfam import Categorical, Dirichlet, Gamma, Poisson
from harmonium.inference.mcmc.isbn import gibbs as ig
from harmonium.models.directed import isbn

from . import _isbn_brute as bf

DOC = np.array([0, 0, 0, 1, 1, 2, 2, 2])
N = DOC.size
R = np.random.default_rng(23)
W = R.integers(0, 3, N)
Y = R.poisson(2.5, N)


def multimedia(z0_prior):
    return isbn.Network([
        isbn.Latent("z0", z0_prior, per=("doc",)),
        isbn.Latent("z1", isbn.HDP(1.1, 0.9), parents=("z0",)),
        isbn.Latent("z2", isbn.HDP(0.8, 1.2), parents=("z0",), index=("doc",)),
        isbn.Observed("w", Categorical, Dirichlet(np.full(3, 0.4)), parents=("z1",), fixed={"n_categories": 3}),
        isbn.Observed("y", Poisson, Gamma(2.0, 1.0), parents=("z2",))], indices=("doc",))


PRIORS = {"dirichlet": isbn.Dirichlet(1.5, 2), "dp": isbn.DP(0.9), "hdp": isbn.HDP(1.3, 1.0)}
STATES = [
    {"z0": np.array([0, 0, 0, 1, 1, 0, 0, 0]), "z1": R.integers(0, 2, N), "z2": R.integers(0, 3, N)},
    {"z0": np.array([1, 1, 1, 1, 1, 0, 0, 0]), "z1": R.integers(0, 3, N), "z2": R.integers(0, 2, N)},
]


class BrokenReadd(ig.ISBNSampler):
    """Scores the group's items against the counts without any of them (no sequential update)."""

    def _readd(self, members):
        lp = 0.0
        for m in members:
            m = int(m)
            config = self._config_of(m)
            for c in self.order:
                if c in self.groups:
                    continue
                node = self.net.node(c)
                lp += np.log(self._prior_term(node, self.lat[c], self._row(node, config, m), config[c]))
            for node in self.net.observed:
                lp += self._log_f_seq(node, self.obs[node.name], self._row(node, config, m), m)
        return lp


def _engine(cls, prior, state):
    return cls(multimedia(prior), {"doc": DOC}, {"w": W, "y": Y}, init=state)


@pytest.mark.parametrize("cls, ok", [(ig.ISBNSampler, True), (BrokenReadd, False)])
@pytest.mark.parametrize("prior", list(PRIORS))
def test_group_value_conditional_is_brute_force(prior, cls, ok):
    agree = []
    for state in STATES:
        e = _engine(cls, PRIORS[prior], state)
        tau = bf.tau_dicts(e)
        z = {b: e.lat[b].z.copy() for b in e.order}
        for g, members in enumerate(e.groups["z0"]):
            labels, p = e.group_conditional("z0", g)
            want = bf.group_conditional(e.net, z, {"doc": DOC}, {"w": W, "y": Y}, tau, "z0", members)
            got = dict(zip(labels, p, strict=True))
            keys = set(got) | {k for k, v in want.items() if v > 0}
            agree.append(all(np.isclose(got.get(k, 0), want.get(k, 0), rtol=1e-9, atol=1e-12) for k in keys))
            for b in e.order:  # look-only
                np.testing.assert_array_equal(e.lat[b].z, z[b])
    assert all(agree) == ok


@pytest.mark.parametrize("prior", list(PRIORS))
def test_item_conditional_with_group_evidence_is_brute_force(prior):
    for state in STATES:
        e = _engine(ig.ISBNSampler, PRIORS[prior], state)
        assert e.method == "ffbs"  # z1 - z0 - z2 is no cycle once z0 is evidence
        tau = bf.tau_dicts(e)
        z = {b: e.lat[b].z.copy() for b in e.order}
        for i in range(N):
            want = bf.conditional(e.net, e.order, z, {"doc": DOC}, {"w": W, "y": Y}, tau, i)
            assert bf.agrees(e, i, want) and bf.agrees(e, i, want, use="enumerate")


@pytest.mark.parametrize("prior", list(PRIORS))
def test_sweeps_keep_groups_constant_and_counts_consistent(prior):
    zs = []
    for _ in range(2):
        e = _engine(ig.ISBNSampler, PRIORS[prior], STATES[0])
        rng = np.random.default_rng(8)
        for _ in range(4):
            e.step(rng)
        for members in e.groups["z0"]:
            assert len(set(e.lat["z0"].z[members].tolist())) == 1
        fresh = _engine(ig.ISBNSampler, PRIORS[prior], {b: e.lat[b].z for b in e.order})
        for b in e.order:
            got = {r: {k: n for k, n in c.items() if n} for r, c in e.lat[b].counts.items()}
            assert {r: c for r, c in got.items() if c} == {r: dict(c) for r, c in fresh.lat[b].counts.items()}
        zs.append(e.lat["z0"].z.copy())
    np.testing.assert_array_equal(zs[0], zs[1])


def test_group_node_declarations_and_data_are_checked():
    with pytest.raises(InvalidParameterError, match="per=.*not declared data indices"):
        isbn.Network([isbn.Latent("z0", isbn.DP(1.0), per=("page",)),
                      isbn.Observed("y", Poisson, Gamma(1.0, 1.0), parents=("z0",))], indices=("doc",)).validate()
    with pytest.raises(InvalidParameterError, match="its parent 'z' must too"):
        isbn.Network([isbn.Latent("z", isbn.DP(1.0)), isbn.Latent("z0", isbn.DP(1.0), parents=("z",), per=("doc",)),
                      isbn.Observed("y", Poisson, Gamma(1.0, 1.0), parents=("z0",))], indices=("doc",)).validate()
    bad = dict(STATES[0], z0=np.array([0, 1, 0, 1, 1, 0, 0, 0]))
    with pytest.raises(InvalidParameterError, match="takes one value per \\('doc',\\), but init gives items"):
        _engine(ig.ISBNSampler, PRIORS["dp"], bad)


# -- Fig. 2c proper: word items carry no feature and feature items no word (dangling branches) -------------
KIND = np.array([0, 1, 0, 0, 1, 1, 0, 1])  # 0: a word item, 1: a visual-feature item
PRESENT = {"w": KIND == 0, "y": KIND == 1}


@pytest.mark.parametrize("use_present, ok", [(True, True), (False, False)])
@pytest.mark.parametrize("prior", ["dirichlet", "hdp"])
def test_multimedia_with_dangling_branches_is_brute_force(prior, use_present, ok):
    # brute force of the model where each item has one branch; an engine told every item has both fails
    agree = []
    for state in STATES:
        e = ig.ISBNSampler(multimedia(PRIORS[prior]), {"doc": DOC}, {"w": W, "y": Y}, init=state,
                           present=PRESENT if use_present else None)
        tau = bf.tau_dicts(e)
        z = {b: e.lat[b].z.copy() for b in e.order}
        for g, members in enumerate(e.groups["z0"]):
            labels, p = e.group_conditional("z0", g)
            want = bf.group_conditional(e.net, z, {"doc": DOC}, {"w": W, "y": Y}, tau, "z0", members, PRESENT)
            got = dict(zip(labels, p, strict=True))
            agree.append(all(np.isclose(got.get(k, 0), v, rtol=1e-9, atol=1e-12) for k, v in want.items()))
        for i in range(N):
            want = bf.conditional(e.net, e.order, z, {"doc": DOC}, {"w": W, "y": Y}, tau, i, PRESENT)
            agree.append(bf.agrees(e, i, want) and bf.agrees(e, i, want, use="enumerate"))
    assert all(agree) == ok


def test_multimedia_sweeps_with_dangling_branches_keep_counts_consistent():
    net = multimedia(PRIORS["hdp"])
    e = ig.ISBNSampler(net, {"doc": DOC}, {"w": W, "y": Y}, init=STATES[1], present=PRESENT)
    rng = np.random.default_rng(2)
    for _ in range(4):
        e.step(rng)
    fresh = ig.ISBNSampler(net, {"doc": DOC}, {"w": W, "y": Y}, init={b: e.lat[b].z for b in e.order},
                           present=PRESENT)
    for b in e.order:
        got = {r: {k: n for k, n in c.items() if n} for r, c in e.lat[b].counts.items()}
        assert {r: c for r, c in got.items() if c} == {r: dict(c) for r, c in fresh.lat[b].counts.items()}
    # word items count no z2, feature items no z1
    assert sum(e.lat["z1"].totals.values()) == int(PRESENT["w"].sum())
    assert sum(e.lat["z2"].totals.values()) == int(PRESENT["y"].sum())


# -- slow: sweeps with group resampling and dangling branches keep the enumerated posterior ---------------
@pytest.mark.slow
@pytest.mark.parametrize("cls, ok", [(ig.ISBNSampler, True), (BrokenReadd, False)])
def test_group_sweeps_keep_the_exact_posterior(cls, ok):
    import itertools

    from .test_hdp_exact import chi2_pvalue

    net = isbn.Network([
        isbn.Latent("z0", isbn.Dirichlet(1.0, 2), per=("doc",)),
        isbn.Latent("z1", isbn.Dirichlet(0.8, 2), parents=("z0",)),
        isbn.Latent("z2", isbn.Dirichlet(1.3, 2), parents=("z0",)),
        isbn.Observed("w", Categorical, Dirichlet(np.full(3, 0.4)), parents=("z1",), fixed={"n_categories": 3}),
        isbn.Observed("y", Poisson, Gamma(2.0, 1.0), parents=("z2",))], indices=("doc",))
    doc = np.array([0, 0, 1, 1])
    w, y = np.array([0, 2, 2, 0]), np.array([0, 4, 1, 3])
    present = {"w": np.array([True, False, True, True]), "y": np.array([True, True, False, True])}
    # free variables: z0 per doc (2), z1 at items with w (3), z2 at items with y (3); dangling ones fixed at 0
    wi, yi = np.flatnonzero(present["w"]), np.flatnonzero(present["y"])
    states = list(itertools.product(range(2), repeat=2 + wi.size + yi.size))

    def unpack(s):
        z0 = np.array(s[:2])[doc]
        z1, z2 = np.zeros(4, dtype=np.int64), np.zeros(4, dtype=np.int64)
        z1[wi], z2[yi] = s[2:2 + wi.size], s[2 + wi.size:]
        return {"z0": z0, "z1": z1, "z2": z2}

    logp = np.array([bf.log_joint(net, unpack(s), {"doc": doc}, {"w": w, "y": y}, {}, present) for s in states])
    post = np.exp(logp - logp.max())
    post /= post.sum()
    where = {s: j for j, s in enumerate(states)}
    rng = np.random.default_rng(13)
    out = np.zeros(len(states))
    for s in rng.choice(len(states), size=3000, p=post):
        e = cls(net, {"doc": doc}, {"w": w, "y": y}, init=unpack(states[s]), present=present)
        for _ in range(2):
            e.sweep(rng)
        z = e.lat
        key = (int(z["z0"].z[0]), int(z["z0"].z[2])) + tuple(int(v) for v in z["z1"].z[wi]) + tuple(
            int(v) for v in z["z2"].z[yi])
        out[where[key]] += 1
    pv = chi2_pvalue(out, post)
    assert (pv > 1e-4) == ok, pv
