"""Gamma distribution (shape, rate) in natural form: the conjugate prior of the Poisson rate.

Natural form (seed 004, "Exponential family, a basic building block")::

    T(lam) = ( log lam, lam ),  eta = ( shape - 1, -rate ),  h = 1,
    A(eta) = log Gamma(shape) - shape log(rate)

mean parameters E[log lam] = psi(shape) - log(rate), E[lam] = shape / rate (Bishop 2006, B.26-B.30).
"""

from __future__ import annotations

import numpy as np
from scipy import special

from harmonium.expfam import _checks
from harmonium.expfam._base import ConjugatePrior, as_size

__all__ = ["Gamma"]


class Gamma(ConjugatePrior):
    """A batch of Gamma(shape, rate) distributions: rate^shape lam^(shape-1) e^(-rate lam) / Gamma(shape) on (0, inf).

    Parameters
    ----------
    shape, rate : float or array_like
        Finite and > 0 (broadcast together). scipy's ``scale`` is ``1 / rate``.

    Notes
    -----
    Conjugate to :class:`~harmonium.expfam.Poisson` (coefficients (x, -1), base -log x!): the
    posterior is Gamma(shape + sum x, rate + N).
    """

    event_dims = (0, 0)
    _batch_source = ("shape", 0)

    def __init__(self, shape, rate):
        shape = _checks.positive("Gamma", "shape", shape)
        rate = _checks.positive("Gamma", "rate", rate)
        self.shape, self.rate = np.broadcast_arrays(shape, rate)

    @classmethod
    def from_natural(cls, eta1, eta2):
        """shape = eta1 + 1, rate = -eta2 (checked > 0)."""
        return cls(np.asarray(eta1, dtype=np.float64) + 1.0, -np.asarray(eta2, dtype=np.float64))

    def mean(self) -> np.ndarray:
        return self.shape / self.rate

    def var(self) -> np.ndarray:
        return self.shape / self.rate ** 2

    @property
    def natural_params(self) -> tuple:
        return self.shape - 1.0, -self.rate

    def sufficient_stats(self, x) -> tuple:
        x = np.asarray(x, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log(x), x

    def log_base_measure(self, x) -> np.ndarray:
        return np.zeros(np.broadcast_shapes(np.shape(x), self.batch_shape))

    def _support(self, x):
        return np.asarray(x) > 0

    def log_partition(self) -> np.ndarray:
        return special.gammaln(self.shape) - self.shape * np.log(self.rate)

    def mean_params(self) -> tuple:
        return special.digamma(self.shape) - np.log(self.rate), self.shape / self.rate

    def expected_log_base_measure(self) -> np.ndarray:
        return np.zeros(self.batch_shape)

    def sample(self, rng: np.random.Generator, size=()) -> np.ndarray:
        shp = as_size(size) + self.batch_shape
        return rng.gamma(np.broadcast_to(self.shape, shp)) / self.rate
