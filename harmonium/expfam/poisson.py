"""Poisson distribution in natural form.

Seed 004, "Examples: Poisson"::

    eta = log(rate),  T(x) = x,  A(eta) = e^eta = rate,  h(x) = 1 / x!

Conjugacy with :class:`~harmonium.expfam.Gamma` (T_prior(lam) = (log lam, lam)):
log p(x | lam) = <(x, -1), (log lam, lam)> - log x!, so the posterior is
Gamma(shape + sum x, rate + N) (Bishop 2006, exercise 2.41; Gelman et al. BDA 2.6).
"""

from __future__ import annotations

import numpy as np
from scipy import special

from harmonium.expfam import _checks
from harmonium.expfam._base import ExponentialFamily, as_size
from harmonium.expfam._special import expected_log_factorial_poisson
from harmonium.expfam.gamma import Gamma

__all__ = ["Poisson"]


class Poisson(ExponentialFamily):
    """A batch of Poisson(rate) distributions on {0, 1, 2, ...}.

    Parameters
    ----------
    rate : float or array_like
        Finite and > 0.

    Notes
    -----
    ``T(x) = (x,)``, ``eta = (log rate,)``, ``log h = -log x!``, ``A = rate``, ``mean_params() = (rate,)``.
    ``conjugate_prior = Gamma``: ``conjugate_stats(x, weights) = (sum w x, -sum w)``,
    ``log_likelihood_base = -sum w log x!``.
    """

    event_dims = (0,)
    _batch_source = ("rate", 0)
    data_event_ndim = 0
    _data_check = staticmethod(_checks.counts)
    conjugate_prior = Gamma

    def __init__(self, rate):
        self.rate = _checks.positive(type(self).__name__, "rate", rate)

    @classmethod
    def from_natural(cls, eta, **_ignored):
        """rate = exp(eta)."""
        eta = _checks.finite(f"{cls.__name__}.from_natural", "eta", eta)
        return cls(np.exp(eta))

    def mean(self) -> np.ndarray:
        return self.rate

    def var(self) -> np.ndarray:
        return self.rate

    @property
    def natural_params(self) -> tuple:
        return (np.log(self.rate),)

    def sufficient_stats(self, x) -> tuple:
        return (np.asarray(x, dtype=np.float64),)

    def log_base_measure(self, x) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        with np.errstate(invalid="ignore"):
            return -special.gammaln(x + 1.0) + np.zeros(self.batch_shape)

    def _support(self, x):
        x = np.asarray(x, dtype=np.float64)
        return (x >= 0) & (x == np.round(x))

    def log_partition(self) -> np.ndarray:
        return self.rate.copy()

    def mean_params(self) -> tuple:
        return (self.rate.copy(),)

    def expected_log_base_measure(self) -> np.ndarray:
        return -expected_log_factorial_poisson(self.rate)

    def kl(self, other) -> np.ndarray:
        """rate_p log(rate_p / rate_q) - rate_p + rate_q."""
        self._check_same_family(other)
        return self.rate * (np.log(self.rate) - np.log(other.rate)) - self.rate + other.rate

    def sample(self, rng: np.random.Generator, size=()) -> np.ndarray:
        shape = as_size(size) + self.batch_shape
        return rng.poisson(np.broadcast_to(self.rate, shape))

    @classmethod
    def _conjugate_coefficients(cls, x, **_ignored):
        x = cls._data(x)
        return (x, -np.ones(x.shape)), x.shape

    @classmethod
    def _expected_coefficients(cls, q):
        return q.rate.copy(), -np.ones(q.batch_shape)

    @classmethod
    def _log_likelihood_base_per_sample(cls, x, **_ignored):
        return -special.gammaln(cls._data(x) + 1.0)
