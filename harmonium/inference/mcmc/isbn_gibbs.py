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

What is and is not done (honest scope): the joint conditional is computed by
enumerating the joint configurations of the item's latent nodes, which is
exact for any DAG but costs prod_b (K_b + 1) per item: it is the result that
forward-filtering backward-sampling (FFBS) over a tree or junction tree
computes in time linear in the number of nodes, not that algorithm.
Every node is replicated per item (the innermost data index); nodes over a
subset of the indices (Fig. 2c's z_j^0, §5 "remove and re-add"), H2DP
stacks (eq. 3 with two levels) and concentration resampling are not
implemented. Python-level code: for specification and testing, not for
speed (the dedicated HDP sampler is :mod:`hdp_direct_assignment`).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np

from harmonium._kernels.hdp import antoniak
from harmonium.errors import InvalidParameterError
from harmonium.expfam import Categorical
from harmonium.expfam import Dirichlet as DirichletDist
from harmonium.models.directed.isbn import DP, HDP, Dirichlet, Network, item_stats, log_predictive

NEW = -1


@dataclass
class _LatentState:
    z: np.ndarray  # (N,) state labels
    alive: list  # labels in use
    next_label: int
    counts: dict = field(default_factory=dict)  # row -> {label: count}
    totals: dict = field(default_factory=dict)  # row -> count
    used: dict = field(default_factory=dict)  # label -> number of items
    tau: dict = field(default_factory=dict)  # label -> weight (HDP)
    tau_u: float = 1.0


@dataclass
class _ObservedState:
    c: tuple  # per-item conjugate statistics, leading item axis
    log_h: np.ndarray
    stats: dict = field(default_factory=dict)  # row -> tuple of arrays
    fast_categorical: bool = False
    alpha_w: np.ndarray | None = None


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
    """

    def __init__(self, network: Network, index: dict, observed: dict, *, init: dict | None = None,
                 tau: dict | None = None):
        self.net = network.validate()
        self.order = network.topological_order()
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
        self.lat: dict[str, _LatentState] = {}
        for b in self.order:
            node = network.node(b)
            z0 = np.zeros(self.N, dtype=np.int64) if init is None or b not in init else np.asarray(init[b], np.int64)
            labels = sorted(set(z0.tolist()))
            if isinstance(node.prior, Dirichlet):
                labels = list(range(node.prior.n_states))
            st = _LatentState(z=z0.copy(), alive=labels, next_label=max(labels) + 1)
            if isinstance(node.prior, HDP):
                t = (np.full(len(labels) + 1, 1.0 / (len(labels) + 1)) if tau is None or b not in tau
                     else np.asarray(tau[b], dtype=np.float64))
                st.tau = {k: float(t[j]) for j, k in enumerate(labels)}
                st.tau_u = float(t[-1])
            self.lat[b] = st
        self.obs: dict[str, _ObservedState] = {}
        for node in network.observed:
            c, h = item_stats(node, observed[node.name])
            fast = node.likelihood is Categorical and isinstance(node.prior, DirichletDist)
            self.obs[node.name] = _ObservedState(c=c, log_h=h, fast_categorical=fast,
                                                 alpha_w=np.asarray(node.prior.alpha, dtype=np.float64)
                                                 if fast else None)
        for i in range(self.N):
            self._add(i)

    # -- rows and counts ---------------------------------------------------------------------
    def _row(self, node, config: dict, i: int) -> tuple:
        return tuple(config[p] for p in node.parents) + tuple(int(self.index[ix][i]) for ix in node.index)

    def _config_of(self, i: int) -> dict:
        return {b: int(self.lat[b].z[i]) for b in self.order}

    def _add(self, i: int, sign: int = 1) -> None:
        config = self._config_of(i)
        for b in self.order:
            node, st = self.net.node(b), self.lat[b]
            row = self._row(node, config, i)
            k = config[b]
            cnt = st.counts.setdefault(row, {})
            cnt[k] = cnt.get(k, 0) + sign
            st.totals[row] = st.totals.get(row, 0) + sign
            st.used[k] = st.used.get(k, 0) + sign
        for node in self.net.observed:
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
            st, node = self.lat[b], self.net.node(b)
            k = int(st.z[i])
            if st.used.get(k, 0) == 0 and not isinstance(node.prior, Dirichlet):
                st.alive.remove(k)
                del st.used[k]
                if isinstance(node.prior, HDP):
                    self._retired_tau[(b, k)] = (st.tau[k], st.tau_u)
                    st.tau_u += st.tau.pop(k)

    # -- eq. 1 and eq. 2 ----------------------------------------------------------------------
    def _prior_term(self, node, st: _LatentState, row: tuple, k: int) -> float:
        pr = node.prior
        n_row = st.totals.get(row, 0)
        n_k = st.counts.get(row, {}).get(k, 0) if k != NEW else 0
        if isinstance(pr, HDP):
            w = pr.alpha * (st.tau_u if k == NEW else st.tau[k]) + n_k
        elif isinstance(pr, DP):
            w = pr.alpha if k == NEW else n_k
        else:
            w = pr.alpha / pr.n_states + n_k
        return w / (pr.alpha + n_row)

    def _log_f(self, node, ost: _ObservedState, row: tuple, i: int) -> float:
        stats = ost.stats.get(row) if NEW not in row else None
        if ost.fast_categorical:
            a = ost.alpha_w
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
                node, st = self.net.node(b), self.lat[b]
                row = self._row(node, config, i)
                t = self._prior_term(node, st, row, config[b]) if NEW not in row[: len(node.parents)] \
                    else self._prior_term_new_parent(node, st, config[b])
                lw += np.log(t) if t > 0 else -np.inf
            for node in self.net.observed:
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
        """Undo the retirement of item i's own states after a look-only conditional."""
        for b in self.order:
            st, node = self.lat[b], self.net.node(b)
            k = int(st.z[i])
            if k not in st.alive:
                st.alive.append(k)
                st.alive.sort()
                if isinstance(node.prior, HDP):
                    # the weight it had went to tau_u; give it back exactly
                    st.tau[k], st.tau_u = self._retired_tau.pop((b, k))

    # -- the sweep ----------------------------------------------------------------------------
    def sweep(self, rng: np.random.Generator) -> None:
        """One systematic scan over the items (mutates the state)."""
        for i in range(self.N):
            self._remove(i)
            configs, p = self.joint_conditional(i, removed=True)
            self._retired_tau.clear()
            cfg = configs[int(np.searchsorted(np.cumsum(p), rng.random() * p.sum(), side="right").clip(0, len(p) - 1))]
            for b, k in zip(self.order, cfg, strict=True):
                st, node = self.lat[b], self.net.node(b)
                if k == NEW:
                    k = st.next_label
                    st.next_label += 1
                    st.alive.append(k)
                    if isinstance(node.prior, HDP):
                        frac = rng.beta(1.0, node.prior.gamma)
                        st.tau[k] = frac * st.tau_u
                        st.tau_u *= 1.0 - frac
                st.z[i] = k
            self._add(i)

    def update_tau(self, rng: np.random.Generator) -> None:
        """tau | z for every HDP node: Antoniak table counts, then a Dirichlet draw (seed 002 §4)."""
        for b in self.order:
            node, st = self.net.node(b), self.lat[b]
            if not isinstance(node.prior, HDP):
                continue
            S = {k: 0 for k in st.alive}
            for cnt in st.counts.values():
                for k, n in cnt.items():
                    if n > 0:
                        S[k] += int(antoniak(rng, int(n), node.prior.alpha * st.tau[k]))
            g = {k: rng.gamma(float(S[k]), 1.0) for k in st.alive}
            gu = rng.gamma(node.prior.gamma, 1.0)
            tot = sum(g.values()) + gu
            st.tau = {k: v / tot for k, v in g.items()}
            st.tau_u = gu / tot

    def step(self, rng: np.random.Generator) -> None:
        """One iteration: ``sweep`` then ``update_tau``."""
        self.sweep(rng)
        self.update_tau(rng)

    def n_states(self) -> dict:
        return {b: len(self.lat[b].alive) for b in self.order}
