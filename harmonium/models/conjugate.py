"""Conjugate-exponential models declared as variables: what the generic CAVI engine fits.

A model is a list of three kinds of variable (Winn & Bishop 2005, "Variational
message passing", sec. 3-4; seed 004 "Exponential Family Conditionals"):

* :class:`Global` -- a parameter theta with a conjugate prior p(theta) from
  :mod:`harmonium.expfam` (Dirichlet, NormalInverseWishart, NormalGamma, Beta,
  Gamma, Gaussian ...), possibly a batch of K components or of G groups.
  Its variational factor q(theta) is in the prior's family.
* :class:`Gate` -- local assignments z_n ~ Cat(pi) with pi a Dirichlet
  ``Global``; with ``groups`` (a plate index) z_n ~ Cat(pi_{g_n}), e.g.
  z_dn ~ Cat(theta_d) in LDA. q(z_n) = Cat(r_n), r the responsibilities.
* :class:`Observed` -- data x_n ~ L(theta), L(theta_{g_n}) with a known
  ``groups`` index, or the mixture factor L(theta_{z_n}) gated by a ``Gate``
  (Winn & Bishop 2005 sec. 5.2, "gates"; Minka & Winn 2008). L is any
  likelihood of :mod:`harmonium.expfam` whose ``conjugate_prior`` is the family
  of ``theta``'s prior.

Every complete conditional of such a model is in an exponential family, so
the CAVI update q*(z_j) ∝ h(z_j) exp{E_{q_-j}[eta(z_-j, x)]^T t(z_j)} is
closed-form (seed 004). The engine that derives and runs those updates is
:mod:`harmonium.inference.vi.cavi`; this module only declares and validates
(models never know how they are executed, DESIGN.md).

Example
-------
>>> model = Model([
...     Global("pi", Dirichlet(np.full(K, 1.0))),
...     Global("theta", NormalInverseWishart(m0, 0.1, Psi0, D + 2.0), size=K),
...     Gate("z", parent="pi"),
...     Observed("x", MultivariateGaussian, params="theta", gate="z", data=X),
... ])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from harmonium.errors import InvalidParameterError
from harmonium.expfam._base import ConjugatePrior, ExponentialFamily
from harmonium.expfam.categorical import Categorical

__all__ = [
    "Gate", "Global", "Model", "Observed", "batch_shape", "broadcast_batch", "chunk_rows", "likelihood_name",
    "observed_weights", "one_hot", "positive_parameter", "sum_conjugate_stats",
]

#: entries of per-sample coefficients materialised at once by :func:`sum_conjugate_stats` (16 MiB of float64)
CHUNK_ENTRIES = 2**21


# -- helpers on expfam instances ------------------------------------------------


def batch_shape(dist: ExponentialFamily) -> tuple[int, ...]:
    """The batch shape of ``dist``."""
    return tuple(dist.batch_shape)


def broadcast_batch(dist: ExponentialFamily, shape: tuple[int, ...]) -> ExponentialFamily:
    """``dist`` (batch shape ()) with its parameters broadcast to batch ``shape`` (a new instance)."""
    eta = []
    for e, nd in zip(dist.natural_params, dist.event_dims, strict=True):
        e = np.asarray(e, dtype=np.float64)
        event = e.shape[e.ndim - nd:] if nd else ()
        eta.append(np.broadcast_to(e, tuple(shape) + event).copy())
    fixed = {k: np.broadcast_to(v, tuple(shape)).copy() for k, v in dist.fixed_params.items()}
    return type(dist).from_natural(*eta, **fixed)


def chunk_rows(prior: ExponentialFamily) -> int:
    """Samples per chunk so that their coefficients c(x_n) (one prior's natural coordinates each) fit CHUNK_ENTRIES."""
    nb = len(prior.batch_shape)
    size = sum(int(np.prod(np.shape(e)[nb:], dtype=np.int64)) for e in prior.natural_params)
    return max(1, CHUNK_ENTRIES // max(size, 1))


def one_hot(groups: np.ndarray, n_groups: int) -> np.ndarray:
    """(n, G) float64 indicator of ``groups``."""
    out = np.zeros((groups.shape[0], n_groups))
    out[np.arange(groups.shape[0]), groups] = 1.0
    return out


def sum_conjugate_stats(likelihood: Any, x: np.ndarray, fixed: dict, rows: int, weights_of: Callable) -> tuple:
    """``likelihood.conjugate_stats(x, weights)`` summed over chunks of ``rows`` samples.

    The statistics are linear in the samples, so the sum is exact; chunking bounds the memory of the
    per-sample coefficients (a dense one-hot per token for categorical data). ``weights_of(slice)``
    gives the weights of a chunk (or None).
    """
    total = None
    n = x.shape[0]
    for start in range(0, n, rows):
        sl = slice(start, min(start + rows, n))
        part = likelihood.conjugate_stats(x[sl], weights=weights_of(sl), **fixed)
        total = part if total is None else tuple(a + b for a, b in zip(total, part, strict=True))
    return total


def observed_weights(o: Observed, batch: tuple[int, ...], resp: np.ndarray | None = None) -> Callable:
    """``weights_of(slice)`` for :func:`sum_conjugate_stats` of an observed variable.

    Gated: the responsibilities ``resp`` (uniform 1/K when None); known groups: their one-hot rows;
    otherwise None (an unweighted sum).
    """
    if o.gate is not None:
        if resp is None:
            K = batch[0]
            return lambda sl: np.full((sl.stop - sl.start, K), 1.0 / K)
        return lambda sl: resp[sl]
    if o.groups is not None:
        groups, G = o.groups, batch[0]
        return lambda sl: one_hot(groups[sl], G)
    return lambda sl: None


def positive_parameter(owner: str, name: str, value, shape: tuple[int, ...]) -> np.ndarray:
    """``value`` (a float or an array) broadcast to ``shape`` as a float array, checked finite and > 0.

    For the concentration of a Dirichlet prior; an error names ``owner``'s parameter ``name``.
    """
    arr = np.asarray(value, dtype=np.float64)
    try:
        arr = np.broadcast_to(arr, shape).copy()
    except ValueError:
        raise InvalidParameterError(
            f"The {name!r} parameter of {owner} must be a float or an array of shape {shape}. Got shape {arr.shape}."
        ) from None
    if not np.all(np.isfinite(arr) & (arr > 0)):
        raise InvalidParameterError(f"The {name!r} parameter of {owner} must be finite and > 0. Got {value!r}.")
    return arr


def likelihood_name(likelihood: Any) -> str:
    """The class name of a likelihood given as a class or an instance."""
    return likelihood.__name__ if isinstance(likelihood, type) else type(likelihood).__name__


def _names(variables) -> str:
    return ", ".join(repr(v.name) for v in variables)


# -- the three kinds of variable ---------------------------------------------


class Global:
    """A global parameter variable theta with conjugate prior ``prior``.

    Parameters
    ----------
    name : str
        Unique name of the variable.
    prior : ConjugatePrior
        An instance from :mod:`harmonium.expfam`; its batch shape is the
        number of independent copies (K components, G groups, or ()).
    size : int or tuple of int, optional
        Broadcast a prior of batch shape () to this batch shape (e.g. ``size=K``
        for K components sharing one prior).
    """

    kind = "Global"

    def __init__(self, name: str, prior: ConjugatePrior, size: int | tuple[int, ...] | None = None):
        self.name = name
        if not isinstance(prior, ConjugatePrior):
            raise InvalidParameterError(
                f"The prior of Global {name!r} must be a ConjugatePrior instance from harmonium.expfam "
                f"(Dirichlet, NormalInverseWishart, ...). Got {prior!r}."
            )
        if size is not None:
            shape = (int(size),) if np.ndim(size) == 0 else tuple(int(s) for s in size)
            if any(s < 1 for s in shape):
                raise InvalidParameterError(f"The 'size' of Global {name!r} must be >= 1. Got {size!r}.")
            old = batch_shape(prior)
            if old not in ((), shape):
                raise InvalidParameterError(
                    f"Global {name!r}: a prior of batch shape {old} cannot be broadcast to size {shape}; "
                    "give a prior of batch shape () or leave 'size' out."
                )
            prior = broadcast_batch(prior, shape)
        self.prior = prior

    @property
    def family(self) -> type:
        return type(self.prior)

    @property
    def batch_shape(self) -> tuple[int, ...]:
        return batch_shape(self.prior)

    def refs(self) -> dict[str, str]:
        return {}

    def __repr__(self) -> str:
        return f"Global({self.name!r}, {type(self.prior).__name__}, batch_shape={self.batch_shape})"


class Gate:
    """Local categorical assignments z_n ~ Cat(pi) (or Cat(pi_{g_n}) with ``groups``).

    Parameters
    ----------
    name : str
        Unique name of the variable.
    parent : str
        Name of a :class:`Global` with a Dirichlet prior over K categories;
        batch shape () without ``groups``, (G,) with them.
    groups : array of int, shape (n,), optional
        The plate index: z_n is drawn from row ``groups[n]`` of the parent
        (document of token n in LDA). n must equal the number of observations
        of every :class:`Observed` gated by this variable.
    """

    kind = "Gate"

    def __init__(self, name: str, parent: str, groups=None):
        self.name = name
        self.parent = parent
        self.groups = None if groups is None else np.asarray(groups)

    def refs(self) -> dict[str, str]:
        return {"parent": self.parent}

    def __repr__(self) -> str:
        return f"Gate({self.name!r}, parent={self.parent!r})"


class Observed:
    """Observed data x_n ~ L(theta), L(theta_{g_n}) or, gated, L(theta_{z_n}).

    Parameters
    ----------
    name : str
        Unique name of the variable.
    likelihood : class or instance
        An expfam likelihood family (e.g. ``MultivariateGaussian``,
        ``Categorical``, ``GaussianKnownVariance``): a class with the fixed
        parameters in ``fixed``, or an instance carrying them (its natural
        parameters play no part).
    params : str
        Name of the :class:`Global` theta; its prior must be
        ``likelihood.conjugate_prior``.
    data : array, shape (n,) + event shape of one observation
        The observations, one per leading index.
    gate : str, optional
        Name of a :class:`Gate` z: x_n ~ L(theta_{z_n}); theta has batch (K,).
    groups : array of int, shape (n,), optional
        Known component of each observation (no gate): x_n ~ L(theta_{g_n}).
    fixed : dict, optional
        Fixed parameters of the likelihood passed to its conjugacy methods
        (``{"n_categories": V}`` for a Categorical, ``{"variance": s2}``...).
    """

    kind = "Observed"

    def __init__(self, name: str, likelihood: Any, params: str, data, gate: str | None = None, groups=None,
                 fixed: dict | None = None):
        self.name = name
        self.likelihood = likelihood
        self.params = params
        self.data = data if isinstance(data, np.ndarray) else np.asarray(data)
        self.gate = gate
        self.groups = None if groups is None else np.asarray(groups)
        self.fixed = dict(fixed or {})

    @property
    def n(self) -> int:
        return int(self.data.shape[0]) if self.data.ndim else 0

    def refs(self) -> dict[str, str]:
        out = {"params": self.params}
        if self.gate is not None:
            out["gate"] = self.gate
        return out

    def __repr__(self) -> str:
        g = f", gate={self.gate!r}" if self.gate is not None else ""
        return f"Observed({self.name!r}, {likelihood_name(self.likelihood)}, params={self.params!r}{g})"


# -- the model -------------------------------------------------------------------


class Model:
    """A validated conjugate-exponential model: globals, gates and observed variables.

    Parameters
    ----------
    variables : sequence of Global, Gate, Observed
        The declaration, in any order.

    Raises
    ------
    InvalidParameterError
        One message naming the variable and the fix, for: duplicate or unknown
        names, cycles, a reference to the wrong kind of variable, a likelihood
        whose conjugate prior is not the parameter's family, a gate parent that
        is not a Dirichlet, batch shapes that do not match the number of
        categories or groups, and data whose shape does not fit the likelihood.
    """

    def __init__(self, variables: Sequence):
        variables = list(variables)
        self.variables: dict[str, Global | Gate | Observed] = {}
        for v in variables:
            if not isinstance(v, Global | Gate | Observed):
                raise InvalidParameterError(
                    f"A Model is declared from Global, Gate and Observed variables. Got {v!r}."
                )
            if not isinstance(v.name, str) or not v.name:
                raise InvalidParameterError(f"Every variable needs a non-empty string name. Got {v.name!r}.")
            if v.name in self.variables:
                raise InvalidParameterError(f"The variable name {v.name!r} is declared twice; names must be unique.")
            self.variables[v.name] = v
        self._check_references()
        self._check_acyclic()
        self._check_kinds()
        self._check_gates()
        self._check_observed()
        if not self.observed:
            raise InvalidParameterError("The model has no Observed variable; declare the data with Observed(...).")

    # -- views ---------------------------------------------------------------------
    @property
    def globals(self) -> list[Global]:
        return [v for v in self.variables.values() if isinstance(v, Global)]

    @property
    def gates(self) -> list[Gate]:
        return [v for v in self.variables.values() if isinstance(v, Gate)]

    @property
    def observed(self) -> list[Observed]:
        return [v for v in self.variables.values() if isinstance(v, Observed)]

    def __getitem__(self, name: str):
        return self.variables[name]

    def n_categories(self, gate: str) -> int:
        """K of a gate: the event size of its Dirichlet parent."""
        prior = self.variables[self.variables[gate].parent].prior
        return int(np.asarray(prior.natural_params[0]).shape[-1])

    def n_local(self, gate: str) -> int:
        """Number of assignments of a gate (the n of its observed children)."""
        return self.gated_by(gate)[0].n

    def gated_by(self, gate: str) -> list[Observed]:
        return [o for o in self.observed if o.gate == gate]

    def children(self, name: str) -> list[Gate | Observed]:
        """The gates and observed variables whose parameter is the global ``name``."""
        out: list[Gate | Observed] = []
        for v in self.variables.values():
            if (isinstance(v, Gate) and v.parent == name) or (isinstance(v, Observed) and v.params == name):
                out.append(v)
        return out

    def __repr__(self) -> str:
        return "Model([" + ", ".join(repr(v) for v in self.variables.values()) + "])"

    # -- validation ------------------------------------------------------------------
    def _check_references(self) -> None:
        for v in self.variables.values():
            for role, ref in v.refs().items():
                if not isinstance(ref, str) or ref not in self.variables:
                    raise InvalidParameterError(
                        f"Unknown {role} {ref!r} of {v.kind} {v.name!r}; declared variables: "
                        f"{_names(self.variables.values())}. Declare {ref!r} or fix the name."
                    )

    def _check_acyclic(self) -> None:
        state: dict[str, int] = {}  # 1 on the stack, 2 done

        def visit(name: str, path: list[str]) -> None:
            state[name] = 1
            for ref in self.variables[name].refs().values():
                if state.get(ref) == 1:
                    cycle = path[path.index(ref):] + [name, ref] if ref in path else [name, ref]
                    raise InvalidParameterError(
                        f"The declaration has a cycle: {' -> '.join(cycle)} (variable -> what it depends on). "
                        f"A variable cannot depend on itself; fix the parent/params/gate of {name!r}."
                    )
                if ref not in state:
                    visit(ref, path + [name])
            state[name] = 2

        for name in self.variables:
            if name not in state:
                visit(name, [])

    def _check_kinds(self) -> None:
        for v in self.variables.values():
            wanted = {"parent": Global, "params": Global, "gate": Gate}
            for role, ref in v.refs().items():
                target = self.variables[ref]
                if not isinstance(target, wanted[role]):
                    raise InvalidParameterError(
                        f"The {role} of {v.kind} {v.name!r} must be a {wanted[role].__name__}; "
                        f"{ref!r} is a {target.kind}."
                    )

    def _check_groups(self, owner, groups, n_rows: int, n: int | None) -> None:
        what = f"{owner.kind} {owner.name!r}"
        if groups.ndim != 1 or not np.issubdtype(groups.dtype, np.integer):
            raise InvalidParameterError(
                f"The 'groups' of {what} must be a 1-d integer array. Got dtype {groups.dtype}, shape {groups.shape}."
            )
        if n is not None and groups.shape[0] != n:
            raise InvalidParameterError(
                f"The 'groups' of {what} has {groups.shape[0]} entries but its data have {n} observations; "
                "give one group index per observation."
            )
        if groups.size and (groups.min() < 0 or groups.max() >= n_rows):
            raise InvalidParameterError(
                f"The 'groups' of {what} must lie in [0, {n_rows}) (the batch of its parent). "
                f"Got values in [{groups.min()}, {groups.max()}]."
            )

    def _check_gates(self) -> None:
        for z in self.gates:
            parent = self.variables[z.parent]
            if not isinstance(parent.prior, Categorical.conjugate_prior):
                raise InvalidParameterError(
                    f"The parent of Gate {z.name!r} must have a {Categorical.conjugate_prior.__name__} prior "
                    f"(the conjugate prior of a categorical); {parent.name!r} has a {parent.family.__name__} prior."
                )
            children = self.gated_by(z.name)
            if not children:
                raise InvalidParameterError(
                    f"Gate {z.name!r} gates no Observed variable; add gate={z.name!r} to an Observed or remove it."
                )
            ns = {o.name: o.n for o in children}
            if len(set(ns.values())) > 1:
                raise InvalidParameterError(
                    f"The Observed variables gated by {z.name!r} have different numbers of observations {ns}; "
                    "a gate has one assignment per observation."
                )
            bs = parent.batch_shape
            if z.groups is None:
                if bs != ():
                    raise InvalidParameterError(
                        f"Gate {z.name!r} has no 'groups' but its parent {parent.name!r} has batch shape {bs}; "
                        "give groups= (the row of the parent each assignment draws from) or a batch-() prior."
                    )
            else:
                if len(bs) != 1:
                    raise InvalidParameterError(
                        f"Gate {z.name!r} has 'groups', so its parent {parent.name!r} needs batch shape (G,). "
                        f"Got {bs}."
                    )
                self._check_groups(z, z.groups, bs[0], children[0].n)

    def _check_observed(self) -> None:
        for o in self.observed:
            theta = self.variables[o.params]
            lik = likelihood_name(o.likelihood)
            prior_cls = getattr(o.likelihood, "conjugate_prior", None)
            if prior_cls is None or not hasattr(o.likelihood, "conjugate_stats"):
                raise InvalidParameterError(
                    f"The likelihood of Observed {o.name!r} ({lik}) has no conjugate prior; use a likelihood "
                    "family from harmonium.expfam with 'conjugate_prior' and 'conjugate_stats'."
                )
            if not isinstance(theta.prior, prior_cls):
                raise InvalidParameterError(
                    f"Observed {o.name!r} has a {lik} likelihood whose conjugate prior is {prior_cls.__name__}, "
                    f"but its parameter {theta.name!r} has a {theta.family.__name__} prior; give {theta.name!r} "
                    f"a {prior_cls.__name__} prior (non-conjugate pairs have no closed-form CAVI update)."
                )
            ndim = 1 + int(getattr(o.likelihood, "data_event_ndim", 0))
            if o.data.ndim != ndim or o.n == 0:
                raise InvalidParameterError(
                    f"The data of Observed {o.name!r} must be a non-empty array with {ndim} axes (observations "
                    f"along the first, then the event shape of one {lik} observation). Got shape {o.data.shape}."
                )
            if o.data.dtype.kind == "f" and not np.all(np.isfinite(o.data)):
                raise InvalidParameterError(f"The data of Observed {o.name!r} contain NaN or infinite values.")
            if o.data.dtype.kind not in "biuf":
                raise InvalidParameterError(
                    f"The data of Observed {o.name!r} must be numeric. Got dtype {o.data.dtype}."
                )
            bs = theta.batch_shape
            if o.gate is not None:
                if o.groups is not None:
                    raise InvalidParameterError(
                        f"Observed {o.name!r} has both a gate and groups; give one of them."
                    )
                K = self.n_categories(o.gate)
                if bs != (K,):
                    raise InvalidParameterError(
                        f"Observed {o.name!r} is gated by {o.gate!r} with {K} categories, so its parameter "
                        f"{theta.name!r} needs batch shape ({K},). Got {bs}; declare it with size={K}."
                    )
            elif o.groups is not None:
                if len(bs) != 1:
                    raise InvalidParameterError(
                        f"Observed {o.name!r} has 'groups', so its parameter {theta.name!r} needs batch shape "
                        f"(G,). Got {bs}."
                    )
                self._check_groups(o, o.groups, bs[0], o.n)
            else:
                if bs != ():
                    raise InvalidParameterError(
                        f"Observed {o.name!r} has neither gate nor groups, so its parameter {theta.name!r} needs "
                        f"batch shape (). Got {bs}; add gate= or groups=, or a prior of batch shape ()."
                    )
            self._check_data_fits(o, theta)

    def _check_data_fits(self, o: Observed, theta: Global) -> None:
        lik = likelihood_name(o.likelihood)
        fix = (f"Observed {o.name!r}: data of shape {o.data.shape} do not fit the {lik} likelihood of "
               f"{theta.name!r} ({theta.family.__name__}, batch {theta.batch_shape})")
        try:
            stats = sum_conjugate_stats(o.likelihood, o.data, o.fixed, chunk_rows(theta.prior),
                                        observed_weights(o, theta.batch_shape))
        except (ValueError, IndexError, TypeError) as exc:  # InvalidParameterError is a ValueError too
            raise InvalidParameterError(f"{fix}: {exc}") from exc
        prior_eta = theta.prior.natural_params
        if len(stats) != len(prior_eta):
            raise InvalidParameterError(f"{fix}: the likelihood gives {len(stats)} statistics, the prior "
                                        f"{len(prior_eta)}.")
        for s, e in zip(stats, prior_eta, strict=True):
            if np.shape(s) != np.shape(e):
                raise InvalidParameterError(
                    f"{fix}: conjugate statistics of shape {np.shape(s)} against natural parameters of shape "
                    f"{np.shape(e)}. Check the data's trailing (event) shape."
                )
            if not np.all(np.isfinite(s)):
                raise InvalidParameterError(f"{fix}: the conjugate statistics are not finite (data out of range?).")
