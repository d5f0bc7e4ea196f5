"""Infinite state Bayesian networks (ISBN): a declarative specification and its validation (seed 002).

An ISBN (seed 002 §2-3) is a directed network over the nodes of one data
item i (e.g. a word of a document):

* latent nodes z^b, discrete, whose CPT pi_{z^b | parents, index} has a
  hierarchical Dirichlet-process (:class:`HDP`), Dirichlet-process (:class:`DP`,
  seed 002 §5: the state space forks into a tree) or finite Dirichlet
  (:class:`Dirichlet`) prior, one CPT row per joint state of the node's latent
  parents and of the data indices it is specific to (``index``, e.g. the
  document j of the HDP's pi_{z|j});
* observed nodes x^a with a conjugate exponential-family likelihood from
  :mod:`harmonium.expfam` (Categorical/Multinomial-Dirichlet,
  Bernoulli/Binomial-Beta, Poisson-Gamma, Gaussian-NormalGamma,
  MultivariateGaussian-NormalInverseWishart) given the joint state of their
  latent parents; the parameters phi are integrated out, which gives the
  collapsed predictive F of seed 002 eq. 2 (:func:`log_predictive`); a Categorical
  node may instead carry :class:`RandomEffects`, a hierarchical prior whose rows
  phi_{x|l,j} vary per data index around a shared psi_{x|l} (seed 002 §6).

A model is a short declaration::

    hdp = Network(
        [Latent("z", HDP(alpha=1.0, gamma=1.0), index=("doc",)),
         Observed("w", Categorical, Dirichlet(np.full(V, 0.01)), parents=("z",))],
        indices=("doc",),
    )

:meth:`Network.validate` rejects cycles, unknown parents or indices,
observed parents, and non-conjugate likelihood/prior pairs with one clear
message each. The sampler that the declaration implies (seed 002 §4, eqs.
1-3) is :mod:`harmonium.inference.mcmc.isbn.gibbs`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from harmonium.errors import InvalidParameterError
from harmonium.expfam import ConjugatePrior, ExponentialFamily


# -- priors of latent CPTs -------------------------------------------------------------------------
@dataclass(frozen=True)
class HDP:
    """pi_{z|l} ~ DP(alpha, tau) for every parent state l, tau ~ GEM(gamma) shared (seed 002 §2, §4)."""

    alpha: float
    gamma: float


@dataclass(frozen=True)
class H2DP(HDP):
    """A two-level stack (seed 002 §5, eq. 3): pi_{z|l,k,j} ~ DP(alpha, rho_{.|k}), rho_{.|k} ~ DP(beta, tau),
    tau ~ GEM(gamma), with k the node's first data index (e.g. the book of a chapter j); the node's index
    must name at least two data indices, outermost first (e.g. ``index=("book", "chapter")``)."""

    beta: float = 1.0


@dataclass(frozen=True)
class DP:
    """pi_{z|l} ~ DP(alpha, H) independently per parent state l: new states are private to l (seed 002 §5)."""

    alpha: float


@dataclass(frozen=True)
class Dirichlet:
    """pi_{z|l} ~ Dir(alpha / K, ..., alpha / K) over a fixed number of states K (seed 002 §2)."""

    alpha: float
    n_states: int


PRIORS = (HDP, H2DP, DP, Dirichlet)


# -- a hierarchical prior on an observed CPT: random effects (seed 002 §6) -----------------------------
@dataclass(frozen=True)
class RandomEffects:
    """phi_{x|l,j} ~ Dir(beta psi_{.|l}), psi_{.|l} ~ base = Dir(eta), for a Categorical observed node (seed 002
    §6, "HDP with random effects", Kim & Smyth 2006): the emission row of parent state l is specific to the
    node's data indices j (``Observed(index=...)``) and varies around a shared row psi_{.|l}.

    The collapsed predictive (eq. 2) of x given row (l, j) is (beta psi_{x|l} + N_{x|l,j}) / (beta + N_{l,j});
    psi is instantiated and drawn like tau, by Antoniak tables S_{x|l,j} ~ A[N_{x|l,j}, beta psi_{x|l}] and
    psi_{.|l} ~ Dir(eta + S_{x|l,.}) (§4).
    """

    beta: float
    base: ConjugatePrior


# -- nodes -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Latent:
    """A discrete latent node z^b with a prior on its CPT given ``parents`` (latent node names) and ``index``.

    ``tied``: the name of another latent node whose CPT (counts and states) this node shares, as the
    sender and receiver roles of the mixed-membership blockmodel share pi_{.|entity} (seed 002 §6).
    Tied nodes need equal DP or Dirichlet priors, the same numbers of parents and indices, and in every
    data item different index values (so that eq. 1 still factorises over the item's nodes).

    ``per``: data indices over which the node is NOT repeated per item: it takes one value per group of
    items sharing those index values (e.g. ``per=("doc",)`` for the class z_j^0 of a web page, Fig. 2c).
    Such a node is resampled by removing the items of its group and adding them back one by one at their
    old values (seed 002 §5); its parents must be group nodes over the same or fewer indices.
    """

    name: str
    prior: HDP | DP | Dirichlet
    parents: tuple[str, ...] = ()
    index: tuple[str, ...] = ()
    tied: str | None = None
    per: tuple[str, ...] = ()


@dataclass(frozen=True)
class Observed:
    """An observed node x^a: ``likelihood`` (an expfam likelihood class) given its latent parents' joint state,
    with the conjugate ``prior`` (an expfam prior instance) on every CPT row phi_{x | parents, index}, or
    :class:`RandomEffects` (Categorical only): phi_{x|l,j} ~ Dir(beta psi_{.|l}) around a shared psi_{.|l}.

    ``fixed`` holds the likelihood's fixed parameters (``n_categories`` of a Categorical, ``n`` of a Binomial).
    """

    name: str
    likelihood: type
    prior: ConjugatePrior
    parents: tuple[str, ...] = ()
    index: tuple[str, ...] = ()
    fixed: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Network:
    """An ISBN: its nodes and the names of the data indices, outermost first (e.g. ("doc",) for words in docs)."""

    nodes: tuple
    indices: tuple[str, ...] = ()

    def __post_init__(self):
        object.__setattr__(self, "nodes", tuple(self.nodes))
        object.__setattr__(self, "indices", tuple(self.indices))

    @property
    def latent(self) -> list[Latent]:
        return [n for n in self.nodes if isinstance(n, Latent)]

    @property
    def observed(self) -> list[Observed]:
        return [n for n in self.nodes if isinstance(n, Observed)]

    def node(self, name: str):
        for n in self.nodes:
            if n.name == name:
                return n
        raise KeyError(name)

    def validate(self) -> Network:
        """Check the declaration; raise :class:`InvalidParameterError` naming the node and the fix. Returns self."""
        names = []
        for n in self.nodes:
            if not isinstance(n, (Latent, Observed)):
                raise InvalidParameterError(
                    f"ISBN nodes must be Latent or Observed; got {type(n).__name__} ({n!r}).")
            if not isinstance(n.name, str) or not n.name:
                raise InvalidParameterError(f"every ISBN node needs a non-empty string name; got {n.name!r}.")
            if n.name in names:
                raise InvalidParameterError(f"two ISBN nodes are named {n.name!r}; names must be unique.")
            names.append(n.name)
        if not self.observed:
            raise InvalidParameterError("an ISBN needs at least one Observed node (the data).")
        kinds = {n.name: n for n in self.nodes}
        for n in self.nodes:
            for p in n.parents:
                if p not in kinds:
                    raise InvalidParameterError(
                        f"node {n.name!r} has an unknown parent {p!r}; declared nodes: {', '.join(names)}.")
                if isinstance(kinds[p], Observed):
                    raise InvalidParameterError(
                        f"node {n.name!r} has the observed node {p!r} as a parent; in an ISBN observed nodes are "
                        "leaves (seed 002 §2). Model a fully observed grouping with index=(...) instead.")
                if p == n.name:
                    raise InvalidParameterError(f"node {n.name!r} is its own parent (a cycle).")
            for ix in n.index:
                if ix not in self.indices:
                    raise InvalidParameterError(
                        f"node {n.name!r} is specific to the unknown data index {ix!r}; declared indices: "
                        f"{self.indices or '()'}. Add it to Network(indices=...).")
            if isinstance(n, Latent):
                _check_latent_prior(n)
                if n.tied is not None:
                    _check_tie(n, kinds)
                if n.per:
                    _check_group(n, kinds, self.indices)
            else:
                _check_observed(n)
        order = self.topological_order()
        del order
        return self

    def topological_order(self) -> list[str]:
        """Latent node names, parents before children; raises on a cycle (naming it)."""
        latent = {n.name: n for n in self.latent}
        state: dict[str, int] = {}
        order: list[str] = []

        def visit(name, path):
            if state.get(name) == 2:
                return
            if state.get(name) == 1:
                cyc = path[path.index(name):] + [name]
                raise InvalidParameterError(f"the ISBN has a cycle: {' -> '.join(reversed(cyc))}; it must be acyclic.")
            state[name] = 1
            for p in latent[name].parents:
                visit(p, path + [name])
            state[name] = 2
            order.append(name)

        for name in latent:
            visit(name, [])
        return order


def _check_latent_prior(n: Latent) -> None:
    pr = n.prior
    if not isinstance(pr, PRIORS):
        raise InvalidParameterError(
            f"latent node {n.name!r} needs an HDP, DP or Dirichlet prior on its CPT; got {type(pr).__name__}.")
    if isinstance(pr, H2DP) and (len(n.index) < 2 or n.per):
        raise InvalidParameterError(
            f"latent node {n.name!r}: an H2DP prior needs index=(outer, inner, ...) with at least two data indices "
            f"(its middle level rho is specific to the first) and no per=...; got index={n.index}, per={n.per}.")
    for attr in ("alpha", "gamma", "beta"):
        v = getattr(pr, attr, None)
        if v is not None and not (isinstance(v, (int, float)) and np.isfinite(v) and v > 0):
            raise InvalidParameterError(
                f"the {attr!r} of the {type(pr).__name__} prior of node {n.name!r} must be a positive float. "
                f"Got {v!r}.")
    if isinstance(pr, Dirichlet) and not (isinstance(pr.n_states, (int, np.integer)) and pr.n_states >= 1):
        raise InvalidParameterError(
            f"the 'n_states' of the Dirichlet prior of node {n.name!r} must be an int >= 1. Got {pr.n_states!r}.")


def _check_group(n: Latent, kinds: dict, indices: tuple) -> None:
    bad = [x for x in n.per if x not in indices]
    if bad:
        raise InvalidParameterError(
            f"latent node {n.name!r} has per={n.per}, but {bad} are not declared data indices {indices or '()'}.")
    if n.tied is not None:
        raise InvalidParameterError(f"latent node {n.name!r}: a node with per=... cannot be tied.")
    if not set(n.index) <= set(n.per):
        raise InvalidParameterError(
            f"latent node {n.name!r} takes one value per {n.per} but its CPT is specific to {n.index}; "
            "index=... must be a subset of per=....")
    for p in n.parents:
        q = kinds[p]
        if isinstance(q, Latent) and not (q.per and set(q.per) <= set(n.per)):
            raise InvalidParameterError(
                f"latent node {n.name!r} takes one value per {n.per}, so its parent {p!r} must too (per=... a "
                f"subset of {n.per}); got per={q.per}.")


def _check_tie(n: Latent, kinds: dict) -> None:
    t = kinds.get(n.tied)
    if not isinstance(t, Latent) or t.name == n.name:
        raise InvalidParameterError(
            f"latent node {n.name!r} is tied to {n.tied!r}, which is not another latent node; tied= names the "
            "latent node whose CPT it shares.")
    if t.tied is not None:
        raise InvalidParameterError(
            f"latent node {n.name!r} is tied to {t.name!r}, which is itself tied to {t.tied!r}; tie every node "
            f"to the same base node ({t.tied!r}).")
    if isinstance(n.prior, HDP) or n.prior != t.prior:
        raise InvalidParameterError(
            f"tied latent nodes {n.name!r} and {t.name!r} need equal DP or Dirichlet priors; got "
            f"{n.prior!r} and {t.prior!r}. (Tied HDP CPTs are not implemented: two new states drawn in one item "
            "may coincide.)")
    if len(n.parents) != len(t.parents) or len(n.index) != len(t.index) or not n.index:
        raise InvalidParameterError(
            f"tied latent nodes {n.name!r} and {t.name!r} need the same numbers of parents and of data indices, "
            "and at least one index (rows of a shared CPT are (parent states, index values)).")


def _check_observed(n: Observed) -> None:
    lik = n.likelihood
    if isinstance(n.prior, RandomEffects):
        _check_random_effects(n)
        return
    if not (isinstance(lik, type) and issubclass(lik, ExponentialFamily)):
        raise InvalidParameterError(
            f"observed node {n.name!r} needs an expfam likelihood class (e.g. harmonium.expfam.Categorical); "
            f"got {lik!r}.")
    conj = getattr(lik, "conjugate_prior", None)
    if conj is None:
        raise InvalidParameterError(
            f"observed node {n.name!r}: {lik.__name__} has no conjugate prior in harmonium.expfam, so phi cannot be "
            "integrated out (seed 002 eq. 2).")
    if not isinstance(n.prior, conj):
        raise InvalidParameterError(
            f"observed node {n.name!r}: a {lik.__name__} likelihood needs a {conj.__name__} prior to be conjugate; "
            f"got {type(n.prior).__name__}. Use harmonium.expfam.{conj.__name__}(...).")
    if n.prior.batch_shape != ():
        raise InvalidParameterError(
            f"observed node {n.name!r}: the prior is shared by every CPT row and must be a single distribution "
            f"(batch shape ()); got batch shape {n.prior.batch_shape}.")


def _check_random_effects(n: Observed) -> None:
    from harmonium.expfam import Categorical
    from harmonium.expfam import Dirichlet as DirichletDist

    pr = n.prior
    if n.likelihood is not Categorical:
        raise InvalidParameterError(
            f"observed node {n.name!r}: RandomEffects needs a Categorical likelihood (its psi and phi are rows of "
            f"word probabilities); got {getattr(n.likelihood, '__name__', n.likelihood)!r}.")
    if not (isinstance(pr.beta, (int, float)) and np.isfinite(pr.beta) and pr.beta > 0):
        raise InvalidParameterError(
            f"observed node {n.name!r}: the 'beta' of RandomEffects must be a positive float. Got {pr.beta!r}.")
    k = n.fixed.get("n_categories")
    if not isinstance(pr.base, DirichletDist) or np.shape(pr.base.alpha) != (k,):
        raise InvalidParameterError(
            f"observed node {n.name!r}: the 'base' of RandomEffects must be one harmonium.expfam.Dirichlet over the "
            f"{k} categories (fixed={{'n_categories': {k}}}), e.g. Dirichlet(np.full({k}, 0.01)); got {pr.base!r}.")
    if not n.index:
        raise InvalidParameterError(
            f"observed node {n.name!r}: RandomEffects makes the emission row specific to data indices; declare "
            "them with index=(...) (e.g. index=('doc',)). Without an index use a plain Dirichlet prior.")


# -- the collapsed predictive F (seed 002 eq. 2) ---------------------------------------------------
def item_stats(node: Observed, x) -> tuple[tuple, np.ndarray]:
    """Per-item conjugate statistics c(x_i) (parts with a leading item axis) and log h(x_i)."""
    fixed = dict(node.fixed)
    coeffs, sample_shape = node.likelihood._conjugate_coefficients(np.asarray(x), **fixed)
    n = int(np.prod(sample_shape))
    parts = []
    for c in coeffs:
        ev = np.shape(c)[len(sample_shape):]
        parts.append(np.broadcast_to(np.asarray(c, dtype=np.float64), tuple(sample_shape) + ev).reshape((n,) + ev))
    parts = tuple(parts)
    base = np.broadcast_to(np.asarray(node.likelihood._log_likelihood_base_per_sample(np.asarray(x), **fixed),
                                      dtype=np.float64), tuple(sample_shape)).reshape(n)
    return parts, base


def log_partition_of(prior: ConjugatePrior, stats: tuple) -> np.ndarray:
    """A(eta + S) for a batch of statistics S (parts with a leading batch axis)."""
    eta = tuple(np.asarray(e) + np.asarray(s) for e, s in zip(prior.natural_params, stats, strict=True))
    return np.asarray(type(prior).from_natural(*eta, **prior.fixed_params).log_partition(), dtype=np.float64)


def log_predictive(prior: ConjugatePrior, stats: tuple, c_x: tuple, log_h: float) -> np.ndarray:
    """log F(x | x_-i, parents = l) = A(eta + S_l + c(x)) - A(eta + S_l) + log h(x), batched over rows l (eq. 2)."""
    with_x = tuple(np.asarray(s) + np.asarray(c) for s, c in zip(stats, c_x, strict=True))
    return log_partition_of(prior, with_x) - log_partition_of(prior, stats) + log_h
