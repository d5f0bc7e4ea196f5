"""Dirichlet distribution in natural form: the conjugate prior of Categorical and Multinomial.

Natural form (seed 004, "Exponential family, a basic building block")::

    p(pi | alpha) = exp{ <alpha - 1, log pi> - A },   A = sum_k log Gamma(alpha_k) - log Gamma(sum_k alpha_k)

with T(pi) = log pi, eta = alpha - 1 and h = 1 (Lebesgue measure on the first K-1
coordinates of the simplex, as scipy.stats.dirichlet). The mean parameter is
E[log pi_k] = psi(alpha_k) - psi(sum alpha) (Blei, Ng & Jordan 2003, eq. 8), which is
exactly the quantity a CAVI update of LDA consumes.

References: Bishop, *Pattern Recognition and Machine Learning* (2006), 2.2.1 and B;
Minka, "Estimating a Dirichlet distribution" (2000).
"""

from __future__ import annotations

import numpy as np
from scipy import special

from harmonium.expfam import _checks
from harmonium.expfam._base import ConjugatePrior, as_size

__all__ = ["Dirichlet"]


class Dirichlet(ConjugatePrior):
    """A batch of Dirichlet distributions over the probability simplex.

    Parameters
    ----------
    alpha : array_like, shape ``batch_shape + (K,)``
        Concentration parameters, finite and > 0.

    Notes
    -----
    ``T(pi) = (log pi,)``, ``eta = (alpha - 1,)``, ``h = 1``,
    ``A(eta) = sum log Gamma(alpha_k) - log Gamma(alpha_0)``,
    ``mean_params() = (psi(alpha) - psi(alpha_0),)`` = E[log pi].
    Conjugate to :class:`~harmonium.expfam.Categorical` (coefficients: one-hot counts) and
    :class:`~harmonium.expfam.Multinomial` (coefficients: count vectors); the posterior is
    ``alpha + counts`` (seed 004 "Exponential Family Conditionals").
    """

    event_dims = (1,)
    _batch_source = ("alpha", 1)
    data_event_ndim = 1

    def __init__(self, alpha):
        self.alpha = _checks.positive("Dirichlet", "alpha", alpha, min_ndim=1)

    @classmethod
    def from_natural(cls, eta):
        """The Dirichlet with ``alpha = eta + 1`` (checked > 0)."""
        return cls(np.asarray(eta, dtype=np.float64) + 1.0)

    # -- shapes and accessors ----------------------------------------------------
    @property
    def n_categories(self) -> int:
        return self.alpha.shape[-1]

    @property
    def concentration(self) -> np.ndarray:
        """alpha_0 = sum_k alpha_k, shape ``batch_shape``."""
        return self.alpha.sum(axis=-1)

    def mean(self) -> np.ndarray:
        """E[pi] = alpha / alpha_0."""
        return self.alpha / self.concentration[..., None]

    def var(self) -> np.ndarray:
        """Var[pi_k] = alpha_k (alpha_0 - alpha_k) / (alpha_0^2 (alpha_0 + 1))."""
        a0 = self.concentration[..., None]
        return self.alpha * (a0 - self.alpha) / (a0 ** 2 * (a0 + 1.0))

    def expected_log(self) -> np.ndarray:
        """E[log pi] = psi(alpha) - psi(alpha_0) (the same array as ``mean_params()[0]``)."""
        return special.digamma(self.alpha) - special.digamma(self.concentration)[..., None]

    # -- natural form ------------------------------------------------------------
    @property
    def natural_params(self) -> tuple:
        return (self.alpha - 1.0,)

    def sufficient_stats(self, x) -> tuple:
        with np.errstate(divide="ignore"):
            return (np.log(np.asarray(x, dtype=np.float64)),)

    def log_base_measure(self, x) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        return np.zeros(np.broadcast_shapes(x.shape[:-1], self.batch_shape))

    def _support(self, x):
        x = np.asarray(x, dtype=np.float64)
        return (x > 0).all(axis=-1) & (np.abs(x.sum(axis=-1) - 1.0) <= 1e-8)

    def log_partition(self) -> np.ndarray:
        return special.gammaln(self.alpha).sum(axis=-1) - special.gammaln(self.concentration)

    def mean_params(self) -> tuple:
        return (self.expected_log(),)

    def expected_log_base_measure(self) -> np.ndarray:
        return np.zeros(self.batch_shape)

    def log_prob(self, x) -> np.ndarray:
        """log Dir(x | alpha); -inf off the open simplex."""
        x = np.asarray(x, dtype=np.float64)
        mask = self._support(x)
        with np.errstate(divide="ignore", invalid="ignore"):
            lp = (special.xlogy(self.alpha - 1.0, x).sum(axis=-1) - self.log_partition())
        return np.where(mask, lp, -np.inf)

    def sample(self, rng: np.random.Generator, size=()) -> np.ndarray:
        """Draws of shape ``size + batch_shape + (K,)``.

        Uses log G = log Gamma(alpha + 1) + log(U) / alpha (Marsaglia & Tsang 2000, sec. 8),
        normalised in log space, so that small alpha does not underflow every component to 0.
        """
        shape = as_size(size) + self.alpha.shape
        a = np.broadcast_to(self.alpha, shape)
        log_g = np.log(rng.gamma(a + 1.0)) + np.log1p(-rng.random(shape)) / a
        log_g -= log_g.max(axis=-1, keepdims=True)
        g = np.exp(log_g)
        return g / g.sum(axis=-1, keepdims=True)
