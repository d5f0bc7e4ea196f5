"""Bayesian mixtures of exponential-family components, declared on the generic CAVI engine.

A conjugate mixture (seed 004, "Exponential Family Conditionals": "Bayesian
mixtures of exponential family models with conjugate priors")::

    pi ~ Dir(alpha0),  theta_k ~ p(theta | prior),  z_n ~ Cat(pi),  x_n ~ L(theta_{z_n})

as a :class:`~harmonium.models.conjugate.Model` of a Dirichlet global ``"pi"``,
K component parameters ``"theta"``, a gate ``"z"`` and the observed ``"x"``.
The Bayesian Gaussian mixture (Bishop, PRML sec. 10.2) takes L the
multivariate Gaussian and p(theta) the normal-inverse-Wishart; with
hyperparameters in Bishop's names, NIW(mu0 = m0, kappa = beta0, nu = nu0,
Psi = W0^-1), so that q(mu_k, Lambda_k) = N(m_k, (beta_k Lambda_k)^-1) W(W_k, nu_k)
is q(theta_k) = NIW(m_k, beta_k, nu_k, W_k^-1).
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from harmonium.errors import InvalidParameterError
from harmonium.expfam._base import ConjugatePrior
from harmonium.expfam.dirichlet import Dirichlet
from harmonium.expfam.mvn import MultivariateGaussian
from harmonium.expfam.niw import NormalInverseWishart
from harmonium.models.conjugate import Gate, Global, Model, Observed, positive_parameter

__all__ = ["PI", "THETA", "Z", "X", "bayesian_gaussian_mixture", "conjugate_mixture", "gaussian_mixture_estimates"]

PI, THETA, Z, X = "pi", "theta", "z", "x"


def _n_components(value) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise InvalidParameterError(f"The 'n_components' parameter of a mixture must be an int >= 1. Got {value!r}.")
    return int(value)


def conjugate_mixture(data, n_components: int, likelihood: Any, component_prior: ConjugatePrior,
                      weight_concentration=1.0, fixed: dict | None = None) -> Model:
    """A K-component mixture of any expfam likelihood with its conjugate prior.

    Parameters
    ----------
    data : array, shape (n,) + event shape
    n_components : int
        K.
    likelihood : class or instance
        The component family (``MultivariateGaussian``, ``Poisson``, ``Categorical``...).
    component_prior : ConjugatePrior
        Prior of one component (batch shape ()), shared by the K components.
    weight_concentration : float or array (K,)
        alpha0 of the Dirichlet prior on the mixing weights.
    fixed : dict, optional
        Fixed parameters of the likelihood (see :class:`~harmonium.models.conjugate.Observed`).
    """
    K = _n_components(n_components)
    alpha0 = positive_parameter("conjugate_mixture", "weight_concentration", weight_concentration, (K,))
    return Model([
        Global(PI, Dirichlet(alpha0)),
        Global(THETA, component_prior, size=K),
        Gate(Z, parent=PI),
        Observed(X, likelihood, params=THETA, gate=Z, data=data, fixed=fixed),
    ])


def bayesian_gaussian_mixture(X_data, n_components: int, *, weight_concentration=None, mean_prior=None,
                              mean_precision: float = 1.0, degrees_of_freedom=None, covariance_prior=None) -> Model:
    """The variational Bayesian Gaussian mixture of Bishop (PRML sec. 10.2) as a CAVI model.

    Parameters
    ----------
    X_data : array, shape (n, d)
    n_components : int
        K.
    weight_concentration : float, default 1 / K
        alpha0 of Dir(pi | alpha0).
    mean_prior : array (d,), default the data mean
        m0.
    mean_precision : float, default 1
        beta0 (the NIW's kappa).
    degrees_of_freedom : float, default d
        nu0 (> d - 1).
    covariance_prior : array (d, d), default the data covariance
        W0^-1 (the NIW's Psi).

    The defaults are those of scikit-learn's ``BayesianGaussianMixture`` with
    ``weight_concentration_prior_type="dirichlet_distribution"``.
    """
    X_data = np.asarray(X_data, dtype=np.float64)
    if X_data.ndim != 2 or X_data.shape[0] < 2:
        raise InvalidParameterError(
            f"bayesian_gaussian_mixture needs data of shape (n, d) with n >= 2. Got shape {X_data.shape}."
        )
    K = _n_components(n_components)
    d = X_data.shape[1]
    m0 = X_data.mean(axis=0) if mean_prior is None else mean_prior
    nu0 = float(d) if degrees_of_freedom is None else degrees_of_freedom
    psi0 = np.atleast_2d(np.cov(X_data.T)) if covariance_prior is None else covariance_prior
    alpha0 = 1.0 / K if weight_concentration is None else weight_concentration
    prior = NormalInverseWishart(m0, mean_precision, nu0, psi0)
    return conjugate_mixture(X_data, K, MultivariateGaussian, prior, weight_concentration=alpha0)


def gaussian_mixture_estimates(posteriors: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Point estimates ``(weights, means, covariances)`` from the variational posteriors.

    weights = E[pi], means = m_k, covariances = E[Lambda_k]^-1 = W_k^-1 / nu_k (as scikit-learn's
    ``covariances_``).
    """
    pi, theta = posteriors[PI], posteriors[THETA]
    return pi.mean(), theta.mu0.copy(), theta.Psi / theta.nu[:, None, None]
