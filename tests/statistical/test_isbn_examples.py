"""Example ISBNs (harmonium.models.directed.isbn_examples, seed 002 §6): each validates, the engine
derived from it runs (same seed, same chain), and on a tiny instance the engine's FFBS joint
conditional of every item equals brute force from the closed-form joint p(z, x | tau)
(tests/statistical/_isbn_brute.py). Negative control: an engine whose collapsed predictive F
(eq. 2) of an empty CPT row is 1 instead of the prior predictive disagrees with brute force.
"""

from __future__ import annotations

import numpy as np
import pytest

from harmonium.errors import InvalidParameterError
from harmonium.expfam import Bernoulli, Beta, Gamma, Poisson
from harmonium.inference.mcmc.isbn import gibbs as ig
from harmonium.models.directed import isbn
from harmonium.models.directed import isbn_examples as ex

from . import _isbn_brute as bf

R = np.random.default_rng(17)
N = 6
DOC = np.array([0, 0, 0, 1, 1, 1])
A = np.array([0, 0, 1, 1, 2, 2])  # first index (customer, user, sender)
B = np.array([1, 2, 0, 2, 0, 1])  # second index (item, receiver); pairs distinct, no self edges


class BrokenF(ig.ISBNSampler):
    def _log_f_rows(self, node, ost, rows, i):
        out = super()._log_f_rows(node, ost, rows, i)
        empty = np.array([ig.NEW in r or r not in ost.stats or not np.any(ost.stats[r][0]) for r in rows])
        return np.where(empty, 0.0, out)


def _z(k):
    return R.integers(0, k, N)


EXAMPLES = {
    "hdp": (ex.hdp(4, 1.3, 1.0, 0.3), {"doc": DOC}, {"w": R.integers(0, 4, N)}, {"z": _z(3)}),
    "hdp_random_effects": (ex.hdp_random_effects(4, 1.3, 1.0, beta=2.5, eta=0.4), {"doc": DOC},
                           {"w": R.integers(0, 4, N)}, {"z": _z(3)}),
    "dp_mixture_gaussian": (ex.dp_mixture(alpha=0.9), {}, {"x": R.normal(size=N) * 2}, {"z": _z(3)}),
    "dp_mixture_poisson": (ex.dp_mixture(Poisson, Gamma(2.0, 0.5), 1.2), {}, {"x": R.poisson(3.0, N)}, {"z": _z(2)}),
    "infinite_pam": (ex.infinite_pam(4, 1.1, 0.8, 0.3), {"doc": DOC}, {"w": R.integers(0, 4, N)},
                     {"super": _z(2), "sub": _z(3)}),
    "pom": (ex.pom(alpha=1.2, gamma=0.9), {"doc": DOC}, {"x": R.normal(size=N) * 2}, {"topic": _z(2), "word": _z(2)}),
    "bihdp": (ex.bihdp(alpha=1.1, gamma=0.8), {"customer": A, "item": B}, {"x": R.integers(0, 2, N)},
              {"customer_group": _z(2), "item_group": _z(2)}),
    "bihdp_poisson": (ex.bihdp(Poisson, Gamma(1.5, 1.0)), {"customer": A, "item": B}, {"x": R.poisson(2.0, N)},
                      {"customer_group": _z(2), "item_group": _z(3)}),
    "mmsb_hdp": (ex.mmsb(None, alpha=0.9, prior=Beta(1.0, 1.5)), {"sender": A, "receiver": B},
                 {"x": R.integers(0, 2, N)}, {"send_role": _z(2), "recv_role": _z(2)}),
    "mmsb_tied": (ex.mmsb(n_roles=2, alpha=1.5, prior=Beta(0.5, 0.5)), {"sender": A, "receiver": B},
                  {"x": np.array([1, 1, 0, 0, 0, 1])}, {"send_role": np.array([0, 1, 0, 0, 1, 1]),
                                                        "recv_role": np.array([1, 0, 0, 1, 1, 0])}),
    "nested_dp": (ex.nested_dp(3, alphas=(0.8, 1.3, 0.6)), {}, {"x": R.integers(0, 3, N)},
                  {"level1": np.array([0, 0, 1, 1, 0, 1]), "level2": np.array([0, 1, 2, 2, 0, 3]),
                   "level3": np.array([0, 1, 2, 3, 0, 4])}),
    "multimedia": (ex.multimedia(3, n_classes=2), {"doc": DOC}, {"w": R.integers(0, 3, N), "y": R.normal(size=N)},
                   {"page_class": DOC % 2, "word_topic": _z(2), "feature_topic": _z(2)}),
    "urp": (ex.urp(3, 1.0, 1.2, 0.7), {"user": A, "item": B}, {"rating": R.integers(0, 3, N)}, {"profile": _z(2)}),
}


@pytest.mark.parametrize("cls, ok", [(ig.ISBNSampler, True), (BrokenF, False)])
@pytest.mark.parametrize("name", list(EXAMPLES))
def test_example_conditional_is_brute_force(name, cls, ok):
    net, index, observed, init = EXAMPLES[name]
    engine = cls(net, index, observed, init=init)
    assert engine.method == "ffbs"
    engine.update_psi(np.random.default_rng(5))  # RandomEffects: psi away from its starting prior mean
    tau, psi = bf.tau_dicts(engine), bf.psi_dicts(engine)
    z = {b: engine.lat[b].z.copy() for b in engine.order}
    agree = [bf.agrees(engine, i, bf.conditional(net, engine.order, z, index, observed, tau, i, psi=psi))
             for i in range(N)]
    assert all(agree) == ok


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_example_validates_and_runs_reproducibly(name):
    net, index, observed, init = EXAMPLES[name]
    assert net.validate() is net
    chains = []
    for _ in range(2):
        e = ig.ISBNSampler(net, index, observed, init=init)
        rng = np.random.default_rng(4)
        for _ in range(3):
            e.step(rng)
        assert all(k >= 1 for k in e.n_states().values())
        chains.append({b: e.lat[b].z.copy() for b in e.order})
    for b in chains[0]:
        np.testing.assert_array_equal(chains[0][b], chains[1][b])


@pytest.mark.parametrize("tied, ok", [(True, True), (False, False)])
def test_mmsb_roles_share_one_membership_cpt(tied, ok):
    # brute force of the tied model; the same network with the tie removed must disagree
    net, index, observed, init = EXAMPLES["mmsb_tied"]
    run_net = net if tied else isbn.Network(
        [net.node("send_role"), isbn.Latent("recv_role", net.node("recv_role").prior, index=("receiver",)),
         net.node("x")], indices=net.indices)
    engine = ig.ISBNSampler(run_net, index, observed, init=init)
    assert (engine.lat["recv_role"].counts is engine.lat["send_role"].counts) == tied
    z = {b: engine.lat[b].z.copy() for b in engine.order}
    agree = [bf.agrees(engine, i, bf.conditional(net, engine.order, z, index, observed, {}, i)) for i in range(N)]
    assert all(agree) == ok


def test_tied_nodes_need_different_index_values_and_no_hdp():
    net, index, observed, init = EXAMPLES["mmsb_tied"]
    with pytest.raises(InvalidParameterError, match="tied nodes 'recv_role' and 'send_role' must have different"):
        ig.ISBNSampler(net, {"sender": A, "receiver": A}, observed)
    pr = isbn.HDP(1.0, 1.0)
    bad = isbn.Network([isbn.Latent("a", pr, index=("s",)), isbn.Latent("b", pr, index=("r",), tied="a"),
                        isbn.Observed("x", Bernoulli, Beta(1.0, 1.0), parents=("a", "b"))], indices=("s", "r"))
    with pytest.raises(InvalidParameterError, match="need equal DP or Dirichlet priors.*Tied HDP CPTs are not"):
        bad.validate()
    with pytest.raises(InvalidParameterError, match="tied to 'c', which is not another latent node"):
        isbn.Network([isbn.Latent("a", isbn.DP(1.0), index=("s",), tied="c"),
                      isbn.Observed("x", Bernoulli, Beta(1.0, 1.0), parents=("a",))], indices=("s",)).validate()


def test_bihdp_with_bernoulli_default_and_examples_table():
    net = ex.bihdp()
    assert net.node("x").likelihood is Bernoulli and set(ex.EXAMPLES) >= {"hdp", "infinite_pam", "bihdp", "mmsb"}


# -- the remaining conjugate pairs of the issue: Multinomial-Dirichlet, Binomial-Beta, MultivariateGaussian-NIW,
# GaussianKnownVariance-Gaussian, each in a DP mixture against brute force; NIW's F against the Student-t --------
def _pairs():
    from harmonium.expfam import (
        Binomial,
        GaussianKnownVariance,
        Multinomial,
        MultivariateGaussian,
        NormalInverseWishart,
    )
    from harmonium.expfam import Dirichlet as Dir
    from harmonium.expfam import Gaussian as Gauss

    r = np.random.default_rng(31)
    psi = np.array([[1.0, 0.3], [0.3, 0.8]])
    return {
        "multinomial": (ex.dp_mixture(Multinomial, Dir(np.array([0.5, 1.0, 2.0])), 1.1),
                        r.multinomial(4, [0.2, 0.3, 0.5], size=N)),
        "binomial": (ex.dp_mixture(Binomial, Beta(1.5, 0.7), 0.9, fixed={"n": 5}), r.binomial(5, 0.4, N)),
        "mvn_niw": (ex.dp_mixture(MultivariateGaussian, NormalInverseWishart(np.zeros(2), 0.5, 4.0, psi), 1.2),
                    r.normal(size=(N, 2)) * 1.5),
        "gauss_known_var": (ex.dp_mixture(GaussianKnownVariance, Gauss(0.0, 4.0), 1.0, fixed={"variance": 0.5}),
                            r.normal(size=N)),
    }


PAIRS = _pairs()


@pytest.mark.parametrize("cls, ok", [(ig.ISBNSampler, True), (BrokenF, False)])
@pytest.mark.parametrize("name", list(PAIRS))
def test_conjugate_pairs_conditional_is_brute_force(name, cls, ok):
    net, x = PAIRS[name]
    init = {"z": np.array([0, 0, 1, 1, 2, 0])}
    engine = cls(net, {}, {"x": x}, init=init)
    z = {"z": engine.lat["z"].z.copy()}
    agree = [bf.agrees(engine, i, bf.conditional(net, engine.order, z, {}, {"x": x}, {}, i)) for i in range(N)]
    assert all(agree) == ok


def test_niw_predictive_is_the_multivariate_student_t():
    from scipy.stats import multivariate_t

    net, x = PAIRS["mvn_niw"]
    node = net.node("x")
    pr = node.prior
    c, h = isbn.item_stats(node, x)
    rows = x[:4]  # the predictive of x[5] given a row holding x[0..3]
    stats = tuple(part[:4].sum(axis=0)[None] for part in c)
    got = isbn.log_predictive(pr, stats, tuple(part[5] for part in c), float(h[5]))[0]
    mu0, kappa, nu, Psi = np.zeros(2), 0.5, 4.0, np.array([[1.0, 0.3], [0.3, 0.8]])
    n, mean = 4, rows.mean(axis=0)
    kn, nn = kappa + n, nu + n
    mun = (kappa * mu0 + n * mean) / kn
    dev = rows - mean
    Psin = Psi + dev.T @ dev + kappa * n / kn * np.outer(mean - mu0, mean - mu0)
    dof = nn - 2 + 1
    want = multivariate_t(loc=mun, shape=Psin * (kn + 1) / (kn * dof), df=dof).logpdf(x[5])
    np.testing.assert_allclose(got, want, rtol=1e-10)
