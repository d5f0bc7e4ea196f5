"""Posterior sampling of a Bayesian EFH's couplings W by the Langevin algorithm (seed 000 §3.1.2, §3.2).

One step (seed 000 eq. 13)

    W' = W + (eps^2 / 2) g(W) + eps xi,      xi ~ N(0, I),
    g(W) = grad log p(W) + grad log p*(X | W) - s N grad log Z(W)      (eqs. 14-17, s = 1),

with grad log Z estimated by brief sampling (l Gibbs sweeps from the data, §3.2) or, on models small
enough to enumerate, exactly. The proposal is :func:`harmonium.inference.mcmc.langevin.propose`
(the generic ULA/MALA sampler's); only the gradient is BEFH-specific.

Options (:class:`LangevinConfig`):

* ``adjust``: None (the paper's unadjusted chain), "exact" (MALA with log Z by enumeration: exact on
  tiny models), "is" (MALA with log Z(W) - log Z(W') from the importance-sampling identity, eq. 12,
  with samples of p(x | W') from ``is_sampler``). The MH correction uses the same (possibly
  estimated) gradients in the proposal densities.
* ``batch_size``: mini-batches of the data, gradient scaled by N / n (stochastic gradient Langevin
  dynamics, Welling & Teh 2011 eq. 4) with step eps_t = step_size (1 + t / sgld_tau)^-sgld_gamma.
* ``log_partition_sign``: 1 (the posterior); 0 and -1 exist only as the tests' negative controls
  (the log Z gradient dropped or sign-flipped).

State / init / build_kernel as DESIGN.md: ``kernel(rng, state) -> (state, info)``; the data, model
(theta fixed) and prior are bound in the kernel. :func:`sample_posterior` runs several chains from
different starts (child streams), with burn-in and thinning, and returns the stored draws; split
R-hat and ESS come from :mod:`harmonium.evaluation.diagnostics` (the estimator computes them on the
identifiable V = W W^T).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from harmonium.errors import InvalidParameterError
from harmonium.inference.mcmc.langevin import proposal_logdensity, propose
from harmonium.models.undirected import bayesian_efh as befh
from harmonium.models.undirected.efh import Harmonium
from harmonium.parallel.seeds import spawn

__all__ = ["LangevinConfig", "BEFHLangevinInfo", "BEFHLangevinState", "PosteriorSamples", "build_kernel",
           "gradient", "init", "log_partition_ratio_is", "sample_posterior", "exact_visible_sampler"]


@dataclass(frozen=True)
class LangevinConfig:
    """Tuning of the BEFH Langevin kernel (not part of the state).

    step_size : eps of eq. 13.
    gradient : "brief" (§3.2) or "exact" (enumeration).
    n_gibbs : l, the brief-sampling sweeps.
    adjust : None, "exact" or "is" (see the module docstring).
    n_is_samples : samples of p(x | W') for the eq. 12 ratio.
    is_sampler : callable ``(rng, model, n) -> xs`` drawing from p(x | W) (e.g. CFTP or
        :func:`exact_visible_sampler`); None: ``n_is_gibbs`` Gibbs sweeps started at the data.
    batch_size : None (all N rows) or n < N (SGLD).
    """

    step_size: float = 0.01
    gradient: str = "brief"
    n_gibbs: int = 1
    adjust: str | None = None
    n_is_samples: int = 1000
    is_sampler: Callable | None = None
    n_is_gibbs: int = 50
    batch_size: int | None = None
    sgld_tau: float = 1000.0
    sgld_gamma: float = 0.0
    log_partition_sign: float = 1.0

    def check(self):
        if not (np.isfinite(self.step_size) and self.step_size > 0):
            raise InvalidParameterError(f"LangevinConfig: 'step_size' must be a float > 0. Got {self.step_size!r}.")
        if self.gradient not in ("brief", "exact"):
            raise InvalidParameterError(f"LangevinConfig: 'gradient' must be 'brief' or 'exact'. "
                                        f"Got {self.gradient!r}.")
        if self.adjust not in (None, "exact", "is"):
            raise InvalidParameterError(f"LangevinConfig: 'adjust' must be None, 'exact' or 'is'. Got {self.adjust!r}.")
        if int(self.n_gibbs) < 1:
            raise InvalidParameterError(f"LangevinConfig: 'n_gibbs' (l) must be an int >= 1. Got {self.n_gibbs!r}.")
        if self.batch_size is not None and self.adjust is not None:
            raise InvalidParameterError("LangevinConfig: mini-batches (SGLD) cannot be Metropolis-adjusted; "
                                        "set batch_size=None or adjust=None.")


class BEFHLangevinState(NamedTuple):
    """position: W of every wing, flat; grad: the (estimated) eq. 14 gradient there; log_z: log Z(W)
    when the kernel needs it (adjust="exact"), else nan; t: steps taken."""

    position: np.ndarray
    grad: np.ndarray
    log_z: float
    t: int


class BEFHLangevinInfo(NamedTuple):
    acceptance_prob: float
    is_accepted: bool
    grad_norm: float
    step_size: float


class _Target:
    """The bound pieces: model (W set in place), data, priors, enumerated states."""

    def __init__(self, model: Harmonium, xs, priors, lengths, cfg: LangevinConfig):
        self.model = befh.posterior_model(model)
        self.xs = befh.as_wings_f64(self.model, xs)
        self.lengths = lengths
        self.n = self.xs[0].shape[0]
        if len(priors) != len(self.model.wings):
            raise InvalidParameterError(f"BEFH Langevin: {len(priors)} priors for {len(self.model.wings)} wings.")
        for w, (p, wing) in enumerate(zip(priors, self.model.wings, strict=True)):
            if p.n_visible != wing.size:
                raise InvalidParameterError(f"BEFH Langevin: the prior of wing {w} has {p.n_visible} entries; the wing "
                                            f"has {wing.size} units.")
        self.priors = list(priors)
        self.cfg = cfg
        self.states = None
        if cfg.gradient == "exact" or cfg.adjust == "exact" or cfg.is_sampler is exact_visible_sampler:
            self.states, _, _ = befh.visible_distribution(self.model)

    def set(self, position):
        befh.set_couplings(self.model, position)

    def log_prior(self, position) -> float:
        W = befh.unpack(self.model, position)
        return sum(p.log_density(W[f"W:{w}"]) for w, p in enumerate(self.priors))

    def grad_log_prior(self, position) -> np.ndarray:
        W = befh.unpack(self.model, position)
        return np.concatenate([p.grad_log_density(W[f"W:{w}"]).ravel() for w, p in enumerate(self.priors)])


def _rows(xs, idx):
    return tuple(x[idx] for x in xs)


def gradient(rng, target: _Target, position, batch=None) -> tuple[np.ndarray, float]:
    """Seed 000 eq. 14 at ``position``: (gradient, log Z or nan). ``batch``: row indices (SGLD)."""
    cfg = target.cfg
    target.set(position)
    xs = target.xs if batch is None else _rows(target.xs, batch)
    n = xs[0].shape[0]
    lengths = None if target.lengths is None or batch is None else target.lengths[batch]
    scale = target.n / n
    g_data = befh.grad_log_unnormalized_likelihood(target.model, xs, lengths)
    log_z = np.nan
    if cfg.gradient == "exact":
        g_z, log_z = befh.grad_log_partition_exact(target.model, target.states)
    else:
        g_z = befh.grad_log_partition_brief(rng, target.model, xs, cfg.n_gibbs, lengths)
    g = target.grad_log_prior(position) + scale * g_data - cfg.log_partition_sign * target.n * g_z
    return g, log_z


def init(rng, model: Harmonium, xs, priors, cfg: LangevinConfig, position=None, lengths=None) -> BEFHLangevinState:
    """The state at ``position`` (default: the model's W)."""
    target = _Target(model, xs, priors, lengths, cfg)
    q = befh.pack(target.model) if position is None else np.array(position, dtype=np.float64)
    g, log_z = gradient(rng, target, q, None if cfg.batch_size is None else np.arange(min(cfg.batch_size, target.n)))
    if cfg.adjust == "exact" and not np.isfinite(log_z):
        log_z = befh.visible_distribution(target.model)[2]
    return BEFHLangevinState(q, g, float(log_z), 0)


def exact_visible_sampler(rng, model: Harmonium, n: int) -> tuple:
    """n exact draws of x ~ p(x | W) by enumeration (tiny models; the tests' reference sampler)."""
    states, p, _ = befh.visible_distribution(model)
    idx = rng.choice(p.size, size=n, p=p)
    return tuple(s[idx] for s in states)


def log_partition_ratio_is(model: Harmonium, params_other: dict, xs) -> tuple[float, float]:
    """Seed 000 eq. 12: log Z(W) - log Z(W') = log < exp(log p*(x | W) - log p*(x | W')) >_{p(x | W')}.

    ``model`` holds W' (the couplings the samples ``xs`` come from, x ~ p(x | W')); ``params_other``
    holds W (e.g. ``{"W:0": ...}``). Returns (estimate of log Z(W) - log Z(W'), delta-method
    standard error). ``model`` is left as it was.
    """
    lp_sampled = model.log_unnormalized(xs)
    saved = {k: model.params[k] for k in params_other}
    for k, v in params_other.items():
        model.params[k] = v
    lp_other = model.log_unnormalized(xs)
    model.params.update(saved)
    lw = np.asarray(lp_other - lp_sampled, dtype=np.float64)
    top = lw.max()
    w = np.exp(lw - top)
    mean = w.mean()
    se = w.std(ddof=1) / np.sqrt(w.size) / mean if w.size > 1 else np.nan
    return float(np.log(mean) + top), float(se)


def _log_posterior_diff(rng, target: _Target, q0, q1, log_z0, log_z1) -> float:
    """log p(W1 | X) - log p(W0 | X) with log Z exact (log_z given) or its ratio by eq. 12."""
    cfg = target.cfg
    target.set(q0)
    ll0 = befh.log_unnormalized_likelihood(target.model, target.xs, target.lengths)
    target.set(q1)
    ll1 = befh.log_unnormalized_likelihood(target.model, target.xs, target.lengths)
    if cfg.adjust == "exact":
        dz = log_z0 - log_z1
    else:
        if cfg.is_sampler is not None:
            xs1 = cfg.is_sampler(rng, target.model, cfg.n_is_samples)
        else:
            xs1 = target.xs
            for _ in range(cfg.n_is_gibbs):
                xs1, _ = target.model.gibbs_step(rng, xs1, target.lengths)
        W0 = befh.unpack(target.model, q0)
        dz, _ = log_partition_ratio_is(target.model, W0, xs1)  # model at W1: log Z(W0) - log Z(W1)
    return (target.log_prior(q1) - target.log_prior(q0) + ll1 - ll0 + cfg.log_partition_sign * target.n * dz)


def build_kernel(model: Harmonium, xs, priors, cfg: LangevinConfig, lengths=None) -> Callable:
    """``kernel(rng, state) -> (state, BEFHLangevinInfo)`` for the config's variant."""
    cfg.check()
    target = _Target(model, xs, priors, lengths, cfg)
    ones = None

    def kernel(rng: np.random.Generator, state: BEFHLangevinState):
        nonlocal ones
        if ones is None:
            ones = np.ones(state.position.shape[0])
        eps = cfg.step_size
        batch = None
        if cfg.batch_size is not None and cfg.batch_size < target.n:
            eps = cfg.step_size * (1.0 + state.t / cfg.sgld_tau) ** (-cfg.sgld_gamma)
            batch = np.sort(rng.choice(target.n, size=cfg.batch_size, replace=False))
        q1 = propose(rng, state.position, state.grad, eps, ones)
        g1, log_z1 = gradient(rng, target, q1, batch)
        gn = float(np.sqrt(np.sum(g1 * g1)))
        if cfg.adjust is None:
            return BEFHLangevinState(q1, g1, float(log_z1), state.t + 1), BEFHLangevinInfo(1.0, True, gn, eps)
        if cfg.adjust == "exact" and not np.isfinite(log_z1):
            log_z1 = befh.visible_distribution(target.model)[2]
        log_ratio = _log_posterior_diff(rng, target, state.position, q1, state.log_z, log_z1)
        log_ratio += (proposal_logdensity(state.position, q1, g1, eps, ones)
                      - proposal_logdensity(q1, state.position, state.grad, eps, ones))
        if not np.isfinite(log_ratio):
            log_ratio = -np.inf
        acc = 1.0 if log_ratio >= 0 else float(np.exp(log_ratio))
        if rng.random() < acc:
            return BEFHLangevinState(q1, g1, float(log_z1), state.t + 1), BEFHLangevinInfo(acc, True, gn, eps)
        return state._replace(t=state.t + 1), BEFHLangevinInfo(acc, False, gn, eps)

    kernel.target = target
    return kernel


class PosteriorSamples(NamedTuple):
    """Stored draws of W and what the chains did.

    draws : (n_chains, n_samples, d) flat W after burn-in and thinning.
    trace : (n_chains, n_warmup + n_samples * thin) the coordinates ``trace_index`` at every step.
    acceptance : (n_chains,) mean acceptance probability after burn-in (1 for unadjusted chains).
    n_divergent : steps whose position went non-finite (the chain is then stopped and flagged).
    """

    draws: np.ndarray
    trace: np.ndarray
    acceptance: np.ndarray
    n_divergent: int
    seconds: float


def sample_posterior(rng: np.random.Generator, model: Harmonium, xs, priors, cfg: LangevinConfig, *,
                     n_chains: int = 3, n_warmup: int = 200, n_samples: int = 100, thin: int = 1,
                     init_positions=None, trace_index=(0,), lengths=None, callback=None) -> PosteriorSamples:
    """Run ``n_chains`` chains (child streams of ``rng``), discard ``n_warmup`` steps, keep every
    ``thin``-th of the next ``n_samples * thin``.

    ``init_positions``: (n_chains, d) starting points; default: the model's W plus prior-scale
    noise per chain (different starts, as seed 000 Fig. 3).
    """
    import time

    cfg.check()
    kernel = build_kernel(model, xs, priors, cfg, lengths)
    target = kernel.target
    q0 = befh.pack(target.model)
    d = q0.size
    if init_positions is None:
        noise = np.concatenate([np.broadcast_to(p.scale[:, None], target.model.params[f"W:{w}"].shape).ravel()
                                for w, p in enumerate(target.priors)])
        init_positions = [None] * n_chains
    else:
        init_positions = np.asarray(init_positions, dtype=np.float64)
        if init_positions.shape != (n_chains, d):
            raise InvalidParameterError(f"sample_posterior: init_positions must have shape ({n_chains}, {d}); "
                                        f"got {init_positions.shape}.")
    children = spawn(rng, n_chains)  # a function of rng's state, also for a Generator restored from a file
    draws = np.empty((n_chains, n_samples, d))
    tidx = np.asarray(trace_index, dtype=np.int64)
    trace = np.full((n_chains, n_warmup + n_samples * thin, tidx.size), np.nan)
    acc = np.zeros(n_chains)
    n_div = 0
    t0 = time.perf_counter()
    for c, crng in enumerate(children):
        if init_positions[c] is None:
            start = q0 + noise * crng.standard_normal(d)
        else:
            start = init_positions[c]
        state = init(crng, target.model, target.xs, target.priors, cfg, start, lengths)
        acc_sum = 0.0
        k = 0
        for t in range(n_warmup + n_samples * thin):
            state, info = kernel(crng, state)
            if not np.isfinite(state.position).all():
                n_div += 1
                draws[c, k:] = np.nan
                break
            trace[c, t] = state.position[tidx]
            if t >= n_warmup:
                acc_sum += info.acceptance_prob
                if (t - n_warmup + 1) % thin == 0:
                    draws[c, k] = state.position
                    k += 1
            if callback is not None:
                callback(c, t, state, info)
        acc[c] = acc_sum / max(1, n_samples * thin)
    return PosteriorSamples(draws, trace[..., 0] if tidx.size == 1 else trace, acc, n_div,
                            time.perf_counter() - t0)
