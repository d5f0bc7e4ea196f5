"""The generic CAVI engine (harmonium.inference.vi.cavi) and its model declarations (harmonium.models.conjugate).

Declaration errors, exactness on models whose posterior is in the variational family (the ELBO
then equals the log evidence), the kernel/init/driver mechanics and other conjugate families.
"""

from __future__ import annotations

import numpy as np
import pytest

from harmonium.errors import InvalidParameterError
from harmonium.expfam.bernoulli import Bernoulli, Binomial
from harmonium.expfam.beta import Beta
from harmonium.expfam.categorical import Categorical, Multinomial
from harmonium.expfam.dirichlet import Dirichlet
from harmonium.expfam.gamma import Gamma
from harmonium.expfam.gaussian import Gaussian, GaussianKnownVariance
from harmonium.expfam.mvn import MultivariateGaussian
from harmonium.expfam.niw import NormalInverseWishart
from harmonium.expfam.normal_gamma import NormalGamma
from harmonium.expfam.poisson import Poisson
from harmonium.inference.vi import cavi
from harmonium.models.conjugate import Gate, Global, Model, Observed
from harmonium.models.directed.lda_cavi import lda_cavi_model
from harmonium.models.mixture import conjugate_mixture
from harmonium.parallel.seeds import spawn

K = 2


def gmm_data(seed=0, n=40):
    rng = np.random.default_rng(seed)
    return np.concatenate([rng.normal([0, 0], 1, size=(n // 2, 2)), rng.normal([5, 5], 1, size=(n - n // 2, 2))])


def niw(d=2):
    return NormalInverseWishart(np.zeros(d), 1.0, d + 1.0, np.eye(d))


def gmm_vars(X, **over):
    """The four declarations of a Gaussian mixture; ``over`` replaces any of them by name."""
    decl = {
        "pi": Global("pi", Dirichlet(np.ones(K))),
        "theta": Global("theta", niw(), size=K),
        "z": Gate("z", parent="pi"),
        "x": Observed("x", MultivariateGaussian, params="theta", gate="z", data=X),
    }
    decl.update(over)
    return [v for v in decl.values() if v is not None]


def assert_monotone(trace, rtol=1e-9):
    trace = np.asarray(trace)
    assert np.all(trace[1:] - trace[:-1] >= -rtol * np.abs(trace[:-1])), np.diff(trace).min()


# -- declaration errors ---------------------------------------------------------------------


def test_a_valid_declaration():
    model = Model(gmm_vars(gmm_data()))
    assert [g.name for g in model.globals] == ["pi", "theta"]
    assert model.n_categories("z") == K and model.n_local("z") == 40
    assert model["theta"].batch_shape == (K,)
    assert "Gate('z'" in repr(model)


@pytest.mark.parametrize("over, match", [
    ({"z": Gate("z", parent="pie")}, r"Unknown parent 'pie' of Gate 'z'.*Declare 'pie' or fix the name"),
    ({"x": Observed("x", MultivariateGaussian, params="theta", gate="zz", data=gmm_data())},
     r"Unknown gate 'zz' of Observed 'x'"),
    ({"z": Gate("z", parent="z")}, r"cycle: z -> z"),
    ({"z": Gate("z", parent="x")}, r"cycle: .*z -> x -> z|cycle: .*x -> z -> x"),
    ({"x": Observed("x", MultivariateGaussian, params="z", gate="z", data=gmm_data())},
     r"The params of Observed 'x' must be a Global; 'z' is a Gate"),
    ({"theta": Global("theta", Dirichlet(np.ones(3)), size=K)},
     r"Observed 'x' has a MultivariateGaussian likelihood whose conjugate prior is NormalInverseWishart, but its "
     r"parameter 'theta' has a Dirichlet prior; give 'theta' a NormalInverseWishart prior"),
    ({"pi": Global("pi", NormalGamma(0.0, 1.0, 1.0, 1.0))}, r"parent of Gate 'z' must have a Dirichlet prior"),
    ({"theta": Global("theta", niw(), size=3)}, r"gated by 'z' with 2 categories.*needs batch shape \(2,\)"),
    ({"x": Observed("x", MultivariateGaussian, params="theta", gate="z", data=gmm_data()[:, :1].repeat(3, 1))},
     r"Observed 'x': data of shape \(40, 3\) do not fit the MultivariateGaussian likelihood of 'theta'"),
    ({"x": Observed("x", MultivariateGaussian, params="theta", gate="z", data=gmm_data()[:, 0])},
     r"data of Observed 'x' must be a non-empty array with 2 axes"),
    ({"x": Observed("x", MultivariateGaussian, params="theta", gate="z", data=np.full((3, 2), np.nan))},
     r"data of Observed 'x' contain NaN"),
    ({"x": None}, r"Gate 'z' gates no Observed variable"),
    ({"z": Gate("z", parent="pi", groups=np.zeros(40, dtype=int))}, r"Gate 'z' has 'groups'.*batch shape \(G,\)"),
])
def test_declaration_errors_name_the_variable_and_the_fix(over, match):
    with pytest.raises(InvalidParameterError, match=match):
        Model(gmm_vars(gmm_data(), **over))


def test_more_declaration_errors():
    X = gmm_data()
    with pytest.raises(InvalidParameterError, match="'x' is declared twice"):
        Model(gmm_vars(X) + [Observed("x", MultivariateGaussian, params="theta", gate="z", data=X)])
    with pytest.raises(InvalidParameterError, match="no Observed variable"):
        Model([Global("pi", Dirichlet(np.ones(2)))])
    with pytest.raises(InvalidParameterError, match="declared from Global, Gate and Observed"):
        Model(["pi"])
    with pytest.raises(InvalidParameterError, match="prior of Global 'p' must be a ConjugatePrior"):
        Global("p", Categorical(np.ones(2) / 2))
    with pytest.raises(InvalidParameterError, match="batch shape \\(3,\\) cannot be broadcast to size \\(2,\\)"):
        Global("p", Dirichlet(np.ones((3, 2))), size=2)
    # Observed gated by z but with n different from another child of z
    y = np.zeros(10, dtype=int)
    with pytest.raises(InvalidParameterError, match="different numbers of observations"):
        Model(gmm_vars(X) + [Global("phi", Dirichlet(np.ones(3)), size=K),
                             Observed("y", Categorical, params="phi", gate="z", data=y, fixed={"n_categories": 3})])
    # a categorical likelihood without its fixed number of categories
    with pytest.raises(InvalidParameterError, match="Observed 'y'.*n_categories"):
        Model(gmm_vars(X) + [Global("phi", Dirichlet(np.ones(3)), size=K),
                             Observed("y", Categorical, params="phi", gate="z", data=np.zeros(40, dtype=int))])
    # labels out of range
    with pytest.raises(InvalidParameterError, match="Observed 'y'"):
        Model(gmm_vars(X) + [Global("phi", Dirichlet(np.ones(3)), size=K),
                             Observed("y", Categorical, params="phi", gate="z", data=np.full(40, 3),
                                      fixed={"n_categories": 3})])


def test_group_errors():
    x = np.arange(6.0)
    mu = Global("mu", Gaussian(0.0, 10.0), size=3)

    def obs(groups):
        return Observed("x", GaussianKnownVariance, params="mu", data=x, groups=groups, fixed={"variance": 1.0})

    with pytest.raises(InvalidParameterError, match=r"'groups' of Observed 'x' must lie in \[0, 3\)"):
        Model([mu, obs(np.array([0, 1, 2, 3, 0, 1]))])
    with pytest.raises(InvalidParameterError, match="has 5 entries but its data have 6 observations"):
        Model([mu, obs(np.zeros(5, dtype=int))])
    with pytest.raises(InvalidParameterError, match="1-d integer array"):
        Model([mu, obs(np.zeros(6))])
    with pytest.raises(InvalidParameterError, match="neither gate nor groups.*batch shape \\(\\)"):
        Model([mu, obs(None)])


@pytest.mark.parametrize("kwargs, match", [
    ({"max_iter": 0}, "'max_iter' parameter of fit_cavi must be an int >= 1"),
    ({"n_init": 0}, "'n_init' parameter of fit_cavi must be an int >= 1"),
    ({"tol": -1.0}, "'tol' parameter of fit_cavi must be a finite float >= 0"),
    ({"init_method": "kmeans"}, "'init_method' parameter of fit_cavi must be 'random' or 'points'"),
    ({"rng": -3}, "'random_state' parameter of fit_cavi"),
])
def test_fit_cavi_argument_errors(kwargs, match):
    with pytest.raises(InvalidParameterError, match=match):
        cavi.fit_cavi(kwargs.pop("rng", 0), Model(gmm_vars(gmm_data())), **kwargs)


# -- exactness: posterior inside the variational family => ELBO = log evidence --------------


def test_a_single_conjugate_pair_is_exact_in_one_sweep():
    x = np.random.default_rng(1).normal(2.0, 0.7, size=25)
    prior = NormalGamma(0.0, 0.5, 2.0, 1.0)
    model = Model([Global("theta", prior), Observed("x", Gaussian, params="theta", data=x)])
    res = cavi.fit_cavi(0, model, max_iter=10, tol=1e-12)
    stats = Gaussian.conjugate_stats(x)
    exact = prior.posterior(stats)
    for a, b in zip(res.posteriors["theta"].natural_params, exact.natural_params, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-13)
    log_evidence = prior.log_marginal_likelihood(stats, Gaussian.log_likelihood_base(x))
    np.testing.assert_allclose(res.elbo, log_evidence, rtol=1e-12)
    assert res.converged and res.n_iter == 1


def test_known_groups_are_exact():
    rng = np.random.default_rng(2)
    groups = rng.integers(0, 3, size=30)
    x = rng.normal(np.array([-2.0, 0.0, 3.0])[groups], 1.0)
    prior = Gaussian(0.0, 4.0)
    model = Model([Global("mu", prior, size=3),
                   Observed("x", GaussianKnownVariance, params="mu", data=x, groups=groups, fixed={"variance": 1.0})])
    res = cavi.fit_cavi(0, model, max_iter=5)
    q = res.posteriors["mu"]
    for g in range(3):
        xs = x[groups == g]
        post_var = 1.0 / (1.0 / 4.0 + xs.size)
        np.testing.assert_allclose(q.variance[g], post_var, rtol=1e-12)
        np.testing.assert_allclose(q.mu[g], post_var * xs.sum(), rtol=1e-12)
    stats = GaussianKnownVariance.conjugate_stats(x, weights=np.eye(3)[groups], variance=1.0)
    evidence = (prior.log_marginal_likelihood(stats).sum()
                + GaussianKnownVariance.log_likelihood_base(x, variance=1.0))
    np.testing.assert_allclose(res.elbo[-1], evidence, rtol=1e-12)


def test_one_category_gate_with_two_children_is_exact():
    """K = 1: q(z) is exact, so the ELBO is log p(x) + log p(y) of the two conjugate pairs."""
    rng = np.random.default_rng(3)
    x, y = rng.normal(1.0, 2.0, size=20), rng.integers(0, 4, size=20)
    px, py = NormalGamma(0.0, 1.0, 1.5, 2.0), Dirichlet(np.full(4, 0.7))
    model = Model([
        Global("pi", Dirichlet(np.ones(1))), Global("tx", px, size=1), Global("ty", py, size=1),
        Gate("z", parent="pi"),
        Observed("x", Gaussian, params="tx", gate="z", data=x),
        Observed("y", Categorical, params="ty", gate="z", data=y, fixed={"n_categories": 4}),
    ])
    res = cavi.fit_cavi(0, model, max_iter=5)
    sx, sy = Gaussian.conjugate_stats(x), Categorical.conjugate_stats(y, n_categories=4)
    evidence = px.log_marginal_likelihood(sx, Gaussian.log_likelihood_base(x)) + py.log_marginal_likelihood(sy)
    np.testing.assert_allclose(res.elbo[-1], evidence, rtol=1e-12)
    np.testing.assert_allclose(res.posteriors["z"].probs, 1.0)


# -- mechanics -------------------------------------------------------------------------------


def test_result_fields_and_types():
    X = gmm_data()
    model = Model(gmm_vars(X))
    res = cavi.fit_cavi(0, model, max_iter=100, tol=1e-10, n_init=2)
    assert isinstance(res.posteriors["pi"], Dirichlet) and res.posteriors["pi"].batch_shape == ()
    assert isinstance(res.posteriors["theta"], NormalInverseWishart) and res.posteriors["theta"].batch_shape == (K,)
    assert isinstance(res.posteriors["z"], Categorical) and res.posteriors["z"].batch_shape == (40,)
    assert res.elbo.shape == (res.n_iter + 1,) and res.converged
    assert res.restart_elbos.shape == (2,) and res.restart_n_iter[res.best_restart] == res.n_iter
    assert res.elbo_spread >= 0
    assert set(res.state.eta) == {"pi", "theta"} and set(res.state.resp) == {"z"}
    np.testing.assert_allclose(res.state.resp["z"].sum(axis=1), 1.0)


def test_callback_sees_each_sweep_and_can_stop():
    model = Model(gmm_vars(gmm_data()))
    seen = []

    def callback(it, state, info):
        seen.append((it, info.elbo, sorted(info.terms)))
        return it == 3

    res = cavi.fit_cavi(0, model, max_iter=50, tol=0.0, callback=callback)
    assert res.n_iter == 3 and not res.converged and [s[0] for s in seen] == [1, 2, 3]
    assert seen[-1][1] == res.elbo[-1] and seen[-1][2] == ["pi", "theta", "x", "z"]
    data = cavi.prepare(model)
    _, info = cavi.build_kernel()(None, cavi.init(np.random.default_rng(0), model, data), data, model)
    np.testing.assert_allclose(sum(info.terms.values()), info.elbo, rtol=1e-14)


def test_same_seed_same_result_and_restarts_use_child_streams():
    model = Model(gmm_vars(gmm_data()))
    a = cavi.fit_cavi(4, model, max_iter=20, n_init=3)
    b = cavi.fit_cavi(np.random.default_rng(4), model, max_iter=20, n_init=3)
    np.testing.assert_array_equal(a.restart_elbos, b.restart_elbos)
    np.testing.assert_array_equal(a.state.resp["z"], b.state.resp["z"])
    c = cavi.fit_cavi(5, model, max_iter=20, n_init=3)
    assert not np.array_equal(a.elbo, c.elbo)
    # restart r starts from child stream r of the seed
    child = spawn(np.random.default_rng(4), 3)[a.best_restart]
    data = cavi.prepare(model)
    np.testing.assert_allclose(cavi.elbo(cavi.init(child, model, data), data, model), a.elbo[0], rtol=1e-14)


def test_kernel_returns_new_state_and_leaves_the_old_one():
    model = Model(gmm_vars(gmm_data()))
    data = cavi.prepare(model)
    state = cavi.init(np.random.default_rng(0), model, data)
    before = {k: [e.copy() for e in v] for k, v in state.eta.items()}, state.resp["z"].copy()
    new, info = cavi.build_kernel()(None, state, data, model)
    assert new is not state and np.isfinite(info.elbo)
    for k, v in state.eta.items():
        for e, e0 in zip(v, before[0][k], strict=True):
            np.testing.assert_array_equal(e, e0)
    np.testing.assert_array_equal(state.resp["z"], before[1])


def test_init_options():
    model = Model(gmm_vars(gmm_data()))
    data = cavi.prepare(model)
    r = np.tile([0.25, 0.75], (40, 1))
    state = cavi.init(None, model, data, resp={"z": r})
    np.testing.assert_array_equal(state.resp["z"], r)
    np.testing.assert_allclose(state.eta["pi"][0], np.ones(K) - 1 + r.sum(axis=0))  # prior alpha = 1
    pts = cavi.init(np.random.default_rng(0), model, data, method="points")
    assert pts.resp["z"].shape == (40, K)
    with pytest.raises(InvalidParameterError, match="'random' or 'points'"):
        cavi.init(np.random.default_rng(0), model, data, method="kmeans")


def test_gate_potentials_are_the_unnormalised_update():
    model = Model(gmm_vars(gmm_data()))
    data = cavi.prepare(model)
    state = cavi.init(np.random.default_rng(0), model, data)
    logits = cavi.gate_log_potentials(state.eta, data, model)["z"]
    r = cavi.update_gates(state.eta, data, model)["z"]
    np.testing.assert_allclose(r, np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True), rtol=1e-12)
    # the log potential is E[log pi_k] + E[log N(x_n | mu_k, Sigma_k)], by Monte Carlo over q(theta)
    q = cavi.posteriors(state, model)
    mu, sigma = q["theta"].sample(np.random.default_rng(1), size=20000)
    lp = MultivariateGaussian(mu, sigma).log_prob(data.observed["x"].unique[data.observed["x"].inverse][0])
    mc = q["pi"].expected_log() + lp.mean(axis=0)
    np.testing.assert_allclose(logits[0], mc, atol=0.05)


# -- other conjugate families on the same engine ---------------------------------------------


def test_univariate_normal_gamma_mixture():
    rng = np.random.default_rng(6)
    x = np.concatenate([rng.normal(-3, 0.5, 50), rng.normal(2, 1.0, 70)])
    model = conjugate_mixture(x, 2, Gaussian, NormalGamma(0.0, 0.1, 1.0, 1.0))
    res = cavi.fit_cavi(0, model, max_iter=300, tol=1e-10, n_init=3)
    assert_monotone(res.elbo)
    q = res.posteriors["theta"]
    order = np.argsort(q.mu0)
    np.testing.assert_allclose(q.mu0[order], [-3, 2], atol=0.3)
    np.testing.assert_allclose(res.posteriors["pi"].mean()[order], [50 / 120, 70 / 120], atol=0.02)


def test_known_variance_mixture_of_means():
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.normal(-4, 1, 40), rng.normal(4, 1, 40)])
    model = conjugate_mixture(x, 2, GaussianKnownVariance, Gaussian(0.0, 100.0), fixed={"variance": 1.0})
    res = cavi.fit_cavi(1, model, max_iter=200, tol=1e-12, n_init=2)
    assert_monotone(res.elbo)
    np.testing.assert_allclose(np.sort(res.posteriors["theta"].mu), [-4, 4], atol=0.4)


def test_multinomial_mixture_of_count_vectors():
    rng = np.random.default_rng(8)
    p = np.array([[0.7, 0.2, 0.05, 0.05], [0.05, 0.05, 0.2, 0.7]])
    counts = np.concatenate([rng.multinomial(30, p[0], size=25), rng.multinomial(30, p[1], size=25)])
    model = conjugate_mixture(counts, 2, Multinomial, Dirichlet(np.ones(4)))
    res = cavi.fit_cavi(0, model, max_iter=200, tol=1e-12, n_init=2)
    assert_monotone(res.elbo)
    means = res.posteriors["theta"].mean()
    order = np.argsort(means[:, 0])[::-1]
    np.testing.assert_allclose(means[order], p, atol=0.05)


def test_poisson_gamma_mixture():
    rng = np.random.default_rng(11)
    x = np.concatenate([rng.poisson(2.0, 60), rng.poisson(15.0, 40)])
    model = conjugate_mixture(x, 2, Poisson, Gamma(1.0, 0.1))
    res = cavi.fit_cavi(0, model, max_iter=300, tol=1e-12, n_init=3)
    assert_monotone(res.elbo)
    rates = res.posteriors["theta"].mean()
    order = np.argsort(rates)
    np.testing.assert_allclose(rates[order], [2.0, 15.0], rtol=0.15)
    np.testing.assert_allclose(res.posteriors["pi"].mean()[order], [0.6, 0.4], atol=0.03)


def test_multivariate_bernoulli_mixture_as_several_gated_children():
    """d binary features: one Beta global and one Bernoulli observed per feature, all gated by the same z."""
    rng = np.random.default_rng(12)
    p = np.array([[0.95, 0.9, 0.05, 0.1], [0.05, 0.1, 0.95, 0.85]])
    labels = rng.integers(0, 2, size=200)
    X = (rng.random((200, 4)) < p[labels]).astype(np.int64)
    decl = [Global("pi", Dirichlet(np.ones(2))), Gate("z", parent="pi")]
    for j in range(4):
        decl += [Global(f"p{j}", Beta(1.0, 1.0), size=2), Observed(f"x{j}", Bernoulli, params=f"p{j}", gate="z",
                                                                   data=X[:, j])]
    res = cavi.fit_cavi(0, Model(decl), max_iter=300, tol=1e-12, n_init=3)
    assert_monotone(res.elbo)
    est = np.stack([res.posteriors[f"p{j}"].mean() for j in range(4)], axis=1)  # (K, d)
    order = np.argsort(-est[:, 0])
    np.testing.assert_allclose(est[order], p, atol=0.1)
    hard = res.posteriors["z"].probs.argmax(axis=1)
    assert max(np.mean(hard == labels), np.mean(hard != labels)) > 0.95


def test_binomial_with_fixed_trials_exact():
    x = np.random.default_rng(13).binomial(10, 0.3, size=20)
    prior = Beta(2.0, 2.0)
    model = Model([Global("p", prior), Observed("x", Binomial, params="p", data=x, fixed={"n": 10})])
    res = cavi.fit_cavi(0, model, max_iter=3)
    np.testing.assert_allclose(res.posteriors["p"].a, 2.0 + x.sum())
    np.testing.assert_allclose(res.posteriors["p"].b, 2.0 + (10 - x).sum())
    stats = Binomial.conjugate_stats(x, n=10)
    evidence = prior.log_marginal_likelihood(stats, Binomial.log_likelihood_base(x, n=10))
    np.testing.assert_allclose(res.elbo[-1], evidence, rtol=1e-12)


def test_chunked_statistics_equal_the_whole(monkeypatch):
    """Messages summed over chunks of samples (bounded memory) equal one call over all samples."""
    from harmonium.models import conjugate
    from harmonium.models.directed.lda_cavi import lda_cavi_model

    rng = np.random.default_rng(9)
    docs = [rng.integers(0, 12, size=int(rng.integers(1, 15))) for _ in range(8)]

    def sweeps(model):
        data = cavi.prepare(model)
        state = cavi.init(np.random.default_rng(0), model, data)
        kernel = cavi.build_kernel()
        for _ in range(3):
            state, info = kernel(None, state, data, model)
        return state, info.elbo, data

    whole = [sweeps(Model(gmm_vars(gmm_data()))), sweeps(lda_cavi_model(docs, 3, 12))]
    monkeypatch.setattr(conjugate, "CHUNK_ENTRIES", 40)  # 5 samples of a 2-d NIW, 3 tokens over 12 words
    chunked = [sweeps(Model(gmm_vars(gmm_data()))), sweeps(lda_cavi_model(docs, 3, 12))]
    assert chunked[0][2].observed["x"].rows == 5 and chunked[1][2].observed["w"].rows == 3
    for (s1, e1, _), (s2, e2, _) in zip(whole, chunked, strict=True):
        np.testing.assert_allclose(e2, e1, rtol=1e-13)
        for name in s1.eta:
            for a, b in zip(s1.eta[name], s2.eta[name], strict=True):
                np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)


def test_likelihood_given_as_an_instance():
    x = np.random.default_rng(10).normal(1.0, 2.0, size=15)
    prior = Gaussian(0.0, 10.0)
    by_class = Model([Global("mu", prior), Observed("x", GaussianKnownVariance, params="mu", data=x,
                                                    fixed={"variance": 4.0})])
    by_instance = Model([Global("mu", prior), Observed("x", GaussianKnownVariance(0.0, 4.0), params="mu", data=x)])
    a, b = cavi.fit_cavi(0, by_class, max_iter=3), cavi.fit_cavi(0, by_instance, max_iter=3)
    np.testing.assert_allclose(a.posteriors["mu"].mu, b.posteriors["mu"].mu, rtol=1e-14)
    np.testing.assert_allclose(a.elbo, b.elbo, rtol=1e-14)


@pytest.mark.parametrize("build, match", [
    (lambda: conjugate_mixture(np.zeros(4), 2, Gaussian, NormalGamma(0.0, 0.1, 1.0, 1.0), weight_concentration=-1.0),
     r"'weight_concentration' parameter of conjugate_mixture must be finite and > 0"),
    (lambda: conjugate_mixture(np.zeros(4), 2, Gaussian, NormalGamma(0.0, 0.1, 1.0, 1.0),
                               weight_concentration=np.ones(3)),
     r"'weight_concentration' parameter of conjugate_mixture must be a float or an array of shape \(2,\)"),
    (lambda: lda_cavi_model([[0, 1]], 2, 3, alpha=np.ones(5)),
     r"'alpha' parameter of lda_cavi_model must be a float or an array of shape \(2,\)"),
    (lambda: lda_cavi_model([[0, 1]], 2, 3, eta=0.0), r"'eta' parameter of lda_cavi_model must be finite and > 0"),
])
def test_dirichlet_concentrations_are_checked(build, match):
    """positive_parameter: one error naming the builder's parameter and what it must be."""
    with pytest.raises(InvalidParameterError, match=match):
        build()
