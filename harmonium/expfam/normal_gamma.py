"""Normal-gamma distribution over (mu, lambda): the conjugate prior of a univariate Gaussian.

Standard form (Murphy, "Conjugate Bayesian analysis of the Gaussian distribution", 2007, sec. 3;
Bishop 2006, 2.3.6, eq. 2.154)::

    lambda ~ Gamma(alpha, rate=beta),   mu | lambda ~ N(mu0, 1 / (kappa lambda)).

Natural form (seed 004, "Exponential family, a basic building block"), the d = 1 case of
:mod:`harmonium.expfam.niw` with lambda = Sigma^-1::

    T(mu, lambda) = ( lambda mu,  -1/2 lambda,  -1/2 lambda mu^2,  1/2 log lambda )
    eta           = ( kappa mu0,  kappa mu0^2 + 2 beta,  kappa,  2 alpha - 1 )
    h             = 1   (Lebesgue measure on R x (0, inf))
    A(eta)        = log Gamma(alpha) - alpha log beta - 1/2 log kappa + 1/2 log(2 pi)

and log N(x | mu, 1/lambda) = <(x, x^2, 1, 1), T(mu, lambda)> - 1/2 log(2 pi) exactly.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from harmonium.expfam import _checks
from harmonium.expfam._base import ConjugatePrior, as_size

__all__ = ["NormalGamma"]

_LOG2PI = np.log(2.0 * np.pi)


class NormalGamma(ConjugatePrior):
    """A batch of normal-gamma distributions over (mu, lambda) (mean and precision).

    Parameters
    ----------
    mu0 : float or array_like
        Prior mean of mu.
    kappa : float or array_like
        Pseudo-count of the mean, > 0.
    alpha : float or array_like
        Gamma shape of lambda, > 0.
    beta : float or array_like
        Gamma rate of lambda, > 0.

    Notes
    -----
    Variates are tuples ``(mu, lam)``. ``mean_params()`` = (E[lambda] mu0, -E[lambda]/2,
    -(E[lambda] mu0^2 + 1/kappa)/2, (psi(alpha) - log beta)/2) with E[lambda] = alpha/beta.
    Posterior after N points (Murphy 2007, eqs. 85-89): kappa_N = kappa + N,
    mu_N = (kappa mu0 + N xbar)/kappa_N, alpha_N = alpha + N/2,
    beta_N = beta + 1/2 sum (x - xbar)^2 + kappa N (xbar - mu0)^2 / (2 kappa_N).
    """

    event_dims = (0, 0, 0, 0)
    _batch_source = ("kappa", 0)

    def __init__(self, mu0, kappa, alpha, beta):
        owner = "NormalGamma"
        mu0 = _checks.finite(owner, "mu0", mu0)
        kappa = _checks.positive(owner, "kappa", kappa)
        alpha = _checks.positive(owner, "alpha", alpha)
        beta = _checks.positive(owner, "beta", beta)
        self.mu0, self.kappa, self.alpha, self.beta = np.broadcast_arrays(mu0, kappa, alpha, beta)

    @classmethod
    def from_natural(cls, eta1, eta2, eta3, eta4):
        """kappa = eta3, mu0 = eta1/eta3, beta = (eta2 - eta1^2/eta3)/2, alpha = (eta4 + 1)/2."""
        owner = f"{cls.__name__}.from_natural"
        eta1 = _checks.as_float(owner, "eta1", eta1)
        eta2 = _checks.as_float(owner, "eta2", eta2)
        kappa = _checks.positive(owner, "eta3 (kappa)", eta3)
        eta4 = _checks.as_float(owner, "eta4", eta4)
        return cls(eta1 / kappa, kappa, 0.5 * (eta4 + 1.0), 0.5 * (eta2 - eta1 ** 2 / kappa))

    # -- shapes and accessors ----------------------------------------------------
    def mean(self) -> tuple:
        """(E[mu], E[lambda]) = (mu0, alpha / beta)."""
        return self.mu0, self.alpha / self.beta

    def predictive_params(self) -> tuple:
        """Posterior-predictive Student t: (df, loc, scale) = (2 alpha, mu0, sqrt(beta (kappa+1) / (alpha kappa)))."""
        return 2.0 * self.alpha, self.mu0, np.sqrt(self.beta * (self.kappa + 1.0) / (self.alpha * self.kappa))

    # -- natural form ------------------------------------------------------------
    @property
    def natural_params(self) -> tuple:
        k = self.kappa
        return k * self.mu0, k * self.mu0 ** 2 + 2.0 * self.beta, k, 2.0 * self.alpha - 1.0

    def sufficient_stats(self, x) -> tuple:
        mu, lam = (np.asarray(v, dtype=np.float64) for v in x)
        with np.errstate(divide="ignore", invalid="ignore"):
            return lam * mu, -0.5 * lam, -0.5 * lam * mu ** 2, 0.5 * np.log(lam)

    def log_base_measure(self, x) -> np.ndarray:
        return np.zeros(np.broadcast_shapes(np.shape(x[0]), np.shape(x[1]), self.batch_shape))

    def _support(self, x):
        return np.asarray(x[1]) > 0

    def log_partition(self) -> np.ndarray:
        return (special.gammaln(self.alpha) - self.alpha * np.log(self.beta)
                - 0.5 * np.log(self.kappa) + 0.5 * _LOG2PI)

    def mean_params(self) -> tuple:
        e_lam = self.alpha / self.beta
        return (e_lam * self.mu0, -0.5 * e_lam, -0.5 * (e_lam * self.mu0 ** 2 + 1.0 / self.kappa),
                0.5 * (special.digamma(self.alpha) - np.log(self.beta)))

    def expected_log_base_measure(self) -> np.ndarray:
        return np.zeros(self.batch_shape)

    def sample(self, rng: np.random.Generator, size=()) -> tuple:
        """A tuple (mu, lam), each of shape ``size + batch_shape``."""
        shape = as_size(size) + self.batch_shape
        lam = rng.gamma(np.broadcast_to(self.alpha, shape)) / self.beta
        mu = self.mu0 + rng.standard_normal(shape) / np.sqrt(self.kappa * lam)
        return mu, lam
