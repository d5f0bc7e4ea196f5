"""HDP with random effects (seed 002 §6; Kim & Smyth 2006) and concentration resampling in the ISBN engine.

Exact targets:
1. the psi update (Antoniak tables S_{x|l,j} ~ A[N_{x|l,j}, beta psi_{x|l}], psi ~ Dir(eta + S)) leaves
   p(psi | x, z) of the Dirichlet-multinomial rows invariant: exact draws of psi (by quadrature, V = 2) stay
   exact after one update (KS); negative control: psi ~ Dir(eta + N), the tables skipped;
2. the item conditional with random effects is brute force (tests/statistical/test_isbn_examples.py, example
   ``hdp_random_effects``);
3. alpha of an HDP node: (tables | alpha, tau, z), (alpha | tables) leaves p(alpha | z, tau) invariant (KS);
   negative control: one table per occupied cell;
4. alpha of a DP node: alpha | z leaves p(alpha | z) invariant (KS); negative control: one table per row.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from scipy.special import gammaln

from harmonium.errors import InvalidParameterError
from harmonium.expfam import Categorical, Dirichlet, Gaussian, NormalGamma
from harmonium.inference.mcmc.isbn import gibbs as ig
from harmonium.inference.mcmc.isbn import hyper
from harmonium.models.directed import isbn
from harmonium.models.directed import isbn_examples as ex

from .test_hdp_exact import _exact_draws

ALPHA_TEST = 1e-4
PRIOR = (2.0, 1.0)


def _one_topic_network(beta, eta):
    return isbn.Network(
        [isbn.Latent("z", isbn.Dirichlet(1.0, 1), index=("doc",)),
         isbn.Observed("w", Categorical, isbn.RandomEffects(beta, Dirichlet(np.asarray(eta, float))),
                       parents=("z",), index=("doc",), fixed={"n_categories": 2})], indices=("doc",))


def _psi_log_posterior(p, beta, eta, counts):
    """log p(psi_1 = p | x) for V = 2: Beta(eta) prior times the Dirichlet-multinomial of every document row."""
    lp = (eta[0] - 1) * np.log(p) + (eta[1] - 1) * np.log1p(-p)
    for n1, n2 in counts:
        a1, a2 = beta * p, beta * (1 - p)
        lp = lp + gammaln(a1 + n1) - gammaln(a1) + gammaln(a2 + n2) - gammaln(a2)
    return lp


@pytest.mark.parametrize("broken, ok", [(False, True), (True, False)])
def test_psi_update_keeps_its_exact_posterior(broken, ok, monkeypatch):
    beta, eta = 3.0, np.array([0.7, 1.2])
    docs = [(5, 1), (0, 4), (3, 3)]  # (count of word 0, count of word 1) per document
    doc = np.repeat(np.arange(3), [sum(c) for c in docs])
    w = np.concatenate([np.repeat([0, 1], c) for c in docs])
    engine = ig.ISBNSampler(_one_topic_network(beta, eta), {"doc": doc}, {"w": w})
    if broken:  # psi drawn from Dir(eta + N): every token its own table
        monkeypatch.setattr(ig, "antoniak", lambda rng, n, a: n)
    rng = np.random.default_rng(101)
    start, (grid, cdf) = _exact_draws(rng, lambda p: _psi_log_posterior(p, beta, eta, docs), 1e-9, 1 - 1e-9, 4000)
    after = np.empty_like(start)
    ost = engine.obs["w"]
    for m, p in enumerate(start):
        ost.psi = {(0,): np.array([p, 1 - p])}
        engine.update_psi(rng)
        after[m] = ost.psi[(0,)][0]
    pval = stats.kstest(after, lambda x: np.interp(x, grid, cdf)).pvalue
    assert (pval > ALPHA_TEST) == ok, pval


def test_random_effects_sweeps_keep_psi_consistent_and_reproducible():
    rng = np.random.default_rng(3)
    doc, w = np.repeat(np.arange(5), 8), rng.integers(0, 6, 40)
    net = ex.hdp_random_effects(6, alpha=1.0, gamma=1.0, beta=4.0, eta=0.3)
    runs = []
    for _ in range(2):
        e = ig.ISBNSampler(net, {"doc": doc}, {"w": w}, init={"z": rng.integers(0, 3, 40) * 0})
        r = np.random.default_rng(9)
        for _ in range(5):
            e.step(r)
            ost = e.obs["w"]
            with_data = {row[:1] for row, s in ost.stats.items() if np.any(s[0] > 0)}
            assert with_data <= set(ost.psi)  # every parent state with data has its psi
            for v in ost.psi.values():
                assert np.all(v > 0) and np.isclose(v.sum(), 1.0)
            n_w = sum(s[0] for s in ost.stats.values())
            np.testing.assert_allclose(n_w, np.bincount(w, minlength=6))
        runs.append((e.lat["z"].z.copy(), {k: v.copy() for k, v in e.obs["w"].psi.items()}))
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    assert runs[0][1].keys() == runs[1][1].keys()


def test_random_effects_declarations_are_checked():
    base = Dirichlet(np.full(3, 0.1))
    w = dict(parents=("z",), fixed={"n_categories": 3})
    z = isbn.Latent("z", isbn.HDP(1.0, 1.0), index=("doc",))
    with pytest.raises(InvalidParameterError, match="declare them with index="):
        isbn.Network([z, isbn.Observed("w", Categorical, isbn.RandomEffects(2.0, base), **w)],
                     indices=("doc",)).validate()
    with pytest.raises(InvalidParameterError, match="needs a Categorical likelihood"):
        isbn.Network([z, isbn.Observed("x", Gaussian, isbn.RandomEffects(2.0, NormalGamma(0.0, 1.0, 1.0, 1.0)),
                                       parents=("z",), index=("doc",))], indices=("doc",)).validate()
    with pytest.raises(InvalidParameterError, match="Dirichlet over the 3 categories"):
        isbn.Network([z, isbn.Observed("w", Categorical, isbn.RandomEffects(2.0, Dirichlet(np.ones(4))),
                                       index=("doc",), **w)], indices=("doc",)).validate()
    with pytest.raises(InvalidParameterError, match="'beta' of RandomEffects must be a positive float"):
        isbn.Network([z, isbn.Observed("w", Categorical, isbn.RandomEffects(-1.0, base), index=("doc",), **w)],
                     indices=("doc",)).validate()
    grouped = isbn.Network([isbn.Latent("c", isbn.Dirichlet(1.0, 2), per=("doc",)),
                            isbn.Latent("z", isbn.HDP(1.0, 1.0), parents=("c",)),
                            isbn.Observed("w", Categorical, isbn.RandomEffects(2.0, base), index=("doc",), **w)],
                           indices=("doc",))
    with pytest.raises(InvalidParameterError, match="cannot be combined with group nodes"):
        ig.ISBNSampler(grouped, {"doc": np.zeros(3, int)}, {"w": np.zeros(3, int)})
    with pytest.raises(InvalidParameterError, match="concentration_prior must be"):
        ig.ISBNSampler(ex.hdp(3), {"doc": np.zeros(3, int)}, {"w": np.zeros(3, int)}, concentration_prior=(1, 0))


# -- concentration resampling ----------------------------------------------------------------------------
def _hdp_alpha_log_posterior(a, n_lk, tau, prior):
    """log p(alpha | z, tau): Gamma prior times prod_l Gamma(alpha)/Gamma(alpha + n_l) prod_k DM terms."""
    a = np.asarray(a)[:, None]
    lp = (prior[0] - 1) * np.log(a[:, 0]) - prior[1] * a[:, 0]
    for row in n_lk:
        lp = lp + gammaln(a[:, 0]) - gammaln(a[:, 0] + row.sum())
        lp = lp + np.sum(gammaln(a * tau + row) - gammaln(a * tau), axis=1)
    return lp


class OneTablePerCell(ig.ISBNSampler):
    def tables(self, b, rng):
        return {row: {k: 1 for k, n in cnt.items() if n > 0} for row, cnt in self.lat[b].counts.items()
                if self.lat[b].totals.get(row, 0) > 0}


@pytest.mark.parametrize("cls, ok", [(ig.ISBNSampler, True), (OneTablePerCell, False)])
def test_hdp_alpha_update_keeps_p_alpha_given_z_tau(cls, ok):
    z = np.array([0] * 12 + [1] * 5 + [0] * 3 + [1] * 9 + [2] * 6 + [2] * 10)
    doc = np.array([0] * 17 + [1] * 18 + [2] * 10)
    w = np.zeros(len(z), int)
    e = cls(ex.hdp(2), {"doc": doc}, {"w": w}, init={"z": z}, tau={"z": np.array([0.3, 0.25, 0.35, 0.1])},
            sample_concentration=True, concentration_prior=PRIOR)
    tau = np.array([e.lat["z"].tau[k] for k in range(3)])
    n_lk = np.array([[np.sum((doc == j) & (z == k)) for k in range(3)] for j in range(3)], float)
    rng = np.random.default_rng(55)
    start, (grid, cdf) = _exact_draws(rng, lambda a: _hdp_alpha_log_posterior(a, n_lk, tau, PRIOR), 1e-6, 60.0,
                                      3000)
    after = np.empty_like(start)
    for m, a in enumerate(start):
        e.alpha["z"] = a
        e.resample_concentration("z", e.tables("z", rng), rng)
        after[m] = e.alpha["z"]
    pval = stats.kstest(after, lambda x: np.interp(x, grid, cdf)).pvalue
    assert (pval > ALPHA_TEST) == ok, pval


class OneTablePerRow(ig.ISBNSampler):
    def _resample_dp_alpha(self, b, rng):
        st = self.lat[b]
        rows = [row for row, n in st.totals.items() if n > 0]
        lengths = np.array([st.totals[row] for row in rows], dtype=np.float64)
        self.alpha[b] = hyper.resample_alpha(rng, self.alpha[b], len(rows), lengths, self.concentration_prior)


@pytest.mark.parametrize("cls, ok", [(ig.ISBNSampler, True), (OneTablePerRow, False)])
def test_dp_alpha_update_keeps_p_alpha_given_z(cls, ok):
    # nested DP: level2 | level1 is a Chinese restaurant per level1 state; its states are the tables
    l1 = np.array([0] * 10 + [1] * 8)
    l2 = np.array([0] * 4 + [1] * 3 + [2] * 3 + [3] * 5 + [4] * 2 + [5])
    x = np.zeros(18, int)
    e = cls(ex.nested_dp(2), {}, {"x": x}, init={"level1": l1, "level2": l2}, sample_concentration=True,
            concentration_prior=PRIOR)
    rows = [(10, 3), (8, 3)]  # (N_l, K_l) of level2's rows

    def logpost(a):
        lp = (PRIOR[0] - 1) * np.log(a) - PRIOR[1] * a
        for n, k in rows:
            lp = lp + k * np.log(a) + gammaln(a) - gammaln(a + n)
        return lp

    rng = np.random.default_rng(56)
    start, (grid, cdf) = _exact_draws(rng, logpost, 1e-6, 60.0, 3000)
    after = np.empty_like(start)
    for m, a in enumerate(start):
        e.alpha["level2"] = a
        e._resample_dp_alpha("level2", rng)
        after[m] = e.alpha["level2"]
    pval = stats.kstest(after, lambda x: np.interp(x, grid, cdf)).pvalue
    assert (pval > ALPHA_TEST) == ok, pval


def test_sample_concentration_moves_alpha_gamma_and_they_enter_the_conditional():
    rng = np.random.default_rng(8)
    doc, w = np.repeat(np.arange(4), 6), rng.integers(0, 3, 24)
    e = ig.ISBNSampler(ex.hdp(3, alpha=1.0, gamma=1.0), {"doc": doc}, {"w": w}, sample_concentration=True)
    for _ in range(3):
        e.step(rng)
    assert e.alpha["z"] != 1.0 and e.gamma["z"] != 1.0
    # the conditional uses the engine's alpha: equal to an engine declared with that alpha
    fixed = ig.ISBNSampler(ex.hdp(3, alpha=e.alpha["z"], gamma=e.gamma["z"]), {"doc": doc}, {"w": w},
                           init={"z": e.lat["z"].z}, tau={"z": np.array([e.lat["z"].tau[k] for k in e.lat["z"].alive]
                                                                        + [e.lat["z"].tau_u])})
    for i in range(0, 24, 5):
        c1, p1 = e.joint_conditional(i)
        c2, p2 = fixed.joint_conditional(i)
        got = dict(zip(c1, p1, strict=True))
        want = dict(zip(c2, p2, strict=True))
        assert got.keys() == want.keys()
        np.testing.assert_allclose([got[k] for k in want], list(want.values()), rtol=1e-10)


class PsiIgnored(ig.ISBNSampler):
    """Random effects mis-wired: every row predicts with the base eta, as if psi were never drawn."""

    def _dirichlet_row(self, node, ost, row):
        return ost.alpha_w


@pytest.mark.parametrize("cls, ok", [(ig.ISBNSampler, True), (PsiIgnored, False)])
def test_random_effects_sweep_keeps_the_enumerated_posterior(cls, ok):
    import itertools

    from . import _isbn_brute as bf
    from .test_hdp_exact import chi2_pvalue

    net = isbn.Network([isbn.Latent("z", isbn.Dirichlet(1.1, 2), index=("doc",)),
                        isbn.Observed("w", Categorical, isbn.RandomEffects(1.5, Dirichlet(np.full(3, 0.8))),
                                      parents=("z",), index=("doc",), fixed={"n_categories": 3})],
                       indices=("doc",))
    doc, w = np.array([0, 0, 0, 1, 1]), np.array([0, 2, 0, 1, 2])
    psi = {(0,): np.array([0.7, 0.1, 0.2]), (1,): np.array([0.05, 0.45, 0.5])}
    states = list(itertools.product(range(2), repeat=5))
    logp = np.array([bf.log_joint(net, {"z": np.array(s)}, {"doc": doc}, {"w": w}, {}, psi={"w": psi})
                     for s in states])
    post = np.exp(logp - logp.max())
    post /= post.sum()
    rng = np.random.default_rng(23)
    out = np.zeros(len(states))
    for s in rng.choice(len(states), size=3000, p=post):
        e = cls(net, {"doc": doc}, {"w": w}, init={"z": np.array(states[s])})
        e.obs["w"].psi = dict(psi)
        e.sweep(rng)
        out[int(np.ravel_multi_index(tuple(e.lat["z"].z), (2,) * 5))] += 1
    pv = chi2_pvalue(out, post)
    assert (pv > ALPHA_TEST) == ok, pv
