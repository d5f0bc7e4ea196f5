"""Normal-inverse-Wishart distribution over (mu, Sigma): the conjugate prior of a multivariate Gaussian.

Standard form (Murphy, "Conjugate Bayesian analysis of the Gaussian distribution", 2007, sec. 9;
Gelman et al., *Bayesian Data Analysis*, 3rd ed., 3.6)::

    Sigma ~ IW(nu, Psi),   mu | Sigma ~ N(mu0, Sigma / kappa).

Natural form (seed 004, "Exponential family, a basic building block"), chosen so that a Gaussian
likelihood adds its data without any remainder (seed 004, "Exponential Family Conditionals")::

    T(mu, Sigma) = ( Sigma^-1 mu,  -1/2 Sigma^-1,  -1/2 mu^T Sigma^-1 mu,  -1/2 log|Sigma| )
    eta          = ( kappa mu0,    Psi + kappa mu0 mu0^T,  kappa,   nu + d + 2 )
    h            = 1   (Lebesgue measure on mu and on the d(d+1)/2 free entries of Sigma)
    A(eta)       = d/2 log(2 pi) - d/2 log kappa + nu d/2 log 2 + log Gamma_d(nu/2) - nu/2 log|Psi|

and log N(x | mu, Sigma) = <(x, x x^T, 1, 1), T(mu, Sigma)> - d/2 log(2 pi) exactly, so the
posterior is eta + sum_n w_n (x_n, x_n x_n^T, 1, 1): kappa_n = kappa + N, nu_n = nu + N,
mu_n = (kappa mu0 + sum x) / kappa_n, Psi_n = Psi + kappa mu0 mu0^T + sum x x^T - kappa_n mu_n mu_n^T.
"""

from __future__ import annotations

import numpy as np

from harmonium.errors import InvalidParameterError
from harmonium.expfam import _checks
from harmonium.expfam._base import ConjugatePrior, as_size
from harmonium.expfam._special import multidigamma, multigammaln

__all__ = ["NormalInverseWishart"]

_LOG2PI = np.log(2.0 * np.pi)


def _outer(a: np.ndarray) -> np.ndarray:
    return a[..., :, None] * a[..., None, :]


def _logdet(m: np.ndarray) -> np.ndarray:
    return np.linalg.slogdet(m)[1]


class NormalInverseWishart(ConjugatePrior):
    """A batch of normal-inverse-Wishart distributions over (mu, Sigma) in d dimensions.

    Parameters
    ----------
    mu0 : array_like, shape ``batch_shape + (d,)``
        Prior mean of mu.
    kappa : float or array_like, shape ``batch_shape``
        Prior pseudo-count for the mean, > 0.
    nu : float or array_like, shape ``batch_shape``
        Degrees of freedom of the inverse Wishart, > d - 1.
    Psi : array_like, shape ``batch_shape + (d, d)``
        Scale matrix of the inverse Wishart, symmetric positive definite.

    Notes
    -----
    Variates are tuples ``(mu, Sigma)`` with shapes ``(..., d)`` and ``(..., d, d)``.
    ``mean_params()`` = (E[Sigma^-1 mu], E[-1/2 Sigma^-1], E[-1/2 mu^T Sigma^-1 mu], E[-1/2 log|Sigma|])
    with E[Sigma^-1] = nu Psi^-1, E[mu^T Sigma^-1 mu] = d/kappa + nu mu0^T Psi^-1 mu0 and
    E[log|Sigma|] = log|Psi| - d log 2 - psi_d(nu/2) (Bishop 2006, B.80-B.81).
    """

    event_dims = (1, 2, 0, 0)
    _batch_source = ("kappa", 0)

    def __init__(self, mu0, kappa, nu, Psi):
        owner = "NormalInverseWishart"
        mu0 = _checks.finite(owner, "mu0", mu0, min_ndim=1)
        kappa = _checks.positive(owner, "kappa", kappa)
        nu = _checks.finite(owner, "nu", nu)
        Psi = _checks.positive_definite(owner, "Psi", Psi)
        d = mu0.shape[-1]
        if Psi.shape[-1] != d:
            raise InvalidParameterError(f"{owner}: 'Psi' must be {d} x {d} to match 'mu0'; got shape {Psi.shape}.")
        _checks.check(owner, "nu", nu, nu > d - 1, f"> d - 1 = {d - 1}")
        batch = np.broadcast_shapes(mu0.shape[:-1], kappa.shape, nu.shape, Psi.shape[:-2])
        self.mu0 = np.broadcast_to(mu0, batch + (d,))
        self.kappa = np.broadcast_to(kappa, batch)
        self.nu = np.broadcast_to(nu, batch)
        self.Psi = np.broadcast_to(Psi, batch + (d, d))

    @classmethod
    def from_natural(cls, eta1, eta2, eta3, eta4):
        """kappa = eta3, mu0 = eta1 / eta3, Psi = eta2 - eta1 eta1^T / eta3, nu = eta4 - d - 2."""
        owner = f"{cls.__name__}.from_natural"
        eta1 = _checks.as_float(owner, "eta1", eta1, min_ndim=1)
        eta2 = _checks.as_float(owner, "eta2", eta2, min_ndim=2)
        kappa = _checks.positive(owner, "eta3 (kappa)", eta3)
        eta4 = _checks.as_float(owner, "eta4", eta4)
        d = eta1.shape[-1]
        psi = eta2 - _outer(eta1) / kappa[..., None, None]
        return cls(eta1 / kappa[..., None], kappa, eta4 - d - 2.0, 0.5 * (psi + np.swapaxes(psi, -1, -2)))

    # -- shapes and accessors ----------------------------------------------------
    @property
    def dim(self) -> int:
        return self.mu0.shape[-1]

    def mean(self) -> tuple:
        """(E[mu], E[Sigma]) = (mu0, Psi / (nu - d - 1)); E[Sigma] is nan where nu <= d + 1."""
        denom = self.nu - self.dim - 1.0
        with np.errstate(divide="ignore", invalid="ignore"):
            cov = np.where((denom > 0)[..., None, None], self.Psi / denom[..., None, None], np.nan)
        return self.mu0, cov

    def expected_precision(self) -> np.ndarray:
        """E[Sigma^-1] = nu Psi^-1."""
        return self.nu[..., None, None] * np.linalg.inv(self.Psi)

    def predictive_params(self) -> tuple:
        """Posterior-predictive multivariate Student t: (df, loc, shape) = (nu-d+1, mu0, Psi (kappa+1)/(kappa df))."""
        df = self.nu - self.dim + 1.0
        scale = (self.kappa + 1.0) / (self.kappa * df)
        return df, self.mu0, self.Psi * scale[..., None, None]

    # -- natural form ------------------------------------------------------------
    @property
    def natural_params(self) -> tuple:
        k = self.kappa
        return (k[..., None] * self.mu0, self.Psi + k[..., None, None] * _outer(self.mu0), k,
                self.nu + self.dim + 2.0)

    def sufficient_stats(self, x) -> tuple:
        mu, sigma = (np.asarray(v, dtype=np.float64) for v in x)
        prec = np.linalg.inv(sigma)
        pmu = (prec @ mu[..., None])[..., 0]
        return pmu, -0.5 * prec, -0.5 * (mu * pmu).sum(axis=-1), -0.5 * _logdet(sigma)

    def log_base_measure(self, x) -> np.ndarray:
        mu, sigma = (np.asarray(v) for v in x)
        return np.zeros(np.broadcast_shapes(mu.shape[:-1], sigma.shape[:-2], self.batch_shape))

    def _support(self, x):
        sigma = np.asarray(x[1], dtype=np.float64)
        sym = np.abs(sigma - np.swapaxes(sigma, -1, -2)).max(axis=(-2, -1)) <= 1e-8 * (1 + np.abs(sigma).max())
        return sym & (np.linalg.eigvalsh(sigma)[..., 0] > 0)

    def log_partition(self) -> np.ndarray:
        d, nu = self.dim, self.nu
        return (0.5 * d * (_LOG2PI - np.log(self.kappa)) + 0.5 * nu * d * np.log(2.0)
                + multigammaln(0.5 * nu, d) - 0.5 * nu * _logdet(self.Psi))

    def mean_params(self) -> tuple:
        d, nu = self.dim, self.nu
        psi_inv = np.linalg.inv(self.Psi)
        e_prec = nu[..., None, None] * psi_inv
        e_pmu = (e_prec @ self.mu0[..., None])[..., 0]
        e_quad = d / self.kappa + (self.mu0 * e_pmu).sum(axis=-1)
        e_logdet = _logdet(self.Psi) - d * np.log(2.0) - multidigamma(0.5 * nu, d)
        return e_pmu, -0.5 * e_prec, -0.5 * e_quad, -0.5 * e_logdet

    def expected_log_base_measure(self) -> np.ndarray:
        return np.zeros(self.batch_shape)

    def sample(self, rng: np.random.Generator, size=()) -> tuple:
        """A tuple (mu, Sigma) of shapes ``size + batch_shape + (d,)`` and ``... + (d, d)``.

        Sigma = (C A^-T)(C A^-T)^T with C = chol(Psi) and A the Bartlett factor of a
        Wishart(nu, I) draw (Bartlett 1933; Smith & Hocking 1972), so Sigma^-1 ~ W(nu, Psi^-1).
        """
        d = self.dim
        shape = as_size(size) + self.batch_shape
        a = np.tril(rng.standard_normal(shape + (d, d)), k=-1)
        df = np.broadcast_to(self.nu, shape)[..., None] - np.arange(d)
        a[..., np.arange(d), np.arange(d)] = np.sqrt(rng.chisquare(df))
        b = np.linalg.cholesky(self.Psi) @ np.swapaxes(np.linalg.inv(a), -1, -2)
        sigma = b @ np.swapaxes(b, -1, -2)
        z = rng.standard_normal(shape + (d,))
        mu = self.mu0 + (b @ z[..., None])[..., 0] / np.sqrt(self.kappa)[..., None]
        return mu, 0.5 * (sigma + np.swapaxes(sigma, -1, -2))
