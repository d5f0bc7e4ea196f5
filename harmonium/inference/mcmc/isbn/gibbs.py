"""The collapsed Gibbs sampler that an ISBN declaration implies (seed 002 §4, eqs. 1-3).

Given a validated :class:`harmonium.models.directed.isbn.Network` and data
items i (each with its data-index values and its observed values), one
``sweep`` does, for every item in turn:

* remove item i from all counts;
* the joint conditional of all its latent states (eq. 1): for each joint
  configuration, prod_b (prior term of z^b given its parents' states and
  indices) x prod_a F(x^a_i | x^a_-i, parents) with F the collapsed
  predictive (eq. 2, from :mod:`harmonium.expfam`). Prior terms:
  HDP (alpha tau_k + N_{k|l}) / (alpha + N_l), new state alpha tau_u / (alpha + N_l);
  DP N_{k|l} / (alpha + N_l), new state alpha / (alpha + N_l) (states fork per parent, §5);
  Dirichlet (alpha/K + N_{k|l}) / (alpha + N_l);
* draw one configuration, create the new states it names (HDP: tau_new =
  b tau_u, b ~ Beta(1, gamma)), add item i back; states left empty are retired
  (HDP: their weight returns to tau_u).

Then ``update_tau`` draws, for every HDP node, table counts
S_{k|l} ~ A[N_{k|l}, alpha tau_k] and tau ~ D[gamma, S_.1, ..., S_.K] (§4).

How eq. 1 is sampled (``method``): the terms of eq. 1 are factors of a
factor graph over the item's latent nodes (one per latent node b, scope
{b} + parents(b); one per observed node a, scope parents(a)). When that
graph is cycle-free (a tree or forest: chains such as PAM, BiHDP's two
roots joined by the rating factor, nested DPs) ``"ffbs"`` does
forward-filtering backward-sampling (seed 002 §4): messages from the leaves
to a root per connected component, a draw of the root from its marginal,
then draws of each factor's child nodes given the sampled parent, root to
leaves. The cost is the sum, not the product, of the factor table sizes.
``"junction_tree"`` does FFBS on the junction tree of that graph
(:mod:`junction`, built once per network: min-fill triangulation,
cliques joined by a maximum spanning tree): messages from the leaf cliques to
the root, the root clique's nodes drawn jointly, then each clique's other
nodes given its separator; exact for any network, cost the sum of the clique
table sizes. ``"eliminate"`` does variable elimination with backward sampling
(the same result, with the elimination order searched per item, greedy
smallest table first). ``"enumerate"`` scores every joint configuration (exact
for any DAG, cost prod_b (K_b + 1)) and is the reference in the tests.
``"auto"`` (default) uses FFBS on cycle-free networks and the junction tree
otherwise.
Nodes are replicated per item, except group nodes (``Latent(per=...)``, Fig.
2c's z_j^0): one value per group of items, resampled after each sweep by
removing the group's items and adding them back one by one at their old
values (§5), and evidence inside the items' FFBS. Items may lack observed
nodes (``present=``); latent nodes without a present observed descendant
dangle and are skipped for that item. Tied nodes (``Latent(tied=...)``)
share one DP/Dirichlet CPT. H2DP nodes keep a middle level rho_{.|k} per
value of their first index, updated by eq. 3. Observed nodes with
:class:`~harmonium.models.directed.isbn.RandomEffects` keep psi_{.|l} per
parent state, drawn like tau (Antoniak tables, then Dirichlet); a psi not yet
used is integrated out and drawn with the first item that uses it.
``sample_concentration=True`` resamples alpha and gamma of HDP nodes and alpha
of DP nodes by auxiliary variables. Not implemented: tied HDP CPTs,
concentration resampling of H2DP and finite Dirichlet nodes, of RandomEffects'
beta. Python-level code: for
specification and testing, not for speed (the dedicated HDP sampler is
:mod:`hdp`).
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from harmonium._kernels.hdp import antoniak
from harmonium.errors import InvalidParameterError
from harmonium.expfam import Categorical
from harmonium.expfam import Dirichlet as DirichletDist
from harmonium.inference.mcmc.isbn import conditionals, hyper
from harmonium.inference.mcmc.isbn import junction as isbn_junction
from harmonium.inference.mcmc.isbn.junction import expand, lse
from harmonium.models.directed.isbn import DP, H2DP, HDP, Dirichlet, Network, RandomEffects, item_stats, log_predictive

NEW = -1
METHODS = ("auto", "ffbs", "junction_tree", "eliminate", "enumerate")


@dataclass
class _LatentState:
    z: np.ndarray  # (N,) state labels
    alive: list  # labels in use
    next_label: int
    counts: dict = field(default_factory=dict)  # row -> {label: count}
    totals: dict = field(default_factory=dict)  # row -> count
    used: dict = field(default_factory=dict)  # label -> number of items
    tau: dict = field(default_factory=dict)  # label -> weight (HDP)
    rho: dict = field(default_factory=dict)  # outer index value -> {label: weight} (H2DP, eq. 3)
    rho_u: dict = field(default_factory=dict)  # outer index value -> unused weight (H2DP)
    tau_u: float = 1.0


@dataclass
class _ObservedState:
    c: tuple  # per-item conjugate statistics, leading item axis
    log_h: np.ndarray
    stats: dict = field(default_factory=dict)  # row -> tuple of arrays
    fast_categorical: bool = False
    alpha_w: np.ndarray | None = None
    beta_re: float | None = None  # RandomEffects: phi_{.|l,j} ~ Dir(beta psi_{.|l})
    psi: dict = field(default_factory=dict)  # parent states l -> psi_{.|l} (RandomEffects; absent: integrated out)


class _TiedState:
    """The state of a tied latent node: its own labels z, everything else (counts, states) its base node's."""

    def __init__(self, base: _LatentState, z: np.ndarray):
        self.__dict__["base"] = base
        self.__dict__["z"] = z

    def __getattr__(self, name):
        return getattr(self.__dict__["base"], name)

    def __setattr__(self, name, value):
        if name == "z":
            self.__dict__["z"] = value
        else:
            setattr(self.__dict__["base"], name, value)


class ISBNSampler:
    """The engine for one network and one data set (state held inside; ``sweep`` and ``update_tau`` mutate it).

    Parameters
    ----------
    network : Network
        Validated here.
    index : dict of str to (N,) int arrays
        Value of every data index of the network for every item (e.g. {"doc": doc id of each token}).
    observed : dict of str to arrays with leading axis N
        The observed values of every Observed node.
    init : dict of str to (N,) int arrays, optional
        Initial states of latent nodes (labels 0..K-1); default: everything in state 0.
    tau : dict of str to (K + 1,) arrays, optional
        Initial global weights of HDP nodes (last: tau_u); default uniform.
    present : dict of str to (N,) bool arrays, optional
        Which items carry a value of an Observed node (default: all). An item without it skips that
        node, and latent nodes with no present observed descendant are "dangling": integrated out for
        that item (seed 002 §6, BiHDP; Fig. 2c's word items have no feature branch). The values given
        for absent entries are ignored (any placeholder of the right type).
    sample_concentration : bool
        Resample the concentrations (HDP: alpha and gamma; DP: alpha) in ``update_tau`` by the
        auxiliary-variable method (Teh et al. 2006, app. A); current values in ``alpha`` / ``gamma``.
    concentration_prior : (shape, rate)
        The Gamma prior of every resampled concentration.
    method : {"auto", "ffbs", "junction_tree", "eliminate", "enumerate"}
        How the joint conditional of an item's latent states (eq. 1) is sampled: forward-filtering
        backward-sampling over the cycle-free factor graph, FFBS on the network's junction tree (any
        network), variable elimination with backward sampling (any network), or enumeration of all joint
        states. ``"auto"``: FFBS when the network is cycle-free, else the junction tree.
    """

    def __init__(self, network: Network, index: dict, observed: dict, *, init: dict | None = None,
                 tau: dict | None = None, method: str = "auto", present: dict | None = None,
                 sample_concentration: bool = False, concentration_prior: tuple = (1.0, 1.0)):
        self.net = network.validate()
        self.order = network.topological_order()
        if any(n.per for n in network.latent) and any(isinstance(n.prior, RandomEffects) for n in network.observed):
            raise InvalidParameterError(
                "ISBNSampler: RandomEffects observed nodes cannot be combined with group nodes (Latent(per=...)): "
                "re-adding a group's items needs the sequential predictive with psi integrated out, which has no "
                "closed form. Use a plain Dirichlet prior on the observed node, or drop per=.")
        shape_rate = tuple(float(v) for v in np.ravel(concentration_prior))
        if len(shape_rate) != 2 or not all(np.isfinite(v) and v > 0 for v in shape_rate):
            raise InvalidParameterError(
                f"ISBNSampler: concentration_prior must be (shape, rate) of a Gamma prior, both positive; got "
                f"{concentration_prior!r}.")
        self.sample_concentration, self.concentration_prior = bool(sample_concentration), shape_rate
        #: current concentrations per base latent node (tied nodes read their base's): alpha of every
        #: prior, gamma of HDP priors; resampled by ``update_tau`` when ``sample_concentration``.
        self.alpha = {n.name: float(n.prior.alpha) for n in network.latent if n.tied is None}
        self.gamma = {n.name: float(n.prior.gamma) for n in network.latent
                      if n.tied is None and isinstance(n.prior, HDP)}
        if method not in METHODS:
            raise InvalidParameterError(
                f"ISBNSampler: method must be one of {', '.join(repr(m) for m in METHODS)}; got {method!r}.")
        self.cycle = factor_graph_cycle(network)
        if method == "ffbs" and self.cycle is not None:
            raise InvalidParameterError(
                "ISBNSampler(method='ffbs'): forward-filtering backward-sampling needs a cycle-free network (its "
                f"factor graph a tree or forest), but the factor over the latent nodes {', '.join(self.cycle)} "
                "closes a cycle. Use method='junction_tree' (FFBS on the network's junction tree: exact for any "
                "network) or method='auto', which picks it for such networks.")
        self.method = ("ffbs" if self.cycle is None else "junction_tree") if method == "auto" else method
        names = [n.name for n in network.observed]
        missing = [a for a in names if a not in observed]
        if missing:
            raise InvalidParameterError(f"ISBNSampler: no data for the observed node(s) {missing}.")
        lengths = {len(np.asarray(v)) for v in observed.values()} | {len(np.asarray(v)) for v in index.values()}
        if len(lengths) != 1:
            raise InvalidParameterError(f"ISBNSampler: data and index arrays differ in length ({sorted(lengths)}).")
        self.N = lengths.pop()
        for ix in network.indices:
            if ix not in index:
                raise InvalidParameterError(f"ISBNSampler: no values for the data index {ix!r}.")
        self.index = {k: np.asarray(v, dtype=np.int64) for k, v in index.items()}
        self._retired_tau: dict = {}
        self.lat: dict = {}
        z0s = {b: (np.zeros(self.N, dtype=np.int64) if init is None or b not in init
                   else np.asarray(init[b], np.int64)) for b in self.order}
        bases = [b for b in self.order if network.node(b).tied is None]
        for b in bases:
            node = network.node(b)
            z0 = z0s[b]
            group = [b] + [c for c in self.order if network.node(c).tied == b]
            labels = sorted(set().union(*(set(z0s[c].tolist()) for c in group)))
            if isinstance(node.prior, Dirichlet):
                labels = list(range(node.prior.n_states))
            st = _LatentState(z=z0.copy(), alive=labels, next_label=max(labels) + 1)
            if isinstance(node.prior, HDP):
                t = (np.full(len(labels) + 1, 1.0 / (len(labels) + 1)) if tau is None or b not in tau
                     else np.asarray(tau[b], dtype=np.float64))
                st.tau = {k: float(t[j]) for j, k in enumerate(labels)}
                st.tau_u = float(t[-1])
            if isinstance(node.prior, H2DP):  # rho_{.|g} starts at tau for every outer index value g
                for g in np.unique(self.index[node.index[0]]).tolist():
                    st.rho[g], st.rho_u[g] = dict(st.tau), st.tau_u
            self.lat[b] = st
        for b in self.order:
            node = network.node(b)
            if node.tied is None:
                continue
            base = network.node(node.tied)
            for ix_n, ix_b in zip(node.index, base.index, strict=True):
                same = np.flatnonzero(self.index[ix_n] == self.index[ix_b])
                if same.size:
                    raise InvalidParameterError(
                        f"ISBNSampler: the tied nodes {b!r} and {base.name!r} must have different index values in "
                        f"every item ({ix_n!r} != {ix_b!r}); item {int(same[0])} has both equal to "
                        f"{int(self.index[ix_n][same[0]])}. Drop such items (e.g. self-edges) from the data.")
            self.lat[b] = _TiedState(self.lat[base.name], z0s[b].copy())
        self.obs: dict[str, _ObservedState] = {}
        for node in network.observed:
            c, h = item_stats(node, observed[node.name])
            re = isinstance(node.prior, RandomEffects)
            fast = node.likelihood is Categorical and (re or isinstance(node.prior, DirichletDist))
            eta = node.prior.base.alpha if re else node.prior.alpha if fast else None
            self.obs[node.name] = _ObservedState(c=c, log_h=h, fast_categorical=fast,
                                                 alpha_w=None if eta is None else np.asarray(eta, dtype=np.float64),
                                                 beta_re=float(node.prior.beta) if re else None)
        self.present = {a: np.ones(self.N, dtype=bool) if present is None or a not in present
                        else np.asarray(present[a], dtype=bool) for a in names}
        bad = [a for a, v in self.present.items() if v.shape != (self.N,)]
        if bad or (present and set(present) - set(names)):
            raise InvalidParameterError(
                f"ISBNSampler: present= needs one (N,) bool array per Observed node; check {bad or sorted(present)}.")
        self.active = {}
        for b in self.order:
            desc = _observed_descendants(network, b)
            self.active[b] = np.zeros(self.N, dtype=bool)
            for a in desc:
                self.active[b] |= self.present[a]
            if network.node(b).per:
                self.active[b][:] = True
        self.groups: dict = {}
        for b in self.order:
            node = network.node(b)
            if not node.per:
                continue
            keys = np.stack([self.index[x] for x in node.per], axis=1)
            _, gid = np.unique(keys, axis=0, return_inverse=True)
            gid = gid.reshape(-1)
            members = [np.flatnonzero(gid == g) for g in range(int(gid.max()) + 1)]
            z = self.lat[b].z
            for m in members:
                if np.any(z[m] != z[m[0]]):
                    raise InvalidParameterError(
                        f"ISBNSampler: node {b!r} takes one value per {node.per}, but init gives items "
                        f"{m.tolist()} (one group) different values {sorted(set(z[m].tolist()))}.")
            self.groups[b] = members
        grouped = set(self.groups)
        scopes = [tuple(v for v in (n.name, *n.parents) if v not in grouped) for n in network.latent
                  if n.name not in grouped]
        scopes += [tuple(v for v in n.parents if v not in grouped) for n in network.observed]
        #: the junction tree of an item's factor graph (group nodes are evidence, not in it), built once
        self.junction = isbn_junction.build([b for b in self.order if b not in grouped], [s for s in scopes if s])
        for i in range(self.N):
            self._add(i)
        for node in network.observed:  # RandomEffects: psi of every parent state with data starts at E[psi]
            ost = self.obs[node.name]
            if ost.beta_re is not None:
                mean = ost.alpha_w / ost.alpha_w.sum()
                ost.psi = {row[: len(node.parents)]: mean.copy() for row in ost.stats}
        for b, members in self.groups.items():
            for g in range(len(members)):
                self._add_group(b, g, 1)
        for b in self.order:  # states held only by dangling items are not in use
            st, node = self.lat[b], network.node(b)
            if node.tied is None and not isinstance(node.prior, Dirichlet):
                for k in [k for k in st.alive if st.used.get(k, 0) == 0]:
                    st.alive.remove(k)
                    if isinstance(node.prior, HDP):
                        st.tau_u += st.tau.pop(k)
                        for g, r in st.rho.items():
                            st.rho_u[g] += r.pop(k)

    # -- rows and counts ---------------------------------------------------------------------
    def _row(self, node, config: dict, i: int) -> tuple:
        return tuple(config[p] for p in node.parents) + tuple(int(self.index[ix][i]) for ix in node.index)

    def _config_of(self, i: int) -> dict:
        return {b: int(self.lat[b].z[i]) for b in self.order}

    def _add_group(self, b: str, g: int, sign: int) -> None:
        """Count the value of group node b for group g once (not once per item)."""
        node, st = self.net.node(b), self.lat[b]
        i = int(self.groups[b][g][0])
        row = self._row(node, self._config_of(i), i)
        k = int(st.z[i])
        cnt = st.counts.setdefault(row, {})
        cnt[k] = cnt.get(k, 0) + sign
        st.totals[row] = st.totals.get(row, 0) + sign
        st.used[k] = st.used.get(k, 0) + sign

    def _add(self, i: int, sign: int = 1) -> None:
        config = self._config_of(i)
        for b in self.order:
            if b in self.groups or not self.active[b][i]:
                continue
            node, st = self.net.node(b), self.lat[b]
            row = self._row(node, config, i)
            k = config[b]
            cnt = st.counts.setdefault(row, {})
            cnt[k] = cnt.get(k, 0) + sign
            st.totals[row] = st.totals.get(row, 0) + sign
            st.used[k] = st.used.get(k, 0) + sign
        for node in self.net.observed:
            if not self.present[node.name][i]:
                continue
            ost = self.obs[node.name]
            row = self._row(node, config, i)
            cur = ost.stats.get(row)
            ci = tuple(part[i] for part in ost.c)
            if cur is None:
                cur = tuple(np.zeros_like(part) for part in ci)
            ost.stats[row] = tuple(s + sign * p for s, p in zip(cur, ci, strict=True))

    def _remove(self, i: int) -> None:
        self._add(i, -1)
        for b in self.order:
            if b in self.groups or not self.active[b][i]:
                continue
            st, node = self.lat[b], self.net.node(b)
            k = int(st.z[i])
            if st.used.get(k, 0) == 0 and k in st.alive and not isinstance(node.prior, Dirichlet):
                st.alive.remove(k)
                del st.used[k]
                if isinstance(node.prior, HDP):
                    rho = {g: (r[k], st.rho_u[g]) for g, r in st.rho.items()}
                    self._retired_tau[(b, k)] = (st.tau[k], st.tau_u, rho)
                    st.tau_u += st.tau.pop(k)
                    for g, r in st.rho.items():
                        st.rho_u[g] += r.pop(k)

    # -- eq. 1 and eq. 2 ----------------------------------------------------------------------
    def _alpha(self, node) -> float:
        return self.alpha[node.tied or node.name]

    def _prior_term(self, node, st: _LatentState, row: tuple, k: int) -> float:
        pr, alpha = node.prior, self._alpha(node)
        n_row = st.totals.get(row, 0)
        n_k = st.counts.get(row, {}).get(k, 0) if k != NEW else 0
        if isinstance(pr, H2DP):
            g = row[len(node.parents)]
            w = alpha * (st.rho_u[g] if k == NEW else st.rho[g][k]) + n_k
        elif isinstance(pr, HDP):
            w = alpha * (st.tau_u if k == NEW else st.tau[k]) + n_k
        elif isinstance(pr, DP):
            w = alpha if k == NEW else n_k
        else:
            w = alpha / pr.n_states + n_k
        return w / (alpha + n_row)

    def _dirichlet_row(self, node, ost: _ObservedState, row: tuple) -> np.ndarray:
        """The Dirichlet parameter of CPT row ``row`` of a Categorical node: the prior's alpha, or for
        RandomEffects beta psi_{.|l} (l = the row's parent states); a psi not instantiated (new parent
        states) is integrated out, which leaves its prior mean: any multiple of eta gives that predictive."""
        if ost.beta_re is None:
            return ost.alpha_w
        psi = ost.psi.get(row[: len(node.parents)])
        return ost.alpha_w if psi is None else ost.beta_re * psi

    def _log_f(self, node, ost: _ObservedState, row: tuple, i: int) -> float:
        stats = ost.stats.get(row) if NEW not in row else None
        if ost.fast_categorical:
            a = self._dirichlet_row(node, ost, row)
            x = int(np.argmax(ost.c[0][i]))
            if stats is None:
                return float(np.log(a[x] / a.sum()))
            s = stats[0]
            return float(np.log((s[x] + a[x]) / (s.sum() + a.sum())))
        if stats is None:
            stats = tuple(np.zeros_like(part[i]) for part in ost.c)
        ci = tuple(part[i] for part in ost.c)
        return float(log_predictive(node.prior, stats, ci, float(ost.log_h[i])))

    def joint_conditional(self, i: int, *, removed: bool = False):
        """(configurations, probabilities) of item i's latent states given everything else (eq. 1).

        A configuration is a tuple of labels in :attr:`order`, ``NEW`` (-1) for a
        new state. Leaves the state unchanged unless ``removed`` (item already out).
        """
        if not removed:
            self._remove(i)
        choices = []
        for b in self.order:
            node, st = self.net.node(b), self.lat[b]
            if b in self.groups or not self.active[b][i]:  # evidence (one value per group) or dangling
                choices.append([int(st.z[i])])
                continue
            opts = list(st.alive)
            if not isinstance(node.prior, Dirichlet):
                opts.append(NEW)
            choices.append(opts)
        configs = list(itertools.product(*choices))
        logw = np.empty(len(configs))
        for j, cfg in enumerate(configs):
            config = dict(zip(self.order, cfg, strict=True))
            lw = 0.0
            for b in self.order:
                if b in self.groups or not self.active[b][i]:
                    continue
                node, st = self.net.node(b), self.lat[b]
                row = self._row(node, config, i)
                t = self._prior_term(node, st, row, config[b]) \
                    if NEW not in row[: len(node.parents)] or isinstance(node.prior, H2DP) \
                    else self._prior_term_new_parent(node, st, config[b])
                lw += np.log(t) if t > 0 else -np.inf
            for node in self.net.observed:
                if self.present[node.name][i]:
                    lw += self._log_f(node, self.obs[node.name], self._row(node, config, i), i)
            logw[j] = lw
        p = np.exp(logw - logw.max())
        p /= p.sum()
        if not removed:
            self._add(i)
            self._revive(i)
        return configs, p

    def _prior_term_new_parent(self, node, st: _LatentState, k: int) -> float:
        """A CPT row of a parent state that is new has no counts (N_l = 0)."""
        pr = node.prior
        if isinstance(pr, HDP):
            return st.tau_u if k == NEW else st.tau[k]
        if isinstance(pr, DP):
            return 1.0 if k == NEW else 0.0
        return 1.0 / pr.n_states

    def _revive(self, i: int) -> None:
        """Undo the retirement of item i's own states after a look-only conditional (last retired first)."""
        for b in reversed(self.order):
            st, node = self.lat[b], self.net.node(b)
            k = int(st.z[i])
            if k not in st.alive and self.active[b][i]:
                st.alive.append(k)
                st.alive.sort()
                if isinstance(node.prior, HDP):
                    # the weight it had went to tau_u; give it back exactly
                    st.tau[k], st.tau_u, rho = self._retired_tau.pop((b, k))
                    for g, (w, wu) in rho.items():
                        st.rho[g][k], st.rho_u[g] = w, wu

    # -- FFBS over the cycle-free factor graph of eq. 1 (seed 002 §4) ------------------------------------
    def _domain(self, b: str) -> list:
        st, node = self.lat[b], self.net.node(b)
        return list(st.alive) + ([] if isinstance(node.prior, Dirichlet) else [NEW])

    def _log_f_rows(self, node, ost: _ObservedState, rows: list, i: int) -> np.ndarray:
        """log F(x_i | x_-i, row) of eq. 2 for a batch of CPT rows (one conjugate log-partition call)."""
        if ost.fast_categorical:
            x = int(np.argmax(ost.c[0][i]))
            out = np.empty(len(rows))
            for r, row in enumerate(rows):
                a = self._dirichlet_row(node, ost, row)
                stats = ost.stats.get(row) if NEW not in row else None
                out[r] = (np.log(a[x] / a.sum()) if stats is None
                          else np.log((stats[0][x] + a[x]) / (stats[0].sum() + a.sum())))
            return out
        ci = tuple(part[i] for part in ost.c)
        zero = tuple(np.zeros_like(part) for part in ci)
        stats = [(ost.stats.get(row) if NEW not in row else None) or zero for row in rows]
        stacked = tuple(np.stack([st[m] for st in stats]) for m in range(len(ci)))
        return np.asarray(log_predictive(node.prior, stacked, ci, float(ost.log_h[i])), dtype=np.float64)

    def factors(self, i: int) -> tuple[dict, list]:
        """The factors of eq. 1 for item i (already removed): ({node: domain}, [(scope, log table)]).

        One factor per latent node b over (parents(b)..., b) with the prior terms, one per observed
        node a over parents(a) with log F (eq. 2); table axes follow the scope, entries the domains.
        """
        dom = {b: [int(self.lat[b].z[i])] if b in self.groups or not self.active[b][i] else self._domain(b)
               for b in self.order}
        out = []
        for b in self.order:
            if b in self.groups or not self.active[b][i]:
                continue  # a group node's own prior term is a constant for item i; a dangling node has none
            node, st = self.net.node(b), self.lat[b]
            ix = tuple(int(self.index[x][i]) for x in node.index)
            scope = tuple(node.parents) + (b,)
            table = np.empty(tuple(len(dom[v]) for v in scope))
            for pidx in itertools.product(*(range(len(dom[p])) for p in node.parents)):
                prow = tuple(dom[p][j] for p, j in zip(node.parents, pidx, strict=True))
                row = prow + ix
                for j, k in enumerate(dom[b]):
                    t = (self._prior_term_new_parent(node, st, k) if NEW in prow and not isinstance(node.prior, H2DP)
                         else self._prior_term(node, st, row, k))
                    table[pidx + (j,)] = np.log(t) if t > 0 else -np.inf
            out.append((scope, table))
        for node in self.net.observed:
            if not node.parents or not self.present[node.name][i]:
                continue  # a constant factor: it cancels in the conditional
            ix = tuple(int(self.index[x][i]) for x in node.index)
            scope = tuple(node.parents)
            combos = list(itertools.product(*(dom[p] for p in scope)))
            vals = self._log_f_rows(node, self.obs[node.name], [c + ix for c in combos], i)
            out.append((scope, vals.reshape(tuple(len(dom[v]) for v in scope))))
        clamped = []
        for scope, table in out:  # group nodes are evidence: drop their (size-1) axes
            keep = [ax for ax, v in enumerate(scope) if v not in self.groups]
            if keep:
                clamped.append((tuple(scope[ax] for ax in keep),
                                table.reshape(tuple(table.shape[ax] for ax in keep))))
        return dom, clamped

    def _plan(self, scopes: list) -> list:
        """Per connected component: (root, [(factor, parent node, child nodes)] root to leaves)."""
        by_var = defaultdict(list)
        for f, scope in enumerate(scopes):
            for v in scope:
                by_var[v].append(f)
        seen_v, seen_f, comps = set(), set(), []
        for root in self.order:
            if root in seen_v or root in self.groups:
                continue
            seen_v.add(root)
            steps, queue = [], [root]
            while queue:
                v = queue.pop(0)
                for f in by_var[v]:
                    if f in seen_f:
                        continue
                    seen_f.add(f)
                    kids = tuple(c for c in scopes[f] if c != v)
                    steps.append((f, v, kids))
                    for c in kids:
                        seen_v.add(c)
                        queue.append(c)
            comps.append((root, steps))
        return comps

    def _absorb(self, table: np.ndarray, message: np.ndarray, axis: int) -> np.ndarray:
        """Multiply a factor by the downstream message of one child node (log domain)."""
        shape = [1] * table.ndim
        shape[axis] = message.shape[0]
        return table + message.reshape(shape)

    def _ffbs_tables(self, i: int):
        """Forward filtering: messages leaves -> roots; returns the backward-sampling distributions.

        ([(root, log p(root | evidence), [(factor, parent, children, log p(children | parent))])], dom).
        """
        dom, facs = self.factors(i)
        comps = self._plan([sc for sc, _ in facs])
        msg = {v: np.zeros(len(dom[v])) for v in self.order}
        out = []
        for root, steps in comps:
            conds = {}
            for f, u, _kids in reversed(steps):
                scope, table = facs[f]
                for ax, v in enumerate(scope):
                    if v != u:
                        table = self._absorb(table, msg[v], ax)
                table = np.moveaxis(table, scope.index(u), 0).reshape(len(dom[u]), -1)
                norm = lse(table, axis=1)
                msg[u] = msg[u] + norm
                with np.errstate(invalid="ignore"):
                    conds[f] = np.where(np.isfinite(norm)[:, None], table - norm[:, None], -np.inf)
            proot = msg[root] - lse(msg[root])
            out.append((root, proot, [(f, u, kids, conds[f]) for f, u, kids in steps]))
        return out, dom

    def _ffbs_sample(self, i: int, rng: np.random.Generator) -> tuple:
        """Backward sampling: the root of each component, then each factor's children given their parent."""
        comps, dom = self._ffbs_tables(i)
        pos = {b: 0 for b in self.groups}
        for root, proot, steps in comps:
            pos[root] = _draw(np.exp(proot), rng)
            for _f, u, kids, cond in steps:
                if not kids:
                    continue
                flat = _draw(np.exp(cond[pos[u]]), rng)
                for c, j in zip(kids, np.unravel_index(flat, tuple(len(dom[c]) for c in kids)), strict=True):
                    pos[c] = int(j)
        return tuple(dom[b][pos[b]] for b in self.order)

    # -- FFBS on the junction tree: any network (seed 002 §4) --------------------------------------------------
    def _junction_beliefs(self, i: int):
        dom, facs = self.factors(i)
        return isbn_junction.forward_filter(self.junction, dom, facs, self._combine), dom

    def _junction_sample(self, i: int, rng: np.random.Generator) -> tuple:
        belief, dom = self._junction_beliefs(i)
        pos = isbn_junction.backward_sample(self.junction, belief, rng, _draw)
        return tuple(dom[b][pos.get(b, 0)] for b in self.order)  # evidence and dangling nodes: one value

    def junction_conditional(self, i: int):
        """(configurations, probabilities) of item i's latent states as FFBS on the junction tree samples them."""
        def compute(i):
            belief, dom = self._junction_beliefs(i)
            return conditionals.tabulate(self.order, dom,
                                         lambda pos: isbn_junction.log_prob(self.junction, belief, pos))

        return conditionals.look(self, i, compute)

    # -- variable elimination with backward sampling: any network (what the junction tree computes) ------------
    def _eliminate_tables(self, i: int):
        """Eliminate the item's latent nodes one at a time (greedy smallest table first): each step keeps the
        product of the factors that hold the node, over (node, its remaining neighbours); summing the node out
        gives a factor for the rest. Backward sampling draws the nodes in reverse order from those tables.
        Exact for any DAG; the cost is exponential in the induced width only (a tree costs as FFBS)."""
        dom, pool = self.factors(i)
        free = [b for b in self.order if any(b in sc for sc, _ in pool)]
        steps = []
        while free:
            def size(v, pool=pool):
                sc = set().union(*(set(f) for f, _ in pool if v in f))
                return int(np.prod([len(dom[u]) for u in sc]))
            v = min(free, key=size)
            free.remove(v)
            inv = [f for f in pool if v in f[0]]
            pool = [f for f in pool if v not in f[0]]
            rest = [u for u in self.order if u != v and any(u in sc for sc, _ in inv)]
            scope = (v, *rest)
            shape = tuple(len(dom[u]) for u in scope)
            table = np.zeros(shape)
            for fs, ft in inv:
                table = self._combine(table, expand(ft, fs, scope, shape))
            steps.append((v, scope, table))
            if rest:
                pool.append((tuple(rest), lse(table, axis=0)))
        return steps, dom

    def _combine(self, table: np.ndarray, factor: np.ndarray) -> np.ndarray:
        return table + factor

    def _eliminate_logp(self, steps, pos) -> float:
        lp = 0.0
        for v, scope, table in steps:
            col = table[(slice(None),) + tuple(pos[u] for u in scope[1:])]
            lp += col[pos[v]] - lse(col)
        return float(lp)

    def _eliminate_sample(self, i: int, rng: np.random.Generator) -> tuple:
        steps, dom = self._eliminate_tables(i)
        pos = {b: 0 for b in self.order}  # nodes in no factor (evidence, dangling) keep their one value
        for v, scope, table in reversed(steps):
            col = table[(slice(None),) + tuple(pos[u] for u in scope[1:])]
            pos[v] = _draw(np.exp(col - lse(col)), rng)
        return tuple(dom[b][pos[b]] for b in self.order)

    def eliminate_conditional(self, i: int):
        """(configurations, probabilities) of item i's latent states as variable elimination samples them."""
        def compute(i):
            steps, dom = self._eliminate_tables(i)
            return conditionals.tabulate(self.order, dom, lambda pos: self._eliminate_logp(steps, pos))

        return conditionals.look(self, i, compute)

    def ffbs_conditional(self, i: int):
        """(configurations, probabilities) of item i's latent states as FFBS samples them (eq. 1).

        The same format and configurations as :meth:`joint_conditional` (enumeration), which it must
        equal; the probability of a configuration is the product of the backward-sampling draws.
        """
        if self.cycle is not None:
            raise InvalidParameterError(
                f"ffbs_conditional: the factor over the latent nodes {', '.join(self.cycle)} closes a cycle; FFBS "
                "needs a cycle-free network (use eliminate_conditional).")
        def compute(i):
            comps, dom = self._ffbs_tables(i)
            return conditionals.tabulate(self.order, dom, lambda pos: _ffbs_logp(comps, dom, pos))

        return conditionals.look(self, i, compute)

    # -- the sweep ----------------------------------------------------------------------------
    def sweep(self, rng: np.random.Generator) -> None:
        """One systematic scan over the items (mutates the state)."""
        for i in range(self.N):
            self._remove(i)
            if self.method == "ffbs":
                cfg = self._ffbs_sample(i, rng)
            elif self.method == "junction_tree":
                cfg = self._junction_sample(i, rng)
            elif self.method == "eliminate":
                cfg = self._eliminate_sample(i, rng)
            else:
                configs, p = self.joint_conditional(i, removed=True)
                cfg = configs[_draw(p, rng)]
            self._retired_tau.clear()
            for b, k in zip(self.order, cfg, strict=True):
                st, node = self.lat[b], self.net.node(b)
                if k == NEW:
                    k = st.next_label
                    st.next_label += 1
                    st.alive.append(k)
                    if isinstance(node.prior, HDP):
                        g0 = int(self.index[node.index[0]][i]) if node.index else None
                        _break_stick(st, node.prior, k, rng, g0, gamma=self.gamma[b])
                st.z[i] = k
            self._instantiate_psi(i, rng)
            self._add(i)
        self._resample_groups(rng)

    def _instantiate_psi(self, i: int, rng: np.random.Generator) -> None:
        """RandomEffects: psi_{.|l} of parent states l that item i is the first to use, drawn from its
        conditional given that one observation, Dir(eta + e_x) (it was integrated out while unused)."""
        config = None
        for node in self.net.observed:
            ost = self.obs[node.name]
            if ost.beta_re is None or not self.present[node.name][i]:
                continue
            config = config or self._config_of(i)
            key = tuple(config[p] for p in node.parents)
            if key not in ost.psi:
                ost.psi[key] = rng.dirichlet(ost.alpha_w + ost.c[0][i])

    def group_conditional(self, b: str, g: int):
        """(labels, probabilities) of group node b's value for group g given everything else (seed 002 §5).

        Remove the items of the group (every node they carry) and the group's own count; for each
        candidate value k: the prior term of b times the probability of adding the items back one by
        one at their old values, with b = k (sequential predictive terms, eq. 1-2). Leaves the state
        unchanged. ``NEW`` is a new state.
        """
        node, st = self.net.node(b), self.lat[b]
        members = self.groups[b][g]
        old = int(st.z[members[0]])
        self._add_group(b, g, -1)
        for m in members:
            self._add(int(m), -1)
        i0 = int(members[0])
        row = self._row(node, self._config_of(i0), i0)
        alive = [k for k in st.alive if isinstance(node.prior, Dirichlet) or st.used.get(k, 0) > 0]
        labels = alive + ([] if isinstance(node.prior, Dirichlet) else [NEW])
        tau_u = st.tau_u + (st.tau[old] if isinstance(node.prior, HDP) and old not in alive else 0.0)
        logp = np.empty(len(labels))
        for j, k in enumerate(labels):
            if isinstance(node.prior, HDP) and k == NEW:
                t = (self._alpha(node) * tau_u) / (self._alpha(node) + st.totals.get(row, 0))
            elif k == NEW or k not in alive:
                t = self._prior_term(node, st, row, NEW)
            else:
                t = self._prior_term(node, st, row, k)
            lp = np.log(t) if t > 0 else -np.inf
            st.z[members] = st.next_label if k == NEW else k
            lp += self._readd(members)
            logp[j] = lp
        st.z[members] = old
        for m in members:
            self._add(int(m))
        self._add_group(b, g, 1)
        return labels, np.exp(logp - lse(logp))

    def _readd(self, members) -> float:
        """log prob of adding the items back one by one at their current values, then removing them again."""
        lp = 0.0
        for m in members:
            m = int(m)
            config = self._config_of(m)
            for c in self.order:
                if c in self.groups or not self.active[c][m]:
                    continue
                node = self.net.node(c)
                t = self._prior_term(node, self.lat[c], self._row(node, config, m), config[c])
                lp += np.log(t) if t > 0 else -np.inf
            for node in self.net.observed:
                if self.present[node.name][m]:
                    lp += self._log_f_seq(node, self.obs[node.name], self._row(node, config, m), m)
            self._add(m)
        for m in members:
            self._add(int(m), -1)
        return lp

    def _log_f_seq(self, node, ost: _ObservedState, row: tuple, i: int) -> float:
        """F of eq. 2 for a row that may hold a label not yet alive (its statistics are real counts)."""
        return float(self._log_f_rows(node, ost, [row], i)[0])

    def _resample_groups(self, rng: np.random.Generator) -> None:
        for b, members in self.groups.items():
            node, st = self.net.node(b), self.lat[b]
            for g in range(len(members)):
                labels, p = self.group_conditional(b, g)
                k = labels[_draw(p, rng)]
                old = int(st.z[members[g][0]])
                self._add_group(b, g, -1)
                for m in members[g]:
                    self._add(int(m), -1)
                if st.used.get(old, 0) == 0 and not isinstance(node.prior, Dirichlet):
                    st.alive.remove(old)
                    del st.used[old]
                    if isinstance(node.prior, HDP):
                        st.tau_u += st.tau.pop(old)
                if k == NEW:
                    k = st.next_label
                    st.next_label += 1
                    st.alive.append(k)
                    if isinstance(node.prior, HDP):
                        _break_stick(st, node.prior, k, rng, gamma=self.gamma[b])
                st.z[members[g]] = k
                for m in members[g]:
                    self._add(int(m))
                self._add_group(b, g, 1)

    def update_tau(self, rng: np.random.Generator) -> None:
        """tau | z for every HDP node: Antoniak table counts, then a Dirichlet draw (seed 002 §4); for an H2DP
        node eq. 3: up the stack s ~ A[N, alpha rho], r ~ A[S, beta tau], down tau ~ D[gamma, R],
        rho_{.|g} ~ D[beta tau + S_{.|g}]. RandomEffects observed nodes: psi likewise (:meth:`update_psi`).

        With ``sample_concentration``: after the tables, alpha | tables and gamma | (tables, K) by auxiliary
        variables (Teh et al. 2006 app. A; Escobar & West 1995), then tau | tables, gamma (alpha and gamma
        drawn with tau integrated out, so they come first). DP nodes: alpha | partition, each CPT row a
        Chinese restaurant whose tables are its states. H2DP and finite Dirichlet concentrations stay fixed.
        """
        for b in self.order:
            node, st = self.net.node(b), self.lat[b]
            if isinstance(node.prior, H2DP):
                self._update_h2dp(node, st, rng)
                continue
            if isinstance(node.prior, DP) and self.sample_concentration and node.tied is None:
                self._resample_dp_alpha(b, rng)
            if not isinstance(node.prior, HDP):
                continue
            tables = self.tables(b, rng)
            if self.sample_concentration:
                self.resample_concentration(b, tables, rng)
            S = {k: 0 for k in st.alive}
            for row in tables.values():
                for k, m in row.items():
                    S[k] += m
            tau = hyper.draw_tau(rng, np.array([S[k] for k in st.alive], dtype=np.int64), self.gamma[b])
            st.tau = {k: float(tau[j]) for j, k in enumerate(st.alive)}
            st.tau_u = float(tau[-1])
        self.update_psi(rng)

    def tables(self, b: str, rng: np.random.Generator) -> dict:
        """Antoniak table counts S_{k|l} ~ A[N_{k|l}, alpha tau_k] of HDP node b: {row l: {state k: S_{k|l}}} (§4)."""
        st = self.lat[b]
        return hyper.row_tables(rng, st.counts, st.totals, self.alpha[b], st.tau)

    def resample_concentration(self, b: str, tables: dict, rng: np.random.Generator) -> None:
        """alpha | S and gamma | S, K of HDP node b (each CPT row with N_l > 0 is a group of the HDP)."""
        st = self.lat[b]
        lengths = np.array([st.totals[row] for row in tables], dtype=np.float64)
        m_total = sum(sum(row.values()) for row in tables.values())
        self.alpha[b], self.gamma[b] = hyper.resample_concentrations(
            rng, len(st.alive), m_total, lengths, self.alpha[b], self.gamma[b],
            alpha_prior=self.concentration_prior, gamma_prior=self.concentration_prior)

    def _resample_dp_alpha(self, b: str, rng: np.random.Generator) -> None:
        """alpha | z of DP node b: rows l with N_l > 0 are restaurants whose K_l states are their tables."""
        st = self.lat[b]
        rows = [row for row, n in st.totals.items() if n > 0]
        lengths = np.array([st.totals[row] for row in rows], dtype=np.float64)
        m_total = sum(sum(1 for n in st.counts[row].values() if n > 0) for row in rows)
        self.alpha[b] = hyper.resample_alpha(rng, self.alpha[b], m_total, lengths, self.concentration_prior)

    def update_psi(self, rng: np.random.Generator) -> None:
        """psi | z, x of every RandomEffects node: S_{x|l,j} ~ A[N_{x|l,j}, beta psi_{x|l}], then psi_{.|l} ~
        Dir(eta + sum_j S_{.|l,j}) (the tau update of §4 one level down); psi of parent states without data
        is integrated out again (dropped)."""
        for node in self.net.observed:
            ost = self.obs[node.name]
            if ost.beta_re is None:
                continue
            n_par, tables = len(node.parents), {}
            for row, stats in ost.stats.items():
                counts = stats[0]
                if not np.any(counts > 0):
                    continue
                key = row[:n_par]
                psi, S = ost.psi[key], tables.setdefault(key, np.zeros_like(ost.alpha_w))
                for x in np.flatnonzero(counts > 0):
                    S[x] += antoniak(rng, int(round(counts[x])), ost.beta_re * psi[x])
            ost.psi = {key: rng.dirichlet(ost.alpha_w + S) for key, S in tables.items()}

    def _update_h2dp(self, node, st: _LatentState, rng: np.random.Generator) -> None:
        pr, npar = node.prior, len(node.parents)
        S = {g: {k: 0 for k in st.alive} for g in st.rho}
        for row, cnt in st.counts.items():
            g = row[npar]
            for k, n in cnt.items():
                if n > 0:
                    S[g][k] += int(antoniak(rng, int(n), pr.alpha * st.rho[g][k]))
        R = {k: 0 for k in st.alive}
        for g in S:
            for k, n in S[g].items():
                if n > 0:
                    R[k] += int(antoniak(rng, int(n), pr.beta * st.tau[k]))
        t = {k: rng.gamma(float(R[k]), 1.0) for k in st.alive}
        tu = rng.gamma(pr.gamma, 1.0)
        tot = sum(t.values()) + tu
        st.tau, st.tau_u = {k: v / tot for k, v in t.items()}, tu / tot
        for g in st.rho:
            r = {k: rng.gamma(pr.beta * st.tau[k] + S[g][k], 1.0) for k in st.alive}
            ru = rng.gamma(pr.beta * st.tau_u, 1.0)
            tot = sum(r.values()) + ru
            st.rho[g], st.rho_u[g] = {k: v / tot for k, v in r.items()}, ru / tot

    def step(self, rng: np.random.Generator) -> None:
        """One iteration: ``sweep`` then ``update_tau``."""
        self.sweep(rng)
        self.update_tau(rng)

    def n_states(self) -> dict:
        return {b: len(self.lat[b].alive) for b in self.order}


def _break_stick(st: _LatentState, prior, k: int, rng: np.random.Generator, g0=None, *, gamma: float) -> None:
    """Weights of a new state k: tau_k = b tau_u, b ~ Beta(1, gamma) (the atom an item picked from the unused
    mass, size-biased); for an H2DP also rho_{k|g} = c rho_{u|g} per outer value g with c ~ Beta(beta tau_k,
    beta tau_u) (rho_{.|g} ~ DP(beta, tau)), and c ~ Beta(beta tau_k + 1, beta tau_u) for the outer value g0 of
    the item that picked the atom in proportion to rho_{.|g0}."""
    frac = rng.beta(1.0, gamma)
    st.tau[k] = frac * st.tau_u
    st.tau_u *= 1.0 - frac
    if isinstance(prior, H2DP):
        for g in st.rho:
            a = prior.beta * st.tau[k] + (1.0 if g == g0 else 0.0)
            c = rng.beta(a, prior.beta * st.tau_u) if a > 0 and st.tau_u > 0 else 0.5
            st.rho[g][k] = c * st.rho_u[g]
            st.rho_u[g] *= 1.0 - c


def _ffbs_logp(comps, dom: dict, pos: dict) -> float:
    """log probability that backward sampling draws the positions ``pos`` (group nodes: one value)."""
    lp = 0.0
    for root, proot, steps in comps:
        lp += proot[pos[root]]
        for _f, u, kids, cond in steps:
            if kids:
                sub = np.ravel_multi_index(tuple(pos[c] for c in kids), tuple(len(dom[c]) for c in kids))
                lp += cond[pos[u], sub]
    return float(lp)


def _draw(p: np.ndarray, rng: np.random.Generator) -> int:
    """Index drawn with probability proportional to p (one uniform)."""
    c = np.cumsum(p)
    return int(np.searchsorted(c, rng.random() * c[-1], side="right").clip(0, len(p) - 1))


def _observed_descendants(network: Network, b: str) -> set:
    """Names of the observed nodes reachable from latent node b along parent -> child edges."""
    out, stack, seen = set(), [b], set()
    while stack:
        v = stack.pop()
        for n in network.nodes:
            if v in n.parents and n.name not in seen:
                seen.add(n.name)
                if hasattr(n, "likelihood"):
                    out.add(n.name)
                else:
                    stack.append(n.name)
    return out


def factor_graph_cycle(network: Network) -> list | None:
    """Latent node names on a cycle of the factor graph of eq. 1, or None when it is a tree or forest.

    Factors: one per latent node b over {b} + parents(b), one per observed node over its parents.
    """
    parent = {}

    def find(x):
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    groups = {n.name for n in network.latent if n.per}  # evidence for an item's draw: not in its graph
    scopes = [(("f", n.name), tuple(v for v in (n.name,) + tuple(n.parents) if v not in groups))
              for n in network.latent if n.name not in groups]
    scopes += [(("f", n.name), tuple(v for v in n.parents if v not in groups)) for n in network.observed]
    for fid, scope in scopes:
        for v in scope:
            a, b = find(fid), find(("v", v))
            if a == b:
                return sorted(set(scope))
            parent[a] = b
    return None
