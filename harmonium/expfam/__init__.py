"""Exponential-family building blocks and their conjugate updates (issue 4).

Every distribution is a batch in natural form ``p(x | eta) = h(x) exp{<eta, T(x)> - A(eta)}``
(seed 004, "Exponential family, a basic building block"); see :mod:`harmonium.expfam._base`
for the contract (tuples of natural parameters, ``mean_params`` = E[T], ``sample(rng, size)``,
``conjugate_stats`` / ``posterior`` / ``log_marginal_likelihood``).

Likelihood -> conjugate prior: Bernoulli, Binomial -> Beta; Categorical, Multinomial -> Dirichlet;
Poisson -> Gamma; GaussianKnownVariance -> Gaussian (over the mean); Gaussian -> NormalGamma;
MultivariateGaussian -> NormalInverseWishart.
"""

from harmonium.expfam._base import ConjugatePrior, ExponentialFamily, inner
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

__all__ = [
    "Bernoulli",
    "Beta",
    "Binomial",
    "Categorical",
    "ConjugatePrior",
    "Dirichlet",
    "ExponentialFamily",
    "Gamma",
    "Gaussian",
    "GaussianKnownVariance",
    "Multinomial",
    "MultivariateGaussian",
    "NormalGamma",
    "NormalInverseWishart",
    "Poisson",
    "inner",
]
