"""Langevin samplers: the unadjusted Langevin algorithm (ULA) and Metropolis-adjusted Langevin (MALA).

Roberts & Tweedie (1996), Bernoulli 2(4): the Euler discretisation of the Langevin diffusion
dX = grad log pi(X) dt + sqrt(2) dW with time step h = eps^2 / 2, preconditioned by the diagonal
``inverse_mass`` M^-1:

    x' = x + (eps^2 / 2) M^-1 grad log pi(x) + eps M^-1/2 xi,      xi ~ N(0, I).

ULA keeps every x' and is biased (for a N(0, s^2) target its stationary variance is
s^2 / (1 - eps^2 / (4 s^2)), a closed form the tests use). MALA accepts x' with probability
min(1, pi(x') q(x | x') / (pi(x) q(x' | x))), q the Gaussian proposal density above
(:func:`proposal_logdensity`), and leaves pi invariant.

State / init / build_kernel as in :mod:`harmonium.inference.mcmc.hmc` (same state type). These
numpy kernels draw the same random numbers as the compiled ones in
:mod:`harmonium._kernels.mcmc_langevin`: d normals, then (MALA) one uniform.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from harmonium.inference.mcmc.hmc import HMCState, init

LangevinState = HMCState
__all__ = ["LangevinInfo", "LangevinState", "build_mala_kernel", "build_ula_kernel", "init", "proposal_logdensity"]


class LangevinInfo(NamedTuple):
    """One Langevin step: MH acceptance probability (1 for ULA) and whether it moved."""

    acceptance_prob: float
    is_accepted: bool


def _inverse_mass(inverse_mass, d):
    return np.ones(d) if inverse_mass is None else np.asarray(inverse_mass, dtype=np.float64)


def propose(rng: np.random.Generator, position, grad, step_size: float, inverse_mass) -> np.ndarray:
    """x + (eps^2/2) M^-1 g + eps M^-1/2 xi (d normals)."""
    return (position + 0.5 * step_size * step_size * inverse_mass * grad
            + step_size * np.sqrt(inverse_mass) * rng.standard_normal(position.shape[0]))


def proposal_logdensity(x_to, x_from, grad_from, step_size: float, inverse_mass=None) -> float:
    """log q(x_to | x_from) up to a constant that cancels in the MH ratio."""
    im = _inverse_mass(inverse_mass, np.shape(x_to)[0])
    r = x_to - x_from - 0.5 * step_size * step_size * im * grad_from
    return -float(np.sum(r * r / im)) / (2.0 * step_size * step_size)


def mala_log_ratio(state: HMCState, proposal: HMCState, step_size: float, inverse_mass=None,
                   correct: bool = True) -> float:
    """log of the MALA acceptance ratio from ``state`` to ``proposal``.

    ``correct=False`` drops the proposal densities (a plain Metropolis ratio for an asymmetric
    proposal): it exists only as the tests' negative control.
    """
    log_ratio = proposal.logdensity - state.logdensity
    if correct:
        log_ratio += (proposal_logdensity(state.position, proposal.position, proposal.grad, step_size, inverse_mass)
                      - proposal_logdensity(proposal.position, state.position, state.grad, step_size, inverse_mass))
    return log_ratio if np.isfinite(log_ratio) else -np.inf


def build_mala_kernel(logdensity_and_grad: Callable, step_size: float, inverse_mass=None, data: tuple = (),
                      correct: bool = True) -> Callable:
    """MALA: ``kernel(rng, state) -> (state, LangevinInfo)``. ``correct`` as in :func:`mala_log_ratio`."""

    def kernel(rng: np.random.Generator, state: HMCState):
        im = _inverse_mass(inverse_mass, state.position.shape[0])
        x1 = propose(rng, state.position, state.grad, step_size, im)
        lp1, g1 = logdensity_and_grad(x1, *data)
        proposal = HMCState(x1, float(lp1), np.asarray(g1, dtype=np.float64))
        log_ratio = mala_log_ratio(state, proposal, step_size, im, correct)
        accept_prob = 1.0 if log_ratio >= 0.0 else float(np.exp(log_ratio))
        if rng.random() < accept_prob:
            return proposal, LangevinInfo(accept_prob, True)
        return state, LangevinInfo(accept_prob, False)

    return kernel


def build_ula_kernel(logdensity_and_grad: Callable, step_size: float, inverse_mass=None, data: tuple = ()) -> Callable:
    """ULA: ``kernel(rng, state) -> (state, LangevinInfo)``; every proposal is kept (biased)."""

    def kernel(rng: np.random.Generator, state: HMCState):
        im = _inverse_mass(inverse_mass, state.position.shape[0])
        x1 = propose(rng, state.position, state.grad, step_size, im)
        lp1, g1 = logdensity_and_grad(x1, *data)
        return HMCState(x1, float(lp1), np.asarray(g1, dtype=np.float64)), LangevinInfo(1.0, True)

    return kernel
