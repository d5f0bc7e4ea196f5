"""Partition functions of harmoniums: exact enumeration, naive Monte Carlo, importance sampling, AIS.

Z = sum_x sum_h p*(x, h) of a ``harmonium.models.undirected.efh.Harmonium``. For Replicated
Softmax Z depends on the document length D (the D softmax draws), so every estimator takes
``lengths`` and returns one log Z per length.

* :func:`exact_log_partition`: enumerate the smaller enumerable layer and sum the other out in
  closed form, log Z = logsumexp_h [ log p*(h) ] with log p*(h) = s lambda.h + log h_H(h) +
  sum_w A_w(theta_w + W_w h) (or the same over x with the hidden log-partition).
* :func:`naive_mc_log_partition`: seed 000 Appendix A. With q(h) the hidden layer on its own
  biases, Z = Z_q E_q[ exp(sum_w A_w(theta_w + W_w h)) ]; for GB-EFH q = N(0, I) and the
  weight is prod_i (1 + t_i) with t = exp(theta + W h) multivariate log-normal (eqs. 35-36).
* :func:`importance_sampling_log_partition`: seed 001 eqs. 9-10, simple importance sampling from
  the base-rate model p_A (W = 0): Z_B / Z_A ~ (1/M) sum_i p*_B(x_i) / p*_A(x_i), x_i ~ p_A.
* :func:`ais_log_partition`: annealed importance sampling (Neal 2001; seed 001 "AIS I-II" and
  eq. 15; Salakhutdinov & Murray 2008). Intermediate distributions

      p*_k(x) = exp{ (1 - b_k) theta_A.x + b_k theta_B.x + log h(x) } prod_j exp B_j( b_k (s lambda_j + (x^T W)_j) ),

  i.e. the natural parameters are interpolated linearly between the base-rate model
  (theta_A, lambda = 0, W = 0) and the target, with h summed out; T_k is one block Gibbs sweep of
  the harmonium at b_k (it leaves p_k invariant). For RSM this is seed 001 eq. 15. The default
  schedule has 14,500 temperatures: 500 in [0, 0.5), 4,000 in [0.5, 0.9), 10,000 in [0.9, 1]
  (Salakhutdinov & Murray 2008).

Cost and the fast setting. AIS costs n_runs x n_lengths x n_temperatures block Gibbs sweeps, and
a replicated softmax model needs one log Z per document length D: the default (100 runs, 14,500
temperatures, every distinct length of a test set) runs for hours on a test set of thousands of
documents. :data:`AIS_SETTINGS` names the settings; ``"fast"`` anneals fewer runs at fewer
temperatures, and only at a grid of ``n_length_groups`` lengths (:func:`length_grid`), log Z of
the lengths between being interpolated (:func:`interpolate_log_partition`; log Z(D) =
logsumexp_h D c(h) is smooth and convex in D). Its bias against the default and against exact
enumeration is measured by ``benchmarks/harmoniums/ais_fast_bias.py`` (figures in benchmarks/harmoniums/README.md):
on a 10-hidden-unit RSM over 2,456 words whose log Z(D) is enumerated exactly, "fast" is low by
0.006 nats on average and off by 0.022 at most over 63 test lengths; the held-out perplexity moves from
1265.78 (exact) to 1265.65. Long runs show a progress bar with the time left
(``progress``; :mod:`harmonium._progress`).

Stochastic estimates are log of the mean importance weight over runs; the standard error is the
delta-method one, sd(w) / (sqrt(M) mean(w)), or a bootstrap one. log(mean w) is biased low
for finite M (Jensen); the bias is of the order of the variance, se^2 / 2.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.special import logsumexp

from harmonium._progress import progress_bar
from harmonium._validation import Interval, validate_params
from harmonium.errors import InvalidParameterError
from harmonium.models.undirected.efh import Harmonium
from harmonium.models.undirected.units import BernoulliUnits
from harmonium.parallel.seeds import check_random_state

__all__ = [
    "AIS_SETTINGS",
    "PartitionEstimate",
    "ais_log_partition",
    "base_log_partition",
    "base_rate_model",
    "data_means",
    "default_betas",
    "exact_log_partition",
    "harmonium_log_likelihood",
    "importance_sampling_log_partition",
    "interpolate_log_partition",
    "length_grid",
    "log_mean_exp",
    "naive_mc_log_partition",
]


class PartitionEstimate(NamedTuple):
    """An estimate of log Z (one per document length for replicated softmax models).

    Attributes
    ----------
    log_z : float or (L,) ndarray
    std_error : float or (L,) ndarray
        0 for exact values.
    method : str
    n_samples : int
        Runs (AIS) or samples (naive MC, IS); 0 for exact values.
    lengths : (L,) ndarray or None
        The document lengths D the entries of ``log_z`` belong to.
    log_weights : ndarray or None
        (n_samples,) or (L, n_samples) log importance weights (log Z_A not added).
    log_z_base : float or ndarray or None
        log Z of the base (AIS, IS) or proposal (naive MC) distribution.
    n_temperatures : int
        Intermediate distributions (AIS; 1 for simple IS, 0 otherwise).
    """

    log_z: float | np.ndarray
    std_error: float | np.ndarray
    method: str
    n_samples: int
    lengths: np.ndarray | None = None
    log_weights: np.ndarray | None = None
    log_z_base: float | np.ndarray | None = None
    n_temperatures: int = 0

    def at(self, lengths) -> tuple[np.ndarray, np.ndarray]:
        """(log Z, std error) for each entry of ``lengths`` (models without lengths: broadcast)."""
        lengths = np.asarray(lengths)
        if self.lengths is None:
            return (np.full(lengths.shape, float(self.log_z)), np.full(lengths.shape, float(self.std_error)))
        idx = np.searchsorted(self.lengths, lengths)
        if np.any(idx >= self.lengths.size) or np.any(self.lengths[np.minimum(idx, self.lengths.size - 1)] != lengths):
            raise InvalidParameterError("PartitionEstimate.at: a length was not estimated.")
        return np.asarray(self.log_z)[idx], np.asarray(self.std_error)[idx]


# -- helpers -------------------------------------------------------------------------------
def log_mean_exp(log_w, axis=-1, *, n_bootstrap: int = 0, rng=None) -> tuple[np.ndarray, np.ndarray]:
    """(log mean exp(log_w), its standard error) along ``axis``.

    The error is the delta-method sd(w) / (sqrt(M) mean(w)), or with ``n_bootstrap`` > 0 the
    standard deviation of the estimate over bootstrap resamples of the runs.
    """
    lw = np.moveaxis(np.asarray(log_w, dtype=np.float64), axis, -1)
    m = lw.shape[-1]
    top = lw.max(axis=-1, keepdims=True)
    w = np.exp(lw - top)
    mean = w.mean(axis=-1)
    est = np.log(mean) + top[..., 0]
    if m < 2:
        return est, np.full(est.shape, np.nan)
    if n_bootstrap:
        rng = np.random.default_rng(0) if rng is None else rng
        idx = rng.integers(0, m, size=(n_bootstrap, m))
        boots = np.log(w[..., idx].mean(axis=-1))
        return est, boots.std(axis=-1, ddof=1)
    se = w.std(axis=-1, ddof=1) / np.sqrt(m) / mean
    return est, se


def default_betas(n_temperatures: int = 14_500) -> np.ndarray:
    """The inverse temperatures 0 = b_0 < ... < b_K = 1, K = ``n_temperatures``.

    Salakhutdinov & Murray (2008): uniform spacing with 500/14,500 of the steps in [0, 0.5),
    4,000/14,500 in [0.5, 0.9) and 10,000/14,500 in [0.9, 1]; the default K = 14,500 is theirs.
    """
    validate_params("default_betas", {"n_temperatures": n_temperatures},
                    {"n_temperatures": [Interval("int", 1, None)]})
    if n_temperatures < 3:
        return np.linspace(0.0, 1.0, n_temperatures + 1)
    k1 = max(1, round(n_temperatures * 500 / 14_500))
    k2 = max(1, round(n_temperatures * 4_000 / 14_500))
    k3 = n_temperatures - k1 - k2
    return np.concatenate([np.linspace(0.0, 0.5, k1, endpoint=False), np.linspace(0.5, 0.9, k2, endpoint=False),
                           np.linspace(0.9, 1.0, k3 + 1)])


#: Named AIS settings for held-out evaluation (``ReplicatedSoftmax.log_likelihood_documents(ais=...)``,
#: ``harmonium.evaluation.perplexity(rsm, test, ais=...)``). ``"default"``: 100 runs, 14,500
#: temperatures (Salakhutdinov & Murray 2008), every distinct document length. ``"fast"``: 20 runs,
#: 1,000 temperatures, log Z annealed at 12 lengths and interpolated between them. Measured bias of
#: "fast" against exact enumeration on a 10-hidden-unit RSM over 2,456 words (63 test lengths 7-193):
#: mean -0.006, max 0.022 nats per log Z (0.0006 nats per token), held-out perplexity 1265.65 vs
#: 1265.78 exact (``benchmarks/harmoniums/ais_fast_bias.py exact``; benchmarks/harmoniums/README.md).
AIS_SETTINGS = {
    "default": {"n_runs": 100, "n_temperatures": 14_500, "n_length_groups": None},
    "fast": {"n_runs": 20, "n_temperatures": 1_000, "n_length_groups": 12},
}


def length_grid(lengths, n_groups: int | None) -> np.ndarray:
    """The document lengths at which to anneal: all distinct ``lengths``, or ``n_groups`` of them.

    With ``n_groups`` smaller than the number of distinct lengths, the grid takes the shortest and
    the longest length and, between them, the distinct lengths nearest to a geometric progression
    (dense where log Z curves most, at short lengths). The other lengths get their log Z by
    :func:`interpolate_log_partition`.

    Examples
    --------
    >>> length_grid([3, 5, 5, 9], None).tolist()
    [3, 5, 9]
    >>> length_grid(range(1, 101), 4).tolist()
    [1, 5, 22, 100]
    """
    u = np.unique(np.asarray(lengths, dtype=np.int64).ravel())
    if n_groups is None or u.size <= n_groups:
        return u
    validate_params("length_grid", {"n_groups": n_groups}, {"n_groups": [Interval("int", 2, None)]})
    lo, hi = max(int(u[0]), 1), int(u[-1])
    targets = np.geomspace(lo, hi, n_groups)
    picked = {int(u[0]), int(u[-1])}
    for t in targets[1:-1]:
        picked.add(int(u[np.argmin(np.abs(np.log(np.maximum(u, 1)) - np.log(t)))]))
    return np.array(sorted(picked), dtype=np.int64)


def interpolate_log_partition(estimate: PartitionEstimate, lengths) -> PartitionEstimate:
    """log Z at every distinct entry of ``lengths`` from an estimate at a grid of lengths.

    Shape-preserving cubic (PCHIP) interpolation of log Z(D) between the grid lengths (exact at
    them); the standard errors are interpolated linearly. Lengths outside the grid are refused.
    """
    from scipy.interpolate import PchipInterpolator

    if estimate.lengths is None:
        raise InvalidParameterError("interpolate_log_partition: the estimate has no lengths (not a replicated "
                                    "softmax model).")
    want = np.unique(np.asarray(lengths, dtype=np.int64).ravel())
    grid = np.asarray(estimate.lengths, dtype=np.int64)
    if want.size and (want[0] < grid[0] or want[-1] > grid[-1]):
        raise InvalidParameterError(f"interpolate_log_partition: lengths {want[0]}..{want[-1]} reach outside the "
                                    f"estimated lengths {grid[0]}..{grid[-1]}; estimate at the extremes too.")
    lz = np.atleast_1d(np.asarray(estimate.log_z, dtype=np.float64))
    se = np.atleast_1d(np.asarray(estimate.std_error, dtype=np.float64))
    if grid.size == 1:
        out_lz, out_se = np.full(want.shape, lz[0]), np.full(want.shape, se[0])
    else:
        out_lz = PchipInterpolator(grid.astype(np.float64), lz)(want.astype(np.float64))
        out_se = np.interp(want, grid, se)
    return estimate._replace(log_z=out_lz, std_error=out_se, lengths=want, log_weights=None,
                             log_z_base=None, method=f"{estimate.method}+interpolated")


def _lengths(model: Harmonium, lengths, where: str):
    if model.length_wing is None:
        if lengths is not None:
            raise InvalidParameterError(f"{where}: this harmonium has no replicated softmax wing; "
                                        "lengths do not apply.")
        return None
    if lengths is None:
        raise InvalidParameterError(f"{where}: Z of a replicated softmax model depends on the document length D; "
                                    "pass lengths.")
    lengths = np.unique(np.asarray(lengths, dtype=np.int64).ravel())
    if lengths.size == 0 or lengths.min() < 0:
        raise InvalidParameterError(f"{where}: lengths must be non-empty and >= 0.")
    return lengths


def data_means(model: Harmonium, xs) -> list[np.ndarray]:
    """Per-wing column means of the data (the base rates of :func:`base_rate_model`)."""
    xs = model.as_wings(xs, "data_means")
    return [np.asarray(x.mean(axis=0), dtype=np.float64).ravel() for x in xs]


def base_rate_model(model: Harmonium, xs=None, *, means=None, n_rows: int | None = None,
                    pseudo_count: float = 0.5) -> Harmonium:
    """The AIS base model p_A: no couplings (W = 0), hidden biases 0, visible biases at base rates.

    With data ``xs`` (or their per-wing column ``means`` over ``n_rows`` rows) the visible
    biases make each unit's mean the data mean, smoothed by ``pseudo_count`` pseudo-observations
    (Salakhutdinov & Murray 2008 smooth the base rates the same way): binary units
    (sum x + a) / (N + 2a), softmax groups (sum counts_i + a) / (sum counts + a n), Poisson
    (sum x + a) / N. A count, not a probability, so that words absent from a large training set
    get a base rate near 1/N: a base model far from the data makes AIS need many more
    temperatures. Without data the target's own visible biases are kept. Variances are the
    target's.
    """
    params = {k: np.zeros_like(v) if k.startswith("W:") or k == "h:bias" else v.copy()
              for k, v in model.params.items()}
    if xs is not None and means is None:
        xs = model.as_wings(xs, "base_rate_model")
        means = data_means(model, xs)
        n_rows = xs[0].shape[0]
    if means is not None:
        n = 100.0 if n_rows is None else float(max(n_rows, 1))
        a = float(pseudo_count)
        for w, wing in enumerate(model.wings):
            mean = np.asarray(means[w], dtype=np.float64).ravel()
            if wing.units.grouped:
                mean = (mean * n + a) / (mean.sum() * n + a * wing.size)
            elif wing.units.kind == "bernoulli":
                mean = (mean * n + a) / (n + 2 * a)
            elif wing.units.kind == "binomial":
                k = wing.units.n_trials
                mean = k * (mean * n / k + a) / (n + 2 * a)
            elif wing.units.kind == "poisson":
                mean = (mean * n + a) / n
            params[f"v:{w}:bias"] = wing.units.base_bias(mean, model.visible_params(w)).astype(model.dtype)
    return model.with_params(params)


def base_log_partition(base: Harmonium, lengths=None) -> float | np.ndarray:
    """log Z_A of a model without couplings: sum_w A_w(theta_w) + sum_j B_j(0) (per length)."""
    hp = base.hidden_params()
    total = float(base.hidden.log_partition(np.zeros((1, base.n_hidden)), hp)[0])
    per_len = np.zeros(1 if lengths is None else len(lengths))
    for w, wing in enumerate(base.wings):
        eta = np.asarray(base.params[f"v:{w}:bias"], dtype=np.float64)[None, :]
        if wing.units.needs_lengths:
            per_len = per_len + np.asarray(lengths, dtype=np.float64) * wing.units.log_partition(eta, None, [1.0])[0]
        else:
            total += float(wing.units.log_partition(eta, base.visible_params(w))[0])
    out = total + per_len
    return float(out[0]) if lengths is None else out


# -- exact -----------------------------------------------------------------------------------
def exact_log_partition(model: Harmonium, lengths=None, *, max_states: int = 1 << 20,
                        chunk: int = 1 << 14) -> PartitionEstimate:
    """log Z by enumerating the smaller enumerable layer (at most ``max_states`` states).

    The hidden layer is enumerated when it can be (log Z = logsumexp_h log p*(h)); otherwise
    every visible wing must be enumerable (Bernoulli, Binomial, Softmax) and log Z =
    logsumexp_x log p*(x).
    """
    lengths = _lengths(model, lengths, "exact_log_partition")
    n_h = model.hidden.n_states(model.n_hidden) if model.hidden.enumerable else np.inf
    n_x = np.prod([w.units.n_states(w.size) if w.units.enumerable else np.inf for w in model.wings])
    if min(n_h, n_x) > max_states:
        raise InvalidParameterError(
            f"exact_log_partition: {min(n_h, n_x):.3g} states to enumerate (hidden {n_h:.3g}, visible {n_x:.3g}) "
            f"exceed max_states={max_states}."
        )
    if n_h <= n_x or lengths is not None:
        if n_h > max_states:
            raise InvalidParameterError("exact_log_partition: replicated softmax models need an enumerable hidden "
                                        f"layer; it has {n_h:.3g} states (max_states={max_states}).")
        states = model.hidden.states(model.n_hidden)
        out = []
        for d in ([None] if lengths is None else lengths):
            parts = []
            for s in range(0, states.shape[0], chunk):
                block = states[s:s + chunk]
                lens = None if d is None else np.full(block.shape[0], float(d))
                parts.append(model.log_unnormalized_hidden(block, lens))
            out.append(logsumexp(np.concatenate(parts)))
        log_z = float(out[0]) if lengths is None else np.array(out)
        return PartitionEstimate(log_z, 0.0 if lengths is None else np.zeros(len(out)), "exact", 0, lengths)
    wing_states = [w.units.states(w.size) for w in model.wings]
    grids = np.meshgrid(*[np.arange(s.shape[0]) for s in wing_states], indexing="ij")
    combos = np.stack([g.ravel() for g in grids], axis=1)
    parts = []
    for s in range(0, combos.shape[0], chunk):
        block = combos[s:s + chunk]
        xs = tuple(ws[block[:, i]] for i, ws in enumerate(wing_states))
        parts.append(model.log_unnormalized(xs))
    return PartitionEstimate(float(logsumexp(np.concatenate(parts))), 0.0, "exact", 0)


# -- naive Monte Carlo (seed 000 Appendix A) --------------------------------------------------
def naive_mc_log_partition(rng, model: Harmonium, n_samples: int = 1000, lengths=None, *,
                           n_bootstrap: int = 0) -> PartitionEstimate:
    """log Z = log Z_q + log E_q[ exp(sum_w A_w(theta_w + W_w h)) ], h from the hidden layer alone.

    q(h) is the hidden layer with only its biases (s lambda), log Z_q = sum_j B_j(s lambda_j). For
    GB-EFH, q = N(0, I) and the weight is prod_i (1 + exp(theta_i + W_i h)) (seed 000 eqs. 35-36).
    Its variance grows exponentially with the coupling strength (seed 000 Fig. 6).
    """
    validate_params("naive_mc_log_partition", {"n_samples": n_samples}, {"n_samples": [Interval("int", 1, None)]})
    rng, _ = check_random_state(rng, "naive_mc_log_partition")
    lengths = _lengths(model, lengths, "naive_mc_log_partition")
    hp = model.hidden_params()
    bias = np.asarray(hp["bias"], dtype=np.float64)
    est, se, lws, lzq = [], [], [], []
    for d in ([None] if lengths is None else lengths):
        s = 1.0 if (d is None or not model.scale_hidden_bias) else float(d)
        eta = np.broadcast_to(s * bias, (n_samples, model.n_hidden))
        h = model.hidden.sample(rng, np.array(eta), hp)
        log_zq = float(model.hidden.log_partition((s * bias)[None, :], hp)[0])
        lens = None if d is None else np.full(n_samples, float(d))
        lw = np.zeros(n_samples)
        for w, wing in enumerate(model.wings):
            eta_v = np.asarray(model.visible_eta(h, w), dtype=np.float64)
            lw += wing.units.log_partition(eta_v, model.visible_params(w), lens)
        e, s_ = log_mean_exp(lw, n_bootstrap=n_bootstrap, rng=rng)
        est.append(float(e) + log_zq)
        se.append(float(s_))
        lws.append(lw)
        lzq.append(log_zq)
    if lengths is None:
        return PartitionEstimate(est[0], se[0], "naive_mc", n_samples, None, lws[0], lzq[0])
    return PartitionEstimate(np.array(est), np.array(se), "naive_mc", n_samples, lengths, np.stack(lws), np.array(lzq))


# -- AIS and simple importance sampling -------------------------------------------------------
def _hidden_log_partition(model, beta, u, bias_term):
    """sum_j B_j(beta (s lambda + U)) for chains, float64."""
    eta = beta * (np.asarray(u, dtype=np.float64) + bias_term)
    return model.hidden.log_partition(eta, model.hidden_params())


def ais_log_partition(rng, model: Harmonium, *, n_runs: int = 100, betas=None, n_temperatures: int | None = None,
                      base: Harmonium | None = None, data=None, means=None, n_rows: int | None = None,
                      lengths=None, n_bootstrap: int = 0, dtype=None, method: str = "ais",
                      progress=None) -> PartitionEstimate:
    """log Z by annealed importance sampling from a base-rate model (seed 001 AIS I-II, eq. 15).

    Parameters
    ----------
    rng : int, Generator or None
    model : Harmonium
    n_runs : int, default 100
        Independent AIS runs M (per document length).
    betas : array, optional
        Inverse temperatures from 0 to 1; default :func:`default_betas` with ``n_temperatures``
        (14,500 unless given).
    base : Harmonium, optional
        The base model p_A (it must have W = 0 and hidden biases 0); default
        :func:`base_rate_model` of ``data`` (or of the model's own biases without data).
    data : wing data, optional
        Training data for the base rates (or their per-wing column ``means`` over ``n_rows`` rows).
    lengths : array of int, optional
        Document lengths D (replicated softmax models): one estimate per distinct D; all
        lengths are annealed together, one chain per (run, length).
    dtype : numpy dtype, optional
        Of the matrix products (float32 halves their cost; the weights are accumulated in float64).
    progress : bool, callable or None, default None
        A progress bar with the time left on stderr: None shows it when stderr is a terminal
        (:func:`harmonium._progress.progress_bar`).

    Returns
    -------
    PartitionEstimate
        log Z_A + log mean_i w_i with w_i = prod_k p*_k(x_k) / p*_{k-1}(x_k).
    """
    validate_params("ais_log_partition", {"n_runs": n_runs}, {"n_runs": [Interval("int", 1, None)]})
    rng, _ = check_random_state(rng, "ais_log_partition")
    lengths = _lengths(model, lengths, "ais_log_partition")
    if betas is None:
        betas = default_betas(14_500 if n_temperatures is None else n_temperatures)
    betas = np.asarray(betas, dtype=np.float64)
    if betas.ndim != 1 or betas.size < 2 or betas[0] != 0.0 or betas[-1] != 1.0 or np.any(np.diff(betas) < 0):
        raise InvalidParameterError("ais_log_partition: betas must increase from 0 to 1.")
    if base is None:
        base = base_rate_model(model, data, means=means, n_rows=n_rows)
    for k, v in base.params.items():
        if (k.startswith("W:") or k == "h:bias") and np.any(v != 0):
            raise InvalidParameterError(f"ais_log_partition: the base model must have {k} = 0.")
    dt = np.dtype(model.dtype if dtype is None else dtype)
    target = model.with_params(model.params, dtype=dt)
    base = base.with_params(base.params, dtype=dt)
    n_len = 1 if lengths is None else lengths.size
    n_chains = n_runs * n_len
    chain_len = None if lengths is None else np.repeat(lengths, n_runs).astype(np.float64)
    scale = 1.0 if not model.scale_hidden_bias else chain_len[:, None]
    h_bias = np.asarray(target.params["h:bias"], dtype=np.float64) * scale  # s lambda_B (lambda_A = 0)
    theta_a = [np.asarray(base.params[f"v:{w}:bias"], dtype=dt) for w in range(len(model.wings))]
    theta_b = [np.asarray(target.params[f"v:{w}:bias"], dtype=dt) for w in range(len(model.wings))]
    weights = [target.params[f"W:{w}"] for w in range(len(model.wings))]
    vparams = [target.visible_params(w) for w in range(len(model.wings))]

    def terms(xs):
        t_a = np.zeros(n_chains)
        t_b = np.zeros(n_chains)
        lb = np.zeros(n_chains)
        u = None
        for w, (x, wing) in enumerate(zip(xs, model.wings, strict=True)):
            t_a += np.asarray(x @ theta_a[w], dtype=np.float64).ravel()
            t_b += np.asarray(x @ theta_b[w], dtype=np.float64).ravel()
            lb += wing.units.log_base(x, vparams[w])
            uw = np.asarray(x @ weights[w])
            u = uw if u is None else u + uw
        return t_a, t_b, lb, u

    def log_p(beta, t_a, t_b, lb, u):
        return (1.0 - beta) * t_a + beta * t_b + lb + _hidden_log_partition(target, beta, u, h_bias)

    # x_1 ~ p_A
    xs = tuple((wing.units.sample_sparse if isinstance(wing.units, BernoulliUnits) else wing.units.sample)(
        rng, np.broadcast_to(theta_a[w], (n_chains, wing.size)).copy(), vparams[w], chain_len)
        for w, wing in enumerate(model.wings))
    log_w = np.zeros(n_chains)
    t_a, t_b, lb, u = terms(xs)
    hp = target.hidden_params()
    bar = progress_bar(progress, betas.size - 1, f"AIS ({n_chains} chains)")
    for k in range(1, betas.size):
        b_prev, b = betas[k - 1], betas[k]
        log_w += log_p(b, t_a, t_b, lb, u) - log_p(b_prev, t_a, t_b, lb, u)
        bar.update()
        if k == betas.size - 1:
            break
        # T_k: block Gibbs at beta_k, h | x then x | h
        eta_h = (b * (u + h_bias)).astype(dt, copy=False)
        h = target.hidden.sample(rng, eta_h, hp)
        hb = (b * h).astype(dt, copy=False)
        new = []
        for w, wing in enumerate(model.wings):
            eta = hb @ weights[w].T
            eta += ((1.0 - b) * theta_a[w] + b * theta_b[w]).astype(dt, copy=False)
            if isinstance(wing.units, BernoulliUnits):
                new.append(wing.units.sample_sparse(rng, eta, vparams[w]))
            else:
                new.append(wing.units.sample(rng, eta, vparams[w], chain_len))
        xs = tuple(new)
        t_a, t_b, lb, u = terms(xs)
    bar.close()
    log_w = log_w.reshape(n_len, n_runs)
    est, se = log_mean_exp(log_w, n_bootstrap=n_bootstrap, rng=rng)
    log_z_a = base_log_partition(base, lengths)
    n_t = betas.size - 1
    if lengths is None:
        return PartitionEstimate(float(est[0] + log_z_a), float(se[0]), method, n_runs, None, log_w[0],
                                 float(log_z_a), n_t)
    return PartitionEstimate(est + log_z_a, se, method, n_runs, lengths, log_w, log_z_a, n_t)


def importance_sampling_log_partition(rng, model: Harmonium, n_samples: int = 1000, *, base: Harmonium | None = None,
                                      data=None, means=None, n_rows: int | None = None, lengths=None,
                                      n_bootstrap: int = 0) -> PartitionEstimate:
    """Simple importance sampling from the base-rate model (seed 001 eqs. 9-10).

    x_i ~ p_A, w_i = p*_B(x_i) / p*_A(x_i), log Z_B = log Z_A + log (1/M) sum_i w_i: AIS with
    the single step 0 -> 1. Its variance is large unless p_A is close to p_B.
    """
    return ais_log_partition(rng, model, n_runs=n_samples, betas=np.array([0.0, 1.0]), base=base, data=data,
                             means=means, n_rows=n_rows, lengths=lengths, n_bootstrap=n_bootstrap,
                             method="importance_sampling")


# -- held-out log-likelihood -------------------------------------------------------------------
def harmonium_log_likelihood(model: Harmonium, xs, log_z: PartitionEstimate) -> tuple[np.ndarray, np.ndarray]:
    """Per-row log p(x) = log p*(x) - log Z(D) and its standard error.

    The error of log Z is shared by every row of one length, so the per-row errors are scaled
    such that their sum of squares is the variance of the total: se_d = se(log Z_D) sqrt(n_D),
    n_D the number of rows of length D. Totals and perplexities computed from them
    (:class:`~harmonium.evaluation.LogLikelihoodResult`) carry the right error; a single row's
    error is overstated by sqrt(n_D).
    """
    xs = model.as_wings(xs, "harmonium_log_likelihood")
    lengths = model.lengths(xs)
    log_p = model.log_unnormalized(xs, lengths)
    if lengths is None:
        lz, se = float(log_z.log_z), float(log_z.std_error)
        n = log_p.shape[0]
        return log_p - lz, np.full(n, se * np.sqrt(n))
    d = np.rint(lengths).astype(np.int64)
    lz, se = log_z.at(d)
    uniq, counts = np.unique(d, return_counts=True)
    n_of = counts[np.searchsorted(uniq, d)]
    return log_p - lz, se * np.sqrt(n_of)

