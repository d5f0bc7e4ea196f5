"""The ISBN engine against exact targets (seed 002 §4-5).

Fast tier (deterministic):
1. the engine built from the HDP declaration has the dedicated HDP sampler's
   full conditional p(z_i | z_-i, tau), on every token of several states;
2. a two-node nested DP (z1 -> z2 -> x, DP priors, §5 "the state space forks")
   has the joint conditional p(z1_i, z2_i | rest) of brute force from the
   nested Chinese-restaurant joint (exercises joint enumeration, new parent
   states and forking);
   negative controls: a mis-declared HDP (alpha doubled) and an engine whose
   collapsed predictive F of an empty row forgets its prior mean fail them.
Slow tier: engine-built HDP chains from exact draws of p(z, tau | w), two
iterations each, against the enumerated p(z | w) (chi-square), with the
broken-F engine as negative control.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import gammaln

from harmonium.expfam import Categorical, Dirichlet
from harmonium.inference.mcmc.isbn import gibbs as ig
from harmonium.inference.mcmc.isbn import hdp as da
from harmonium.models.directed import isbn
from harmonium.models.directed.hdp import word_log_likelihood

from . import _hdp_tiny as T
from .test_hdp_exact import chi2_pvalue

ALPHA_TEST = 1e-4


def hdp_network(alpha=T.ALPHA):
    return isbn.Network(
        [isbn.Latent("z", isbn.HDP(alpha, T.GAMMA), index=("doc",)),
         isbn.Observed("w", Categorical, Dirichlet(np.full(3, T.BETA)), parents=("z",), fixed={"n_categories": 3})],
        indices=("doc",))


class BrokenF(ig.ISBNSampler):
    """The predictive of an empty CPT row returns 1 instead of the prior predictive (1/V for words)."""

    def _log_f(self, node, ost, row, i):
        if ig.NEW in row:
            return 0.0
        return super()._log_f(node, ost, row, i)

    def _log_f_rows(self, node, ost, rows, i):  # the same defect on the FFBS path
        out = super()._log_f_rows(node, ost, rows, i)
        return np.where([ig.NEW in r for r in rows], 0.0, out)


def _engine_hdp_conditional(engine, i, K):
    configs, p = engine.joint_conditional(i)
    out = np.zeros(K + 1)
    for c, pp in zip(configs, p, strict=True):
        out[K if c[0] == ig.NEW else c[0]] += pp
    return out


@pytest.mark.parametrize("cls, alpha, ok", [(ig.ISBNSampler, T.ALPHA, True), (ig.ISBNSampler, 2 * T.ALPHA, False),
                                             (BrokenF, T.ALPHA, False)])
def test_engine_hdp_has_the_dedicated_conditional(cls, alpha, ok):
    rng = np.random.default_rng(3)
    agree = []
    for s in (0, 7, 20, 33, 51):
        z = T.PARTITIONS[s]
        K = int(z.max()) + 1
        tau = rng.dirichlet(np.ones(K + 1))
        engine = cls(hdp_network(alpha), {"doc": T.DOC_OF}, {"w": T.TOKENS.words}, init={"z": z}, tau={"z": tau})
        st = da.state_from_assignments(T.TOKENS, T.MODEL, z, tau, T.ALPHA, T.GAMMA)
        for i in range(T.N):
            agree.append(np.allclose(_engine_hdp_conditional(engine, i, K), da.conditional(st, T.TOKENS, T.MODEL, i),
                                     rtol=1e-10, atol=1e-13))
        # the look-only conditional leaves the engine unchanged
        np.testing.assert_array_equal(engine.lat["z"].z, z)
    assert all(agree) == ok


# -- nested DP: z1 ~ CRP(a1); z2 | z1 ~ CRP(a2) per z1 state; x | z2 Dirichlet-categorical ------------
A1, A2 = 0.8, 1.7
X = np.array([0, 1, 1, 2, 0])


def ndp_network():
    return isbn.Network(
        [isbn.Latent("z1", isbn.DP(A1)), isbn.Latent("z2", isbn.DP(A2), parents=("z1",)),
         isbn.Observed("x", Categorical, Dirichlet(np.full(3, T.BETA)), parents=("z2",), fixed={"n_categories": 3})])


def _crp_log(sizes, a):
    sizes = np.asarray(sizes, dtype=np.float64)
    return len(sizes) * np.log(a) + gammaln(a) - gammaln(a + sizes.sum()) + np.sum(gammaln(sizes))


def _ndp_log_joint(z1, z2):
    lp = _crp_log(np.unique(z1, return_counts=True)[1], A1)
    for l in np.unique(z1):
        lp += _crp_log(np.unique(z2[z1 == l], return_counts=True)[1], A2)
    n_wk = np.zeros((3, int(z2.max()) + 1))
    for i, k in enumerate(z2):
        n_wk[X[i], k] += 1
    n_wk = n_wk[:, n_wk.sum(axis=0) > 0]
    return lp + word_log_likelihood(n_wk, T.BETA)


def _ndp_brute_force(z1, z2, i):
    """{(z1, z2) config with NEW for a fresh state: probability} by ratios of the nested CRP joint."""
    others = [j for j in range(len(z1)) if j != i]
    l_alive = sorted(set(z1[others].tolist()))
    k_alive = sorted(set(z2[others].tolist()))
    fresh1, fresh2 = int(z1.max()) + 1, int(z2.max()) + 1
    out = {}
    for c1 in l_alive + [ig.NEW]:
        for c2 in k_alive + [ig.NEW]:
            a, b = z1.copy(), z2.copy()
            a[i] = fresh1 if c1 == ig.NEW else c1
            b[i] = fresh2 if c2 == ig.NEW else c2
            # a z2 state lives under one z1 state only (the tree forks): other combinations have probability 0
            if c2 != ig.NEW and any(z1[j] != a[i] for j in others if z2[j] == c2):
                out[(c1, c2)] = -np.inf
                continue
            out[(c1, c2)] = _ndp_log_joint(a, b)
    m = max(out.values())
    tot = sum(np.exp(v - m) for v in out.values())
    return {k: np.exp(v - m) / tot for k, v in out.items()}


def _nested_states():
    """A few nested assignments (z2 labels unique across z1 states)."""
    return [
        (np.array([0, 0, 0, 0, 0]), np.array([0, 0, 0, 0, 0])),
        (np.array([0, 0, 1, 1, 1]), np.array([0, 1, 2, 2, 3])),
        (np.array([0, 1, 0, 1, 2]), np.array([0, 1, 2, 3, 4])),
        (np.array([0, 0, 0, 1, 1]), np.array([0, 0, 1, 2, 2])),
    ]


@pytest.mark.parametrize("cls, ok", [(ig.ISBNSampler, True), (BrokenF, False)])
def test_engine_nested_dp_joint_conditional(cls, ok):
    agree = []
    for z1, z2 in _nested_states():
        engine = cls(ndp_network(), {}, {"x": X}, init={"z1": z1, "z2": z2})
        for i in range(len(X)):
            configs, p = engine.joint_conditional(i)
            got = dict(zip(configs, p, strict=True))
            want = _ndp_brute_force(z1, z2, i)
            keys = set(got) | {k for k, v in want.items() if v > 0}
            agree.append(all(np.isclose(got.get(k, 0.0), want.get(k, 0.0), rtol=1e-9, atol=1e-12) for k in keys))
    assert all(agree) == ok


# -- slow: the engine-built HDP in distribution -----------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("cls, ok", [(ig.ISBNSampler, True), (BrokenF, False)])
def test_engine_hdp_chains_match_the_posterior(cls, ok):
    part, mk, p = T.joint_states()
    target = T.partition_posterior()
    codes = T.code_table()
    rng = np.random.default_rng(99)
    n_chains = 8_000
    draws = rng.choice(p.shape[0], size=n_chains, p=p)
    out = np.empty(n_chains, dtype=np.int64)
    for c, s in enumerate(draws):
        z = T.PARTITIONS[part[s]]
        K = int(z.max()) + 1
        g = np.append(rng.gamma(mk[s, :K].astype(float)), rng.gamma(T.GAMMA))
        engine = cls(hdp_network(), {"doc": T.DOC_OF}, {"w": T.TOKENS.words}, init={"z": z}, tau={"z": g / g.sum()})
        for _ in range(2):
            engine.step(rng)
        out[c] = codes[T.canonical_code(engine.lat["z"].z)]
    pv = chi2_pvalue(np.bincount(out, minlength=target.shape[0]).astype(float), target)
    assert (pv > ALPHA_TEST) == ok, pv


def test_nested_states_are_consistent():
    # every test state has z2 states nested in z1 states (a guard on the fixture itself)
    for z1, z2 in _nested_states():
        for k in np.unique(z2):
            assert len(set(z1[z2 == k].tolist())) == 1


# -- a DP mixture with Poisson observations: the generic expfam path of F (eq. 2) ------------------
XP = np.array([0, 3, 1, 7, 2])
A_DP, SHAPE, RATE = 1.1, 2.0, 0.7


def _poisson_gamma_log_marginal(x):
    x = np.asarray(x, dtype=np.float64)
    a, b = SHAPE + x.sum(), RATE + x.size
    return SHAPE * np.log(RATE) - gammaln(SHAPE) + gammaln(a) - a * np.log(b) - np.sum(gammaln(x + 1))


def _dpm_log_joint(z):
    lp = _crp_log(np.unique(z, return_counts=True)[1], A_DP)
    return lp + sum(_poisson_gamma_log_marginal(XP[z == k]) for k in np.unique(z))


@pytest.mark.parametrize("broken, ok", [(False, True), (True, False)])
def test_engine_dp_mixture_poisson_gamma_conditional(broken, ok):
    from harmonium.expfam import Gamma, Poisson

    net = isbn.Network([isbn.Latent("z", isbn.DP(A_DP)),
                        isbn.Observed("x", Poisson, Gamma(SHAPE, RATE), parents=("z",))])
    cls = BrokenF if broken else ig.ISBNSampler
    agree = []
    for z in (np.array([0, 0, 0, 0, 0]), np.array([0, 1, 0, 1, 2]), np.array([0, 1, 2, 3, 4])):
        engine = cls(net, {}, {"x": XP}, init={"z": z})
        for i in range(len(XP)):
            configs, p = engine.joint_conditional(i)
            got = dict(zip([c[0] for c in configs], p, strict=True))
            alive = sorted(set(np.delete(z, i).tolist()))
            want = {}
            for k in alive + [ig.NEW]:
                zz = z.copy()
                zz[i] = int(z.max()) + 1 if k == ig.NEW else k
                want[k] = _dpm_log_joint(zz)
            m = max(want.values())
            tot = sum(np.exp(v - m) for v in want.values())
            agree.append(all(np.isclose(got[k], np.exp(v - m) / tot, rtol=1e-9) for k, v in want.items()))
    assert all(agree) == ok
