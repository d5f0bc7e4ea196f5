"""Warm-up adaptation arithmetic shared by the compiled chains and the Python kernels (numba).

* Dual averaging of the log step size (Hoffman & Gelman 2014, Algorithm 5, eqs. 5-6), kept in a
  float64 array ``da`` of length :data:`DA_SIZE`: ``[log_eps, log_eps_bar, h_bar, mu, t]``.
* Welford's running mean and variance of the warm-up draws (``mean``, ``m2``, ``count`` in ``w[0]``),
  regularised toward 1e-3 as Stan does: ``n / (n + 5) var + 1e-3 * 5 / (n + 5)``.
* Robbins-Monro updates of a log proposal scale toward a target acceptance rate
  (Andrieu & Thoms 2008, eq. 6 with gain ``t^-0.6``).

Every function is callable from Python (the numpy kernels in ``harmonium.inference.mcmc``) and
from the compiled chains, so both paths adapt identically.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

DA_SIZE = 5
DA_GAMMA = 0.05
DA_T0 = 10.0
DA_KAPPA = 0.75


@njit(cache=True, nogil=True)
def da_init(da, step_size):
    """Restart dual averaging around ``step_size`` (mu = log(10 eps))."""
    da[0] = math.log(step_size)
    da[1] = 0.0
    da[2] = 0.0
    da[3] = math.log(10.0 * step_size)
    da[4] = 0.0


@njit(cache=True, nogil=True)
def da_update(da, accept_stat, target):
    """One dual-averaging step given this iteration's acceptance statistic; returns the new step size."""
    if not (accept_stat >= 0.0):  # NaN counts as a rejection
        accept_stat = 0.0
    if accept_stat > 1.0:
        accept_stat = 1.0
    da[4] += 1.0
    t = da[4]
    w = 1.0 / (t + DA_T0)
    da[2] = (1.0 - w) * da[2] + w * (target - accept_stat)
    da[0] = da[3] - math.sqrt(t) / DA_GAMMA * da[2]
    eta = t ** (-DA_KAPPA)
    da[1] = eta * da[0] + (1.0 - eta) * da[1]
    return math.exp(da[0])


@njit(cache=True, nogil=True)
def da_final(da):
    """The averaged step size exp(log_eps_bar) used after warm-up."""
    return math.exp(da[1])


@njit(cache=True, nogil=True)
def welford_reset(mean, m2, count):
    mean[:] = 0.0
    m2[:] = 0.0
    count[0] = 0.0


@njit(cache=True, nogil=True)
def welford_update(mean, m2, count, x):
    count[0] += 1.0
    n = count[0]
    for j in range(x.shape[0]):
        delta = x[j] - mean[j]
        mean[j] += delta / n
        m2[j] += delta * (x[j] - mean[j])


@njit(cache=True, nogil=True)
def welford_variance(m2, count, out):
    """Regularised variance of the window into ``out`` (Stan's shrinkage toward 1e-3)."""
    n = count[0]
    for j in range(m2.shape[0]):
        var = m2[j] / (n - 1.0) if n > 1.0 else 1.0
        out[j] = (n / (n + 5.0)) * var + 1e-3 * (5.0 / (n + 5.0))


@njit(cache=True, nogil=True)
def rm_update(log_scale, accept_prob, target, t):
    """Robbins-Monro step of a log proposal scale: log s + t^-0.6 (alpha - target), t >= 1."""
    if not (accept_prob >= 0.0):
        accept_prob = 0.0
    if accept_prob > 1.0:
        accept_prob = 1.0
    return log_scale + (t ** -0.6) * (accept_prob - target)


def window_schedule(n_warmup: int, adapt_mass: bool, init_buffer: int = 75, term_buffer: int = 50,
                    base_window: int = 25):
    """Stan's warm-up windows as two int8 arrays of length ``n_warmup``.

    ``in_window[t] = 1`` when draw t enters the variance estimate of the current slow window;
    ``window_end[t] = 1`` when, after draw t, the variance is turned into the new (inverse) mass and
    step-size adaptation restarts. Windows: a fast initial buffer, slow windows of doubling length
    (the last one stretched to the terminal buffer), a fast terminal buffer. With fewer than 20
    warm-up draws, or ``adapt_mass`` False, there are no slow windows (step size only). When the
    default buffers do not fit, they become 15% / 10% of the warm-up as in Stan.
    """
    in_window = np.zeros(n_warmup, dtype=np.int8)
    window_end = np.zeros(n_warmup, dtype=np.int8)
    if not adapt_mass or n_warmup < 20:
        return in_window, window_end
    if init_buffer + base_window + term_buffer > n_warmup:
        init_buffer = int(0.15 * n_warmup)
        term_buffer = int(0.1 * n_warmup)
        base_window = n_warmup - init_buffer - term_buffer
    last = n_warmup - term_buffer  # slow windows cover [init_buffer, last)
    start, size = init_buffer, base_window
    while start < last:
        end = start + size
        if end + 2 * size > last:
            end = last
        in_window[start:end] = 1
        window_end[end - 1] = 1
        start, size = end, 2 * size
    return in_window, window_end
