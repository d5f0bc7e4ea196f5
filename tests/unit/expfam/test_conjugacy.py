"""Conjugate updates: the exact likelihood identity, textbook posteriors, marginal likelihoods, weights."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest
from scipy import integrate, special, stats

from harmonium import expfam as ef
from harmonium.errors import InvalidParameterError

from ._cases import Z

_PSI = np.array([[1.5, 0.4], [0.4, 0.8]])


@dataclass(frozen=True)
class Lik:
    cls: type
    prior: ef.ConjugatePrior
    data: object  # rng -> x
    loglik: object  # (theta, x) -> sum_n log p(x_n | theta)
    fixed: dict = field(default_factory=dict)


LIKS = {
    "Bernoulli": Lik(ef.Bernoulli, ef.Beta(2.0, 3.0), lambda r: r.integers(0, 2, 12),
                     lambda p, x: stats.bernoulli(p).logpmf(x).sum()),
    "Binomial": Lik(ef.Binomial, ef.Beta(0.8, 1.7), lambda r: r.integers(0, 6, 10),
                    lambda p, x: stats.binom(5, p).logpmf(x).sum(), {"n": 5}),
    "Poisson": Lik(ef.Poisson, ef.Gamma(2.0, 1.5), lambda r: r.poisson(3.0, 10),
                   lambda lam, x: stats.poisson(lam).logpmf(x).sum()),
    "Categorical": Lik(ef.Categorical, ef.Dirichlet([1.0, 2.0, 0.5, 1.5]), lambda r: r.integers(0, 4, 15),
                       lambda pi, x: np.log(pi[x]).sum(), {"n_categories": 4}),
    "Multinomial": Lik(ef.Multinomial, ef.Dirichlet([1.0, 2.0, 0.5, 1.5]),
                       lambda r: np.stack([r.multinomial(r.integers(1, 6), [0.1, 0.2, 0.3, 0.4]) for _ in range(8)]),
                       lambda pi, x: sum(stats.multinomial(xi.sum(), pi).logpmf(xi) for xi in x)),
    "GaussianKnownVariance": Lik(ef.GaussianKnownVariance, ef.Gaussian(0.5, 4.0), lambda r: r.normal(1.0, 1.5, 10),
                                 lambda mu, x: stats.norm(mu, np.sqrt(2.0)).logpdf(x).sum(), {"variance": 2.0}),
    "Gaussian": Lik(ef.Gaussian, ef.NormalGamma(0.5, 2.0, 3.0, 4.0), lambda r: r.normal(1.0, 1.5, 10),
                    lambda th, x: stats.norm(th[0], 1.0 / np.sqrt(th[1])).logpdf(x).sum()),
    "MultivariateGaussian": Lik(ef.MultivariateGaussian, ef.NormalInverseWishart([0.0, 1.0], 2.0, 5.0, _PSI),
                                lambda r: r.normal(size=(10, 2)) @ np.array([[1.0, 0.5], [0.0, 0.7]]) + [1.0, -1.0],
                                lambda th, x: stats.multivariate_normal(th[0], th[1]).logpdf(x).sum()),
}
NAMES = list(LIKS)


def _stats(lik, x, weights=None):
    return lik.cls.conjugate_stats(x, weights, **lik.fixed)


def _base(lik, x, weights=None):
    return lik.cls.log_likelihood_base(x, weights, **lik.fixed)


def _theta(sample, i):
    return tuple(v[i] for v in sample) if isinstance(sample, tuple) else sample[i]


@pytest.mark.parametrize("name", NAMES)
def test_likelihood_identity_is_exact(name):
    """log p(x | theta) = <c(x), T_prior(theta)> + log h_lik(x) at prior draws theta."""
    lik = LIKS[name]
    rng = np.random.default_rng(1)
    x = lik.data(rng)
    s, base = _stats(lik, x), _base(lik, x)
    draws = lik.prior.sample(rng, 5)
    t = lik.prior.sufficient_stats(draws)
    rhs = ef.inner(s, t, lik.prior.event_dims) + base
    lhs = [lik.loglik(_theta(draws, i), x) for i in range(5)]
    np.testing.assert_allclose(rhs, lhs, rtol=1e-10, atol=1e-10)


def _textbook_posterior(name, prior, x):
    """Standard-parameter posteriors from the references (Bishop 2006; Murphy 2007)."""
    n = len(x)
    if name == "Bernoulli":
        return {"a": prior.a + x.sum(), "b": prior.b + n - x.sum()}
    if name == "Binomial":
        return {"a": prior.a + x.sum(), "b": prior.b + 5 * n - x.sum()}
    if name == "Poisson":
        return {"shape": prior.shape + x.sum(), "rate": prior.rate + n}
    if name == "Categorical":
        return {"alpha": prior.alpha + np.bincount(x, minlength=4)}
    if name == "Multinomial":
        return {"alpha": prior.alpha + x.sum(axis=0)}
    if name == "GaussianKnownVariance":
        prec = 1.0 / prior.variance + n / 2.0
        return {"variance": 1.0 / prec, "mu": (prior.mu / prior.variance + x.sum() / 2.0) / prec}
    if name == "Gaussian":  # Murphy (2007) eqs. 85-89
        xbar, k0 = x.mean(), prior.kappa
        kn = k0 + n
        return {"kappa": kn, "mu0": (k0 * prior.mu0 + n * xbar) / kn, "alpha": prior.alpha + n / 2.0,
                "beta": prior.beta + 0.5 * ((x - xbar) ** 2).sum() + k0 * n * (xbar - prior.mu0) ** 2 / (2.0 * kn)}
    xbar, k0 = x.mean(axis=0), prior.kappa  # NIW, Murphy (2007) eqs. 251-254
    kn = k0 + n
    scatter = (x - xbar).T @ (x - xbar)
    dm = xbar - prior.mu0
    return {"kappa": kn, "nu": prior.nu + n, "mu0": (k0 * prior.mu0 + n * xbar) / kn,
            "Psi": prior.Psi + scatter + k0 * n / kn * np.outer(dm, dm)}


@pytest.mark.parametrize("name", NAMES)
def test_posterior_matches_textbook(name):
    lik = LIKS[name]
    x = lik.data(np.random.default_rng(2))
    post = lik.prior.posterior(_stats(lik, x))
    for attr, value in _textbook_posterior(name, lik.prior, x).items():
        np.testing.assert_allclose(getattr(post, attr), value, rtol=1e-10, err_msg=attr)


@pytest.mark.parametrize("name", ["Bernoulli", "Binomial", "Poisson", "GaussianKnownVariance"])
def test_log_marginal_likelihood_by_quadrature(name):
    lik = LIKS[name]
    x = lik.data(np.random.default_rng(3))
    got = lik.prior.log_marginal_likelihood(_stats(lik, x), _base(lik, x))
    lo, hi = {"Poisson": (0, np.inf), "GaussianKnownVariance": (-np.inf, np.inf)}.get(name, (0, 1))
    # integrate the joint scaled by exp(-got) so the integral is ~1
    total, _ = integrate.quad(lambda t: np.exp(lik.loglik(t, x) + lik.prior.log_prob(t) - got), lo, hi,
                              epsabs=1e-12, limit=200)
    assert abs(total - 1.0) < 1e-7


@pytest.mark.parametrize("name", ["Categorical", "Multinomial"])
def test_log_marginal_likelihood_dirichlet_multinomial(name):
    lik = LIKS[name]
    x = lik.data(np.random.default_rng(4))
    a = lik.prior.alpha
    counts = np.bincount(x, minlength=4) if name == "Categorical" else x.sum(axis=0)
    ref = (special.gammaln(a.sum()) - special.gammaln(a.sum() + counts.sum())
           + (special.gammaln(a + counts) - special.gammaln(a)).sum())
    if name == "Multinomial":
        ref += (special.gammaln(x.sum(axis=1) + 1) - special.gammaln(x + 1).sum(axis=1)).sum()
    np.testing.assert_allclose(lik.prior.log_marginal_likelihood(_stats(lik, x), _base(lik, x)), ref, rtol=1e-12)


def test_log_marginal_likelihood_normal_gamma():
    """Murphy (2007) eq. 95 and the chain rule of Student-t predictives (eq. 100)."""
    lik = LIKS["Gaussian"]
    x = lik.data(np.random.default_rng(5))
    prior = lik.prior
    got = prior.log_marginal_likelihood(_stats(lik, x), _base(lik, x))
    post = prior.posterior(_stats(lik, x))
    ref = (special.gammaln(post.alpha) - special.gammaln(prior.alpha) + prior.alpha * np.log(prior.beta)
           - post.alpha * np.log(post.beta) + 0.5 * np.log(prior.kappa / post.kappa) - 0.5 * len(x) * np.log(2 * np.pi))
    np.testing.assert_allclose(got, ref, rtol=1e-12)
    chain, q = 0.0, prior
    for xi in x:
        df, loc, scale = 2 * q.alpha, q.mu0, np.sqrt(q.beta * (q.kappa + 1) / (q.alpha * q.kappa))
        np.testing.assert_allclose(q.predictive_params(), (df, loc, scale), rtol=1e-12)
        chain += stats.t(df, loc, scale).logpdf(xi)
        q = q.posterior(ef.Gaussian.conjugate_stats(xi))
    np.testing.assert_allclose(got, chain, rtol=1e-10)


def test_log_marginal_likelihood_normal_inverse_wishart():
    """Murphy (2007) eq. 266 and the chain rule of multivariate-t predictives (eq. 258)."""
    lik = LIKS["MultivariateGaussian"]
    x = lik.data(np.random.default_rng(6))
    prior, (n, d) = lik.prior, x.shape
    got = prior.log_marginal_likelihood(_stats(lik, x), _base(lik, x))
    post = prior.posterior(_stats(lik, x))
    ref = (-0.5 * n * d * np.log(np.pi) + special.multigammaln(post.nu / 2, d) - special.multigammaln(prior.nu / 2, d)
           + 0.5 * prior.nu * np.linalg.slogdet(prior.Psi)[1] - 0.5 * post.nu * np.linalg.slogdet(post.Psi)[1]
           + 0.5 * d * np.log(prior.kappa / post.kappa))
    np.testing.assert_allclose(got, ref, rtol=1e-12)
    chain, q = 0.0, prior
    for xi in x:
        df, loc, shape = q.predictive_params()
        chain += stats.multivariate_t(loc, shape, df=df).logpdf(xi)
        q = q.posterior(ef.MultivariateGaussian.conjugate_stats(xi))
    np.testing.assert_allclose(got, chain, rtol=1e-10)


# -- weights ---------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_integer_weights_equal_repeated_samples(name):
    lik = LIKS[name]
    rng = np.random.default_rng(7)
    x = lik.data(rng)
    w = rng.integers(0, 4, len(x))
    for a, b in zip(_stats(lik, x, w), _stats(lik, np.repeat(x, w, axis=0)), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(_base(lik, x, w), _base(lik, np.repeat(x, w, axis=0)), rtol=1e-12)


@pytest.mark.parametrize("name", NAMES)
def test_responsibility_weights_stack_components(name):
    lik = LIKS[name]
    rng = np.random.default_rng(8)
    x = lik.data(rng)
    r = rng.dirichlet(np.ones(3), size=len(x))  # (n, K): responsibilities r_nk
    stacked = _stats(lik, x, r)
    post = lik.prior.posterior(stacked)
    assert post.batch_shape == (3,)
    np.testing.assert_allclose(_base(lik, x, r), [_base(lik, x, r[:, k]) for k in range(3)], rtol=1e-12)
    for k in range(3):
        single = _stats(lik, x, r[:, k])
        for a, b in zip(stacked, single, strict=True):
            np.testing.assert_allclose(a[k], b, rtol=1e-12, atol=1e-12)
        for a, b in zip(post[k].natural_params, lik.prior.posterior(single).natural_params, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def _pointwise(name, theta, x):
    """log p(x_n | theta_s) with shape (n,) + theta's batch shape, vectorised with our (scipy-checked) log_prob."""
    if name == "Multinomial":
        pi = theta
        extra = (None,) * (pi.ndim - 1)
        return ef.Multinomial(x.sum(axis=-1)[(slice(None),) + extra], pi).log_prob(x[(slice(None),) + extra])
    if name == "MultivariateGaussian":
        return ef.MultivariateGaussian(theta[0], theta[1]).log_prob(x[:, None, None, :])
    dist = {
        "Bernoulli": lambda: ef.Bernoulli(theta),
        "Binomial": lambda: ef.Binomial(5, theta),
        "Poisson": lambda: ef.Poisson(theta),
        "Categorical": lambda: ef.Categorical(theta),
        "GaussianKnownVariance": lambda: ef.GaussianKnownVariance(theta, 2.0),
        "Gaussian": lambda: ef.Gaussian(theta[0], 1.0 / theta[1]),
    }[name]()
    return dist.log_prob(x[:, None, None])


@pytest.mark.parametrize("name", NAMES)
def test_expected_log_likelihood_matches_monte_carlo(name):
    """E_q[log p(x_n | theta)] per sample and component against draws theta ~ q (q of batch shape (2,))."""
    lik = LIKS[name]
    rng = np.random.default_rng(9)
    x = lik.data(rng)[:4]
    q = lik.prior.posterior(_stats(lik, x, rng.random((len(x), 2))))
    got = lik.cls.expected_log_likelihood(x, q, **lik.fixed)
    assert got.shape == (len(x), 2)
    np.testing.assert_allclose(lik.cls.expected_log_likelihood(x, q.mean_params(), **lik.fixed), got)
    s = 20_000
    vals = _pointwise(name, q.sample(rng, s), x)  # (n, s, 2)
    se = vals.std(axis=1, ddof=1) / np.sqrt(s)
    assert (np.abs(vals.mean(axis=1) - got) <= Z * se).all(), (vals.mean(axis=1), got)


EXPECTED_Q = {
    "Categorical": lambda: ef.Categorical(np.random.default_rng(0).dirichlet(np.ones(3), size=4)),
    "Multinomial": lambda: ef.Multinomial([2, 3, 1, 4], np.random.default_rng(0).dirichlet(np.ones(3), size=4)),
    "Bernoulli": lambda: ef.Bernoulli([0.1, 0.5, 0.7, 0.95]),
    "Binomial": lambda: ef.Binomial([2, 3, 1, 4], [0.1, 0.5, 0.7, 0.95]),
    "Poisson": lambda: ef.Poisson([0.5, 1.0, 3.0, 7.0]),
    "Gaussian": lambda: ef.Gaussian([0.0, 1.0, -2.0, 0.5], [1.0, 0.5, 2.0, 0.1]),
    "MultivariateGaussian": lambda: ef.MultivariateGaussian(np.arange(8.0).reshape(4, 2), np.eye(2) * [[1.0], [2.0]]),
}


@pytest.mark.parametrize("name", list(EXPECTED_Q))
def test_expected_conjugate_stats_is_the_average_over_q(name):
    """E_q[sum_n c(x_n)] (the VMP message of latent x_n ~ q) against draws from q, with (N, K) weights."""
    q = EXPECTED_Q[name]()
    rng = np.random.default_rng(12)
    w = rng.random((4, 2))
    got = q.expected_conjugate_stats(q, w)
    draws = q.sample(rng, 3000)
    vals = [q.conjugate_stats(x, w) for x in draws]
    for k, part in enumerate(got):
        v = np.stack([val[k] for val in vals])
        se = v.std(axis=0, ddof=1) / np.sqrt(len(v))
        assert (np.abs(v.mean(axis=0) - part) <= Z * se + 1e-12).all(), (name, k)
    with pytest.raises(InvalidParameterError, match="'q' must be a"):
        type(q).expected_conjugate_stats(ef.Beta(1.0, 1.0))
