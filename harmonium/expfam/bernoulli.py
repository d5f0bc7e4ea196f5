"""Bernoulli and Binomial distributions with logit natural parameters.

Natural form (seed 004, "Exponential family, a basic building block"; the K = 2 case of
"Example: Multinomial distribution" with one logit)::

    eta = logit(p),  T(x) = x,  A(eta) = n log(1 + e^eta),  h(x) = C(n, x)   (n = 1, h = 1: Bernoulli)

A is computed as ``logaddexp(0, eta)``, so logits of +-1000 (and +-inf for p in {0, 1})
are safe. Conjugacy with :class:`~harmonium.expfam.Beta` (T_prior(p) = (log p, log(1 - p))):
log p(x | p) = <(x, n - x), (log p, log(1 - p))> + log C(n, x).

References: Bishop (2006), 2.1.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from harmonium.expfam import _checks
from harmonium.expfam._base import LogitsFamily, TrialsFamily, as_size
from harmonium.expfam._special import expected_log_factorial_binomial, log_sigmoid, softplus, xlogratio
from harmonium.expfam.beta import Beta

__all__ = ["Bernoulli", "Binomial"]


def _check_logits(owner: str, logits) -> np.ndarray:
    arr = _checks.as_float(owner, "logits", logits)
    _checks.check(owner, "logits", arr, ~np.isnan(arr), "a real number or +-inf")
    return arr


def _logits_from_p(owner: str, p) -> np.ndarray:
    p = _checks.probability(owner, "p", p)
    with np.errstate(divide="ignore"):
        return np.log(p) - np.log1p(-p)


def _bernoulli_entropy(logits):
    """H(sigma(eta)) = softplus(-|eta|) + |eta| sigma(-|eta|), symmetric in eta and exact in the tails."""
    a = np.abs(logits)
    with np.errstate(invalid="ignore"):
        return np.where(np.isinf(a), 0.0, softplus(-a) + a * special.expit(-a))


def _bernoulli_kl(lp, lq):
    """KL(Bern(sigma(lp)) || Bern(sigma(lq))), with 0 log 0 = 0."""
    p, q = special.expit(lp), special.expit(-lp)
    return (xlogratio(p, log_sigmoid(lp), log_sigmoid(lq))
            + xlogratio(q, log_sigmoid(-lp), log_sigmoid(-lq)))


class Bernoulli(LogitsFamily):
    """A batch of Bernoulli(p) distributions on {0, 1}.

    Parameters
    ----------
    p : float or array_like
        Success probabilities in [0, 1]. Use :meth:`from_logits` for logits (e.g. a harmonium
        unit layer with logits of shape (n, M)).

    Notes
    -----
    ``T(x) = (x,)``, ``eta = (logit p,)``, ``h = 1``, ``A = softplus(eta)``, ``mean_params() = (p,)``.
    ``conjugate_prior = Beta``: ``conjugate_stats(x, weights) = (sum w x, sum w (1 - x))``,
    ``log_likelihood_base = 0``.
    """

    event_dims = (0,)
    data_event_ndim = 0
    conjugate_prior = Beta
    _check_logits = staticmethod(_check_logits)

    def __init__(self, p):
        self.logits = _logits_from_p(type(self).__name__, p)

    @property
    def p(self) -> np.ndarray:
        return special.expit(self.logits)

    def mean(self) -> np.ndarray:
        return self.p

    def var(self) -> np.ndarray:
        return special.expit(self.logits) * special.expit(-self.logits)

    def sufficient_stats(self, x) -> tuple:
        return (np.asarray(x, dtype=np.float64),)

    def log_base_measure(self, x) -> np.ndarray:
        return np.zeros(np.broadcast_shapes(np.shape(x), self.batch_shape))

    def _support(self, x):
        x = np.asarray(x)
        return (x == 0) | (x == 1)

    def log_partition(self) -> np.ndarray:
        return softplus(self.logits)

    def mean_params(self) -> tuple:
        return (self.p,)

    def expected_log_base_measure(self) -> np.ndarray:
        return np.zeros(self.batch_shape)

    def log_prob(self, x) -> np.ndarray:
        """log sigma(eta) at x = 1, log sigma(-eta) at x = 0, -inf elsewhere."""
        x = np.asarray(x, dtype=np.float64)
        lp = np.where(x == 1, log_sigmoid(self.logits), log_sigmoid(-self.logits))
        return np.where(self._support(x), lp, -np.inf)

    def entropy(self) -> np.ndarray:
        return _bernoulli_entropy(self.logits)

    def kl(self, other) -> np.ndarray:
        self._check_same_family(other)
        return _bernoulli_kl(self.logits, other.logits)

    def sample(self, rng: np.random.Generator, size=()) -> np.ndarray:
        """0/1 draws (int64) of shape ``size + batch_shape``."""
        u = rng.random(as_size(size) + self.batch_shape)
        return (u < self.p).astype(np.int64)

    @classmethod
    def _data(cls, x) -> np.ndarray:
        x = _checks.as_float(f"{cls.__name__}.conjugate_stats", "x", x)
        _checks.check(f"{cls.__name__}.conjugate_stats", "x", x, (x == 0) | (x == 1), "0 or 1")
        return x

    @classmethod
    def _conjugate_coefficients(cls, x, **_ignored):
        x = cls._data(x)
        return (x, 1.0 - x), x.shape

    @classmethod
    def _expected_coefficients(cls, q):
        return special.expit(q.logits), special.expit(-q.logits)

    @classmethod
    def _log_likelihood_base_per_sample(cls, x, **_ignored):
        return np.zeros(cls._data(x).shape)


class Binomial(TrialsFamily):
    """A batch of Binomial(n, p) distributions on {0, ..., n}.

    Parameters
    ----------
    n : int or array_like of int
        Number of trials (>= 0), fixed (not a natural parameter), broadcast against ``p``.
    p : float or array_like
        Success probabilities in [0, 1] (:meth:`from_logits` takes logits).

    Notes
    -----
    ``T(x) = (x,)``, ``eta = (logit p,)``, ``log h = log C(n, x)``, ``A = n softplus(eta)``,
    ``mean_params() = (n p,)``. ``conjugate_prior = Beta``:
    ``conjugate_stats(x, weights) = (sum w x, sum w (n - x))``, ``log_likelihood_base = sum w log C(n, x)``;
    on the class pass ``n=`` (broadcast against the samples).
    """

    event_dims = (0,)
    data_event_ndim = 0
    conjugate_prior = Beta

    def __init__(self, n, p):
        owner = type(self).__name__
        self._set(_checks.nonneg_int(owner, "n", n), _logits_from_p(owner, p))

    _check_logits = staticmethod(_check_logits)

    def _set(self, n, logits):
        self.n, self.logits = np.broadcast_arrays(n, logits)

    @property
    def p(self) -> np.ndarray:
        return special.expit(self.logits)

    def mean(self) -> np.ndarray:
        return self.n * self.p

    def var(self) -> np.ndarray:
        return self.n * special.expit(self.logits) * special.expit(-self.logits)

    def sufficient_stats(self, x) -> tuple:
        return (np.asarray(x, dtype=np.float64),)

    @staticmethod
    def _log_choose(n, x):
        return special.gammaln(n + 1.0) - special.gammaln(x + 1.0) - special.gammaln(n - x + 1.0)

    def log_base_measure(self, x) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            return self._log_choose(self.n, np.asarray(x, dtype=np.float64))

    def _support(self, x):
        x = np.asarray(x, dtype=np.float64)
        return (x >= 0) & (x <= self.n) & (x == np.round(x))

    def log_partition(self) -> np.ndarray:
        return self.n * softplus(self.logits)

    def expected_log_base_measure(self) -> np.ndarray:
        """log n! - E[log x!] - E[log (n - x)!]; n - x ~ Binomial(n, 1 - p)."""
        return (special.gammaln(self.n + 1.0) - expected_log_factorial_binomial(self.n, self.p)
                - expected_log_factorial_binomial(self.n, special.expit(-self.logits)))

    def log_prob(self, x) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        with np.errstate(invalid="ignore"):
            lp = (self.log_base_measure(x) + xlogratio(x, log_sigmoid(self.logits), 0.0)
                  + xlogratio(self.n - x, log_sigmoid(-self.logits), 0.0))
        return np.where(self._support(x), lp, -np.inf)

    def entropy(self) -> np.ndarray:
        return self.n * _bernoulli_entropy(self.logits) - self.expected_log_base_measure()

    def kl(self, other) -> np.ndarray:
        self._check_same_family(other)
        return self.n * _bernoulli_kl(self.logits, other.logits)

    def sample(self, rng: np.random.Generator, size=()) -> np.ndarray:
        shape = as_size(size) + self.batch_shape
        return rng.binomial(np.broadcast_to(self.n, shape), np.broadcast_to(self.p, shape))

    @classmethod
    def _args(cls, x, n):
        owner = f"{cls.__name__}.conjugate_stats"
        x = _checks.as_float(owner, "x", x)
        n = _checks.nonneg_int(owner, "n", _checks.required(owner, "n", n))
        x, n = np.broadcast_arrays(x, n)
        _checks.check(owner, "x", x, (x >= 0) & (x <= n) & (x == np.round(x)), "an integer in [0, n]")
        return x, n

    @classmethod
    def _conjugate_coefficients(cls, x, n=None, **_ignored):
        x, n = cls._args(x, n)
        return (x, n - x), x.shape

    @classmethod
    def _expected_coefficients(cls, q):
        return q.n * special.expit(q.logits), q.n * special.expit(-q.logits)

    @classmethod
    def _log_likelihood_base_per_sample(cls, x, n=None, **_ignored):
        x, n = cls._args(x, n)
        return cls._log_choose(n, x)
