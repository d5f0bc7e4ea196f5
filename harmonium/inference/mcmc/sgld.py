"""Stochastic gradient Langevin dynamics (SGLD) for mini-batch gradients.

Welling & Teh (2011), "Bayesian Learning via Stochastic Gradient Langevin Dynamics", ICML, eq. 4:

    theta_{t+1} = theta_t + (eps_t / 2) (grad log p(theta_t) + (N / n) sum_{i in B_t} grad log p(x_i | theta_t))
                  + eta_t,      eta_t ~ N(0, eps_t I),

with the polynomially decaying step size eps_t = a (b + t)^-gamma, gamma in (0.5, 1] (their
section 3). There is no accept step; with decaying steps the iterates approach the posterior, and
with a constant step they are biased by O(eps). With the full data set as batch (n = N) and a
constant step, SGLD is ULA with h = eps / 2 (:mod:`harmonium.inference.mcmc.langevin`).

The user gives ``grad_log_prior(theta)`` and the per-datum ``grad_log_likelihood(theta, x_i)``,
``x_i`` one row of the 2-d data array. The mini-batch is drawn without replacement by a partial
Fisher-Yates shuffle of a persistent index array (one uniform per row), then d normals; the
compiled chain ``harmonium._kernels.mcmc_sgld`` draws the same numbers.

:func:`chain` runs a whole chain with the arguments of the compiled one, so that
:func:`harmonium.inference.mcmc.sample.sample_sgld` calls either alike.

State / init / build_kernel as in DESIGN.md: ``kernel(rng, state) -> (state, SGLDInfo)``. The
iteration counter t is part of the state (the chain's position in its schedule); the schedule
itself (a, b, gamma) is tuning and is bound in the kernel. The index array is the kernel's
scratch and is permuted in place.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np


class SGLDState(NamedTuple):
    """Parameters theta and the number t of updates made so far."""

    position: np.ndarray
    t: int


class SGLDInfo(NamedTuple):
    """One update: the step size eps_t used and the norm of the stochastic gradient."""

    step_size: float
    grad_norm: float


def step_size_schedule(a: float, b: float, gamma: float) -> Callable[[int], float]:
    """t -> a (b + t)^-gamma."""
    return lambda t: a * (b + t) ** (-gamma)


def init(position) -> SGLDState:
    return SGLDState(np.array(position, dtype=np.float64), 0)


def build_kernel(grad_log_prior: Callable, grad_log_likelihood: Callable, data, batch_size: int, a: float,
                 b: float = 1.0, gamma: float = 0.55, noise_scale: float = 1.0) -> Callable:
    """SGLD update: ``kernel(rng, state) -> (state, SGLDInfo)``.

    ``data`` is a 2-d float64 array (rows are data points). ``noise_scale`` multiplies the noise's
    standard deviation: 1 is SGLD; other values are there only for the tests' negative control.
    """
    x = np.asarray(data, dtype=np.float64)
    n_data = x.shape[0]
    idx = np.arange(n_data)
    ratio = n_data / batch_size

    def kernel(rng: np.random.Generator, state: SGLDState):
        theta, t = state
        eps = a * (b + t) ** (-gamma)
        for k in range(batch_size):
            j = min(k + int(np.floor(rng.random() * (n_data - k))), n_data - 1)
            idx[k], idx[j] = idx[j], idx[k]
        drift = np.array(grad_log_prior(theta), dtype=np.float64)
        for k in range(batch_size):
            drift = drift + ratio * np.asarray(grad_log_likelihood(theta, x[idx[k]]), dtype=np.float64)
        theta = theta + 0.5 * eps * drift + noise_scale * np.sqrt(eps) * rng.standard_normal(theta.shape[0])
        return SGLDState(theta, t + 1), SGLDInfo(eps, float(np.sqrt(np.sum(drift * drift))))

    return kernel


def chain(rng: np.random.Generator, grad_log_prior: Callable, grad_log_likelihood: Callable, data, theta0,
          n_iter: int, batch_size: int, a: float, b: float, gamma: float, t0: int, noise_scale: float, draws,
          step_sizes) -> int:
    """``n_iter`` updates of :func:`build_kernel`'s kernel from ``theta0`` (iteration ``t0`` of the schedule).

    The arguments of the compiled twin ``harmonium._kernels.mcmc_sgld.sgld_chain``: update t is
    written into ``draws[t]`` and its step size into ``step_sizes[t]``.
    """
    kernel = build_kernel(grad_log_prior, grad_log_likelihood, data, batch_size, a, b, gamma, noise_scale)
    state = SGLDState(np.array(theta0, dtype=np.float64), t0)
    for t in range(n_iter):
        state, info = kernel(rng, state)
        draws[t] = state.position
        step_sizes[t] = info.step_size
    return 0
