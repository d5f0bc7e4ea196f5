"""BiHDP for market baskets with binomial blocks: collapsed Gibbs whose cost ignores the non-purchases.

Seed 002 §7 fits the BiHDP (Fig. 2a) to IBM Quest transactions with "a binomial distribution ... to model the
probability of a customer group making a purchase from that item group". This module samples that model with
the unit and limit decided in docs/guides/hdp-isbn.md ("The §7 observation model"):

* the unit is the (customer, item) pair: n_ji = the number of customer j's T_j transactions that hold item i,
  n_ji ~ Binomial(T_j, p_gh) given customer group g and item group h, p_gh ~ Beta(a, b) integrated out;
* one group per customer and one per item (the infinite relational model, Kemp et al. 2006), with
  Chinese-restaurant (DP) priors of concentrations alpha_c and alpha_i: the limit of the BiHDP whose
  per-customer and per-item CPTs pi_{.|j}, pi_{.|i} put all their mass on one state (HDP with alpha -> 0, so
  that the seed's gamma becomes the CRP's concentration). The per-pair mixed membership of Fig. 2a needs a
  latent pair for every one of the n_customers x n_items pairs, which no block count can stand in for.

The z step is seed 002 eq. 1 with F of eq. 2 the Beta-binomial predictive of an element's whole row of pairs,
computed from block counts S_gh (purchases) and N_gh = W1[g] W2[h] (trials) so that a sweep costs
O(purchases + (n_customers + n_items) K_c K_i) (:mod:`harmonium._kernels.bihdp_blocks`). The concentrations are
resampled after each sweep by Escobar & West (1995) when ``sample_concentration`` is set.

Pieces (DESIGN.md's state / init / kernel): :func:`make_data` (checked counts and trials, rows and columns),
:func:`init`, :func:`build_kernel`, and :func:`conditional` (one element's full conditional, for tests).

References
----------
M. Welling, I. Porteous, E. Bart. Infinite state Bayesian networks. NIPS 2007 (seed 002), §4 eqs. 1-2, §6, §7.
C. Kemp, J. Tenenbaum, T. Griffiths, T. Yamada, N. Ueda. Learning systems of concepts with an infinite
relational model. AAAI 2006.
M. Escobar and M. West. Bayesian density estimation and inference using mixtures. JASA 1995, §6.
"""

from __future__ import annotations

import numbers
from typing import NamedTuple

import numpy as np
from scipy import sparse
from scipy.special import gammaln

from harmonium._kernels import bihdp_blocks as kb
from harmonium._validation import InstanceOf, Interval, validate_params
from harmonium.errors import InvalidParameterError
from harmonium.inference.mcmc.isbn.hyper import resample_gamma

__all__ = ["BlockData", "BlockState", "BlockInfo", "transaction_counts", "make_data", "init", "build_kernel",
           "conditional", "log_joint"]

CUSTOMER, ITEM = 0, 1


class BlockData(NamedTuple):
    """Purchase counts by rows (customers) and by columns (items), and the weights of both sides.

    ``weights[0]`` are the customers' trials T_j, ``weights[1]`` ones; N of a block is the product of its two
    groups' weight sums. ``ptr[s], idx[s], cnt[s]``: CSR of side s (s = 0: customer -> items, 1: item ->
    customers).
    """

    ptr: tuple
    idx: tuple
    cnt: tuple
    weights: tuple
    binomial_log_coef: float  # sum of log C(T_j, n_ji): the constant left out of the block likelihood


class BlockState(NamedTuple):
    """Groups of both sides. Side s: ``z[s]`` labels, ``W[s]`` weight sums, ``n[s]`` member counts,
    ``perm[s]`` group ids (``perm[s][:K[s]]`` used), ``pos[s]`` its inverse; ``S`` (cap_c, cap_i) purchases per
    block; ``alpha`` the two CRP concentrations."""

    z: tuple
    S: np.ndarray
    W: tuple
    n: tuple
    perm: tuple
    pos: tuple
    K: np.ndarray
    alpha: np.ndarray


class BlockInfo(NamedTuple):
    log_likelihood: float  # log p(n | z), binomial coefficients included
    log_joint: float  # plus the two CRP log priors
    n_changed: int
    n_groups: tuple


def transaction_counts(customer, indptr, items, n_customers: int, n_items: int):
    """(counts, trials) from transactions: counts[j, i] = how many of customer j's transactions hold item i
    (an item twice in one transaction counts once), trials[j] = T_j, j's number of transactions."""
    customer = np.asarray(customer, dtype=np.int64)
    indptr = np.asarray(indptr, dtype=np.int64)
    items = np.asarray(items, dtype=np.int64)
    tx = np.repeat(np.arange(customer.size, dtype=np.int64), np.diff(indptr))
    key = np.unique(tx * n_items + items)  # distinct (transaction, item)
    rows = customer[key // n_items]
    counts = sparse.csr_matrix((np.ones(key.size, dtype=np.int64), (rows, key % n_items)),
                               shape=(n_customers, n_items))
    counts.sum_duplicates()
    trials = np.bincount(customer, minlength=n_customers).astype(np.int64)
    return counts, trials


def make_data(counts, trials) -> BlockData:
    """Check ``counts`` (n_customers x n_items, integers 0 <= n_ji <= trials[j]) and ``trials`` (T_j >= 0)."""
    owner = "bihdp_blocks.make_data"
    if not sparse.issparse(counts):
        counts = np.asarray(counts)
        if counts.ndim != 2:
            raise InvalidParameterError(f"The 'counts' parameter of {owner} must be a 2-d matrix (customers x "
                                        f"items). Got shape {counts.shape}.")
    X = sparse.csr_matrix(counts)
    X.sum_duplicates()
    X.eliminate_zeros()
    trials = np.asarray(trials)
    if trials.shape != (X.shape[0],) or not np.issubdtype(trials.dtype, np.integer) or (trials < 0).any():
        raise InvalidParameterError(f"The 'trials' parameter of {owner} must be non-negative ints, one per "
                                    f"customer ({X.shape[0]}). Got shape {trials.shape}, dtype {trials.dtype}.")
    data = X.data
    if data.size and (not np.all(np.equal(np.mod(data, 1), 0)) or data.min() < 0):
        raise InvalidParameterError(f"The 'counts' parameter of {owner} must hold non-negative integers.")
    data = data.astype(np.int64)
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    bad = np.flatnonzero(data > trials[rows])
    if bad.size:
        j = int(rows[bad[0]])
        raise InvalidParameterError(
            f"The 'counts' parameter of {owner}: customer {j} bought item {int(X.indices[bad[0]])} "
            f"{int(data[bad[0]])} times in {int(trials[j])} transactions; a count must be <= the customer's "
            f"trials (count transactions holding the item, see transaction_counts).")
    X = sparse.csr_matrix((data, X.indices, X.indptr), shape=X.shape)
    C = X.tocsc()
    T = trials.astype(np.int64)
    coef = float(np.sum(gammaln(T[rows] + 1.0) - gammaln(data + 1.0) - gammaln(T[rows] - data + 1.0)))
    return BlockData(
        ptr=(X.indptr.astype(np.int64), C.indptr.astype(np.int64)),
        idx=(X.indices.astype(np.int64), C.indices.astype(np.int64)),
        cnt=(X.data.astype(np.int64), C.data.astype(np.int64)),
        weights=(T, np.ones(X.shape[1], dtype=np.int64)),
        binomial_log_coef=coef,
    )


def _side_arrays(labels, weights, cap):
    W = np.zeros(cap, dtype=np.int64)
    n = np.zeros(cap, dtype=np.int64)
    np.add.at(W, labels, weights)
    np.add.at(n, labels, 1)
    used = np.flatnonzero(n > 0)
    perm = np.concatenate([used, np.setdiff1d(np.arange(cap), used)]).astype(np.int64)
    pos = np.empty(cap, dtype=np.int64)
    pos[perm] = np.arange(cap)
    return W, n, perm, pos, used.size


def init(rng, data: BlockData, *, n_customer_groups: int = 1, n_item_groups: int = 1, alpha=(1.0, 1.0),
         labels=None, capacity=None) -> BlockState:
    """Random initial groups (uniform over the first ``n_*_groups`` ids), or ``labels`` = (z_customer, z_item)."""
    owner = "bihdp_blocks.init"
    validate_params(owner, {"n_customer_groups": n_customer_groups, "n_item_groups": n_item_groups},
                    {"n_customer_groups": [Interval("int", 1, None)], "n_item_groups": [Interval("int", 1, None)]})
    alpha = _check_pair(alpha, "alpha", owner)
    sizes = (data.weights[0].size, data.weights[1].size)
    if labels is None:
        z = (rng.integers(0, min(n_customer_groups, max(sizes[0], 1)), sizes[0]).astype(np.int64),
             rng.integers(0, min(n_item_groups, max(sizes[1], 1)), sizes[1]).astype(np.int64))
    else:
        z = tuple(np.unique(np.asarray(v), return_inverse=True)[1].astype(np.int64).ravel() for v in labels)
        if len(z) != 2 or z[0].size != sizes[0] or z[1].size != sizes[1]:
            raise InvalidParameterError(f"The 'labels' parameter of {owner} must be (customer labels of length "
                                        f"{sizes[0]}, item labels of length {sizes[1]}).")
    caps = []
    for s in range(2):
        k = int(z[s].max()) + 1 if z[s].size else 1
        caps.append(max(k + 8, int(1.5 * k)) if capacity is None else max(int(capacity), k + 1))
    sides = [_side_arrays(z[s], data.weights[s], caps[s]) for s in range(2)]
    S = np.zeros((caps[0], caps[1]), dtype=np.int64)
    kb.block_counts(data.ptr[0], data.idx[0], data.cnt[0], z[0], z[1], S)
    return BlockState(z=z, S=S, W=(sides[0][0], sides[1][0]), n=(sides[0][1], sides[1][1]),
                      perm=(sides[0][2], sides[1][2]), pos=(sides[0][3], sides[1][3]),
                      K=np.array([sides[0][4], sides[1][4]], dtype=np.int64), alpha=alpha)


def _check_pair(value, name, owner):
    try:
        vals = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        vals = np.array([np.nan])
    if vals.ndim == 0:
        vals = np.full(2, float(vals))
    if vals.shape != (2,) or not np.all(np.isfinite(vals)) or (vals <= 0).any():
        raise InvalidParameterError(f"The {name!r} parameter of {owner} must be a float > 0 or a pair of them "
                                    f"(customers, items). Got {value!r}.")
    return vals


def _grow(state: BlockState, side: int) -> BlockState:
    """Double side ``side``'s capacity (new ids appended as free); the chain does not change."""
    old = state.perm[side].size
    new = 2 * old
    pad = new - old
    W, n, perm, pos = list(state.W), list(state.n), list(state.perm), list(state.pos)
    W[side] = np.concatenate([W[side], np.zeros(pad, np.int64)])
    n[side] = np.concatenate([n[side], np.zeros(pad, np.int64)])
    perm[side] = np.concatenate([perm[side], np.arange(old, new, dtype=np.int64)])
    pos[side] = np.concatenate([pos[side], np.arange(old, new, dtype=np.int64)])
    shape = list(state.S.shape)
    shape[side] = new
    S = np.zeros(shape, dtype=np.int64)
    S[:state.S.shape[0], :state.S.shape[1]] = state.S
    return state._replace(S=S, W=tuple(W), n=tuple(n), perm=tuple(perm), pos=tuple(pos))


def _sweep(rng, state: BlockState, data: BlockData, side: int, a: float, b: float):
    o = 1 - side
    order = rng.permutation(data.weights[side].size).astype(np.int64)
    done, changed = 0, 0
    while True:
        S = state.S if side == CUSTOMER else state.S.T
        s = np.zeros(state.perm[o].size, dtype=np.int64)
        logp = np.empty(state.perm[side].size + 1)
        done, K, ch = kb.sweep_side(
            rng, order, done, data.ptr[side], data.idx[side], data.cnt[side], data.weights[side], state.z[side],
            state.z[o], S, state.W[side], state.n[side], state.perm[side], state.pos[side], int(state.K[side]),
            state.W[o], state.perm[o], int(state.K[o]), float(state.alpha[side]), a, b, s, logp)
        state.K[side] = K
        changed += ch
        if done == order.size:
            return state, changed
        state = _grow(state, side)


def log_joint(state: BlockState, data: BlockData, a: float = 1.0, b: float = 1.0) -> tuple[float, float]:
    """(log p(n | z), log p(n | z) + log CRP(z_customer) + log CRP(z_item)), binomial coefficients included."""
    K1, K2 = int(state.K[0]), int(state.K[1])
    ll = kb.log_likelihood(state.S, state.W[0], state.W[1], state.perm[0], K1, state.perm[1], K2, a, b)
    ll += data.binomial_log_coef
    lp = 0.0
    for s in range(2):
        m = state.n[s][state.perm[s][:int(state.K[s])]]
        al = float(state.alpha[s])
        lp += m.size * np.log(al) + gammaln(al) - gammaln(al + m.sum()) + gammaln(m).sum()
    return float(ll), float(ll + lp)


def build_kernel(*, a: float = 1.0, b: float = 1.0, sample_concentration: bool = True,
                 concentration_prior=(1.0, 1.0)):
    """kernel(rng, state, data) -> (state, info): one epoch = a sweep over the customers (random order), one
    over the items, then (if ``sample_concentration``) alpha_c and alpha_i | z by Escobar & West.

    ``a, b``: the Beta(a, b) prior of every block's purchase probability p_gh. The kernel mutates the state's
    arrays in place and returns a new state only when it had to grow them.
    """
    owner = "bihdp_blocks.build_kernel"
    validate_params(owner, {"a": a, "b": b, "sample_concentration": sample_concentration},
                    {"a": [Interval("real", 0, None, "neither")], "b": [Interval("real", 0, None, "neither")],
                     "sample_concentration": [InstanceOf((bool, np.bool_), "a bool")]})
    prior = concentration_prior
    if (np.ndim(prior) != 1 or np.size(prior) != 2 or not all(isinstance(v, numbers.Real) for v in prior)
            or not np.all(np.isfinite(prior)) or min(prior) <= 0):
        raise InvalidParameterError(f"The 'concentration_prior' parameter of {owner} must be (shape, rate), both "
                                    f"finite floats > 0. Got {prior!r}.")
    a, b, prior = float(a), float(b), (float(prior[0]), float(prior[1]))

    def kernel(rng, state: BlockState, data: BlockData):
        state, c1 = _sweep(rng, state, data, CUSTOMER, a, b)
        state, c2 = _sweep(rng, state, data, ITEM, a, b)
        if sample_concentration:
            for s in range(2):
                n_el = state.z[s].size
                if n_el > 1:
                    state.alpha[s] = resample_gamma(rng, float(state.alpha[s]), int(state.K[s]), n_el, prior)
        ll, lj = log_joint(state, data, a, b)
        return state, BlockInfo(ll, lj, c1 + c2, (int(state.K[0]), int(state.K[1])))

    return kernel


def conditional(state: BlockState, data: BlockData, side: int, e: int, a: float = 1.0, b: float = 1.0):
    """Full conditional of element ``e`` of ``side`` (0 customers, 1 items): (group ids, probabilities), the
    last id being -1 for a new group. Works on copies; the state is unchanged."""
    o = 1 - side
    S = state.S.copy()
    Sv = S if side == CUSTOMER else S.T
    W, n, perm, pos = state.W[side].copy(), state.n[side].copy(), state.perm[side].copy(), state.pos[side].copy()
    z = state.z[side].copy()
    s = np.zeros(state.perm[o].size, dtype=np.int64)
    w = data.weights[side]
    kb.gather(e, data.ptr[side], data.idx[side], data.cnt[side], state.z[o], s)
    K = kb.remove_element(e, w[e], data.ptr[side], data.idx[side], data.cnt[side], z, state.z[o], Sv, W, n, perm,
                          pos, int(state.K[side]))
    logp = np.empty(K + 1)
    kb.element_logits(w[e], s, Sv, W, n, perm, K, state.W[o], state.perm[o], int(state.K[o]),
                      float(state.alpha[side]), a, b, logp)
    p = np.exp(logp - logp.max())
    return np.append(perm[:K], -1), p / p.sum()
