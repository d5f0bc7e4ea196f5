"""Univariate Gaussians: unknown mean and variance (``Gaussian``) or known variance (``GaussianKnownVariance``).

``Gaussian`` (seed 004, "Examples: Gaussian", d = 1)::

    eta = ( mu / sigma^2, -1 / (2 sigma^2) ),  T(x) = ( x, x^2 ),  h = (2 pi)^(-1/2),
    A(eta) = mu^2 / (2 sigma^2) + 1/2 log sigma^2 = -eta1^2 / (4 eta2) - 1/2 log(-2 eta2)

conjugate to :class:`~harmonium.expfam.NormalGamma` (coefficients (x, x^2, 1, 1), base
-1/2 log 2 pi). ``Gaussian`` is itself the conjugate prior of the mean of a
``GaussianKnownVariance``::

    log N(x | mu, s2) = <(x / s2, -1 / (2 s2)), (mu, mu^2)> - 1/2 log(2 pi s2) - x^2 / (2 s2)

so the posterior over mu has precision 1/tau0 + sum w / s2 and mean
(mu0/tau0 + sum w x / s2) / precision (Bishop 2006, eqs. 2.141-2.142).

``GaussianKnownVariance`` alone: eta = mu / s2, T(x) = x, log h(x) = -1/2 log(2 pi s2) - x^2/(2 s2),
A = s2 eta^2 / 2.
"""

from __future__ import annotations

import numpy as np

from harmonium.expfam import _checks
from harmonium.expfam._base import ConjugatePrior, ExponentialFamily, as_size
from harmonium.expfam.normal_gamma import NormalGamma

__all__ = ["Gaussian", "GaussianKnownVariance"]

_LOG2PI = np.log(2.0 * np.pi)


class _Normal:
    """N(mu, variance) by its mean and variance: the parts both univariate Gaussian families share."""

    _batch_source = ("mu", 0)

    def __init__(self, mu, variance):
        owner = type(self).__name__
        mu = _checks.finite(owner, "mu", mu)
        variance = _checks.positive(owner, "variance", variance)
        self.mu, self.variance = np.broadcast_arrays(mu, variance)

    def mean(self) -> np.ndarray:
        return self.mu

    def var(self) -> np.ndarray:
        return self.variance

    def log_prob(self, x) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        return -0.5 * ((x - self.mu) ** 2 / self.variance + np.log(self.variance) + _LOG2PI)

    def entropy(self) -> np.ndarray:
        return 0.5 * (np.log(self.variance) + 1.0 + _LOG2PI)

    def sample(self, rng: np.random.Generator, size=()) -> np.ndarray:
        return self.mu + np.sqrt(self.variance) * rng.standard_normal(as_size(size) + self.batch_shape)


class Gaussian(_Normal, ConjugatePrior):
    """A batch of univariate Gaussians N(mu, variance), both natural parameters.

    Parameters
    ----------
    mu : float or array_like
    variance : float or array_like
        > 0.

    Notes
    -----
    ``mean_params() = (mu, variance + mu^2)``. ``conjugate_prior = NormalGamma`` with
    ``conjugate_stats(x, weights) = (sum w x, sum w x^2, sum w, sum w)``,
    ``log_likelihood_base = -1/2 log(2 pi) sum w``.
    """

    event_dims = (0, 0)
    data_event_ndim = 0
    _data_check = staticmethod(_checks.finite)
    conjugate_prior = NormalGamma

    @classmethod
    def from_natural(cls, eta1, eta2):
        """variance = -1 / (2 eta2) (eta2 < 0), mu = eta1 variance."""
        owner = f"{cls.__name__}.from_natural"
        eta1 = _checks.finite(owner, "eta1", eta1)
        eta2 = _checks.as_float(owner, "eta2", eta2)
        _checks.check(owner, "eta2", eta2, np.isfinite(eta2) & (eta2 < 0), "finite and < 0")
        variance = -0.5 / eta2
        return cls(eta1 * variance, variance)

    @property
    def precision(self) -> np.ndarray:
        return 1.0 / self.variance

    @property
    def natural_params(self) -> tuple:
        return self.mu / self.variance, -0.5 / self.variance

    def sufficient_stats(self, x) -> tuple:
        x = np.asarray(x, dtype=np.float64)
        return x, x * x

    def log_base_measure(self, x) -> np.ndarray:
        return np.full(np.broadcast_shapes(np.shape(x), self.batch_shape), -0.5 * _LOG2PI)

    def log_partition(self) -> np.ndarray:
        return 0.5 * self.mu ** 2 / self.variance + 0.5 * np.log(self.variance)

    def mean_params(self) -> tuple:
        return self.mu, self.variance + self.mu ** 2

    def expected_log_base_measure(self) -> np.ndarray:
        return np.full(self.batch_shape, -0.5 * _LOG2PI)

    def kl(self, other) -> np.ndarray:
        self._check_same_family(other)
        ratio = self.variance / other.variance
        return 0.5 * (ratio + (self.mu - other.mu) ** 2 / other.variance - 1.0 - np.log(ratio))

    @classmethod
    def _conjugate_coefficients(cls, x, **_ignored):
        x = cls._data(x)
        ones = np.ones(x.shape)
        return (x, x * x, ones, ones), x.shape

    @classmethod
    def _expected_coefficients(cls, q):
        ones = np.ones(q.batch_shape)
        return q.mu, q.variance + q.mu ** 2, ones, ones

    @classmethod
    def _log_likelihood_base_per_sample(cls, x, **_ignored):
        return np.full(cls._data(x).shape, -0.5 * _LOG2PI)


class GaussianKnownVariance(_Normal, ExponentialFamily):
    """A batch of univariate Gaussians N(mu, variance) with the variance fixed (not a natural parameter).

    Parameters
    ----------
    mu : float or array_like
    variance : float or array_like
        > 0, fixed; broadcast against ``mu``.

    Notes
    -----
    ``conjugate_prior = Gaussian`` (a Gaussian over mu, T(mu) = (mu, mu^2)):
    ``conjugate_stats(x, weights) = (sum w x / variance, -sum w / (2 variance))`` and
    ``log_likelihood_base = sum w (-1/2 log(2 pi variance) - x^2 / (2 variance))``.
    On the class, pass ``variance=`` (it broadcasts against the samples).
    """

    event_dims = (0,)
    data_event_ndim = 0
    conjugate_prior = Gaussian

    @classmethod
    def from_natural(cls, eta, variance=None):
        owner = f"{cls.__name__}.from_natural"
        variance = _checks.positive(owner, "variance", _checks.required(owner, "variance", variance))
        return cls(np.asarray(eta, dtype=np.float64) * variance, variance)

    def _fixed_params(self) -> dict:
        return {"variance": self.variance}

    @property
    def natural_params(self) -> tuple:
        return (self.mu / self.variance,)

    def sufficient_stats(self, x) -> tuple:
        return (np.asarray(x, dtype=np.float64),)

    def log_base_measure(self, x) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        return -0.5 * (np.log(self.variance) + _LOG2PI) - 0.5 * x * x / self.variance

    def log_partition(self) -> np.ndarray:
        return 0.5 * self.mu ** 2 / self.variance

    def mean_params(self) -> tuple:
        return (self.mu,)

    def expected_log_base_measure(self) -> np.ndarray:
        return -0.5 * (np.log(self.variance) + _LOG2PI) - 0.5 * (self.variance + self.mu ** 2) / self.variance

    def kl(self, other) -> np.ndarray:
        self._check_same_family(other)
        return 0.5 * (self.mu - other.mu) ** 2 / self.variance

    @classmethod
    def _args(cls, x, variance):
        owner = f"{cls.__name__}.conjugate_stats"
        x = _checks.finite(owner, "x", x)
        variance = _checks.positive(owner, "variance", _checks.required(owner, "variance", variance))
        return np.broadcast_arrays(x, variance)

    @classmethod
    def _conjugate_coefficients(cls, x, variance=None, **_ignored):
        x, variance = cls._args(x, variance)
        return (x / variance, -0.5 / variance), x.shape

    @classmethod
    def _log_likelihood_base_per_sample(cls, x, variance=None, **_ignored):
        x, variance = cls._args(x, variance)
        return -0.5 * (np.log(variance) + _LOG2PI) - 0.5 * x * x / variance
