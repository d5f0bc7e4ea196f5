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
"""

from __future__ import annotations

import numpy as np


def inner(a: tuple, b: tuple, n_event_dims: tuple[int, ...]) -> np.ndarray:
    """``<a, b>`` summed over each part's event axes (``n_event_dims[i]`` trailing axes of part i)."""
    total = 0.0
    for x, y, nd in zip(a, b, n_event_dims, strict=True):
        prod = np.asarray(x) * np.asarray(y)
        total = total + (prod.sum(axis=tuple(range(-nd, 0))) if nd else prod)
    return total


class ExponentialFamily:
    """Base class: a batch of exponential-family distributions in natural form.

    Subclasses set ``event_dims`` (trailing event axes of each natural-parameter
    part) and implement ``natural_params``, ``sufficient_stats``,
    ``log_base_measure``, ``log_partition``, ``mean_params``, ``sample``, and
    usually ``from_natural``. ``log_prob``, ``entropy`` and ``kl`` have generic
    implementations from those; subclasses may override them with closed forms.
    """

    event_dims: tuple[int, ...] = ()

    # -- required --------------------------------------------------------------
    @property
    def natural_params(self) -> tuple:
        raise NotImplementedError

    @classmethod
    def from_natural(cls, *eta):
        """The distribution with natural parameters ``eta`` (same tuple structure as ``natural_params``)."""
        raise NotImplementedError

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

    # -- generic ---------------------------------------------------------------
    def expected_stats(self) -> tuple:
        """Alias of :meth:`mean_params` (the name used by the CAVI engine)."""
        return self.mean_params()

    def log_prob(self, x) -> np.ndarray:
        """log p(x | eta) = log h(x) + <eta, T(x)> - A(eta)."""
        t = self.sufficient_stats(x)
        return self.log_base_measure(x) + inner(self.natural_params, t, self.event_dims) - self.log_partition()

    def expected_log_base_measure(self) -> np.ndarray:
        """E[log h(x)]; zero for families with h = 1. Needed by the generic entropy."""
        raise NotImplementedError

    def entropy(self) -> np.ndarray:
        """H = A(eta) - <eta, mu> - E[log h(x)]."""
        return (self.log_partition() - inner(self.natural_params, self.mean_params(), self.event_dims)
                - self.expected_log_base_measure())

    def kl(self, other: ExponentialFamily) -> np.ndarray:
        """KL(self || other) = <eta_p - eta_q, mu_p> - A(eta_p) + A(eta_q), same family and base measure."""
        if type(other) is not type(self):
            raise TypeError(f"KL between {type(self).__name__} and {type(other).__name__} is not defined here.")
        diff = tuple(np.asarray(a) - np.asarray(b) for a, b in zip(self.natural_params, other.natural_params,
                                                                   strict=True))
        return inner(diff, self.mean_params(), self.event_dims) - self.log_partition() + other.log_partition()


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
