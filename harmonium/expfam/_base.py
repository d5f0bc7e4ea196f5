"""The exponential-family contract shared by every distribution in :mod:`harmonium.expfam`.

A distribution in natural form (seed 004, "Exponential family, a basic building block")::

    p(x | eta) = h(x) exp{ <eta, T(x)> - A(eta) }

with natural parameter eta, sufficient statistic T, log base measure log h and
log-partition A. dA/deta = E[T(x)] = mu, the mean parameter (seed 004, "Moment
generating property").

Conventions every subclass follows
----------------------------------
* **Batches.** An instance holds a batch of independent distributions: each
  natural-parameter array has shape ``batch_shape + event_part_shape``. Unit
  layers of a harmonium (issue 6) are one instance with batch shape (n, M).
* **Tuples.** ``natural_params``, ``sufficient_stats(x)`` and ``mean_params()``
  are tuples of arrays with the same structure, so ``<eta, T>`` is
  ``sum(np.sum(e * t) over the event axes)``. :func:`inner` does it.
* **rng first.** ``sample(rng, size=())`` takes a ``np.random.Generator``;
  draws have shape ``size + batch_shape + event_shape``.
* **Conjugacy.** A likelihood family names its conjugate prior in
  ``conjugate_prior`` and maps data to the prior's natural coordinates with
  ``conjugate_stats(x, weights=None)``: the coefficients c(x) such that
  ``log p(x | theta) = <c(x), T_prior(theta)> + log_likelihood_base(x)``
  exactly, summed over samples (weighted when ``weights`` is given). The
  posterior is then ``prior.posterior(stats)``: natural parameters add
  (the variational-message-passing form of the CAVI update
  nu_j* = E_{q_-j}[eta(z_-j, x)], seed 004 "Exponential Family Conditionals").
  Because the identity is exact, the marginal likelihood and the posterior
  predictive follow from the prior's log-partition alone (generic below);
  they are the collapsed predictive F of seed 002 eq. 2.

Extensions of the contract (added with the families, issue 4)
---------------------------------------------------------------
* ``batch_shape`` (property) and ``dist[i]`` (indexes the batch axes).
* ``conjugate_stats``, ``log_likelihood_base`` and ``expected_log_likelihood``
  are *hybrid* methods: ``Binomial.conjugate_stats(x, n=10)`` on the class
  (fixed parameters such as a Binomial's ``n`` as keywords) or
  ``Binomial(10, 0.3).conjugate_stats(x)`` on an instance (its own fixed
  parameters; its natural parameters play no part). A family implements
  only the per-sample pieces ``_conjugate_coefficients`` and
  ``_log_likelihood_base_per_sample``.
* ``weights``: ``x`` has shape ``sample_shape + data_event_shape``; weights
  of shape ``sample_shape`` give ``sum_n w_n c(x_n)``; weights of shape
  ``sample_shape + (K,)`` (any trailing shape) give K stacked statistics with
  a leading K axis, e.g. responsibilities r_nk for a mixture's M-step / VMP
  message, ready for ``prior.posterior`` with a prior of batch shape () or (K,).
  Weights may be negative (removing data) but must be finite.
* ``expected_conjugate_stats(q, weights=None)`` (hybrid): sum_n E_q[c(x_n)]
  for latent observations with factor q of the likelihood family (batch axes
  = samples); the VMP message child -> conjugate parent.
* ``fixed_params`` (property): parameters that are not natural parameters
  (Binomial/Multinomial ``n``, GaussianKnownVariance ``variance``);
  ``from_natural(*eta, **fixed_params)`` rebuilds the distribution.
* Joint families (``NormalGamma``, ``NormalInverseWishart``) take and return
  their variates as tuples, e.g. ``(mu, Sigma)``.
* ``log_prob`` returns ``-inf`` outside the support (``_support``) instead
  of ``nan``; ``kl`` also checks that fixed parameters (``n``, a known
  variance) agree, since the base measures must be equal.
"""

from __future__ import annotations

import math
import types

import numpy as np

from harmonium.errors import InvalidParameterError
from harmonium.expfam import _checks

__all__ = [
    "ConjugatePrior",
    "ExponentialFamily",
    "LogitsFamily",
    "TrialsFamily",
    "hybridmethod",
    "inner",
    "as_size",
    "weighted_sum",
]


def inner(a: tuple, b: tuple, n_event_dims: tuple[int, ...]) -> np.ndarray:
    """``<a, b>`` summed over each part's event axes (``n_event_dims[i]`` trailing axes of part i)."""
    total = 0.0
    for x, y, nd in zip(a, b, n_event_dims, strict=True):
        prod = np.asarray(x) * np.asarray(y)
        total = total + (prod.sum(axis=tuple(range(-nd, 0))) if nd else prod)
    return total


def as_size(size) -> tuple[int, ...]:
    """``size`` argument of ``sample`` as a tuple (an int n means ``(n,)``)."""
    if size is None:
        return ()
    if isinstance(size, int | np.integer):
        return (int(size),)
    return tuple(int(s) for s in size)


def weighted_sum(parts: tuple, sample_shape: tuple, weights, owner: str) -> tuple:
    """Sum per-sample arrays (shape ``sample_shape + part_shape``) over the samples, with optional weights.

    ``weights`` of shape ``sample_shape + extra`` returns parts of shape ``extra + part_shape``
    (``extra == ()`` for plain per-sample weights; ``(K,)`` for responsibilities).
    """
    ns = len(sample_shape)
    if weights is None:
        axes = tuple(range(ns))
        return tuple(np.asarray(p, dtype=np.float64).sum(axis=axes) for p in parts)
    w = np.asarray(weights, dtype=np.float64)
    if w.shape[:ns] != tuple(sample_shape):
        raise InvalidParameterError(
            f"{owner}: 'weights' must have shape sample_shape {tuple(sample_shape)} optionally followed by "
            f"component axes; got shape {w.shape}."
        )
    if not np.isfinite(w).all():
        raise InvalidParameterError(f"{owner}: 'weights' must be finite everywhere.")
    extra = w.shape[ns:]
    n = math.prod(sample_shape)
    wm = w.reshape(n, -1)
    out = []
    for p in parts:
        p = np.asarray(p, dtype=np.float64)
        pshape = p.shape[ns:]
        pm = np.broadcast_to(p, tuple(sample_shape) + pshape).reshape(n, -1)
        out.append((wm.T @ pm).reshape(extra + pshape))
    return tuple(out)


class hybridmethod:  # noqa: N801 - used like classmethod
    """A method callable on the class (receives the class) or on an instance (receives the instance)."""

    def __init__(self, func):
        self.__func__ = func
        self.__doc__ = func.__doc__
        self.__name__ = func.__name__

    def __get__(self, obj, owner=None):
        return types.MethodType(self.__func__, owner if obj is None else obj)


class ExponentialFamily:
    """Base class: a batch of exponential-family distributions in natural form.

    Subclasses set ``event_dims`` (trailing event axes of each natural-parameter
    part) and ``_batch_source`` (the parameter attribute that carries the batch
    shape, and its number of event axes), and implement ``natural_params``, ``sufficient_stats``,
    ``log_base_measure``, ``log_partition``, ``mean_params``, ``sample``, and
    usually ``from_natural``. ``log_prob``, ``entropy`` and ``kl`` have generic
    implementations from those; subclasses may override them with closed forms.

    Likelihood families also set ``conjugate_prior`` (the prior class) and
    ``data_event_ndim`` (axes of one observation) and ``_data_check`` (the
    ``_checks`` function observations must pass, applied by ``_data``) and implement
    ``_conjugate_coefficients`` / ``_log_likelihood_base_per_sample``.
    """

    event_dims: tuple[int, ...] = ()
    #: number of trailing axes of one observation x (0 for scalars and labels, 1 for vectors).
    data_event_ndim: int = 0
    #: the conjugate prior family of a likelihood (a ConjugatePrior subclass), or None.
    conjugate_prior: type | None = None
    #: (attribute, n): ``batch_shape`` is the shape of that parameter array less its last n (event) axes.
    _batch_source: tuple[str, int] = ("", 0)
    #: the ``_checks`` function (owner, name, value, min_ndim) that observations x must pass; see ``_data``.
    _data_check = None

    # -- required --------------------------------------------------------------
    @property
    def natural_params(self) -> tuple:
        raise NotImplementedError

    @classmethod
    def from_natural(cls, *eta, **fixed):
        """The distribution with natural parameters ``eta`` (same tuple structure as ``natural_params``).

        Families with fixed parameters take them as keywords (``Binomial.from_natural(eta, n=10)``).
        """
        raise NotImplementedError

    @property
    def batch_shape(self) -> tuple[int, ...]:
        """The shape of the parameter named by ``_batch_source`` less its trailing event axes."""
        name, n_event = self._batch_source
        if not name:
            raise NotImplementedError
        shape = getattr(self, name).shape
        return shape[: len(shape) - n_event]

    def sufficient_stats(self, x) -> tuple:
        """T(x); ``x`` has shape ``sample_shape + batch_shape + event_shape`` (broadcasting allowed)."""
        raise NotImplementedError

    def log_base_measure(self, x) -> np.ndarray:
        """log h(x)."""
        raise NotImplementedError

    def log_partition(self) -> np.ndarray:
        """A(eta), shape ``batch_shape``."""
        raise NotImplementedError

    def mean_params(self) -> tuple:
        """E[T(x)] = grad A(eta), the expected sufficient statistics."""
        raise NotImplementedError

    def sample(self, rng: np.random.Generator, size=()) -> np.ndarray:
        raise NotImplementedError

    @property
    def fixed_params(self) -> dict:
        """Parameters that are not natural parameters, as keywords of ``from_natural`` ({} for most families)."""
        return self._fixed_params()

    # -- hooks -----------------------------------------------------------------
    def _fixed_params(self) -> dict:
        """Parameters that are not natural parameters (Binomial ``n``...); ``from_natural`` takes them as keywords."""
        return {}

    def _conjugacy_params(self) -> dict:
        """Keywords an instance passes to its ``_conjugate_coefficients``; default: its fixed parameters."""
        return self._fixed_params()

    def _support(self, x):
        """Boolean mask of x inside the support, or None when every x of the right shape is."""
        return None

    # -- generic ---------------------------------------------------------------
    def expected_stats(self) -> tuple:
        """Alias of :meth:`mean_params` (the name used by the CAVI engine)."""
        return self.mean_params()

    def log_prob(self, x) -> np.ndarray:
        """log p(x | eta) = log h(x) + <eta, T(x)> - A(eta); -inf outside the support."""
        mask = self._support(x)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = self.sufficient_stats(x)
            lp = self.log_base_measure(x) + inner(self.natural_params, t, self.event_dims) - self.log_partition()
        return lp if mask is None else np.where(mask, lp, -np.inf)

    def expected_log_base_measure(self) -> np.ndarray:
        """E[log h(x)]; zero for families with h = 1. Needed by the generic entropy."""
        raise NotImplementedError

    def entropy(self) -> np.ndarray:
        """H = A(eta) - <eta, mu> - E[log h(x)]."""
        return (self.log_partition() - inner(self.natural_params, self.mean_params(), self.event_dims)
                - self.expected_log_base_measure())

    def _check_same_family(self, other) -> None:
        if type(other) is not type(self):
            raise TypeError(f"KL between {type(self).__name__} and {type(other).__name__} is not defined here.")
        mine, theirs = self._fixed_params(), other._fixed_params()
        for key, value in mine.items():
            if not np.all(np.asarray(value) == np.asarray(theirs[key])):
                raise InvalidParameterError(
                    f"{type(self).__name__}.kl: both distributions must have the same {key!r} "
                    f"(equal base measures); got {value!r} and {theirs[key]!r}."
                )

    def kl(self, other: ExponentialFamily) -> np.ndarray:
        """KL(self || other) = <eta_p - eta_q, mu_p> - A(eta_p) + A(eta_q), same family and base measure."""
        self._check_same_family(other)
        diff = tuple(np.asarray(a) - np.asarray(b) for a, b in zip(self.natural_params, other.natural_params,
                                                                   strict=True))
        return inner(diff, self.mean_params(), self.event_dims) - self.log_partition() + other.log_partition()

    def __getitem__(self, idx):
        """The sub-batch ``idx`` (indexes the batch axes only)."""
        idx = idx if isinstance(idx, tuple) else (idx,)
        bs = self.batch_shape
        if sum(i is not None and i is not Ellipsis for i in idx) > len(bs) or any(i is Ellipsis for i in idx):
            raise IndexError(f"{type(self).__name__}: index {idx!r} does not fit batch shape {bs}.")
        parts = []
        for p, nd in zip(self.natural_params, self.event_dims, strict=True):
            p = np.asarray(p)
            ev = p.shape[p.ndim - nd:] if nd else ()
            parts.append(np.broadcast_to(p, bs + ev)[idx])
        fixed = {k: np.broadcast_to(v, bs)[idx] for k, v in self._fixed_params().items()}
        return type(self).from_natural(*parts, **fixed)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(batch_shape={self.batch_shape})"

    # -- conjugacy (likelihood side) -------------------------------------------
    @classmethod
    def _data(cls, x) -> np.ndarray:
        """Observations ``x`` as float64 after ``_data_check``, with at least ``data_event_ndim`` axes."""
        return cls._data_check(f"{cls.__name__}.conjugate_stats", "x", x, min_ndim=cls.data_event_ndim)

    @classmethod
    def _conjugate_coefficients(cls, x, **fixed) -> tuple[tuple, tuple]:
        """Per-sample coefficients c(x_n) (parts shaped ``sample_shape + prior_part_shape``) and ``sample_shape``."""
        raise NotImplementedError(f"{cls.__name__} has no conjugate prior.")

    @classmethod
    def _log_likelihood_base_per_sample(cls, x, **fixed) -> np.ndarray:
        """log h_lik(x_n) of the conjugate identity, shape ``sample_shape``."""
        raise NotImplementedError(f"{cls.__name__} has no conjugate prior.")

    @staticmethod
    def _fixed_for(this, fixed: dict) -> dict:
        if isinstance(this, ExponentialFamily) and not fixed:
            return this._conjugacy_params()
        return fixed

    @hybridmethod
    def conjugate_stats(this, x, weights=None, **fixed) -> tuple:
        """Sum over samples of c(x_n), in the conjugate prior's natural coordinates.

        Parameters
        ----------
        x : array_like
            Observations, shape ``sample_shape + data_event_shape``.
        weights : array_like, optional
            Shape ``sample_shape`` (sum of ``w_n c(x_n)``) or ``sample_shape + (K,)`` (K stacked
            statistics, leading axis K: one per mixture component, e.g. responsibilities r_nk).
        **fixed
            Fixed parameters when called on the class (``n`` of a Binomial, ``variance`` of a
            GaussianKnownVariance, ``n_categories`` of a Categorical).

        Returns
        -------
        tuple of ndarray
            ``s`` with ``log p(x | theta) = <s, T_prior(theta)> + log_likelihood_base(x)``; the
            posterior is ``conjugate_prior.posterior(s)``.
        """
        fixed = ExponentialFamily._fixed_for(this, fixed)
        coeffs, sample_shape = this._conjugate_coefficients(x, **fixed)
        name = this.__name__ if isinstance(this, type) else type(this).__name__
        return weighted_sum(coeffs, sample_shape, weights, f"{name}.conjugate_stats")

    @hybridmethod
    def log_likelihood_base(this, x, weights=None, **fixed) -> np.ndarray:
        """``sum_n w_n log h_lik(x_n)``: the data term of the conjugate identity (same ``weights`` rules)."""
        fixed = ExponentialFamily._fixed_for(this, fixed)
        base = np.asarray(this._log_likelihood_base_per_sample(x, **fixed), dtype=np.float64)
        name = this.__name__ if isinstance(this, type) else type(this).__name__
        return weighted_sum((base,), base.shape, weights, f"{name}.log_likelihood_base")[0]

    @classmethod
    def _expected_coefficients(cls, q) -> tuple:
        """E_q[c(x)] per sample from q's mean parameters (c is linear in T(x)); parts shaped ``q.batch_shape + ...``."""
        raise NotImplementedError(f"{cls.__name__}.expected_conjugate_stats is not available.")

    @hybridmethod
    def expected_conjugate_stats(this, q, weights=None) -> tuple:
        """Sum over latent observations of E_q[c(x_n)], for x_n with a variational factor q (this family).

        ``q``'s batch axes are the samples (e.g. ``Categorical(r)`` with r of shape (N, K) for the
        assignments z_n of a mixture); ``weights`` follow the rules of :meth:`conjugate_stats`. Because
        c(x) is linear in T(x), E_q[c(x)] = c(E_q[T(x)]): this is the variational message from a latent
        child to its conjugate parent (for z_n ~ Categorical(pi): ``(sum_n r_n,)`` for the Dirichlet on pi).
        """
        cls = this if isinstance(this, type) else type(this)
        owner = f"{cls.__name__}.expected_conjugate_stats"
        if not isinstance(q, cls):
            raise InvalidParameterError(
                f"{owner}: 'q' must be a {cls.__name__} whose batch axes are the samples; got {type(q).__name__}."
            )
        return weighted_sum(cls._expected_coefficients(q), q.batch_shape, weights, owner)

    @hybridmethod
    def expected_log_likelihood(this, x, prior, **fixed) -> np.ndarray:
        """E_q[log p(x_n | theta)] per sample and per component, with q = ``prior`` (a conjugate-prior instance).

        ``<c(x_n), E_q[T_prior(theta)]> + log h_lik(x_n)``, shape ``sample_shape + prior.batch_shape``:
        the data term of CAVI responsibilities (log r_nk up to E[log pi_k]). ``prior`` may also be a tuple
        of expected statistics (then its batch shape is read from the first part).
        """
        fixed = ExponentialFamily._fixed_for(this, fixed)
        coeffs, sample_shape = this._conjugate_coefficients(x, **fixed)
        base = np.asarray(this._log_likelihood_base_per_sample(x, **fixed), dtype=np.float64)
        cls = this if isinstance(this, type) else type(this)
        dims = cls.conjugate_prior.event_dims
        if isinstance(prior, ExponentialFamily):
            mu, bs = prior.mean_params(), prior.batch_shape
        else:
            mu = tuple(np.asarray(m, dtype=np.float64) for m in prior)
            bs = np.broadcast_shapes(*(m.shape[:m.ndim - nd] for m, nd in zip(mu, dims, strict=True)))
        n = math.prod(sample_shape)
        nb = math.prod(bs)
        out = np.broadcast_to(base, sample_shape).reshape(n, 1) + np.zeros((1, nb))
        ns = len(sample_shape)
        for c, m in zip(coeffs, mu, strict=True):
            c = np.asarray(c, dtype=np.float64)
            m = np.asarray(m, dtype=np.float64)
            ev = c.shape[ns:]
            cm = np.broadcast_to(c, tuple(sample_shape) + ev).reshape(n, -1)
            mm = np.broadcast_to(m, tuple(bs) + ev).reshape(nb, -1)
            out = out + cm @ mm.T
        return out.reshape(tuple(sample_shape) + tuple(bs))


class ConjugatePrior(ExponentialFamily):
    """A prior whose posterior under its likelihood family stays in the family.

    ``stats`` passed to the methods below are tuples in this prior's natural
    coordinates, as returned by the likelihood's ``conjugate_stats``.
    """

    def posterior(self, stats: tuple):
        """The posterior: natural parameters plus the likelihood's conjugate statistics."""
        eta = tuple(np.asarray(e) + np.asarray(s) for e, s in zip(self.natural_params, stats, strict=True))
        return type(self).from_natural(*eta)

    def log_marginal_likelihood(self, stats: tuple, log_base: float | np.ndarray = 0.0) -> np.ndarray:
        """log p(x_1..n) = A(eta + s) - A(eta) + sum_i log h_lik(x_i); ``log_base`` is that last sum."""
        return self.posterior(stats).log_partition() - self.log_partition() + log_base


class LogitsFamily(ExponentialFamily):
    """A likelihood whose one natural parameter is its logits (Bernoulli, Categorical; base of TrialsFamily).

    Subclasses set ``_check_logits(owner, logits)`` (returns the checked float array).
    """

    logits: np.ndarray

    _batch_source = ("logits", 0)

    @staticmethod
    def _check_logits(owner: str, logits) -> np.ndarray:
        raise NotImplementedError

    @classmethod
    def from_logits(cls, logits):
        """The distribution with logits ``logits`` (unnormalised log-probabilities)."""
        obj = cls.__new__(cls)
        obj.logits = cls._check_logits(f"{cls.__name__}.from_logits", logits)
        return obj

    @classmethod
    def from_natural(cls, eta, **_ignored):
        return cls.from_logits(eta)

    @property
    def natural_params(self) -> tuple:
        return (self.logits,)


class TrialsFamily(LogitsFamily):
    """A likelihood over ``n`` fixed trials with logits as its natural parameter (Binomial, Multinomial).

    ``n`` is a fixed parameter (``from_logits(n, logits)``, ``from_natural(eta, n=...)``,
    ``fixed_params = {"n": n}``) and ``mean_params() = (mean(),)``. Subclasses implement
    ``_set(n, logits)`` (store both, broadcast) and ``_check_logits``.
    """

    n: np.ndarray
    _batch_source = ("n", 0)

    def _set(self, n: np.ndarray, logits: np.ndarray) -> None:
        raise NotImplementedError

    @classmethod
    def from_logits(cls, n, logits):
        """The distribution with ``n`` trials and logits ``logits`` (unnormalised log-probabilities)."""
        owner = f"{cls.__name__}.from_logits"
        obj = cls.__new__(cls)
        obj._set(_checks.nonneg_int(owner, "n", n), cls._check_logits(owner, logits))
        return obj

    @classmethod
    def from_natural(cls, eta, n=None):
        return cls.from_logits(_checks.required(f"{cls.__name__}.from_natural", "n", n), eta)

    def _fixed_params(self) -> dict:
        return {"n": self.n}

    def mean_params(self) -> tuple:
        return (self.mean(),)
