"""Beta distribution in natural form: the conjugate prior of Bernoulli and Binomial.

Natural form (seed 004, "Exponential family, a basic building block")::

    T(p) = ( log p, log(1 - p) ),  eta = ( a - 1, b - 1 ),  h = 1,
    A(eta) = log B(a, b) = log Gamma(a) + log Gamma(b) - log Gamma(a + b)

mean parameters E[log p] = psi(a) - psi(a + b), E[log(1 - p)] = psi(b) - psi(a + b)
(Bishop 2006, 2.1.1; the K = 2 case of :class:`~harmonium.expfam.Dirichlet`).
"""

from __future__ import annotations

import numpy as np
from scipy import special

from harmonium.expfam import _checks
from harmonium.expfam._base import ConjugatePrior, as_size

__all__ = ["Beta"]


class Beta(ConjugatePrior):
    """A batch of Beta(a, b) distributions on (0, 1).

    Parameters
    ----------
    a, b : float or array_like
        Shape parameters, finite and > 0 (broadcast together).

    Notes
    -----
    Conjugate to :class:`~harmonium.expfam.Bernoulli` (coefficients (x, 1 - x)) and
    :class:`~harmonium.expfam.Binomial` (coefficients (x, n - x)): the posterior is
    Beta(a + sum x, b + sum (n - x)).
    """

    event_dims = (0, 0)
    _batch_source = ("a", 0)

    def __init__(self, a, b):
        a = _checks.positive("Beta", "a", a)
        b = _checks.positive("Beta", "b", b)
        self.a, self.b = np.broadcast_arrays(a, b)

    @classmethod
    def from_natural(cls, eta1, eta2):
        """a = eta1 + 1, b = eta2 + 1 (checked > 0)."""
        return cls(np.asarray(eta1, dtype=np.float64) + 1.0, np.asarray(eta2, dtype=np.float64) + 1.0)

    def mean(self) -> np.ndarray:
        return self.a / (self.a + self.b)

    def var(self) -> np.ndarray:
        s = self.a + self.b
        return self.a * self.b / (s * s * (s + 1.0))

    @property
    def natural_params(self) -> tuple:
        return self.a - 1.0, self.b - 1.0

    def sufficient_stats(self, x) -> tuple:
        x = np.asarray(x, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log(x), np.log1p(-x)

    def log_base_measure(self, x) -> np.ndarray:
        return np.zeros(np.broadcast_shapes(np.shape(x), self.batch_shape))

    def _support(self, x):
        x = np.asarray(x)
        return (x > 0) & (x < 1)

    def log_partition(self) -> np.ndarray:
        return special.betaln(self.a, self.b)

    def mean_params(self) -> tuple:
        dab = special.digamma(self.a + self.b)
        return special.digamma(self.a) - dab, special.digamma(self.b) - dab

    def expected_log_base_measure(self) -> np.ndarray:
        return np.zeros(self.batch_shape)

    def sample(self, rng: np.random.Generator, size=()) -> np.ndarray:
        shape = as_size(size) + self.batch_shape
        return rng.beta(np.broadcast_to(self.a, shape), np.broadcast_to(self.b, shape))
