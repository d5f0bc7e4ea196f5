"""Contrastive divergence (CD-k), persistent CD and mean-field reconstructions for harmoniums.

The gradient of the mean log-likelihood of a harmonium (seed 000 eqs. 14-17; seed 001 eq. 6) is

    d/d param (1/N) sum_n log p(x_n) = E_data[ S(x) ] - E_model[ S(x) ],
    S(x) = E_{h|x}[ d log p*(x, h) / d param ]      (``Harmonium.statistics``)

e.g. S_W(x) = x E[h | x]^T. The model term is intractable. CD-k ("brief sampling", seed 000
§3.2; Hinton 2002) replaces it by S at reconstructions: k block Gibbs sweeps started at the
data. Persistent CD (Tieleman 2008) continues one set of fantasy chains across updates; as in
scikit-learn's BernoulliRBM the persistent state is the hidden sample, so one update costs one
sweep. Mean-field reconstructions (Hinton 2010, "practical guide" §3) use E[x | h] in place of a
visible sample.

One algorithm, three pieces (DESIGN.md): :class:`CDState` (the parameters, momentum buffers and
persistent chains), :func:`init`, :func:`build_kernel` (one epoch of mini-batch updates:
``kernel(rng, state, data, model) -> (state, info)``). The kernel mutates the parameter and
velocity arrays of ``state`` in place. :func:`cd_gradient` is the reference gradient (through
``Harmonium.statistics``) that the tests check against the exact log-likelihood gradient.

Updates, per mini-batch of B rows and learning rate eta (Hinton 2010 §§ 5, 9, 10)::

    v <- momentum v + eta (g - weight_decay W)     (weight decay on the couplings only)
    param <- param + v

With momentum 0 and no weight decay the sparse couplings update touches only the rows of the
words in the batch and its reconstructions (``csr_scatter_outer``).

The number of sweeps k may rise during training (``CDConfig.n_gibbs`` a
:class:`~harmonium.inference.learning.schedules.GibbsSchedule`: CD-1 rising to CD-5 in the
Replicated Softmax paper, Salakhutdinov & Hinton 2009 §4); :func:`config_at` resolves it per epoch.

Sparse hidden activity (Hinton 2010 §11; Lee, Ekanadham & Ng 2008): with a target activation p
and a cost c, each update also descends the penalty

    P = c sum_j CE(p, q_j),  CE(p, q) = -p log q - (1 - p) log(1 - q),
    q_j = lambda q_j^old + (1 - lambda) (1/B) sum_n sigma(eta_nj),

where eta_nj is the hidden unit's total input for row n of the mini-batch and q^old the running
estimate of the unit's mean activity (``CDState.hidden_q``, decay lambda), by its exact gradient
dP/d eta_nj = c (1 - lambda) / B (q_j - p) / (q_j (1 - q_j)) sigma'(eta_nj), applied to the
couplings and the hidden biases (the biases scaled by D where the model scales them). Hinton's
guide uses q_j - p, the derivative for a single logistic unit; this is the gradient of the
stated penalty, checked against finite differences in the tests. Binary hidden units only.

Fast PCD (Tieleman & Hinton 2009, "Using fast weights to improve persistent contrastive
divergence", ICML): the persistent chains move under theta + theta_fast, where the fast
parameters follow the same CD gradient g with their own rate and decay every update,
theta_fast <- decay theta_fast + eta_fast g (19/20 there), so that they push the chains away from
the regions they have just visited; the regular parameters are learned from the statistics of
the regular model at the chains' states, as in PCD.
"""


from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from harmonium._kernels.efh_rbm import rbm_negative_update, rbm_positive
from harmonium._kernels.efh_sparse import csr_scatter_outer
from harmonium.errors import InvalidParameterError
from harmonium.inference.learning.schedules import (
    GibbsSchedule,
    MomentumSchedule,
    Schedule,
    make_schedule,
    momentum_schedule,
)
from harmonium.models.undirected.efh import Harmonium
from harmonium.models.undirected.units import BernoulliUnits

__all__ = [
    "CDConfig",
    "CDInfo",
    "CDState",
    "TrainingData",
    "batch_update",
    "build_kernel",
    "cd_gradient",
    "config_at",
    "init",
    "negative_phase",
    "pseudo_log_likelihood",
    "reconstruction_error",
    "sparsity_gradient",
    "sparsity_penalty",
]


class TrainingData(NamedTuple):
    """Wing data (a tuple of (N, n_w) arrays, CSR for documents) and the lengths D (or None)."""

    xs: tuple
    lengths: np.ndarray | None


class CDState(NamedTuple):
    """State of CD / PCD learning.

    Attributes
    ----------
    model : Harmonium
        Its ``params`` are the current parameters (mutated in place by the kernel).
    velocity : dict
        Momentum buffers, one per learnable parameter.
    chains : (n_chains, F) ndarray or None
        Persistent hidden samples (PCD only).
    n_updates : int
        Mini-batch updates done.
    epoch : int
        Epochs done.
    hidden_q : (F,) ndarray or None
        Running estimate q of each hidden unit's mean activity (sparsity target only; None until
        the first update).
    fast : dict or None
        The fast parameters of fast PCD, one per learnable parameter (None: plain PCD / CD).
    """

    model: Harmonium
    velocity: dict
    chains: np.ndarray | None
    n_updates: int
    epoch: int
    hidden_q: np.ndarray | None = None
    fast: dict | None = None


class CDInfo(NamedTuple):
    """What one epoch did: batches, the learning rate and momentum used, the mean |update of W|, seconds, k of CD-k."""

    n_batches: int
    learning_rate: float
    momentum: float
    mean_abs_update: float
    seconds: float
    n_gibbs: int = 1


@dataclass(frozen=True)
class CDConfig:
    """Tuning of the kernel (not part of the state).

    Parameters
    ----------
    batch_size : int
    n_gibbs : int or GibbsSchedule
        k of CD-k (sweeps per update; PCD: sweeps of the persistent chains per update), or its
        schedule over the epochs (resolved per epoch by :func:`config_at`).
    persistent : bool
        PCD instead of CD.
    mean_field : bool
        Reconstruct with E[x | h] instead of a visible sample.
    learning_rate : Schedule
    momentum : MomentumSchedule
    weight_decay : float
        L2 penalty on the couplings W.
    shuffle : bool
        Visit the rows in a new random order every epoch.
    sparse : bool
        Draw Bernoulli reconstructions as CSR (same draws, sparse products afterwards).
    sparsity_target : float or None
        p, the target mean activity of each (binary) hidden unit; None: no sparsity penalty.
    sparsity_cost : float
        c, the weight of the penalty (module docstring; Hinton 2010 §11).
    sparsity_decay : float
        lambda of the running estimate q of the hidden activity.
    fast_learning_rate : float
        eta_fast of fast PCD (with ``persistent``; 0: plain PCD).
    fast_decay : float
        Per-update decay of the fast parameters.
    """

    batch_size: int = 100
    n_gibbs: int = 1
    persistent: bool = False
    mean_field: bool = False
    learning_rate: Schedule = make_schedule("constant", 0.01)
    momentum: MomentumSchedule = momentum_schedule(0.0)
    weight_decay: float = 0.0
    shuffle: bool = True
    sparse: bool = True
    sparsity_target: float | None = None
    sparsity_cost: float = 0.0
    sparsity_decay: float = 0.9
    fast_learning_rate: float = 0.0
    fast_decay: float = 0.95

    @property
    def fast_pcd(self) -> bool:
        return self.persistent and self.fast_learning_rate > 0.0

    @property
    def sparsity(self) -> bool:
        return self.sparsity_target is not None and self.sparsity_cost > 0.0


def config_at(cfg: CDConfig, epoch: int) -> CDConfig:
    """``cfg`` with the scheduled k of CD-k of ``epoch`` (0-based) as a plain int."""
    if isinstance(cfg.n_gibbs, GibbsSchedule):
        return dataclasses.replace(cfg, n_gibbs=int(cfg.n_gibbs(epoch)))
    return cfg


def init(rng: np.random.Generator, model: Harmonium, *, persistent: bool = False,
         n_chains: int = 100) -> CDState:
    """Zero momentum buffers; for PCD ``n_chains`` hidden chains started at 0 (as scikit-learn's)."""
    velocity = {k: np.zeros_like(model.params[k]) for k in model.learnable()}
    chains = np.zeros((n_chains, model.n_hidden), dtype=model.dtype) if persistent else None
    return CDState(model, velocity, chains, 0, 0)


# -- the gradient (reference) ----------------------------------------------------------
def cd_gradient(model: Harmonium, xs_pos, xs_neg, *, lengths_pos=None, lengths_neg=None, weights_neg=None) -> dict:
    """statistics(data) / B - statistics(negatives) / B' (weighted mean with ``weights_neg``).

    With ``xs_neg`` every visible state and ``weights_neg`` = p(x) this is the exact gradient
    of the mean log-likelihood; with k-step reconstructions it is the CD-k estimate.
    """
    pos = model.statistics(xs_pos, lengths_pos)
    n_pos = model.as_wings(xs_pos)[0].shape[0]
    if weights_neg is None:
        neg = model.statistics(xs_neg, lengths_neg)
        n_neg = model.as_wings(xs_neg)[0].shape[0]
    else:
        neg = model.statistics(xs_neg, lengths_neg, weights=weights_neg)
        n_neg = float(np.sum(weights_neg))
    return {k: np.asarray(pos[k], dtype=np.float64) / n_pos - np.asarray(neg[k], dtype=np.float64) / n_neg
            for k in pos}


def _reconstruct(rng, model: Harmonium, h, lengths, mean_field: bool, sparse: bool) -> tuple:
    out = []
    for w, wing in enumerate(model.wings):
        eta = model.visible_eta(h, w)
        p = model.visible_params(w)
        if mean_field:
            out.append(np.asarray(wing.units.mean(eta, p, lengths), dtype=model.dtype))
        elif sparse and isinstance(wing.units, BernoulliUnits):
            out.append(wing.units.sample_sparse(rng, eta, p))
        else:
            x = wing.units.reconstruct(rng, eta, p, lengths)
            out.append(x.astype(model.dtype) if x.dtype != model.dtype else x)
    return tuple(out)


def negative_phase(rng, model: Harmonium, h, lengths, n_gibbs: int, *, mean_field: bool = False,
                   sparse: bool = True) -> tuple:
    """Reconstructions from hidden samples ``h``: x ~ p(x | h), then ``n_gibbs - 1`` more sweeps.

    Returns (xs_neg, eta_neg), eta_neg the hidden natural parameters at xs_neg.
    """
    xs = _reconstruct(rng, model, h, lengths, mean_field, sparse)
    hp = model.hidden_params()
    for _ in range(n_gibbs - 1):
        h = model.hidden.sample(rng, model.hidden_eta(xs, lengths), hp)
        xs = _reconstruct(rng, model, h, lengths, mean_field, sparse)
    return xs, model.hidden_eta(xs, lengths)


# -- one mini-batch ----------------------------------------------------------------------
def _add_stats(model: Harmonium, targets: dict, xs, eta, lengths, scale: float) -> None:
    """targets[name] += scale * statistics(xs)[name], with the hidden mean from eta (sparse scatters for CSR)."""
    hp = model.hidden_params()
    h_mean = model.hidden.mean(eta, hp)
    h_second = model.hidden.second_moment(eta, hp) if "h:log_var" in targets else None
    for w, x in enumerate(xs):
        name = f"W:{w}"
        if name in targets:
            t = targets[name]
            if sp.isspmatrix_csr(x) and t.flags.c_contiguous:
                csr_scatter_outer(x.indptr, x.indices, x.data, np.ascontiguousarray(h_mean, dtype=t.dtype),
                                  t.dtype.type(scale), t)
            else:
                t += (scale * np.asarray(x.T @ h_mean)).astype(t.dtype, copy=False)
        vp = model.visible_params(w)
        for k, s in model.wings[w].units.bias_stats(x, vp).items():
            name = f"v:{w}:{k}"
            if name in targets:
                col = _column_sums(s)
                targets[name] += (scale * col).astype(targets[name].dtype, copy=False)
    row_scale = None
    if model.scale_hidden_bias:
        row_scale = np.asarray(lengths, dtype=np.float64).reshape(-1, 1)
    for k, s in model.hidden.bias_stats(h_mean, hp, h_second).items():
        name = f"h:{k}"
        if name in targets:
            if k == "bias" and row_scale is not None:
                s = s * row_scale
            targets[name] += (scale * np.asarray(s).sum(axis=0)).astype(targets[name].dtype, copy=False)


def _column_sums(s) -> np.ndarray:
    if sp.isspmatrix_csr(s):
        return np.bincount(s.indices, weights=s.data, minlength=s.shape[1])
    return np.asarray(s.sum(axis=0)).ravel()


def _sparsity_q(model: Harmonium, eta, decay: float, q_old):
    s = np.asarray(model.hidden.mean(eta, model.hidden_params()), dtype=np.float64)
    mean = s.mean(axis=0)
    q = mean if q_old is None else decay * np.asarray(q_old, dtype=np.float64) + (1.0 - decay) * mean
    return s, np.clip(q, 1e-12, 1.0 - 1e-12)


def sparsity_penalty(model: Harmonium, xs, lengths, target: float, cost: float, decay: float,
                     q_old=None) -> tuple[float, np.ndarray]:
    """(P, q): the sparsity penalty of the mini-batch ``xs`` and the new running activity q (module docstring).

    ``q_old`` None starts the running estimate at this batch's mean (lambda taken as 0).
    """
    xs = model.as_wings(xs)
    lengths = model._lengths_for(xs, lengths)
    _, q = _sparsity_q(model, model.hidden_eta(xs, lengths), decay, q_old)
    ce = -target * np.log(q) - (1.0 - target) * np.log1p(-q)
    return float(cost * ce.sum()), q


def sparsity_gradient(model: Harmonium, xs, lengths, target: float, cost: float, decay: float,
                      q_old=None, *, eta=None) -> tuple[dict, np.ndarray]:
    """(dP/dparam for the learnable couplings and hidden biases, q): the exact gradient of :func:`sparsity_penalty`."""
    if type(model.hidden) is not BernoulliUnits:
        raise InvalidParameterError("sparsity_gradient: a sparsity target needs binary (Bernoulli) hidden units; "
                                    f"this model's are {type(model.hidden).__name__}.")
    xs = model.as_wings(xs)
    lengths = model._lengths_for(xs, lengths)
    eta = model.hidden_eta(xs, lengths) if eta is None else eta
    s, q = _sparsity_q(model, eta, decay, q_old)
    n = s.shape[0]
    lam = 0.0 if q_old is None else decay
    g_eta = (cost * (1.0 - lam) / n) * ((q - target) / (q * (1.0 - q)))[None, :] * s * (1.0 - s)
    grads = {}
    names = set(model.learnable())
    for w, x in enumerate(xs):
        if f"W:{w}" in names:
            grads[f"W:{w}"] = np.asarray(x.T @ g_eta, dtype=np.float64)
    if "h:bias" in names:
        if model.scale_hidden_bias:
            grads["h:bias"] = (np.asarray(lengths, dtype=np.float64)[:, None] * g_eta).sum(axis=0)
        else:
            grads["h:bias"] = g_eta.sum(axis=0)
    return grads, q


def batch_update(rng: np.random.Generator, state: CDState, xs, lengths, cfg: CDConfig, lr: float,
                 momentum: float) -> tuple:
    """One CD-k / PCD update from the mini-batch ``xs`` (mutates the parameters and buffers of ``state``).

    Returns the negative particles (xs_neg, lengths) that were used, for tests and monitoring.
    ``cfg.n_gibbs`` must be an int here (:func:`config_at` resolves a schedule). With a sparsity
    target the update also descends the sparsity penalty and moves ``state.hidden_q`` in place (an
    all-NaN ``hidden_q`` means no estimate yet; :func:`build_kernel` creates it; with None the
    running estimate is not kept).
    """
    model = state.model
    xs = model.as_wings(xs)
    if isinstance(cfg.n_gibbs, GibbsSchedule):
        cfg = config_at(cfg, state.epoch)
    if _fused_applies(model, cfg, xs, momentum):
        return _fused_rbm_update(rng, state, xs[0], cfg, lr), lengths
    n = xs[0].shape[0]
    hp = model.hidden_params()
    eta_pos = model.hidden_eta(xs, lengths)
    if cfg.persistent:
        h = state.chains[:n]
    else:
        h = model.hidden.sample(rng, eta_pos, hp)
    chain_model = model
    if cfg.fast_pcd:
        chain_model = model.with_params({k: model.params[k] + state.fast[k] for k in state.fast})
    xs_neg, eta_neg = negative_phase(rng, chain_model, h, lengths, cfg.n_gibbs, mean_field=cfg.mean_field,
                                     sparse=cfg.sparse)
    if cfg.persistent:
        state.chains[:n] = chain_model.hidden.sample(rng, eta_neg, chain_model.hidden_params())
    if cfg.fast_pcd:
        eta_neg = model.hidden_eta(xs_neg, lengths)  # the gradient is the regular model's
        g = {k: np.zeros_like(v) for k, v in state.fast.items()}
        _add_stats(model, g, xs, eta_pos, lengths, 1.0 / n)
        _add_stats(model, g, xs_neg, eta_neg, lengths, -1.0 / n)
        for k, v in state.fast.items():
            v *= v.dtype.type(cfg.fast_decay)
            v += (cfg.fast_learning_rate * g[k]).astype(v.dtype, copy=False)
    scale = lr / n
    direct = momentum == 0.0 and cfg.weight_decay == 0.0
    names = model.learnable()
    if direct:
        targets = {k: model.params[k] for k in names}
    else:
        targets = state.velocity
        for k in names:
            targets[k] *= momentum
    if cfg.sparsity:
        q_old = state.hidden_q
        if q_old is not None and np.isnan(q_old).all():
            q_old = None
        sgrad, q = sparsity_gradient(model, xs, lengths, cfg.sparsity_target, cfg.sparsity_cost,
                                     cfg.sparsity_decay, q_old, eta=eta_pos)
    _add_stats(model, targets, xs, eta_pos, lengths, scale)
    _add_stats(model, targets, xs_neg, eta_neg, lengths, -scale)
    if cfg.sparsity:
        for k, g in sgrad.items():
            targets[k] -= (lr * g).astype(targets[k].dtype, copy=False)
        if state.hidden_q is not None:
            state.hidden_q[...] = q
    if not direct:
        for k in names:
            if cfg.weight_decay and k.startswith("W:"):
                targets[k] -= (lr * cfg.weight_decay) * model.params[k]
            model.params[k] += targets[k]
    return xs_neg, lengths


def _fused_applies(model: Harmonium, cfg: CDConfig, xs, momentum: float) -> bool:
    """The fused RBM kernels cover: one sparse Bernoulli wing, Bernoulli hidden units, CD-1 / PCD-1 with sampled
    reconstructions, plain SGD (no momentum, no weight decay), every parameter learned."""
    return (len(model.wings) == 1 and type(model.wings[0].units) is BernoulliUnits
            and type(model.hidden) is BernoulliUnits and cfg.n_gibbs == 1 and not cfg.mean_field and cfg.sparse
            and momentum == 0.0 and cfg.weight_decay == 0.0 and not cfg.sparsity and not cfg.fast_pcd
            and sp.isspmatrix_csr(xs[0])
            and not model.fixed
            and model.params["W:0"].flags.c_contiguous)


def _fused_rbm_update(rng, state: CDState, x, cfg: CDConfig, lr: float) -> tuple:
    """One CD-1 / PCD-1 step of an RBM on a CSR batch by :mod:`harmonium._kernels.efh_rbm` (same update as the
    generic path; the uniforms are consumed in another order)."""
    model = state.model
    W, b, c = model.params["W:0"], model.params["v:0:bias"], model.params["h:bias"]
    n, n_vis = x.shape
    n_hidden = model.n_hidden
    dt = W.dtype
    h_pos = np.empty((n, n_hidden), dtype=dt)
    h_sample = np.empty((n, n_hidden), dtype=dt)
    rbm_positive(rng, x.indptr, x.indices, x.data, W, c, h_pos, h_sample, not cfg.persistent)
    chains = state.chains[:n] if cfg.persistent else h_sample
    logits = chains @ W.T
    h_neg = np.empty((n, n_hidden), dtype=dt)
    neg_indptr = np.empty(n + 1, dtype=np.int64)
    neg_indices = np.empty(n * n_vis, dtype=np.int32)
    work = np.empty(3 * n_vis, dtype=np.int64)
    nnz = rbm_negative_update(rng, x.indptr, x.indices, x.data, logits, W, b, c, h_pos, h_neg, chains,
                              cfg.persistent, float(BernoulliUnits.sparse_threshold), dt.type(lr / n), neg_indptr,
                              neg_indices, work)
    x_neg = sp.csr_matrix((np.ones(nnz, dtype=dt), neg_indices[:nnz].copy(), neg_indptr), shape=(n, n_vis))
    return (x_neg,)


def _rows(x, idx):
    return x[idx]


def build_kernel(cfg: CDConfig):
    """The epoch kernel ``kernel(rng, state, data, model=None) -> (state, CDInfo)``.

    One pass over ``data`` (a :class:`TrainingData`) in mini-batches of ``cfg.batch_size`` rows
    (a fresh random order per epoch if ``cfg.shuffle``), one :func:`batch_update` each, with the
    k of CD-k that ``cfg.n_gibbs`` schedules for the epoch. The parameters in ``state.model`` are
    updated in place.
    """
    k0 = cfg.n_gibbs.start if isinstance(cfg.n_gibbs, GibbsSchedule) else cfg.n_gibbs
    if cfg.batch_size < 1 or k0 < 1:
        raise InvalidParameterError("CDConfig: batch_size and n_gibbs must be >= 1.")
    if cfg.fast_learning_rate and not (cfg.persistent and 0.0 <= cfg.fast_decay < 1.0):
        raise InvalidParameterError("CDConfig: fast weights need persistent=True and fast_decay in [0, 1).")
    if cfg.sparsity and not (0.0 < cfg.sparsity_target < 1.0 and 0.0 <= cfg.sparsity_decay < 1.0):
        raise InvalidParameterError("CDConfig: sparsity_target must lie in (0, 1) and sparsity_decay in [0, 1).")

    def kernel(rng, state: CDState, data: TrainingData, model=None):
        t0 = time.perf_counter()
        xs, lengths = data
        n = xs[0].shape[0]
        lr = float(cfg.learning_rate(state.epoch))
        mom = float(cfg.momentum(state.epoch))
        ecfg = config_at(cfg, state.epoch)
        if ecfg.sparsity and state.hidden_q is None:
            state = state._replace(hidden_q=np.full(state.model.n_hidden, np.nan))
        if ecfg.fast_pcd and state.fast is None:
            state = state._replace(fast={k: np.zeros_like(state.model.params[k]) for k in state.model.learnable()})
        order = rng.permutation(n) if cfg.shuffle else np.arange(n)
        w_before = state.model.params["W:0"].copy() if state.model.params["W:0"].size <= 4_000_000 else None
        n_batches = 0
        for start in range(0, n, cfg.batch_size):
            idx = order[start:start + cfg.batch_size]
            if cfg.shuffle:
                idx = np.sort(idx)
            batch = tuple(_rows(x, idx) for x in xs)
            lens = None if lengths is None else lengths[idx]
            batch_update(rng, state, batch, lens, ecfg, lr, mom)
            n_batches += 1
        change = float("nan") if w_before is None else float(
            np.abs(state.model.params["W:0"] - w_before).mean() / max(n_batches, 1))
        new = state._replace(n_updates=state.n_updates + n_batches, epoch=state.epoch + 1)
        return new, CDInfo(n_batches, lr, mom, change, time.perf_counter() - t0, int(ecfg.n_gibbs))

    return kernel


# -- monitoring ----------------------------------------------------------------------------
def reconstruction_error(model: Harmonium, xs, lengths=None) -> float:
    """Mean over rows of sum_w ||x_w - E[x_w | h = E[h | x]]||^2 (deterministic, mean-field)."""
    xs = model.as_wings(xs)
    lengths = model._lengths_for(xs, lengths)
    h = model.mean_h(xs, lengths)
    total = 0.0
    for x, r in zip(xs, model.mean_x(h, lengths), strict=True):
        r = np.asarray(r, dtype=np.float64)
        if sp.issparse(x):
            x = x.tocsr()
            xx = float((x.data.astype(np.float64) ** 2).sum())
            cross = float(x.multiply(r).sum())
            total += xx - 2 * cross + float((r * r).sum())
        else:
            total += float(((np.asarray(x, dtype=np.float64) - r) ** 2).sum())
    return total / xs[0].shape[0]


def pseudo_log_likelihood(rng: np.random.Generator, model: Harmonium, xs) -> np.ndarray:
    """Stochastic pseudo-log-likelihood per row (binary visible units only).

    n log p(x_i | x_-i) for one unit i drawn uniformly per row among all n visible units,
    = -n softplus(log p*(x~) - log p*(x)), x~ with unit i flipped: an unbiased estimate of
    sum_i log p(x_i | x_-i) (as scikit-learn's ``score_samples``).
    """
    if not all(isinstance(w.units, BernoulliUnits) for w in model.wings):
        raise InvalidParameterError("pseudo_log_likelihood is defined here for binary (Bernoulli) wings only.")
    xs = model.as_wings(xs)
    n_rows = xs[0].shape[0]
    sizes = np.array([w.size for w in model.wings])
    total = int(sizes.sum())
    pick = rng.integers(0, total, size=n_rows)
    flipped = []
    offset = 0
    for x, size in zip(xs, sizes, strict=True):
        mine = (pick >= offset) & (pick < offset + size)
        rows = np.flatnonzero(mine)
        cols = pick[rows] - offset
        if sp.issparse(x):
            x = x.tocsr()
            cur = np.asarray(x[rows, cols]).ravel() if rows.size else np.zeros(0)
            delta = sp.csr_matrix(((1.0 - 2.0 * cur).astype(x.dtype), (rows, cols)), shape=x.shape)
            flipped.append((x + delta).tocsr())
        else:
            y = np.array(x, copy=True)
            y[rows, cols] = 1 - y[rows, cols]
            flipped.append(y)
        offset += size
    lp = model.log_unnormalized(xs)
    lp_flip = model.log_unnormalized(tuple(flipped))
    return -total * np.logaddexp(0.0, lp_flip - lp)
