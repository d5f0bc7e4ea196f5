"""One engine package for the HDP family: a declared network in, the sampler that runs it out (seed 002 §4).

:func:`plan` reads a :class:`~harmonium.models.directed.isbn.Network` and names the sweep that runs it:

* ``"direct_assignment"``: the HDP topic model (Fig. 1b; :func:`harmonium.models.directed.isbn_examples.hdp`):
  one latent node with an HDP prior specific to one data index (the documents), no parents, and one
  Categorical observation with a symmetric Dirichlet prior under it. Its sweep is the direct-assignment
  sampler of :mod:`harmonium.inference.mcmc.isbn.hdp` (Teh et al. 2006 §5.3): tokens grouped by document,
  SparseLDA-style buckets, split-merge moves. The ``HDP`` estimator is this declaration plus that sweep.
* ``"compiled"``: other branch-shaped networks (one or two latent chains joined at one observation: DP
  mixture, infinite PAM, POM, nested DP, BiHDP, an asymmetric-Dirichlet HDP), the numba chain engine
  :class:`~harmonium.inference.mcmc.isbn.compiled.CompiledISBNSampler`.
* ``"python"``: everything else (junction-tree networks, group nodes ``per=``, tied CPTs, H2DP, random
  effects, several observations, observations with an index, items without an observation ``present=``),
  the general :class:`~harmonium.inference.mcmc.isbn.gibbs.ISBNSampler`, which is also the reference of the
  tests.

:func:`make_sampler` builds the engine for a network and its data. For the HDP topic model it returns a
:class:`DirectAssignmentEngine`: the direct-assignment state and kernel behind the compiled engine's interface
(``sweep``, ``update_tau``, ``step``, ``n_states``, ``labels``, ``states``, ``tau``, ``alpha``, ``gamma``,
``log_joint``, ``joint_conditional``), so that code written against one engine runs on the other.
tests/statistical/test_isbn_compiled.py checks that it keeps the enumerated HDP posterior (with a broken twin)
and that its log joint and conditional equal the compiled engine's on the same state. All engines share the
hyperparameter updates of :mod:`harmonium.inference.mcmc.isbn.hyper`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from harmonium._kernels import hdp as khdp
from harmonium.corpus.corpus import TokenStream
from harmonium.errors import InvalidParameterError
from harmonium.expfam import Categorical
from harmonium.expfam import Dirichlet as DirichletDist
from harmonium.inference.mcmc.isbn import conditionals
from harmonium.inference.mcmc.isbn import hdp as da
from harmonium.inference.mcmc.isbn.compiled import CompiledISBNSampler, _int_array, plan_chains
from harmonium.inference.mcmc.isbn.gibbs import ISBNSampler
from harmonium.models.directed.hdp import HDPModel
from harmonium.models.directed.isbn import HDP, Network

NEW = conditionals.NEW
SWEEPS = ("direct_assignment", "compiled", "python")


class Plan(NamedTuple):
    """Which sweep runs a network (:func:`plan`).

    ``sweep``: one of :data:`SWEEPS`; ``engine``: the class :func:`make_sampler` builds; ``algorithm``: for
    ``"direct_assignment"`` the state/init/kernel module :mod:`harmonium.inference.mcmc.isbn.hdp`, else None;
    ``model``: for ``"direct_assignment"`` the fixed quantities the declaration implies (beta, V), else None.
    """

    sweep: str
    network: Network
    engine: type
    algorithm: object = None
    model: HDPModel | None = None


def direct_assignment_shape(network: Network) -> str | None:
    """None when ``network`` is the HDP topic model the direct-assignment sweep runs (module docstring), else
    what departs from it. The network must be valid (``network.validate()``)."""
    if len(network.latent) != 1 or len(network.observed) != 1:
        return f"it has {len(network.latent)} latent and {len(network.observed)} observed nodes (1 and 1 needed)"
    z, x = network.latent[0], network.observed[0]
    if type(z.prior) is not HDP:
        return f"the latent node {z.name!r} has a {type(z.prior).__name__} prior (HDP needed)"
    if z.parents or z.per or z.tied is not None or len(z.index) != 1:
        return f"the latent node {z.name!r} must have no parents, per= or tied= and exactly one data index"
    if x.likelihood is not Categorical or not isinstance(x.prior, DirichletDist):
        return f"the observed node {x.name!r} must be Categorical with a Dirichlet prior"
    if x.parents != (z.name,) or x.index:
        return f"the observed node {x.name!r} must have the one parent {z.name!r} and no data index"
    a = np.asarray(x.prior.alpha, dtype=np.float64).reshape(-1)
    if a.size == 0 or not np.all(a == a[0]):
        return f"the Dirichlet prior of {x.name!r} is not symmetric"
    if int(x.fixed.get("n_categories", a.size)) != a.size:
        return f"the Dirichlet prior of {x.name!r} has {a.size} entries but n_categories={x.fixed['n_categories']}"
    return None


def plan(network: Network) -> Plan:
    """The sweep that runs ``network``: the direct-assignment HDP, the compiled chain engine or the Python
    engine (module docstring). An invalid declaration raises its validation error."""
    if not isinstance(network, Network):
        raise InvalidParameterError(f"plan: network must be an isbn.Network; got {type(network).__name__}.")
    network.validate()
    if direct_assignment_shape(network) is None:
        x = network.observed[0]
        a = np.asarray(x.prior.alpha, dtype=np.float64).reshape(-1)
        return Plan("direct_assignment", network, DirectAssignmentEngine, da, HDPModel(float(a[0]), int(a.size)))
    try:
        plan_chains(network)
    except InvalidParameterError as err:
        if "CompiledISBNSampler supports" not in str(err):
            raise
        return Plan("python", network, ISBNSampler)
    return Plan("compiled", network, CompiledISBNSampler)


class DirectAssignmentEngine:
    """The HDP topic model's direct-assignment sampler (:mod:`harmonium.inference.mcmc.isbn.hdp`) behind the
    interface of :class:`~harmonium.inference.mcmc.isbn.compiled.CompiledISBNSampler` (state held inside).

    Items may come in any order: they are grouped by document (stable) for the sweep, which then visits the
    documents in order; ``labels`` returns the items' labels in the given order. Labels follow the compiled
    engine's convention: the initial labels, then new states numbered on in order of creation.

    Parameters
    ----------
    network : Network
        The HDP topic model (:func:`direct_assignment_shape`); other networks raise one InvalidParameterError.
    index, observed, init, tau, sample_concentration, concentration_prior, capacity
        As for :class:`~harmonium.inference.mcmc.isbn.compiled.CompiledISBNSampler`.
    sampler : {"sparse", "plain"}
        The z sweep (:data:`harmonium.inference.mcmc.isbn.hdp.SAMPLERS`).
    sweep : callable, optional
        Replaces the z sweep (``build_kernel(sweep=...)``); tests pass deliberately broken kernels here.
    """

    def __init__(self, network: Network, index: dict, observed: dict, *, init: dict | None = None,
                 tau: dict | None = None, sample_concentration: bool = False,
                 concentration_prior: tuple = (1.0, 1.0), capacity: int = 64, sampler: str = "sparse",
                 sweep=None):
        name = "DirectAssignmentEngine"
        if not isinstance(network, Network):
            raise InvalidParameterError(f"{name}: network must be an isbn.Network; got {type(network).__name__}.")
        network.validate()
        why = direct_assignment_shape(network)
        if why is not None:
            raise InvalidParameterError(f"{name} runs the HDP topic model only; {why}. Use make_sampler(network, "
                                        "...) (harmonium.inference.mcmc.isbn.engine), which picks the engine.")
        if not (isinstance(capacity, (int, np.integer)) and capacity >= 2):
            raise InvalidParameterError(f"{name}: capacity must be an int >= 2; got {capacity!r}.")
        cp = tuple(concentration_prior) if isinstance(concentration_prior, (tuple, list)) else ()
        if len(cp) != 2 or not all(isinstance(v, (int, float)) and np.isfinite(v) and v > 0 for v in cp):
            raise InvalidParameterError(f"{name}: concentration_prior must be (shape, rate), two positive floats; "
                                        f"got {concentration_prior!r}.")
        if sampler not in da.SAMPLERS:
            raise InvalidParameterError(f"{name}: sampler must be one of {sorted(da.SAMPLERS)}; got {sampler!r}.")
        znode, xnode = network.latent[0], network.observed[0]
        self.net, self.order, self.names = network, network.topological_order(), [znode.name]
        self.xnode = xnode
        ix = znode.index[0]
        if not isinstance(index, dict) or not isinstance(observed, dict):
            raise InvalidParameterError(f"{name}: index and observed must be dicts of arrays.")
        if xnode.name not in observed:
            raise InvalidParameterError(f"{name}: no data for the observed node {xnode.name!r} "
                                        f"(observed={{{xnode.name!r}: array}}).")
        x = _int_array(observed[xnode.name], f"observed[{xnode.name!r}]")
        self.N = N = x.shape[0]
        if ix not in index:
            raise InvalidParameterError(f"{name}: no values for the data index {ix!r} (index={{{ix!r}: array}}).")
        doc = _int_array(index[ix], f"index[{ix!r}]", N)
        plan_ = plan(network)
        V = plan_.model.n_words
        if N and x.max() >= V:
            j = int(np.argmax(x))
            raise InvalidParameterError(f"{name}: observed[{xnode.name!r}] has category {int(x[j])} > {V - 1} at "
                                        f"item {j} (values must lie in 0..{V - 1}).")
        self.model = plan_.model._replace(alpha_prior=(float(cp[0]), float(cp[1])),
                                          gamma_prior=(float(cp[0]), float(cp[1])))
        self._perm = np.argsort(doc, kind="stable")
        self._pos = np.empty(N, dtype=np.int64)
        self._pos[self._perm] = np.arange(N)
        n_docs = int(doc.max()) + 1 if N else 1
        doc_ptr = np.zeros(n_docs + 1, dtype=np.int64)
        np.cumsum(np.bincount(doc, minlength=n_docs), out=doc_ptr[1:])
        self.tokens = TokenStream(doc_ptr, np.ascontiguousarray(x[self._perm], dtype=np.int32))
        init, tau = ({} if init is None else init), ({} if tau is None else tau)
        if not isinstance(init, dict) or set(init) - {znode.name}:
            raise InvalidParameterError(f"{name}: init must be a dict over the latent node {znode.name!r}; got "
                                        f"{sorted(init) if isinstance(init, dict) else type(init)}.")
        if not isinstance(tau, dict) or set(tau) - {znode.name}:
            raise InvalidParameterError(f"{name}: tau must be a dict over the HDP node {znode.name!r}.")
        z0 = _int_array(init[znode.name], f"init[{znode.name!r}]", N) if znode.name in init else np.zeros(N, np.int64)
        lab = np.unique(z0)
        K = lab.shape[0]
        t = np.full(K + 1, 1.0 / (K + 1)) if znode.name not in tau else np.asarray(tau[znode.name], np.float64)
        if t.shape != (K + 1,) or not np.all(np.isfinite(t)) or np.any(t < 0) or t.sum() <= 0:
            raise InvalidParameterError(f"{name}: tau[{znode.name!r}] must be {K + 1} non-negative weights (one per "
                                        f"initial state {lab.tolist()} in sorted order, then tau_u); got shape "
                                        f"{t.shape}.")
        self.state = da.state_from_assignments(self.tokens, self.model, np.searchsorted(lab, z0[self._perm]), t,
                                               znode.prior.alpha, znode.prior.gamma, capacity=capacity)
        self._label = lab.astype(np.int64)  # label of every topic column; increasing, as the columns are
        self._next_label = int(lab.max()) + 1 if K else 0
        sc = bool(sample_concentration)
        self.sample_concentration = sc
        self._kernel = da.build_kernel(sampler=sampler, sample_alpha=sc, sample_gamma=sc, compute_log_joint=False,
                                       sweep=sweep)

    # -- transitions -------------------------------------------------------------------------------
    def sweep(self, rng: np.random.Generator) -> None:
        """One systematic scan over the tokens, document by document (seed 002 §4); mutates the state."""
        out = self._kernel.sweep(rng, self.state, self.tokens, self.model)
        created = out.remap.shape[0] - self._label.shape[0]
        before = np.concatenate([self._label, np.arange(self._next_label, self._next_label + created)])
        self._next_label += created
        keep = out.remap >= 0
        label = np.empty(out.state.n_topics, dtype=np.int64)
        label[out.remap[keep]] = before[keep]
        self._label, self.state = label, out.state

    def update_tau(self, rng: np.random.Generator) -> None:
        """Table counts, then (with ``sample_concentration``) alpha and gamma, then tau
        (:mod:`harmonium.inference.mcmc.isbn.hyper`)."""
        self.state, _ = self._kernel.update(rng, self.state, self.tokens, self.model)

    step = CompiledISBNSampler.step  # ``sweep`` then ``update_tau``: the same interface method

    # -- reading the state ---------------------------------------------------------------------------
    def _check(self, b: str) -> None:
        if b not in self.names:
            raise InvalidParameterError(f"DirectAssignmentEngine: unknown latent node {b!r}; one of {self.names}.")

    def n_states(self) -> dict:
        return {self.names[0]: int(self.state.n_topics)}

    def labels(self, b: str) -> np.ndarray:
        """(N,) int64 state labels of node b, items in the given order."""
        self._check(b)
        out = np.empty(self.N, dtype=np.int64)
        out[self._perm] = self._label[self.state.z]
        return out

    def states(self, b: str) -> np.ndarray:
        """Alive labels of node b, sorted."""
        self._check(b)
        return self._label.copy()

    def tau(self, b: str) -> np.ndarray:
        """(K + 1,) global weights over ``states(b)``, last the unused mass tau_u."""
        self._check(b)
        return self.state.tau[: self.state.n_topics + 1].copy()

    def alpha(self, b: str) -> float:
        self._check(b)
        return float(self.state.alpha)

    def gamma(self, b: str) -> float:
        self._check(b)
        return float(self.state.gamma)

    def log_joint(self) -> float:
        """log p(x, z | tau) collapsed (eqs. 1-2): log p(w | z, beta) + log p(z | tau, alpha)."""
        st, K = self.state, self.state.n_topics
        ll = khdp.word_log_likelihood(st.n_wk, st.n_k, K, da.current_beta(st, self.model))
        return float(ll + khdp.assignment_log_prior(self.tokens.doc_ptr, st.n_dk, K, st.alpha, st.tau))

    def joint_conditional(self, i: int):
        """(configurations, probabilities) of item i's state given everything else, as the sweep samples it, in
        the format of :meth:`CompiledISBNSampler.joint_conditional` (a state that item i alone holds is not
        offered: its weight is the new state's). The state is left unchanged."""
        if not (isinstance(i, (int, np.integer)) and 0 <= i < self.N):
            raise InvalidParameterError(f"DirectAssignmentEngine.joint_conditional: item must be in "
                                        f"0..{self.N - 1}; got {i!r}.")
        pos = int(self._pos[i])
        p = da.conditional(self.state, self.tokens, self.model, pos)
        K = self.state.n_topics
        alive = self.state.n_k[:K] - (np.arange(K) == self.state.z[pos]) > 0
        return conditionals.single_node(np.append(p[:K][alive], p[K]), self._label[alive])


def make_sampler(network: Network, index: dict, observed: dict, *, engine: str = "auto", **options):
    """The engine for ``network`` (:func:`plan`): :class:`DirectAssignmentEngine` for the HDP topic model,
    :class:`CompiledISBNSampler` for other branch-shaped networks, else the general Python
    :class:`~harmonium.inference.mcmc.isbn.gibbs.ISBNSampler`.

    ``engine``: ``"auto"``, ``"direct_assignment"``, ``"compiled"`` (a shape the engine does not run raises its
    error naming the feature) or ``"python"``. ``options`` go to the engine's constructor (``init``, ``tau``,
    ``sample_concentration``, ``concentration_prior``; ``method`` and ``present`` exist in the Python engine
    only and select it under ``"auto"``; ``capacity`` is dropped for it; ``sampler`` in the direct-assignment
    engine only). All engines sample the same posterior; the choice changes the speed, not the model. The
    compiled and Python sweeps draw the same states from the same seed; the direct-assignment sweep visits the
    items document by document and draws otherwise.
    """
    if engine not in ("auto",) + SWEEPS:
        raise InvalidParameterError("make_sampler: engine must be 'auto', 'direct_assignment', 'compiled' or "
                                    f"'python'; got {engine!r}.")
    python_only = {"method", "present"} & set(options)
    if engine in ("compiled", "direct_assignment") and python_only:
        raise InvalidParameterError(
            f"make_sampler(engine={engine!r}): {sorted(python_only)} exist in the Python engine only; drop them or "
            "use engine='auto' / 'python'.")
    if engine == "auto":
        engine = "python" if python_only else plan(network).sweep
    if engine != "direct_assignment" and "sampler" in options:
        raise InvalidParameterError("make_sampler: sampler= exists in the direct-assignment engine only (the HDP "
                                    f"topic model); this network runs on the {engine!r} engine.")
    if engine == "python":
        options.pop("capacity", None)
        return ISBNSampler(network, index, observed, **options)
    if engine == "compiled":
        return CompiledISBNSampler(network, index, observed, **options)
    return DirectAssignmentEngine(network, index, observed, **options)
