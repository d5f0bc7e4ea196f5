"""Hamiltonian Monte Carlo with a leapfrog integrator, and the No-U-Turn Sampler (multinomial NUTS).

* HMC: Neal (2011), "MCMC using Hamiltonian dynamics", Handbook of MCMC ch. 5: momentum
  p ~ N(0, M), ``n_steps`` leapfrog steps (eqs. 5.18-5.20), accept with min(1, exp(H(q, p) -
  H(q', p'))) (eq. 3.6), H = -log pi(q) + p' M^-1 p / 2.
* NUTS: Hoffman & Gelman (2014), JMLR 15, with the multinomial trajectory sampling and the
  generalised U-turn criterion of Betancourt (2017), arXiv:1701.02434, appendix A; iterative
  subtree building with momentum checkpoints as in NumPyro.
* Step-size heuristic: Hoffman & Gelman (2014) Algorithm 4 (:func:`find_step_size`). Warm-up
  (dual averaging, diagonal mass matrix) is in :mod:`harmonium.inference.mcmc.warmup`.

State / init / build_kernel as in DESIGN.md, BlackJAX-style: ``kernel(rng, state) -> (state,
info)``. The log density and its data are bound when the kernel is built (they play the part of
``data, model`` in ``inference.run``'s signature). Tuning (step size, steps, inverse mass) lives in
the kernel, never in the state. Positions are 1-d float64 arrays; ``logdensity_and_grad(x, *data)``
returns ``(log pi(x), grad log pi(x))``.

These numpy kernels are the reference of the compiled ones in :mod:`harmonium._kernels.mcmc_hmc`
and draw the same random numbers in the same order, so equal seeds give equal chains.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from harmonium._kernels.mcmc_common import DIVERGENCE


class HMCState(NamedTuple):
    """Position, its log density and the gradient there."""

    position: np.ndarray
    logdensity: float
    grad: np.ndarray


class HMCInfo(NamedTuple):
    """One HMC transition: acceptance probability, whether it moved, divergence, energy, steps."""

    acceptance_prob: float
    is_accepted: bool
    is_divergent: bool
    energy: float
    n_steps: int


class NUTSInfo(NamedTuple):
    """One NUTS transition; ``acceptance_prob`` is the mean over the trajectory (for adaptation)."""

    acceptance_prob: float
    is_accepted: bool
    is_divergent: bool
    energy: float
    n_steps: int
    tree_depth: int


def init(position, logdensity_and_grad: Callable, data: tuple = ()) -> HMCState:
    """The state at ``position`` (a 1-d float64 array, copied)."""
    q = np.array(position, dtype=np.float64)
    lp, g = logdensity_and_grad(q, *data)
    return HMCState(q, float(lp), np.array(g, dtype=np.float64))


def _inverse_mass(inverse_mass, d):
    return np.ones(d) if inverse_mass is None else np.asarray(inverse_mass, dtype=np.float64)


def kinetic_energy(p, inverse_mass) -> float:
    with np.errstate(over="ignore", invalid="ignore"):  # a diverging trajectory is handled by the caller
        return 0.5 * float(np.sum(inverse_mass * p * p))


def leapfrog(logdensity_and_grad, data, q, p, g, step_size, n_steps, inverse_mass):
    """``n_steps`` leapfrog steps from (q, p) with gradient g; returns new (q, p, log pi, g) (inputs untouched)."""
    lp = np.nan
    half = 0.5 * step_size
    for _ in range(n_steps):
        p = p + half * g
        q = q + step_size * inverse_mass * p
        lp, g = logdensity_and_grad(q, *data)
        g = np.asarray(g, dtype=np.float64)
        p = p + half * g
    return q, p, lp, g


def _energy_error(lp_new, p_new, inverse_mass, h0):
    h = -lp_new + kinetic_energy(p_new, inverse_mass)
    if not np.isfinite(h):
        return np.inf, np.inf
    return h - h0, h


def build_kernel(logdensity_and_grad: Callable, step_size: float, n_steps: int, inverse_mass=None,
                 data: tuple = (), integrator: Callable = leapfrog) -> Callable:
    """Static HMC: ``kernel(rng, state) -> (state, HMCInfo)``.

    ``integrator`` is exposed so that tests can swap in a broken one (negative controls).
    Random numbers: d normals (momentum), then one uniform (accept).
    """

    def kernel(rng: np.random.Generator, state: HMCState):
        q, lp, g = state
        im = _inverse_mass(inverse_mass, q.shape[0])
        p = rng.standard_normal(q.shape[0]) / np.sqrt(im)
        h0 = -lp + kinetic_energy(p, im)
        q1, p1, lp1, g1 = integrator(logdensity_and_grad, data, q, p, g, step_size, n_steps, im)
        delta, h1 = _energy_error(lp1, p1, im, h0)
        accept_prob = 1.0 if delta <= 0.0 else float(np.exp(-delta))
        accepted = bool(rng.random() < accept_prob)
        info = HMCInfo(accept_prob, accepted, bool(delta > DIVERGENCE), h1 if accepted else h0, n_steps)
        if accepted:
            return HMCState(q1, float(lp1), g1), info
        return state, info

    return kernel


def _is_turning(p_a, p_b, r_sum, inverse_mass):
    r = r_sum - 0.5 * (p_a + p_b)
    return bool(np.sum(inverse_mass * p_a * r) <= 0.0 or np.sum(inverse_mass * p_b * r) <= 0.0)


def _popcount(n):
    return bin(n).count("1")


def _trailing_ones(n):
    c = 0
    while n & 1:
        c, n = c + 1, n >> 1
    return c


def build_nuts_kernel(logdensity_and_grad: Callable, step_size: float, inverse_mass=None, data: tuple = (),
                      max_tree_depth: int = 10, weight_energy: bool = True) -> Callable:
    """Multinomial NUTS: ``kernel(rng, state) -> (state, NUTSInfo)``.

    Each doubling extends the trajectory by 2^depth leapfrog steps in a random direction. Inside the
    new subtree the candidate is drawn progressively with weights exp(-H); the subtree's candidate
    replaces the current one with probability min(1, W_subtree / W_old) (biased progressive
    sampling). A subtree that U-turns (any of its sub-subtrees, checked against momentum
    checkpoints) or diverges is discarded and the trajectory stops; so does a tree whose ends
    U-turn, or one of depth ``max_tree_depth``. ``weight_energy=False`` weights leaves by pi(q)
    instead of exp(-H) and exists only as a negative control for the tests.
    """
    max_depth = int(max_tree_depth)

    def _weight(lp_n, h):
        return -h if weight_energy else (lp_n if np.isfinite(lp_n) else -np.inf)

    def _nuts(rng, state):
        q0, lp0, g0 = state
        d = q0.shape[0]
        im = _inverse_mass(inverse_mass, d)
        p0 = rng.standard_normal(d) / np.sqrt(im)
        h0 = -lp0 + kinetic_energy(p0, im)
        left = right = (q0, p0, g0)
        prop = (q0, lp0, g0, h0)
        r_sum = p0.copy()
        log_w = _weight(lp0, h0)
        ckpt_p = np.empty((max(max_depth, 1), d))
        ckpt_r = np.empty((max(max_depth, 1), d))
        depth, n_leapfrog, sum_accept = 0, 0, 0.0
        diverging = moved = False
        while depth < max_depth:
            go_right = bool(rng.random() < 0.5)
            qn, pn, gn = right if go_right else left
            eps = step_size if go_right else -step_size
            log_w_sub = -np.inf
            sub = None
            s_rsum = np.zeros(d)
            stop = False
            for n in range(1 << depth):
                qn, pn, lp_n, gn = leapfrog(logdensity_and_grad, data, qn, pn, gn, eps, 1, im)
                n_leapfrog += 1
                delta, h = _energy_error(lp_n, pn, im, h0)
                sum_accept += 1.0 if delta <= 0.0 else float(np.exp(-delta))
                w = _weight(lp_n, h)
                log_w_new = np.logaddexp(log_w_sub, w)
                if rng.random() < _exp_diff(w, log_w_new):
                    sub = (qn, lp_n, gn, h)
                log_w_sub = log_w_new
                s_rsum = s_rsum + pn
                if delta > DIVERGENCE:
                    diverging = stop = True
                    break
                if n % 2 == 0:
                    k = _popcount(n >> 1)
                    ckpt_p[k] = pn
                    ckpt_r[k] = s_rsum
                else:
                    k_max = _popcount(n >> 1)
                    for k in range(k_max, k_max - _trailing_ones(n), -1):
                        if _is_turning(ckpt_p[k], pn, s_rsum - ckpt_r[k] + ckpt_p[k], im):
                            stop = True
                            break
                    if stop:
                        break
            if stop:
                break
            if rng.random() < np.exp(min(0.0, log_w_sub - log_w)):
                prop = sub
                moved = True
            log_w = np.logaddexp(log_w, log_w_sub)
            r_sum = r_sum + s_rsum
            if go_right:
                right = (qn, pn, gn)
            else:
                left = (qn, pn, gn)
            depth += 1
            if _is_turning(left[1], right[1], r_sum, im):
                break
        q, lp, g, energy = prop
        info = NUTSInfo(sum_accept / n_leapfrog if n_leapfrog else 0.0, moved, diverging, energy, n_leapfrog, depth)
        return HMCState(q, float(lp), g), info

    def kernel(rng: np.random.Generator, state: HMCState):
        return _nuts(rng, state)

    return kernel


def _exp_diff(a, b):
    """exp(a - b), NaN when both are -inf (so that a comparison with a uniform is False)."""
    if a == -np.inf and b == -np.inf:
        return np.nan
    return float(np.exp(a - b))


def find_step_size(rng: np.random.Generator, logdensity_and_grad: Callable, state: HMCState, step_size: float = 1.0,
                   inverse_mass=None, data: tuple = ()) -> float:
    """Hoffman & Gelman (2014) Algorithm 4: double or halve eps until the one-step acceptance crosses 1/2."""
    q, lp, g = state
    im = _inverse_mass(inverse_mass, q.shape[0])
    p0 = rng.standard_normal(q.shape[0]) / np.sqrt(im)
    h0 = -lp + kinetic_energy(p0, im)
    direction = 0
    log_half = np.log(0.5)
    for _ in range(100):
        _, p1, lp1, _ = leapfrog(logdensity_and_grad, data, q, p0, g, step_size, 1, im)
        delta, _h = _energy_error(lp1, p1, im, h0)
        log_ratio = -delta
        if direction == 0:
            direction = 1 if log_ratio > log_half else -1
        if direction == 1 and not (log_ratio > log_half):
            break
        if direction == -1 and not (log_ratio < log_half):
            break
        step_size = step_size * 2.0 if direction == 1 else step_size * 0.5
    return step_size
