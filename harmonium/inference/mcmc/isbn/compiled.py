"""A compiled ISBN engine for branch-shaped networks (seed 002 §4, eqs. 1-2; §5 nested DP; §6 PAM, BiHDP).

The same collapsed Gibbs sampler that :class:`harmonium.inference.mcmc.isbn.gibbs.ISBNSampler` derives from a
declaration, for the networks that matter at corpus scale: exactly one Observed node with one or two latent
parents, each latent node with at most one latent parent and at most one child, so that the latent nodes form
one chain (HDP, DP mixture, infinite PAM, POM, nested DP: root -> ... -> leaf -> x) or two chains whose leaves
are the two parents of x (BiHDP z1 -> x <- z2, or "every branch becomes a PAM"). The factor graph of eq. 1 is
then a path, and forward-filtering backward-sampling (seed 002 §4) costs sum_edges (K_parent + 1)(K_child + 1)
per item. Latent priors ``HDP``, ``DP``, ``Dirichlet`` (each node specific to at most one data index);
observations Categorical-Dirichlet, Bernoulli-Beta or Binomial-Beta (fixed n), with no index.

One ``sweep`` (numba, :mod:`harmonium._kernels.isbn_chain`) visits the items in their given order: remove item
i; retire states left empty (HDP: tau_k returns to tau_u); FFBS over eq. 1 with F of eq. 2; create new states
(HDP: tau_new = b tau_u, b ~ Beta(1, gamma)); add i back. ``update_tau``: S_{k|l} ~ A[N_{k|l}, alpha tau_k] per
CPT row, tau ~ D[gamma, S_.1, ..., S_.K] (§4); with ``sample_concentration`` also alpha (shared by the node's
rows; rows with N_l > 0 play the documents) and gamma, by the shared updates of
:mod:`harmonium.inference.mcmc.isbn.hyper` (a DP node's alpha from its rows' numbers of states; a finite
Dirichlet node's alpha stays fixed).

Memory: dense count tables per latent node b, int32: n_rows_b x cap_parent x cap_b (n_rows_b: values of its
index, or 1; cap_parent = 1 for a root), plus n_rows_b x cap_parent row totals, plus n_categories x cap_A x cap_B
for the observations, plus 2 L N int32 for states and rows. Infinite PAM on 20,000 documents with capacities
64 (super) x 192 (sub): 20,000 x 64 x 192 x 4 B = 0.98 GB. Capacities start at max(capacity, 1.25 (K_init + 1))
and grow by 1.5x (reallocation, outside the kernel; the peak holds the old and the new table of the node and of
its child) when a sweep runs out of free slots; the chain does not change.
"""

from __future__ import annotations

import numpy as np

from harmonium._kernels import isbn_chain as kc
from harmonium.errors import InvalidParameterError
from harmonium.expfam import Bernoulli, Beta, Binomial, Categorical
from harmonium.expfam import Dirichlet as DirichletDist
from harmonium.inference.mcmc.isbn import conditionals, hyper
from harmonium.models.directed.isbn import DP, H2DP, HDP, Dirichlet, Network, Observed

NEW = -1
_HDP, _DP, _DIR = 0, 1, 2
_USE_PYTHON = "Use ISBNSampler (harmonium.inference.mcmc.isbn.gibbs), the Python engine, for this network."


def _unsupported(what: str) -> InvalidParameterError:
    return InvalidParameterError(f"CompiledISBNSampler supports one or two latent chains joined at one observed "
                                 f"node; {what}. {_USE_PYTHON}")


def plan_chains(network: Network):
    """(chain A names root..leaf, chain B names root..leaf (maybe empty), the observed node) of a supported
    network; raises one :class:`InvalidParameterError` naming the unsupported feature otherwise."""
    if not isinstance(network, Network):
        raise InvalidParameterError(f"CompiledISBNSampler: network must be an isbn.Network; got {type(network)}.")
    network.validate()
    obs = network.observed
    if len(obs) != 1:
        raise _unsupported(f"this network has {len(obs)} observed nodes ({', '.join(o.name for o in obs)})")
    x: Observed = obs[0]
    if x.index:
        raise _unsupported(f"the observed node {x.name!r} is specific to the data index {x.index} (index=...)")
    if len(x.parents) not in (1, 2):
        raise _unsupported(f"the observed node {x.name!r} has {len(x.parents)} latent parents (one or two needed)")
    if x.likelihood is Categorical and isinstance(x.prior, DirichletDist):
        pass
    elif x.likelihood in (Bernoulli, Binomial) and isinstance(x.prior, Beta):
        pass
    else:
        raise _unsupported(f"the observed node {x.name!r} has a {x.likelihood.__name__} likelihood with a "
                           f"{type(x.prior).__name__} prior (supported: Categorical-Dirichlet, Bernoulli-Beta, "
                           "Binomial-Beta)")
    children: dict = {n.name: [] for n in network.latent}
    for n in network.nodes:
        for p in n.parents:
            children[p].append(n.name)
    for n in network.latent:
        if type(n.prior) is H2DP or not isinstance(n.prior, (HDP, DP, Dirichlet)):
            raise _unsupported(f"latent node {n.name!r} has a {type(n.prior).__name__} prior (HDP, DP or Dirichlet)")
        if n.tied is not None:
            raise _unsupported(f"latent node {n.name!r} is tied to {n.tied!r} (tied=...)")
        if n.per:
            raise _unsupported(f"latent node {n.name!r} takes one value per group {n.per} (per=...)")
        if len(n.index) > 1:
            raise _unsupported(f"latent node {n.name!r} is specific to {len(n.index)} data indices {n.index}")
        if len(n.parents) > 1:
            raise _unsupported(f"latent node {n.name!r} has {len(n.parents)} latent parents (at most one)")
        if len(children[n.name]) != 1:
            raise _unsupported(f"latent node {n.name!r} has {len(children[n.name])} children "
                               f"({', '.join(children[n.name]) or 'none'}; exactly one needed)")
    chains = []
    for leaf in x.parents:
        chain, v = [], leaf
        while True:
            chain.append(v)
            node = network.node(v)
            if not node.parents:
                break
            v = node.parents[0]
        chains.append(chain[::-1])
    return chains[0], (chains[1] if len(chains) > 1 else []), x


def _int_array(v, what: str, n: int | None = None) -> np.ndarray:
    a = np.asarray(v)
    if a.ndim != 1 or (a.size and not (np.issubdtype(a.dtype, np.integer) or a.dtype == bool)):
        if a.ndim == 1 and a.size and np.issubdtype(a.dtype, np.floating) and np.all(a == np.round(a)):
            a = a.astype(np.int64)
        else:
            raise InvalidParameterError(f"CompiledISBNSampler: {what} must be a 1-d array of integers; got shape "
                                        f"{a.shape} and dtype {a.dtype}.")
    if n is not None and a.shape[0] != n:
        raise InvalidParameterError(f"CompiledISBNSampler: {what} has length {a.shape[0]}, the data has {n} items.")
    a = a.astype(np.int64)
    if a.size and a.min() < 0:
        j = int(np.flatnonzero(a < 0)[0])
        raise InvalidParameterError(f"CompiledISBNSampler: {what} must be >= 0; item {j} has {int(a[j])}.")
    return a


def _pad(arrays: list) -> tuple:
    """The per-node tables as a tuple padded to a multiple of 4 nodes (the kernels read only the first L), so that
    numba compiles one specialisation for every network of up to 4 latent nodes."""
    n = -(-len(arrays) // 4) * 4
    dummy = np.zeros((1,) * arrays[0].ndim, dtype=arrays[0].dtype)
    return tuple(arrays) + (dummy,) * (n - len(arrays))


def _round_cap(c: int) -> int:
    return int(-(-c // 8) * 8)


class CompiledISBNSampler:
    """The numba engine for one supported network and one data set (state held inside; methods mutate it).

    Parameters
    ----------
    network : Network
        Validated here; unsupported shapes raise one InvalidParameterError naming the feature.
    index : dict of str to (N,) int arrays
        Value of every data index of the network for every item (e.g. {"doc": doc id of each token}).
    observed : dict of str to (N,) arrays
        The observed node's values: category ids (Categorical), 0/1 (Bernoulli), successes in 0..n (Binomial).
    init : dict of str to (N,) int arrays, optional
        Initial states of latent nodes (labels >= 0; < n_states for a finite Dirichlet); default state 0.
    tau : dict of str to (K + 1,) arrays, optional
        Initial global weights of HDP nodes over their sorted initial labels, last tau_u; default uniform.
    sample_concentration : bool
        ``step`` also resamples alpha of HDP and DP nodes and gamma of HDP nodes (auxiliary variables).
    concentration_prior : (shape, rate)
        Gamma prior of every resampled concentration.
    capacity : int
        Initial number of state slots per infinite node (grown by reallocation when needed).
    """

    _kc = kc  # the kernel module (a test swaps in a deliberately broken copy)

    def __init__(self, network: Network, index: dict, observed: dict, *, init: dict | None = None,
                 tau: dict | None = None, sample_concentration: bool = False,
                 concentration_prior: tuple = (1.0, 1.0), capacity: int = 64):
        chain_a, chain_b, xnode = plan_chains(network)
        self.net = network
        self.order = network.topological_order()
        self.names = chain_a + chain_b
        self.nA = len(chain_a)
        self.L = len(self.names)
        self.pos_of_name = {b: j for j, b in enumerate(self.names)}
        self.xnode = xnode
        if not (isinstance(capacity, (int, np.integer)) and capacity >= 2):
            raise InvalidParameterError(f"CompiledISBNSampler: capacity must be an int >= 2; got {capacity!r}.")
        cp = tuple(concentration_prior) if isinstance(concentration_prior, (tuple, list)) else ()
        if len(cp) != 2 or not all(isinstance(v, (int, float)) and np.isfinite(v) and v > 0 for v in cp):
            raise InvalidParameterError("CompiledISBNSampler: concentration_prior must be (shape, rate), two "
                                        f"positive floats; got {concentration_prior!r}.")
        self.concentration_prior = (float(cp[0]), float(cp[1]))
        self.sample_concentration = bool(sample_concentration)
        if not isinstance(index, dict) or not isinstance(observed, dict):
            raise InvalidParameterError("CompiledISBNSampler: index and observed must be dicts of arrays.")
        if xnode.name not in observed:
            raise InvalidParameterError(f"CompiledISBNSampler: no data for the observed node {xnode.name!r} "
                                        f"(observed={{{xnode.name!r}: array}}).")
        xv = np.asarray(observed[xnode.name])
        if xv.ndim != 1:
            raise InvalidParameterError(f"CompiledISBNSampler: observed[{xnode.name!r}] must be 1-d (one value per "
                                        f"item); got shape {xv.shape}.")
        self.N = N = xv.shape[0]
        self._set_observation_model(xnode)
        self.xv = self._check_x(xv, f"observed[{xnode.name!r}]")
        self.rowidx, self.n_rows = self._rows(index, N, "index")
        L = self.L
        nodes = [network.node(b) for b in self.names]
        self.kind = np.array([_HDP if isinstance(n.prior, HDP) else _DP if isinstance(n.prior, DP) else _DIR
                              for n in nodes], dtype=np.int64)
        self.inf = (self.kind != _DIR).astype(np.int64)
        self.alpha_ = np.array([float(n.prior.alpha) for n in nodes])
        self.gamma_ = np.array([float(getattr(n.prior, "gamma", 1.0)) for n in nodes])
        self.n_dir = np.array([int(n.prior.n_states) if isinstance(n.prior, Dirichlet) else 0 for n in nodes])
        init = {} if init is None else init
        if not isinstance(init, dict) or set(init) - set(self.names):
            raise InvalidParameterError(f"CompiledISBNSampler: init must be a dict over the latent nodes {self.names}; "
                                        f"got keys {sorted(init) if isinstance(init, dict) else type(init)}.")
        tau = {} if tau is None else tau
        if not isinstance(tau, dict) or set(tau) - {b for b, k in zip(self.names, self.kind, strict=True) if k == _HDP}:
            raise InvalidParameterError("CompiledISBNSampler: tau must be a dict over the HDP nodes "
                                        f"{[b for b, k in zip(self.names, self.kind, strict=True) if k == _HDP]}.")
        z0s, labels = [], []
        for j, b in enumerate(self.names):
            z0 = (_int_array(init[b], f"init[{b!r}]", N) if b in init else np.zeros(N, dtype=np.int64))
            if self.kind[j] == _DIR:
                if z0.size and z0.max() >= self.n_dir[j]:
                    i = int(np.argmax(z0))
                    raise InvalidParameterError(
                        f"CompiledISBNSampler: init[{b!r}] must be < n_states={self.n_dir[j]} of its Dirichlet "
                        f"prior; item {i} has {int(z0[i])}.")
                lab = np.arange(self.n_dir[j])
            else:
                lab = np.unique(z0) if N else np.zeros(0, dtype=np.int64)
            z0s.append(z0)
            labels.append(lab)
        caps = [int(self.n_dir[j]) if self.kind[j] == _DIR
                else _round_cap(max(int(capacity), (5 * (len(labels[j]) + 1)) // 4)) for j in range(L)]
        self._alloc(caps)
        for j in range(L):
            lab = labels[j]
            K = len(lab)
            self.K[j] = K
            self.label[j, :K] = lab
            self.next_label[j] = int(lab.max()) + 1 if K else 0
            self.z[j] = np.searchsorted(lab, z0s[j]).astype(np.int32)
            if self.kind[j] == _HDP:
                b = self.names[j]
                t = (np.full(K + 1, 1.0 / (K + 1)) if b not in tau else np.asarray(tau[b], dtype=np.float64))
                if t.shape != (K + 1,) or not np.all(np.isfinite(t)) or np.any(t < 0) or t.sum() <= 0:
                    raise InvalidParameterError(
                        f"CompiledISBNSampler: tau[{b!r}] must be {K + 1} non-negative weights (one per initial "
                        f"state {lab.tolist()} in sorted order, then tau_u); got shape {t.shape}.")
                self.tau_[j, :K] = t[:K]
                self.tau_u[j] = t[K]
        self._refresh_weights()
        self._kc.add_all(1, self.nA, _pad(self.C), _pad(self.T), self.rowidx, self.z, self.used,
                   np.ones(L, dtype=np.bool_), self.obs, self.obs_tot, self.obs_inv, self.xv, self.okind, self.n_trials,
                   self.pa_sum)

    # -- setup -----------------------------------------------------------------------------------
    def _set_observation_model(self, xnode: Observed) -> None:
        if xnode.likelihood is Categorical:
            self.okind, self.n_trials = 0, 1
            self.pa = np.asarray(xnode.prior.alpha, dtype=np.float64).reshape(-1)
            ncat = int(xnode.fixed.get("n_categories", self.pa.shape[0]))
            if ncat != self.pa.shape[0]:
                raise InvalidParameterError(
                    f"CompiledISBNSampler: the Dirichlet prior of {xnode.name!r} has {self.pa.shape[0]} entries but "
                    f"n_categories={ncat}; they must agree.")
        else:
            a, b = float(xnode.prior.a), float(xnode.prior.b)
            self.pa = np.array([b, a])  # (failures, successes)
            if xnode.likelihood is Bernoulli:
                self.okind, self.n_trials = 0, 1
            else:
                n = xnode.fixed.get("n")
                if not (isinstance(n, (int, np.integer)) and n >= 1):
                    raise InvalidParameterError(
                        f"CompiledISBNSampler: the Binomial node {xnode.name!r} needs fixed={{'n': int >= 1}}; got "
                        f"{n!r}.")
                self.okind, self.n_trials = 1, int(n)
        self.pa_sum = float(self.pa.sum())
        self.ncat = self.pa.shape[0]

    def _check_x(self, xv: np.ndarray, what: str) -> np.ndarray:
        if xv.dtype == bool:
            xv = xv.astype(np.int64)
        x = _int_array(xv, what)
        hi = self.ncat - 1 if self.okind == 0 else self.n_trials
        if x.size and x.max() > hi:
            j = int(np.argmax(x))
            kind = {0: "category", 1: "success count"}[self.okind]
            raise InvalidParameterError(f"CompiledISBNSampler: {what} has {kind} {int(x[j])} > {hi} at item {j} "
                                        f"(values must lie in 0..{hi}).")
        return x.astype(np.int32)

    def _rows(self, index: dict, N: int, what: str):
        rowidx = np.zeros((self.L, N), dtype=np.int32)
        n_rows = np.ones(self.L, dtype=np.int64)
        for ix in self.net.indices:
            if ix not in index:
                raise InvalidParameterError(f"CompiledISBNSampler: no values for the data index {ix!r} "
                                            f"({what}={{{ix!r}: array}}).")
        for j, b in enumerate(self.names):
            node = self.net.node(b)
            if node.index:
                v = _int_array(index[node.index[0]], f"{what}[{node.index[0]!r}]", N)
                rowidx[j] = v
                n_rows[j] = int(v.max()) + 1 if N else 1
        return rowidx, n_rows

    def _alloc(self, caps: list) -> None:
        L, N = self.L, self.N
        self.caps = list(caps)
        capm = max(caps)
        self.C = [np.zeros((int(self.n_rows[j]), 1 if self._parent(j) < 0 else caps[self._parent(j)], caps[j]),
                           dtype=np.int32) for j in range(L)]
        self.T = [np.zeros(c.shape[:2], dtype=np.int32) for c in self.C]
        self.z = np.zeros((L, N), dtype=np.int32)
        self.used = np.zeros((L, capm), dtype=np.int64)
        self.act = np.tile(np.arange(capm, dtype=np.int32), (L, 1))
        self.posof = self.act.copy()
        self.K = np.zeros(L, dtype=np.int64)
        self.tau_ = np.zeros((L, capm))
        self.tau_u = np.zeros(L)
        self.extra = np.zeros((L, capm))
        self.newmass = np.zeros(L)
        self.label = np.full((L, capm), -1, dtype=np.int64)
        self.next_label = np.zeros(L, dtype=np.int64)
        self.obs = np.zeros((self.ncat, caps[self.nA - 1], caps[-1] if self.L > self.nA else 1), dtype=np.int32)
        self.obs_tot = np.zeros(self.obs.shape[1:], dtype=np.int32)
        self.obs_inv = np.full(self.obs.shape[1:], 1.0 / self.pa_sum)
        self._w = None

    def _parent(self, j: int) -> int:
        return -1 if j in (0, self.nA) else j - 1

    def _child(self, j: int) -> int:
        return -1 if j in (self.nA - 1, self.L - 1) else j + 1

    def _refresh_weights(self) -> None:
        """extra / newmass (the prior pseudo-counts of eq. 1) from alpha and tau."""
        for j in range(self.L):
            if self.kind[j] == _HDP:
                self.extra[j] = self.alpha_[j] * self.tau_[j]
                self.newmass[j] = self.alpha_[j] * self.tau_u[j]
            elif self.kind[j] == _DP:
                self.extra[j] = 0.0
                self.newmass[j] = self.alpha_[j]
            else:
                self.extra[j] = self.alpha_[j] / self.n_dir[j]
                self.newmass[j] = 0.0

    def _grow(self, j: int) -> None:
        """Reallocate node j's slots with 1.5x capacity (its table, its child's rows, the observed counts)."""
        old = self.caps[j]
        new = _round_cap(max(old + 8, int(old * 1.5)))
        self.caps[j] = new
        C = np.zeros(self.C[j].shape[:2] + (new,), dtype=np.int32)
        C[:, :, :old] = self.C[j]
        self.C[j] = C
        c = self._child(j)
        if c >= 0:
            C = np.zeros((self.C[c].shape[0], new, self.C[c].shape[2]), dtype=np.int32)
            C[:, :old] = self.C[c]
            T = np.zeros((self.T[c].shape[0], new), dtype=np.int32)
            T[:, :old] = self.T[c]
            self.C[c], self.T[c] = C, T
        for leaf, ax in ((self.nA - 1, 1), (self.L - 1 if self.L > self.nA else -2, 2)):
            if leaf == j:
                shape = list(self.obs.shape)
                shape[ax] = new
                o = np.zeros(shape, dtype=np.int32)
                o[:, : self.obs.shape[1], : self.obs.shape[2]] = self.obs
                t = np.zeros(shape[1:], dtype=np.int32)
                t[: self.obs_tot.shape[0], : self.obs_tot.shape[1]] = self.obs_tot
                self.obs, self.obs_tot = o, t
                self.obs_inv = 1.0 / (self.pa_sum + t)
        capm = self.used.shape[1]
        if new > capm:
            pad = new - capm
            self.used = np.pad(self.used, ((0, 0), (0, pad)))
            self.tau_ = np.pad(self.tau_, ((0, 0), (0, pad)))
            self.extra = np.pad(self.extra, ((0, 0), (0, pad)))
            self.label = np.pad(self.label, ((0, 0), (0, pad)), constant_values=-1)
            extra_slots = np.arange(capm, new, dtype=np.int32)
            self.act = np.concatenate([self.act, np.tile(extra_slots, (self.L, 1))], axis=1)
            self.posof = np.concatenate([self.posof, np.tile(extra_slots, (self.L, 1))], axis=1)
        self._w = None

    def _work(self):
        if self._w is None:
            dm = self.used.shape[1] + 1
            self._w = (np.zeros((self.L, dm, dm)), np.zeros((self.L, dm)), np.zeros(dm), np.zeros(self.L, np.int64),
                       np.zeros(self.L, np.int64), np.zeros(self.L), np.zeros(self.L))
        return self._w

    def _sweep_args(self):
        return (self.nA, _pad(self.C), _pad(self.T), self.rowidx, self.z, self.used, self.act, self.posof, self.K,
                self.inf, self.kind, self.alpha_, self.gamma_, self.tau_, self.tau_u, self.extra, self.newmass,
                self.label, self.next_label, self.obs, self.obs_tot, self.obs_inv, self.xv, self.okind, self.n_trials,
                self.pa, self.pa_sum)

    # -- transitions -------------------------------------------------------------------------------
    def sweep(self, rng: np.random.Generator) -> None:
        """One systematic scan over the items in their given order (seed 002 §4); mutates the state."""
        upd = np.ones(self.L, dtype=np.bool_)
        start = 0
        while start < self.N:
            P, msg, tmp, pos, rp, rt, rtu = self._work()
            start = self._kc.sweep(rng, start, *self._sweep_args(), 0, upd, True, False, P, msg, tmp, pos, rp, rt, rtu)
            if start < self.N:
                for j in range(self.L):
                    if self.inf[j] and self.K[j] >= self.caps[j]:
                        self._grow(j)

    def update_tau(self, rng: np.random.Generator) -> None:
        """tau | z for every HDP node: S_{k|l} ~ A[N_{k|l}, alpha tau_k] per row, tau ~ D[gamma, S] (seed 002 §4);
        with ``sample_concentration`` also alpha | S, N_l (HDP and DP nodes) and gamma | K, S (HDP nodes)."""
        for j in range(self.L):
            if self.kind[j] == _DIR or (self.kind[j] == _DP and not self.sample_concentration):
                continue
            pnode = self._parent(j)
            S = np.zeros(self.used.shape[1], dtype=np.int64)
            lengths = np.zeros(self.C[j].shape[0] * (1 if pnode < 0 else max(int(self.K[pnode]), 1)), np.int64)
            m, nl = self._kc.table_counts(rng, self.C[j], self.T[j], j, pnode, self.act, self.K,
                                    self.kind[j] == _HDP, self.extra[j], S, lengths)
            K = int(self.K[j])
            n_rows = lengths[:nl].astype(np.float64)
            if self.kind[j] == _DP:  # a DP row's tables are its states: alpha only
                self.alpha_[j] = hyper.resample_alpha(rng, float(self.alpha_[j]), int(m), n_rows,
                                                      self.concentration_prior) if nl > 0 else self.alpha_[j]
                continue
            slots = self.act[j, :K]
            tau, self.alpha_[j], self.gamma_[j] = hyper.global_step(
                rng, S[slots], int(m), n_rows, float(self.alpha_[j]), float(self.gamma_[j]),
                sample_alpha=self.sample_concentration, sample_gamma=self.sample_concentration,
                alpha_prior=self.concentration_prior, gamma_prior=self.concentration_prior)
            self.tau_[j, slots] = tau[:K]
            self.tau_u[j] = tau[K]
        self._refresh_weights()

    def step(self, rng: np.random.Generator) -> None:
        """``sweep`` then ``update_tau`` (with the concentrations when ``sample_concentration``)."""
        self.sweep(rng)
        self.update_tau(rng)

    # -- reading the state -------------------------------------------------------------------------
    def _j(self, b: str) -> int:
        if b not in self.pos_of_name:
            raise InvalidParameterError(f"CompiledISBNSampler: unknown latent node {b!r}; one of {self.names}.")
        return self.pos_of_name[b]

    def _sorted_slots(self, j: int) -> np.ndarray:
        slots = self.act[j, : self.K[j]]
        return slots[np.argsort(self.label[j, slots], kind="stable")]

    def n_states(self) -> dict:
        """{latent node: number of alive states}."""
        return {b: int(self.K[self._j(b)]) for b in self.order}

    def labels(self, b: str) -> np.ndarray:
        """(N,) int64 state labels of node b (the Python engine's convention: initial labels, then new ones
        numbered on)."""
        j = self._j(b)
        return self.label[j, self.z[j]].astype(np.int64)

    def states(self, b: str) -> np.ndarray:
        """Alive labels of node b, sorted."""
        j = self._j(b)
        return self.label[j, self._sorted_slots(j)].copy()

    def tau(self, b: str) -> np.ndarray:
        """(K + 1,) global weights of HDP node b over ``states(b)``, last the unused mass tau_u."""
        j = self._j(b)
        if self.kind[j] != _HDP:
            raise InvalidParameterError(f"CompiledISBNSampler.tau: node {b!r} has no HDP prior, so no tau.")
        return np.append(self.tau_[j, self._sorted_slots(j)], self.tau_u[j])

    def alpha(self, b: str) -> float:
        return float(self.alpha_[self._j(b)])

    def gamma(self, b: str) -> float:
        j = self._j(b)
        if self.kind[j] != _HDP:
            raise InvalidParameterError(f"CompiledISBNSampler.gamma: node {b!r} has no HDP prior, so no gamma.")
        return float(self.gamma_[j])

    def observed_counts(self) -> np.ndarray:
        """Counts of the observed node over alive states: (K_A[, K_B], n_categories) (Bernoulli/Binomial:
        failures, successes)."""
        sa = self._sorted_slots(self.nA - 1)
        if self.L > self.nA:
            sb = self._sorted_slots(self.L - 1)
            return np.moveaxis(self.obs[:, sa][:, :, sb], 0, -1).astype(np.int64)
        return self.obs[:, sa, 0].T.astype(np.int64)

    def latent_counts(self, b: str) -> np.ndarray:
        """N_{k|l,r}: (n_index_values or 1, K_parent or 1, K) over alive states in ``states`` order."""
        j = self._j(b)
        p = self._parent(j)
        ps = np.array([0]) if p < 0 else self._sorted_slots(p)
        return self.C[j][:, ps][:, :, self._sorted_slots(j)].astype(np.int64)

    def log_joint(self) -> float:
        """log p(x, z | tau) collapsed (eqs. 1-2), without the multinomial coefficients of Binomial x."""
        return float(self._kc.log_joint(self.nA, _pad(self.C), _pad(self.T), self.act, self.K, self.inf, self.kind,
                                  self.alpha_, self.extra, self.newmass, self.obs, self.obs_tot, self.okind,
                                  self.n_trials, self.pa, self.pa_sum))

    def joint_conditional(self, i: int):
        """(configurations, probabilities) of item i's latent states given everything else (eq. 1), as the sweep
        samples them; configurations are label tuples over ``network.topological_order()`` (``NEW`` = -1), as in
        :meth:`ISBNSampler.joint_conditional`. The state is left unchanged."""
        if not (isinstance(i, (int, np.integer)) and 0 <= i < self.N):
            raise InvalidParameterError(f"CompiledISBNSampler.joint_conditional: item must be in 0..{self.N - 1}; "
                                        f"got {i!r}.")
        P, msg, tmp, pos, rp, rt, rtu = self._work()
        dom = np.full((self.L, self.used.shape[1] + 1), -2, dtype=np.int64)
        D = np.zeros(self.L, dtype=np.int64)
        self._kc.conditional_tables(
            int(i), self.nA, _pad(self.C), _pad(self.T), self.rowidx, self.z, self.used, self.act, self.posof, self.K,
            self.inf, self.kind, self.alpha_, self.tau_, self.tau_u, self.extra, self.newmass, self.obs, self.obs_tot,
            self.obs_inv, self.xv, self.okind, self.n_trials, self.pa, self.pa_sum, np.ones(self.L, dtype=np.bool_),
            P, msg, tmp, rp, rt, rtu, dom, D)
        L, nA = self.L, self.nA
        labels = {b: [NEW if dom[j, d] < 0 else int(self.label[j, dom[j, d]]) for d in range(int(D[j]))]
                  for j, b in enumerate(self.names)}

        def log_prob(pos):  # the path's backward-sampling tables: root, down chain A, chain B from its leaf up
            ps = [pos[b] for b in self.names]
            p = P[0, 0, ps[0]]
            for j in range(1, nA):
                p *= P[j, ps[j - 1], ps[j]]
            if L > nA:
                p *= P[L - 1, ps[nA - 1], ps[L - 1]]
                for j in range(nA, L - 1):
                    p *= P[j, ps[j + 1], ps[j]]
            with np.errstate(divide="ignore"):
                return np.log(p)

        return conditionals.tabulate(self.order, labels, log_prob)

    # -- fold-in (document completion with the training state frozen) ----------------------------------
    def fold_in(self, index: dict, observed: dict, *, n_sweeps: int, rng: np.random.Generator,
                new_indices: tuple | None = None) -> dict:
        """Sample the latent states of held-out items with the training state frozen.

        The held-out items carry new values of the data indices (numbered from 0 in their own space, e.g. the
        test documents). Every CPT row not specific to those values (observed statistics, CPTs of nodes
        without an index, tau, alpha, gamma) stays at the training state; the rows of indexed nodes are built
        from the held-out items' own assignments only. The unused mass of each infinite node is one pooled
        state NEW (label -1 in the output) with prior weight alpha tau_u (HDP) or alpha (DP) and the prior
        predictive F; by the aggregation property of the Dirichlet this is exact for the row of one node, and
        an approximation below a NEW parent (whose pooled children share one row). The first sweep adds the
        items sequentially; each later sweep is a Gibbs scan. Nothing of the training state changes.

        ``new_indices``: the data indices whose values are new (default: all). Nodes specific to another index
        read their training rows (frozen), the held-out values being training values (e.g. BiHDP completion
        for new customers over the training items: ``new_indices=("customer",)``).

        Returns {latent node: (n_sweeps, N_new) int64 labels}.
        """
        if not (isinstance(n_sweeps, (int, np.integer)) and n_sweeps >= 1):
            raise InvalidParameterError(f"CompiledISBNSampler.fold_in: n_sweeps must be an int >= 1; got {n_sweeps!r}.")
        if not isinstance(index, dict) or not isinstance(observed, dict) or self.xnode.name not in observed:
            raise InvalidParameterError(f"CompiledISBNSampler.fold_in: index and observed must be dicts; observed "
                                        f"needs {self.xnode.name!r}.")
        xv = np.asarray(observed[self.xnode.name])
        if xv.ndim != 1:
            raise InvalidParameterError(f"CompiledISBNSampler.fold_in: observed[{self.xnode.name!r}] must be 1-d.")
        xv = self._check_x(xv, f"fold_in observed[{self.xnode.name!r}]")
        M = xv.shape[0]
        for j in range(self.L):  # one free slot per infinite node for the pooled NEW state
            while self.inf[j] and self.K[j] >= self.caps[j]:
                self._grow(j)
        new_indices = tuple(self.net.indices) if new_indices is None else tuple(new_indices)
        if set(new_indices) - set(self.net.indices):
            raise InvalidParameterError(f"CompiledISBNSampler.fold_in: new_indices must name data indices of the "
                                        f"network {self.net.indices}; got {new_indices}.")
        rowidx, n_rows = self._rows(index, M, "fold_in index")
        L = self.L
        upd = np.array([bool(self.net.node(b).index) and self.net.node(b).index[0] in new_indices
                        for b in self.names], dtype=np.bool_)
        for j, b in enumerate(self.names):
            ix = self.net.node(b).index
            if ix and not upd[j] and M and rowidx[j].max() >= self.n_rows[j]:
                raise InvalidParameterError(
                    f"CompiledISBNSampler.fold_in: index[{ix[0]!r}] is not in new_indices, so its values must be "
                    f"training values < {self.n_rows[j]}; got {int(rowidx[j].max())}.")
        C = [np.zeros((int(n_rows[j]),) + self.C[j].shape[1:], np.int32) if upd[j] else self.C[j].copy()
             for j in range(L)]
        T = [np.zeros(c.shape[:2], np.int32) if upd[j] else self.T[j].copy() for j, c in enumerate(C)]
        act, posof, K = self.act.copy(), self.posof.copy(), self.K.copy()
        extra, newmass = self.extra.copy(), self.newmass.copy()
        pooled = np.full(L, -1, dtype=np.int64)
        for j in range(L):
            if self.inf[j]:
                s = act[j, K[j]]
                pooled[j] = s
                K[j] += 1
                extra[j, s] = newmass[j]
                newmass[j] = 0.0
        inf = np.zeros(L, dtype=np.int64)
        z = np.zeros((L, M), dtype=np.int32)
        used = np.zeros_like(self.used)
        label = self.label.copy()
        for j in range(L):
            if pooled[j] >= 0:
                label[j, pooled[j]] = NEW
        P, msg, tmp, pos, rp, rt, rtu = self._work()
        frozen = (self.alpha_.copy(), self.gamma_.copy(), self.tau_.copy(), self.tau_u.copy(), extra, newmass, label,
                  self.next_label.copy(), self.obs.copy(), self.obs_tot.copy(), self.obs_inv.copy())
        out = {b: np.empty((n_sweeps, M), dtype=np.int64) for b in self.names}
        for t in range(n_sweeps):
            self._kc.sweep(rng, 0, self.nA, _pad(C), _pad(T), rowidx, z, used, act, posof, K, inf, self.kind, *frozen,
                     xv, self.okind, self.n_trials, self.pa, self.pa_sum, 1, upd, False, t == 0, P, msg, tmp, pos, rp,
                     rt, rtu)
            for j, b in enumerate(self.names):
                out[b][t] = label[j, z[j]]
        return out


def make_sampler(network: Network, index: dict, observed: dict, *, engine: str = "auto", **options):
    """:func:`harmonium.inference.mcmc.isbn.engine.make_sampler` (the engine package's entry; kept here for the
    callers that import it from this module)."""
    from harmonium.inference.mcmc.isbn.engine import make_sampler as _make_sampler

    return _make_sampler(network, index, observed, engine=engine, **options)
