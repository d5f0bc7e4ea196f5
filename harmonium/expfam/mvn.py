"""Multivariate Gaussian with unknown mean and covariance, in natural form.

Seed 004, "Example: Multivariate Gaussian Distribution"::

    eta = ( Sigma^-1 mu, -1/2 Sigma^-1 ),   T(x) = ( x, x x^T ),   h = (2 pi)^(-d/2)
    A(eta) = 1/2 mu^T Sigma^-1 mu + 1/2 log|Sigma| = -1/4 eta1^T eta2^-1 eta1 - 1/2 log|-2 eta2|

The conjugate prior is :class:`~harmonium.expfam.NormalInverseWishart`; the likelihood's
coefficients in its natural coordinates are (x, x x^T, 1, 1) and the likelihood base
measure is -d/2 log(2 pi) per sample (see :mod:`harmonium.expfam.niw`).
"""

from __future__ import annotations

import numpy as np

from harmonium.errors import InvalidParameterError
from harmonium.expfam import _checks
from harmonium.expfam._base import ConjugatePrior, as_size
from harmonium.expfam.niw import NormalInverseWishart

__all__ = ["MultivariateGaussian"]

_LOG2PI = np.log(2.0 * np.pi)


def _outer(a: np.ndarray) -> np.ndarray:
    return a[..., :, None] * a[..., None, :]


class MultivariateGaussian(ConjugatePrior):
    """A batch of d-dimensional Gaussians N(mu, cov).

    Parameters
    ----------
    mu : array_like, shape ``batch_shape + (d,)``
    cov : array_like, shape ``batch_shape + (d, d)``
        Symmetric positive definite. :meth:`from_mean_precision` takes the precision instead.

    Notes
    -----
    ``mean_params() = (mu, cov + mu mu^T)``. ``conjugate_prior = NormalInverseWishart`` with
    ``conjugate_stats(x, weights) = (sum w x, sum w x x^T, sum w, sum w)`` and
    ``log_likelihood_base = -d/2 log(2 pi) sum w``. As a ``ConjugatePrior`` it also takes
    statistics (P x, -1/2 P...) of a Gaussian likelihood with known precision P.
    """

    event_dims = (1, 2)
    _batch_source = ("mu", 1)
    data_event_ndim = 1
    _data_check = staticmethod(_checks.finite)
    conjugate_prior = NormalInverseWishart

    def __init__(self, mu, cov):
        owner = type(self).__name__
        mu = _checks.finite(owner, "mu", mu, min_ndim=1)
        cov = _checks.positive_definite(owner, "cov", cov)
        self._set(owner, mu, cov)

    def _set(self, owner, mu, cov, prec=None):
        d = mu.shape[-1]
        if cov.shape[-1] != d:
            raise InvalidParameterError(f"{owner}: the covariance must be {d} x {d} to match 'mu'; got {cov.shape}.")
        batch = np.broadcast_shapes(mu.shape[:-1], cov.shape[:-2])
        self.mu = np.broadcast_to(mu, batch + (d,))
        self.cov = np.broadcast_to(cov, batch + (d, d))
        self._chol = np.linalg.cholesky(self.cov)
        self._prec = None if prec is None else np.broadcast_to(prec, batch + (d, d))

    @classmethod
    def from_mean_precision(cls, mu, precision):
        owner = f"{cls.__name__}.from_mean_precision"
        mu = _checks.finite(owner, "mu", mu, min_ndim=1)
        prec = _checks.positive_definite(owner, "precision", precision)
        cov = np.linalg.inv(prec)
        obj = cls.__new__(cls)
        obj._set(owner, mu, 0.5 * (cov + np.swapaxes(cov, -1, -2)), prec)
        return obj

    @classmethod
    def from_natural(cls, eta1, eta2):
        """precision = -2 eta2 (symmetrised, checked positive definite), mu = precision^-1 eta1."""
        owner = f"{cls.__name__}.from_natural"
        eta1 = _checks.finite(owner, "eta1", eta1, min_ndim=1)
        prec = _checks.positive_definite(owner, "-2 eta2 (the precision)", -2.0 * np.asarray(eta2, dtype=np.float64))
        cov = np.linalg.inv(prec)
        cov = 0.5 * (cov + np.swapaxes(cov, -1, -2))
        obj = cls.__new__(cls)
        obj._set(owner, (cov @ eta1[..., None])[..., 0], cov, prec)
        return obj

    # -- shapes and accessors ----------------------------------------------------
    @property
    def dim(self) -> int:
        return self.mu.shape[-1]

    @property
    def precision(self) -> np.ndarray:
        if self._prec is None:
            p = np.linalg.inv(self.cov)
            self._prec = 0.5 * (p + np.swapaxes(p, -1, -2))
        return self._prec

    def mean(self) -> np.ndarray:
        return self.mu

    def var(self) -> np.ndarray:
        """The diagonal of the covariance."""
        return np.diagonal(self.cov, axis1=-2, axis2=-1).copy()

    def _half_logdet(self) -> np.ndarray:
        return np.log(np.diagonal(self._chol, axis1=-2, axis2=-1)).sum(axis=-1)

    # -- natural form ------------------------------------------------------------
    @property
    def natural_params(self) -> tuple:
        p = self.precision
        return (p @ self.mu[..., None])[..., 0], -0.5 * p

    def sufficient_stats(self, x) -> tuple:
        x = np.asarray(x, dtype=np.float64)
        return x, _outer(x)

    def log_base_measure(self, x) -> np.ndarray:
        x = np.asarray(x)
        return np.full(np.broadcast_shapes(x.shape[:-1], self.batch_shape), -0.5 * self.dim * _LOG2PI)

    def log_partition(self) -> np.ndarray:
        eta1 = self.natural_params[0]
        return 0.5 * (self.mu * eta1).sum(axis=-1) + self._half_logdet()

    def mean_params(self) -> tuple:
        return self.mu, self.cov + _outer(self.mu)

    def expected_log_base_measure(self) -> np.ndarray:
        return np.full(self.batch_shape, -0.5 * self.dim * _LOG2PI)

    def log_prob(self, x) -> np.ndarray:
        """-1/2 |L^-1 (x - mu)|^2 - log|L| - d/2 log(2 pi), with L = chol(cov) (no cancellation)."""
        diff = np.asarray(x, dtype=np.float64) - self.mu
        chol = np.broadcast_to(self._chol, diff.shape + (self.dim,))
        z = np.linalg.solve(chol, diff[..., None])[..., 0]
        return -0.5 * (z * z).sum(axis=-1) - self._half_logdet() - 0.5 * self.dim * _LOG2PI

    def entropy(self) -> np.ndarray:
        return 0.5 * self.dim * (1.0 + _LOG2PI) + self._half_logdet()

    def kl(self, other) -> np.ndarray:
        """1/2 [tr(S_q^-1 S_p) + (m_q - m_p)^T S_q^-1 (m_q - m_p) - d + log|S_q| / |S_p|]."""
        self._check_same_family(other)
        pq = other.precision
        diff = other.mu - self.mu
        quad = (diff * (pq @ diff[..., None])[..., 0]).sum(axis=-1)
        trace = (pq * self.cov).sum(axis=(-2, -1))
        return 0.5 * (trace + quad - self.dim) + other._half_logdet() - self._half_logdet()

    def sample(self, rng: np.random.Generator, size=()) -> np.ndarray:
        """Draws of shape ``size + batch_shape + (d,)``: mu + L z."""
        z = rng.standard_normal(as_size(size) + self.mu.shape)
        return self.mu + (self._chol @ z[..., None])[..., 0]

    # -- conjugacy ---------------------------------------------------------------
    @classmethod
    def _conjugate_coefficients(cls, x, **_ignored):
        x = cls._data(x)
        ones = np.ones(x.shape[:-1])
        return (x, _outer(x), ones, ones), x.shape[:-1]

    @classmethod
    def _expected_coefficients(cls, q):
        ones = np.ones(q.batch_shape)
        return q.mu, q.cov + _outer(q.mu), ones, ones

    @classmethod
    def _log_likelihood_base_per_sample(cls, x, **_ignored):
        x = cls._data(x)
        return np.full(x.shape[:-1], -0.5 * x.shape[-1] * _LOG2PI)
