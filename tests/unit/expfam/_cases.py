"""One row per family: three parameter sets (batched as one instance) and scipy references.

Monte Carlo checks in this folder use Z = 5 standard errors per coordinate (two-sided
p = 5.7e-7); the suite makes fewer than 1000 such comparisons, so its false-alarm rate is
below 1e-3 (Bonferroni). Seeds are fixed and nothing is retried.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from harmonium import expfam as ef

Z = 5.0

_COV = [np.array([[2.0, 0.3], [0.3, 1.0]]), np.array([[0.5, -0.2], [-0.2, 0.4]]), np.array([[1.0, 0.0], [0.0, 3.0]])]


@dataclass(frozen=True)
class Case:
    cls: type
    params: list  # one tuple of constructor arguments per batch member

    def single(self, i):
        return self.cls(*self.params[i])

    def batch(self):
        cols = list(zip(*self.params, strict=True))
        return self.cls(*(np.stack([np.asarray(c, dtype=float) for c in col]) for col in cols))

    @property
    def name(self) -> str:
        return self.cls.__name__


CASES = {
    "Bernoulli": Case(ef.Bernoulli, [(0.2,), (0.5,), (0.9,)]),
    "Binomial": Case(ef.Binomial, [(5, 0.3), (8, 0.5), (3, 0.9)]),
    "Poisson": Case(ef.Poisson, [(0.7,), (3.0,), (12.0,)]),
    "Categorical": Case(ef.Categorical, [([0.2, 0.3, 0.5],), ([0.6, 0.2, 0.2],), ([0.1, 0.1, 0.8],)]),
    "Multinomial": Case(ef.Multinomial, [(4, [0.2, 0.3, 0.5]), (6, [0.6, 0.2, 0.2]), (3, [0.1, 0.1, 0.8])]),
    "Beta": Case(ef.Beta, [(2.0, 3.0), (0.7, 1.5), (5.0, 1.2)]),
    "Gamma": Case(ef.Gamma, [(2.0, 3.0), (0.8, 1.0), (6.0, 0.5)]),
    "Dirichlet": Case(ef.Dirichlet, [([1.0, 2.0, 3.0],), ([0.8, 0.8, 2.0],), ([4.0, 2.0, 1.5],)]),
    "Gaussian": Case(ef.Gaussian, [(0.5, 2.0), (-1.0, 0.3), (3.0, 1.0)]),
    "GaussianKnownVariance": Case(ef.GaussianKnownVariance, [(0.5, 2.0), (-1.0, 0.3), (3.0, 1.0)]),
    "MultivariateGaussian": Case(ef.MultivariateGaussian,
                                 [([0.0, 1.0], _COV[0]), ([-1.0, 0.5], _COV[1]), ([2.0, 2.0], _COV[2])]),
    "NormalGamma": Case(ef.NormalGamma, [(0.5, 2.0, 3.0, 4.0), (-1.0, 0.5, 5.0, 2.0), (2.0, 1.0, 2.5, 1.0)]),
    "NormalInverseWishart": Case(ef.NormalInverseWishart, [([0.0, 1.0], 2.0, 6.0, _COV[0]),
                                                           ([-1.0, 0.5], 0.5, 7.5, _COV[1]),
                                                           ([2.0, 2.0], 1.0, 5.0, _COV[2])]),
}
NAMES = list(CASES)
DISCRETE = ["Bernoulli", "Binomial", "Poisson", "Categorical", "Multinomial"]
CONTINUOUS_1D = ["Beta", "Gamma", "Gaussian", "GaussianKnownVariance"]
JOINT = ["NormalGamma", "NormalInverseWishart"]


def scipy_frozen(name: str, p: tuple):
    """The scipy.stats distribution of one parameter set, or None for the joint families."""
    return {
        "Bernoulli": lambda: stats.bernoulli(p[0]),
        "Binomial": lambda: stats.binom(p[0], p[1]),
        "Poisson": lambda: stats.poisson(p[0]),
        "Categorical": lambda: stats.multinomial(1, p[0]),
        "Multinomial": lambda: stats.multinomial(p[0], p[1]),
        "Beta": lambda: stats.beta(p[0], p[1]),
        "Gamma": lambda: stats.gamma(p[0], scale=1.0 / p[1]),
        "Dirichlet": lambda: stats.dirichlet(p[0]),
        "Gaussian": lambda: stats.norm(p[0], np.sqrt(p[1])),
        "GaussianKnownVariance": lambda: stats.norm(p[0], np.sqrt(p[1])),
        "MultivariateGaussian": lambda: stats.multivariate_normal(p[0], p[1]),
    }.get(name, lambda: None)()


def scipy_logpdf(name: str, p: tuple, x):
    """scipy's log density of one parameter set at draws x (leading sample axis)."""
    if name == "NormalGamma":
        mu, lam = x
        mu0, kappa, alpha, beta = p
        return stats.gamma(alpha, scale=1.0 / beta).logpdf(lam) + stats.norm(mu0, 1.0 / np.sqrt(kappa * lam)).logpdf(mu)
    if name == "NormalInverseWishart":
        mu, sigma = x
        mu0, kappa, nu, psi = p
        iw = stats.invwishart(nu, psi)
        return np.array([iw.logpdf(s) + stats.multivariate_normal(mu0, s / kappa).logpdf(m)
                         for m, s in zip(mu, sigma, strict=True)])
    frozen = scipy_frozen(name, p)
    if name == "Categorical":
        onehot = (np.asarray(x)[..., None] == np.arange(len(p[0]))).astype(int)
        return frozen.logpmf(onehot)
    if name == "Dirichlet":
        return frozen.logpdf(np.asarray(x).T)
    return frozen.logpmf(x) if name in DISCRETE else frozen.logpdf(x)


def member(x, i):
    """Batch member i of draws with layout ``size + (3,) + event`` (tuples for joint families)."""
    if isinstance(x, tuple):
        return tuple(v[:, i] for v in x)
    return x[:, i]
