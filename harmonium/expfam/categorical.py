"""Categorical and Multinomial distributions with logit natural parameters.

Natural form (seed 004, "Example: Multinomial distribution")::

    p(x | eta) = h(x) exp{ <eta, T(x)> - A(eta) },   A(eta) = n log sum_k exp(eta_k)

with eta the logits (the overcomplete K-vector; adding a constant to every logit leaves
the distribution unchanged), T(x) the one-hot vector of a label (Categorical, n = 1,
h = 1) or the count vector (Multinomial, h = n! / prod_k x_k!). A is computed with
logsumexp, so logits of +-1000 (and -inf for impossible categories) are safe.

Conjugacy with :class:`~harmonium.expfam.Dirichlet` (T_prior(pi) = log pi):
log p(x | pi) = <counts(x), log pi> + log h(x), so ``conjugate_stats`` are the
(weighted) counts and ``log_likelihood_base`` is 0 (Categorical) or the log
multinomial coefficients (Multinomial).

References: Bishop (2006), 2.2; Blei, Ng & Jordan (2003), LDA.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from harmonium.errors import InvalidParameterError
from harmonium.expfam import _checks
from harmonium.expfam._base import LogitsFamily, TrialsFamily, as_size
from harmonium.expfam._special import expected_log_factorial_binomial, log_softmax, softmax, xlogratio
from harmonium.expfam.dirichlet import Dirichlet

__all__ = ["Categorical", "Multinomial"]


def _check_logits(owner: str, logits) -> np.ndarray:
    arr = _checks.as_float(owner, "logits", logits, min_ndim=1)
    if arr.shape[-1] < 1:
        raise InvalidParameterError(f"{owner}: 'logits' must have at least one category; got shape {arr.shape}.")
    _checks.check(owner, "logits", arr, ~np.isnan(arr) & (arr < np.inf), "a real number or -inf")
    _checks.check(owner, "logits.max(axis=-1)", arr.max(axis=-1), arr.max(axis=-1) > -np.inf,
                  "finite (at least one possible category)")
    return arr


class _CategoryLogits:
    """Accessors of a family whose last ``logits`` axis runs over the ``K`` categories."""

    logits: np.ndarray

    @property
    def n_categories(self) -> int:
        return self.logits.shape[-1]

    @property
    def probs(self) -> np.ndarray:
        return softmax(self.logits)

    @property
    def log_probs(self) -> np.ndarray:
        """Normalised log-probabilities (logits minus their logsumexp)."""
        return log_softmax(self.logits)


class Categorical(_CategoryLogits, LogitsFamily):
    """A batch of categorical distributions over labels ``0 .. K-1``.

    Parameters
    ----------
    probs : array_like, shape ``batch_shape + (K,)``
        Probabilities along the last axis (>= 0, summing to 1). Use :meth:`from_logits` for
        unnormalised log-probabilities (e.g. CAVI responsibilities).

    Notes
    -----
    Data are integer labels (shape ``sample_shape + batch_shape``); ``T(x) = (one_hot(x),)``,
    ``eta = (logits,)``, ``h = 1``, ``A = logsumexp(logits)``, ``mean_params() = (probs,)``.
    ``conjugate_prior = Dirichlet``: ``conjugate_stats(x, weights)`` = weighted label counts
    (shape ``extra + (K,)``), ``log_likelihood_base = 0``. On the class, pass ``n_categories=K``.
    """

    event_dims = (1,)
    _batch_source = ("logits", 1)
    data_event_ndim = 0
    conjugate_prior = Dirichlet
    _check_logits = staticmethod(_check_logits)

    def __init__(self, probs):
        probs = _checks.simplex("Categorical", "probs", probs)
        with np.errstate(divide="ignore"):
            self.logits = np.log(probs)

    # -- shapes and accessors ----------------------------------------------------
    def mean(self) -> np.ndarray:
        """E[one_hot(x)] = probs."""
        return self.probs

    def _conjugacy_params(self) -> dict:
        return {"n_categories": self.n_categories}

    # -- natural form ------------------------------------------------------------
    def _labels(self, x, where: str) -> np.ndarray:
        return _checks.labels(f"{type(self).__name__}.{where}", "x", x, self.n_categories)

    def sufficient_stats(self, x) -> tuple:
        lab = self._labels(x, "sufficient_stats")
        return ((lab[..., None] == np.arange(self.n_categories)).astype(np.float64),)

    def log_base_measure(self, x) -> np.ndarray:
        return np.zeros(np.broadcast_shapes(np.shape(x), self.batch_shape))

    def log_partition(self) -> np.ndarray:
        return special.logsumexp(self.logits, axis=-1)

    def mean_params(self) -> tuple:
        return (self.probs,)

    def expected_log_base_measure(self) -> np.ndarray:
        return np.zeros(self.batch_shape)

    def log_prob(self, x) -> np.ndarray:
        """log p(x) for integer labels x of shape ``sample_shape + batch_shape`` (broadcasting)."""
        lab = self._labels(x, "log_prob")
        shape = np.broadcast_shapes(lab.shape, self.batch_shape)
        logp = np.broadcast_to(self.log_probs, shape + (self.n_categories,))
        return np.take_along_axis(logp, np.broadcast_to(lab, shape)[..., None], axis=-1)[..., 0]

    def entropy(self) -> np.ndarray:
        """-sum_k p_k log p_k (0 log 0 = 0)."""
        logp = self.log_probs
        return 0.0 - xlogratio(np.exp(logp), logp, 0.0).sum(axis=-1)

    def kl(self, other) -> np.ndarray:
        """sum_k p_k (log p_k - log q_k); +inf where q excludes a category p allows."""
        self._check_same_family(other)
        logp = self.log_probs
        return xlogratio(np.exp(logp), logp, other.log_probs).sum(axis=-1)

    def sample(self, rng: np.random.Generator, size=()) -> np.ndarray:
        """Integer labels of shape ``size + batch_shape`` (Gumbel-max on the logits)."""
        shape = as_size(size) + self.logits.shape
        return np.argmax(self.logits + rng.gumbel(size=shape), axis=-1)

    # -- conjugacy ---------------------------------------------------------------
    @classmethod
    def _conjugate_coefficients(cls, x, n_categories=None, **_ignored):
        if n_categories is None:
            raise InvalidParameterError(
                f"{cls.__name__}.conjugate_stats: pass 'n_categories' (K) when calling on the class."
            )
        lab = _checks.labels(f"{cls.__name__}.conjugate_stats", "x", x, int(n_categories))
        onehot = (lab[..., None] == np.arange(int(n_categories))).astype(np.float64)
        return (onehot,), lab.shape

    @classmethod
    def _expected_coefficients(cls, q):
        return (q.probs,)

    @classmethod
    def _log_likelihood_base_per_sample(cls, x, **_ignored):
        return np.zeros(np.shape(x))


class Multinomial(_CategoryLogits, TrialsFamily):
    """A batch of multinomial distributions: counts of ``n`` draws over ``K`` categories.

    Parameters
    ----------
    n : int or array_like of int
        Number of trials (>= 0), broadcast against the batch shape. Fixed, not a natural parameter.
    probs : array_like, shape ``batch_shape + (K,)``
        Category probabilities (use :meth:`from_logits` for logits).

    Notes
    -----
    Data are count vectors ``sample_shape + batch_shape + (K,)`` summing to ``n``.
    ``T(x) = (x,)``, ``eta = (logits,)``, ``log h(x) = log n! - sum_k log x_k!``,
    ``A = n logsumexp(logits)``, ``mean_params() = (n probs,)``.
    ``conjugate_prior = Dirichlet``: ``conjugate_stats(x, weights)`` = weighted count sums,
    ``log_likelihood_base`` = sum of log multinomial coefficients (``n`` is read from each x).
    """

    event_dims = (1,)
    data_event_ndim = 1
    _data_check = staticmethod(_checks.counts)
    conjugate_prior = Dirichlet

    def __init__(self, n, probs):
        probs = _checks.simplex("Multinomial", "probs", probs)
        with np.errstate(divide="ignore"):
            logits = np.log(probs)
        self._set(_checks.nonneg_int("Multinomial", "n", n), logits)

    _check_logits = staticmethod(_check_logits)

    def _set(self, n, logits):
        batch = np.broadcast_shapes(n.shape, logits.shape[:-1])
        self.n = np.broadcast_to(n, batch)
        self.logits = np.broadcast_to(logits, batch + logits.shape[-1:])

    # -- shapes and accessors ----------------------------------------------------
    def mean(self) -> np.ndarray:
        return self.n[..., None] * self.probs

    def var(self) -> np.ndarray:
        p = self.probs
        return self.n[..., None] * p * (1.0 - p)

    # -- natural form ------------------------------------------------------------
    def sufficient_stats(self, x) -> tuple:
        return (np.asarray(x, dtype=np.float64),)

    def log_base_measure(self, x) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        return special.gammaln(self.n + 1.0) - special.gammaln(x + 1.0).sum(axis=-1)

    def _support(self, x):
        x = np.asarray(x, dtype=np.float64)
        ok = ((x >= 0) & (x == np.round(x))).all(axis=-1)
        return ok & (x.sum(axis=-1) == self.n)

    def log_partition(self) -> np.ndarray:
        return self.n * special.logsumexp(self.logits, axis=-1)

    def expected_log_base_measure(self) -> np.ndarray:
        """log n! - sum_k E[log x_k!], each x_k ~ Binomial(n, p_k) marginally (linearity of expectation)."""
        p = self.probs
        return special.gammaln(self.n + 1.0) - expected_log_factorial_binomial(self.n[..., None], p).sum(axis=-1)

    def log_prob(self, x) -> np.ndarray:
        """log n! - sum log x_k! + sum x_k log p_k; -inf off the support."""
        x = np.asarray(x, dtype=np.float64)
        with np.errstate(invalid="ignore"):
            lp = self.log_base_measure(x) + xlogratio(x, self.log_probs, 0.0).sum(axis=-1)
        return np.where(self._support(x), lp, -np.inf)

    def entropy(self) -> np.ndarray:
        logp = self.log_probs
        return -self.n * xlogratio(np.exp(logp), logp, 0.0).sum(axis=-1) - self.expected_log_base_measure()

    def kl(self, other) -> np.ndarray:
        """n KL(p || q) of the categoricals (same n)."""
        self._check_same_family(other)
        logp = self.log_probs
        return self.n * xlogratio(np.exp(logp), logp, other.log_probs).sum(axis=-1)

    def sample(self, rng: np.random.Generator, size=()) -> np.ndarray:
        """Count vectors of shape ``size + batch_shape + (K,)``."""
        shape = as_size(size) + self.batch_shape
        return rng.multinomial(self.n, self.probs, size=shape)

    # -- conjugacy ---------------------------------------------------------------
    @classmethod
    def _conjugate_coefficients(cls, x, **_ignored):
        x = cls._data(x)
        return (x,), x.shape[:-1]

    @classmethod
    def _expected_coefficients(cls, q):
        return (q.mean(),)

    @classmethod
    def _log_likelihood_base_per_sample(cls, x, **_ignored):
        x = cls._data(x)
        return special.gammaln(x.sum(axis=-1) + 1.0) - special.gammaln(x + 1.0).sum(axis=-1)
