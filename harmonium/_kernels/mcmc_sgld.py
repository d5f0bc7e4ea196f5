"""Stochastic gradient Langevin dynamics (numba).

Welling & Teh (2011), "Bayesian Learning via Stochastic Gradient Langevin Dynamics", eq. 4:

    theta_{t+1} = theta_t + (eps_t / 2) (grad log p(theta_t) + (N / n) sum_{i in B_t} grad log p(x_i | theta_t))
                  + eta_t,      eta_t ~ N(0, eps_t I),      eps_t = a (b + t)^-gamma.

The mini-batch B_t of n rows is drawn without replacement (partial Fisher-Yates on an index
array, one uniform per row: ``k + floor(u (N - k))``), then d normals are drawn for the noise.
``grad_prior(theta)`` and ``grad_datum(theta, x_i)`` are user functions (``x_i`` a row of the
2-d float64 data array). Numpy twin, with the same arguments: :func:`harmonium.inference.mcmc.sgld.chain`.
"""

from __future__ import annotations

import math

import numpy as np

from harmonium._kernels.mcmc_common import ARRAY_1D, GENERATOR, LazyKernel


def _sgld_chain(rng, grad_prior, grad_datum, x, theta0, n_iter, batch_size, a, b, gamma, t0, noise_scale,
                draws, step_sizes):
    """``n_iter`` SGLD updates from ``theta0``; draw t (after update t) into ``draws[t]``.

    ``t0`` is the iteration number of the first update (resuming a run); ``noise_scale`` multiplies
    the injected noise's standard deviation (1 is SGLD; other values exist for tests only).
    """
    n_data = x.shape[0]
    d = theta0.shape[0]
    theta = theta0.copy()
    idx = np.arange(n_data)
    drift = np.empty(d)
    ratio = n_data / batch_size
    for it in range(n_iter):
        eps = a * (b + t0 + it) ** (-gamma)
        for k in range(batch_size):
            j = k + int(math.floor(rng.random() * (n_data - k)))
            if j >= n_data:
                j = n_data - 1
            tmp = idx[k]
            idx[k] = idx[j]
            idx[j] = tmp
        gp = grad_prior(theta)
        for j in range(d):
            drift[j] = gp[j]
        for k in range(batch_size):
            gi = grad_datum(theta, x[idx[k]])
            for j in range(d):
                drift[j] += ratio * gi[j]
        sd = noise_scale * math.sqrt(eps)
        for j in range(d):
            theta[j] += 0.5 * eps * drift[j] + sd * rng.standard_normal()
            draws[it, j] = theta[j]
        step_sizes[it] = eps
    return 0


def _signature(_key):
    from numba import types

    f2 = types.Array(types.float64, 2, "C")
    prior = types.FunctionType(ARRAY_1D(ARRAY_1D))
    datum = types.FunctionType(ARRAY_1D(ARRAY_1D, ARRAY_1D))
    return types.int64(GENERATOR, prior, datum, f2, ARRAY_1D, types.int64, types.int64, types.float64,
                       types.float64, types.float64, types.int64, types.float64, f2, ARRAY_1D)


sgld_chain = LazyKernel(_sgld_chain, _signature)
