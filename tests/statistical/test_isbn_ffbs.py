"""FFBS over the ISBN's factor graph against enumeration of the joint latent states (seed 002 §4).

Fast tier (deterministic): on cycle-free networks (chain, fork, two roots joined by a
two-parent observation, mixed priors and likelihoods) the joint conditional of item i that
forward-filtering backward-sampling implies equals the enumerated eq. 1 on every item of random
states; a message pass that forgets the downstream evidence fails. Networks with a cycle are
refused by method='ffbs' with a message naming the cycle-free requirement, and 'auto' enumerates.
The backward-sampling draws match the FFBS conditional (chi-square), and fail it when broken.
"""

from __future__ import annotations

import numpy as np
import pytest

from harmonium.errors import InvalidParameterError
from harmonium.expfam import Bernoulli, Beta, Categorical, Dirichlet, Gamma, Gaussian, NormalGamma, Poisson
from harmonium.inference.mcmc.isbn import gibbs as ig
from harmonium.models.directed import isbn

from .test_hdp_exact import chi2_pvalue

ALPHA_TEST = 1e-4


class BrokenAbsorb(ig.ISBNSampler):
    """A message pass that drops the messages of the child nodes (no downstream evidence)."""

    def _absorb(self, table, message, axis):
        return table


def _cat(name, parents, index=()):
    return isbn.Observed(name, Categorical, Dirichlet(np.full(3, 0.4)), parents=parents, index=index,
                         fixed={"n_categories": 3})


N = 7
RNG = np.random.default_rng(5)
DOC = np.array([0, 0, 0, 1, 1, 2, 2])
ITEM = np.array([0, 1, 2, 0, 1, 0, 2])


def _cases():
    """(name, network, index, observed, init) of tree-shaped networks."""
    cases = []
    # chain z3 -> z2 -> z1 -> w with HDP, Dirichlet and DP priors (DP last: it forks under z1)
    chain = isbn.Network([isbn.Latent("z3", isbn.HDP(1.3, 0.9), index=("doc",)),
                          isbn.Latent("z2", isbn.Dirichlet(1.5, 2), parents=("z3",)),
                          isbn.Latent("z1", isbn.HDP(0.7, 1.1), parents=("z2",), index=("doc",)),
                          _cat("w", ("z1",))], indices=("doc",))
    cases.append(("chain", chain, {"doc": DOC}, {"w": RNG.integers(0, 3, N)},
                  {"z3": RNG.integers(0, 2, N), "z2": RNG.integers(0, 2, N), "z1": RNG.integers(0, 3, N)}))
    # fork: r -> a -> x (Poisson), r -> b -> y (Gaussian), r -> w (categorical)
    fork = isbn.Network([isbn.Latent("r", isbn.HDP(1.0, 1.0), index=("doc",)),
                         isbn.Latent("a", isbn.HDP(0.8, 1.0), parents=("r",)),
                         isbn.Latent("b", isbn.Dirichlet(2.0, 3), parents=("r",)),
                         isbn.Observed("x", Poisson, Gamma(2.0, 0.5), parents=("a",)),
                         isbn.Observed("y", Gaussian, NormalGamma(0.0, 0.5, 2.0, 1.0), parents=("b",)),
                         _cat("w", ("r",))], indices=("doc",))
    cases.append(("fork", fork, {"doc": DOC},
                  {"x": RNG.poisson(3.0, N), "y": RNG.normal(size=N), "w": RNG.integers(0, 3, N)},
                  {"r": RNG.integers(0, 2, N), "a": RNG.integers(0, 2, N), "b": RNG.integers(0, 3, N)}))
    # two roots joined by a two-parent Bernoulli observation, plus a child of one root (BiHDP-like)
    bi = isbn.Network([isbn.Latent("u", isbn.HDP(1.2, 1.0), index=("doc",)),
                       isbn.Latent("v", isbn.HDP(0.9, 1.5), index=("item",)),
                       isbn.Latent("c", isbn.HDP(1.0, 1.0), parents=("v",)),
                       isbn.Observed("x", Bernoulli, Beta(1.0, 2.0), parents=("u", "v")),
                       _cat("w", ("c",), index=("item",))], indices=("doc", "item"))
    cases.append(("two_roots", bi, {"doc": DOC, "item": ITEM}, {"x": RNG.integers(0, 2, N), "w": RNG.integers(0, 3, N)},
                  {"u": RNG.integers(0, 2, N), "v": RNG.integers(0, 3, N), "c": RNG.integers(0, 2, N)}))
    return cases


CASES = _cases()


@pytest.mark.parametrize("cls, ok", [(ig.ISBNSampler, True), (BrokenAbsorb, False)])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_ffbs_equals_enumeration(case, cls, ok):
    _, net, index, observed, init = case
    engine = cls(net, index, observed, init=init)
    assert engine.method == "ffbs"
    agree = []
    for i in range(N):
        c1, p1 = engine.joint_conditional(i)
        c2, p2 = engine.ffbs_conditional(i)
        assert c1 == c2
        agree.append(np.allclose(p1, p2, rtol=1e-10, atol=1e-14))
    assert all(agree) == ok


@pytest.mark.parametrize("cls, ok", [(ig.ISBNSampler, True), (BrokenAbsorb, False)])
def test_ffbs_draws_follow_the_conditional(cls, ok):
    _, net, index, observed, init = CASES[0]
    engine = cls(net, index, observed, init=init)
    ref = ig.ISBNSampler(net, index, observed, init=init)
    i = 2
    configs, p = ref.joint_conditional(i)
    where = {c: j for j, c in enumerate(configs)}
    rng = np.random.default_rng(11)
    engine._remove(i)
    counts = np.zeros(len(configs))
    for _ in range(1500):
        counts[where[engine._ffbs_sample(i, rng)]] += 1
    pv = chi2_pvalue(counts, p)
    assert (pv > ALPHA_TEST) == ok, pv


def _loop_network():
    # z1 -> z2, z1 -> z3, x | (z2, z3): the factor graph has the cycle z1 - z2 - x - z3 - z1
    return isbn.Network([isbn.Latent("z1", isbn.DP(1.0)), isbn.Latent("z2", isbn.DP(1.0), parents=("z1",)),
                         isbn.Latent("z3", isbn.DP(1.0), parents=("z1",)),
                         isbn.Observed("x", Bernoulli, Beta(1.0, 1.0), parents=("z2", "z3"))])


def test_networks_with_a_cycle_are_refused_by_ffbs_and_sampled_on_the_junction_tree_by_auto():
    x = np.array([0, 1, 1, 0])
    with pytest.raises(InvalidParameterError, match="cycle-free network.*z2, z3.*Use method='junction_tree'"):
        ig.ISBNSampler(_loop_network(), {}, {"x": x}, method="ffbs")
    engine = ig.ISBNSampler(_loop_network(), {}, {"x": x})
    assert engine.method == "junction_tree" and engine.cycle == ["z2", "z3"]
    with pytest.raises(InvalidParameterError, match="cycle-free"):
        engine.ffbs_conditional(0)
    engine.step(np.random.default_rng(0))
    with pytest.raises(InvalidParameterError, match="method must be one of 'auto', 'ffbs', 'junction_tree'"):
        ig.ISBNSampler(_loop_network(), {}, {"x": x}, method="junction")


# -- variable elimination with backward sampling (networks with cycles) ---------------------------------
class BrokenCombine(ig.ISBNSampler):
    """Elimination that keeps only the first factor holding each node."""

    def _combine(self, table, factor):
        return table if np.any(table) else table + factor


def _loop_cases():
    # z1 -> z2, z1 -> z3, x | (z2, z3), w | z1: one cycle; and a 4-cycle z1 -> {z2, z3} -> z4 -> y
    loop = isbn.Network([isbn.Latent("z1", isbn.HDP(1.1, 0.9), index=("doc",)),
                         isbn.Latent("z2", isbn.HDP(0.8, 1.0), parents=("z1",)),
                         isbn.Latent("z3", isbn.Dirichlet(1.5, 2), parents=("z1",)),
                         isbn.Observed("x", Bernoulli, Beta(1.0, 2.0), parents=("z2", "z3")),
                         _cat("w", ("z1",))], indices=("doc",))
    diamond = isbn.Network([isbn.Latent("z1", isbn.Dirichlet(1.0, 2)),
                            isbn.Latent("z2", isbn.HDP(0.9, 1.0), parents=("z1",)),
                            isbn.Latent("z3", isbn.HDP(1.2, 1.0), parents=("z1",)),
                            isbn.Latent("z4", isbn.Dirichlet(2.0, 3), parents=("z2", "z3")),
                            isbn.Observed("y", Poisson, Gamma(2.0, 0.5), parents=("z4",)), _cat("w", ("z2",))])
    return [("loop", loop, {"doc": DOC}, {"x": RNG.integers(0, 2, N), "w": RNG.integers(0, 3, N)},
             {"z1": RNG.integers(0, 2, N), "z2": RNG.integers(0, 3, N), "z3": RNG.integers(0, 2, N)}),
            ("diamond", diamond, {}, {"y": RNG.poisson(3.0, N), "w": RNG.integers(0, 3, N)},
             {"z1": RNG.integers(0, 2, N), "z2": RNG.integers(0, 2, N), "z3": RNG.integers(0, 2, N),
              "z4": RNG.integers(0, 3, N)})]


LOOPS = _loop_cases()


# the two exact routes for any network: (conditional of item i, one draw for a removed item i)
ROUTES = {"eliminate": ("eliminate_conditional", "_eliminate_sample"),
          "junction_tree": ("junction_conditional", "_junction_sample")}


@pytest.mark.parametrize("method", list(ROUTES))
@pytest.mark.parametrize("cls, ok", [(ig.ISBNSampler, True), (BrokenCombine, False)])
@pytest.mark.parametrize("case", LOOPS + CASES, ids=[c[0] for c in LOOPS + CASES])
def test_exact_routes_equal_enumeration(case, cls, ok, method):
    _, net, index, observed, init = case
    engine = cls(net, index, observed, init=init, method=method)
    agree = []
    for i in range(N):
        c1, p1 = engine.joint_conditional(i)
        c2, p2 = getattr(engine, ROUTES[method][0])(i)
        assert c1 == c2
        agree.append(np.allclose(p1, p2, rtol=1e-10, atol=1e-14))
    assert all(agree) == ok


@pytest.mark.parametrize("method, case, i, seed", [("eliminate", 0, 3, 12), ("junction_tree", 1, 2, 13)])
@pytest.mark.parametrize("cls, ok", [(ig.ISBNSampler, True), (BrokenCombine, False)])
def test_exact_route_draws_follow_the_conditional(cls, ok, method, case, i, seed):
    _, net, index, observed, init = LOOPS[case]
    engine = cls(net, index, observed, init=init, method=method)
    ref = ig.ISBNSampler(net, index, observed, init=init, method="enumerate")
    configs, p = ref.joint_conditional(i)
    where = {c: j for j, c in enumerate(configs)}
    rng = np.random.default_rng(seed)
    engine._remove(i)
    counts = np.zeros(len(configs))
    for _ in range(1500):
        counts[where[getattr(engine, ROUTES[method][1])(i, rng)]] += 1
    pv = chi2_pvalue(counts, p)
    assert (pv > ALPHA_TEST) == ok, pv


def test_ffbs_and_enumeration_sweeps_agree_in_the_state_space_they_visit():
    # same seed, same method -> identical; both methods keep the counts consistent with z
    _, net, index, observed, init = CASES[1]
    runs = []
    for method in ("ffbs", "ffbs", "enumerate"):
        e = ig.ISBNSampler(net, index, observed, init=init, method=method)
        rng = np.random.default_rng(3)
        for _ in range(3):
            e.step(rng)
        fresh = ig.ISBNSampler(net, index, observed, init={b: e.lat[b].z for b in e.order})
        for b in e.order:
            got = {r: {k: n for k, n in c.items() if n} for r, c in e.lat[b].counts.items()}
            want = {r: dict(c) for r, c in fresh.lat[b].counts.items()}
            assert {r: c for r, c in got.items() if c} == want
        runs.append({b: e.lat[b].z.copy() for b in e.order})
    for b in runs[0]:
        np.testing.assert_array_equal(runs[0][b], runs[1][b])


# -- slow: FFBS sweeps leave the enumerated posterior invariant (finite chain, 4 items) ------------------
@pytest.mark.slow
@pytest.mark.parametrize("cls, ok", [(ig.ISBNSampler, True), (BrokenAbsorb, False)])
def test_ffbs_sweeps_keep_the_exact_posterior(cls, ok):
    import itertools

    from . import _isbn_brute as bf

    net = isbn.Network([isbn.Latent("top", isbn.Dirichlet(1.2, 2), index=("doc",)),
                        isbn.Latent("mid", isbn.Dirichlet(0.9, 2), parents=("top",)),
                        _cat("w", ("mid",))], indices=("doc",))
    doc, w = np.array([0, 0, 1, 1]), np.array([0, 2, 2, 1])
    states = list(itertools.product(range(4), repeat=4))  # (top, mid) per item, coded top * 2 + mid
    logp = np.array([bf.log_joint(net, {"top": np.array(s) // 2, "mid": np.array(s) % 2}, {"doc": doc}, {"w": w}, {})
                     for s in states])
    post = np.exp(logp - logp.max())
    post /= post.sum()
    rng = np.random.default_rng(21)
    out = np.zeros(len(states))
    for s in rng.choice(len(states), size=3000, p=post):
        code = np.array(states[s])
        e = cls(net, {"doc": doc}, {"w": w}, init={"top": code // 2, "mid": code % 2})
        assert e.method == "ffbs"
        for _ in range(2):
            e.sweep(rng)
        out[int(np.ravel_multi_index(tuple(e.lat["top"].z * 2 + e.lat["mid"].z), (4,) * 4))] += 1
    pv = chi2_pvalue(out, post)
    assert (pv > ALPHA_TEST) == ok, pv


# -- FFBS on the junction tree (seed 002 §4): any network ---------------------------------------------------
def test_junction_tree_of_the_loops():
    # the loop's cliques join z1, z2, z3 (the cycle is triangulated); the diamond's {z1, z2, z3} and {z2, z3, z4}
    loop = ig.ISBNSampler(LOOPS[0][1], LOOPS[0][2], LOOPS[0][3], init=LOOPS[0][4])
    assert loop.junction.cliques == (("z1", "z2", "z3"),)
    dia = ig.ISBNSampler(LOOPS[1][1], LOOPS[1][2], LOOPS[1][3], init=LOOPS[1][4])
    assert set(map(frozenset, dia.junction.cliques)) == {frozenset({"z2", "z3", "z4"}), frozenset({"z1", "z2", "z3"})}
    assert dia.junction.parent.count(-1) == 1
    chain = ig.ISBNSampler(CASES[0][1], CASES[0][2], CASES[0][3], init=CASES[0][4])
    assert len(chain.junction.cliques) == 2  # a chain's cliques are its pairwise factors
