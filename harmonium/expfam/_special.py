"""Numerically stable special functions shared by the families (numpy / scipy only)."""

from __future__ import annotations

import numpy as np
from scipy import special, stats

__all__ = [
    "expected_log_factorial_binomial",
    "expected_log_factorial_poisson",
    "log_sigmoid",
    "log_softmax",
    "multidigamma",
    "multigammaln",
    "softmax",
    "softplus",
    "xlogratio",
]


def softplus(x):
    """log(1 + e^x) without overflow (logits of +-1000 are fine)."""
    return np.logaddexp(0.0, x)


def log_sigmoid(x):
    """log sigma(x) = -softplus(-x)."""
    return -np.logaddexp(0.0, -np.asarray(x, dtype=np.float64))


def log_softmax(logits):
    """logits - logsumexp(logits) along the last axis (``-inf`` logits stay ``-inf``)."""
    logits = np.asarray(logits, dtype=np.float64)
    return logits - special.logsumexp(logits, axis=-1, keepdims=True)


def softmax(logits):
    return np.exp(log_softmax(logits))


def xlogratio(p, logp, logq):
    """p (log p - log q), with the 0 log 0 = 0 convention."""
    with np.errstate(invalid="ignore"):
        return np.where(p > 0, p * (logp - logq), 0.0)


def multigammaln(a, d: int):
    """log Gamma_d(a) = d(d-1)/4 log(pi) + sum_{i=1..d} log Gamma(a + (1 - i)/2), elementwise in ``a``."""
    a = np.asarray(a, dtype=np.float64)
    out = np.full(a.shape, 0.25 * d * (d - 1) * np.log(np.pi))
    for i in range(1, d + 1):
        out = out + special.gammaln(a + 0.5 * (1 - i))
    return out


def multidigamma(a, d: int):
    """psi_d(a) = sum_{i=1..d} psi(a + (1 - i)/2), the derivative of :func:`multigammaln`."""
    a = np.asarray(a, dtype=np.float64)
    out = np.zeros(a.shape)
    for i in range(1, d + 1):
        out = out + special.digamma(a + 0.5 * (1 - i))
    return out


def _window(center, sd, upper=None):
    """Integer grid covering center +- (10 sd + 20), per element; returns (grid, width)."""
    lo = np.maximum(0.0, np.floor(center - 10.0 * sd - 20.0))
    width = int(np.ceil(20.0 * np.max(sd, initial=0.0) + 42.0))
    if upper is not None:
        width = min(width, int(np.max(upper, initial=0)) + 1)
    return lo[..., None] + np.arange(width), width


def expected_log_factorial_binomial(n, p):
    """E[log x!] for x ~ Binomial(n, p), elementwise (a window of +-10 sd around n p, exact to double precision)."""
    n, p = np.broadcast_arrays(np.asarray(n, dtype=np.float64), np.asarray(p, dtype=np.float64))
    j, _ = _window(n * p, np.sqrt(n * p * (1.0 - p)), upper=n)
    pmf = stats.binom.pmf(j, n[..., None], p[..., None])
    return np.where(j <= n[..., None], pmf * special.gammaln(j + 1.0), 0.0).sum(axis=-1)


def expected_log_factorial_poisson(rate):
    """E[log x!] for x ~ Poisson(rate), elementwise (a window of +-10 sd around the rate)."""
    rate = np.asarray(rate, dtype=np.float64)
    j, _ = _window(rate, np.sqrt(rate))
    pmf = stats.poisson.pmf(j, rate[..., None])
    return (pmf * special.gammaln(j + 1.0)).sum(axis=-1)
