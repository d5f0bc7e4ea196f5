"""Metropolis-Hastings: the general kernel and the adaptive random walk (RWMH).

Seed 003 ("Metropolis-Hastings"): draw w* ~ r(w* | w), keep it with probability

    T = min(1, p(w*) r(w | w*) / (p(w) r(w* | w))),

which satisfies detailed balance p(w) r(w* | w) T(w, w*) = p(w*) r(w | w*) T(w*, w).

* :func:`build_mh_kernel`: any proposal, given as ``propose(rng, x) -> x*`` and its log density
  ``proposal_logdensity(x_to, x_from)``; works on any state (vectors, integers, tuples).
  :func:`acceptance_probability` is exposed so that tests can build exact transition matrices.
* :func:`build_kernel`: the Gaussian random walk x* = x + s * sd * xi (symmetric, so r cancels).
  :func:`warmup` adapts log s by Robbins-Monro toward an acceptance rate of 0.234 (Roberts,
  Gelman & Gilks 1997; 0.44 in one dimension), ``log s += t^-0.6 (alpha_t - 0.234)`` (Andrieu &
  Thoms 2008, eq. 6), and re-estimates ``sd`` in Stan's slow windows. Adaptation stops at the end
  of warm-up, so the kept draws come from one fixed kernel and pi is exactly invariant.

The compiled chain (``harmonium._kernels.mcmc_rwmh``) draws the same random numbers as
:func:`build_kernel`'s kernel: d normals, then one uniform.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from harmonium._kernels import mcmc_adapt as adapt


class RWMHState(NamedTuple):
    """Position and its log density."""

    position: Any
    logdensity: float


class RWMHInfo(NamedTuple):
    """One MH transition: acceptance probability and whether the proposal was taken."""

    acceptance_prob: float
    is_accepted: bool


def init(position, logdensity: Callable, data: tuple = ()) -> RWMHState:
    """The state at ``position`` (float vectors are copied as float64; other states kept as given)."""
    if isinstance(position, np.ndarray) and position.dtype.kind == "f":
        position = np.array(position, dtype=np.float64)
    return RWMHState(position, float(logdensity(position, *data)))


def acceptance_probability(logdensity_from: float, logdensity_to: float, log_q_forward: float = 0.0,
                           log_q_backward: float = 0.0) -> float:
    """min(1, pi(x*) q(x | x*) / (pi(x) q(x* | x))); a proposal with non-finite log density is never taken."""
    if not np.isfinite(logdensity_to):
        return 0.0
    log_ratio = logdensity_to - logdensity_from + log_q_backward - log_q_forward
    if np.isnan(log_ratio):
        return 0.0
    return 1.0 if log_ratio >= 0.0 else float(np.exp(log_ratio))


def build_mh_kernel(logdensity: Callable, propose: Callable, proposal_logdensity: Callable | None = None,
                    data: tuple = ()) -> Callable:
    """General Metropolis-Hastings: ``kernel(rng, state) -> (state, RWMHInfo)``.

    ``propose(rng, x) -> x*``; ``proposal_logdensity(x_to, x_from) -> log r(x_to | x_from)``, None
    for a symmetric proposal. Random numbers: those of ``propose``, then one uniform.
    """

    def kernel(rng: np.random.Generator, state: RWMHState):
        x1 = propose(rng, state.position)
        lp1 = float(logdensity(x1, *data))
        if proposal_logdensity is None:
            a = acceptance_probability(state.logdensity, lp1)
        else:
            a = acceptance_probability(state.logdensity, lp1, proposal_logdensity(x1, state.position),
                                       proposal_logdensity(state.position, x1))
        if rng.random() < a:
            return RWMHState(x1, lp1), RWMHInfo(a, True)
        return state, RWMHInfo(a, False)

    return kernel


def build_kernel(logdensity: Callable, scale: float, proposal_sd=None, data: tuple = ()) -> Callable:
    """Gaussian random walk x* = x + scale * proposal_sd * xi: ``kernel(rng, state) -> (state, RWMHInfo)``."""

    def propose(rng, x):
        sd = np.ones(x.shape[0]) if proposal_sd is None else proposal_sd
        return x + scale * sd * rng.standard_normal(x.shape[0])

    return build_mh_kernel(logdensity, propose, None, data)


def default_scale(dim: int) -> float:
    """2.38 / sqrt(d), optimal for Gaussian targets with matched proposal shape (Roberts et al. 1997)."""
    return 2.38 / np.sqrt(dim)


def default_target(dim: int) -> float:
    """Target acceptance rate: 0.44 in one dimension, 0.234 otherwise."""
    return 0.44 if dim == 1 else 0.234


def warmup(rng: np.random.Generator, logdensity: Callable, state: RWMHState, n_warmup: int, *, scale=None,
           proposal_sd=None, target_accept=None, adapt_scale: bool = True, adapt_sd: bool = True,
           windows: tuple | None = None, data: tuple = (), infos: list | None = None):
    """Adaptive warm-up; returns ``(state, scale, proposal_sd)`` to build the fixed sampling kernel.

    Robbins-Monro on log scale every iteration (gain restarting at each window end) and the
    proposal sd re-estimated as the regularised sd of each slow window's draws (Stan's windows).
    ``windows``, when given, is the ``(in_window, window_end)`` schedule to use instead of
    ``window_schedule(n_warmup, adapt_sd)``. ``infos``, when a list, receives each warm-up
    iteration's info.
    """
    d = state.position.shape[0]
    scale = default_scale(d) if scale is None else float(scale)
    sd = np.ones(d) if proposal_sd is None else np.array(proposal_sd, dtype=np.float64)
    target = default_target(d) if target_accept is None else float(target_accept)
    in_window, window_end = adapt.window_schedule(n_warmup, adapt_sd) if windows is None else windows
    mean, m2, count, var = np.zeros(d), np.zeros(d), np.zeros(1), np.empty(d)
    log_scale, t_rm = np.log(scale), 1.0
    for t in range(n_warmup):
        state, info = build_kernel(logdensity, scale, sd, data)(rng, state)
        if infos is not None:
            infos.append(info)
        if adapt_scale:
            log_scale = adapt.rm_update(log_scale, info.acceptance_prob, target, t_rm)
            scale = float(np.exp(log_scale))
            t_rm += 1.0
        if in_window[t]:
            adapt.welford_update(mean, m2, count, state.position)
        if window_end[t]:
            adapt.welford_variance(m2, count, var)
            adapt.welford_reset(mean, m2, count)
            sd = np.sqrt(var)
            t_rm = 1.0
    return state, scale, sd
