"""Parity of the CFTP kernels (harmonium._kernels.cftp) with a plain-numpy twin drawing the same uniforms.

Also runs under NUMBA_DISABLE_JIT=1.
"""

from __future__ import annotations

import numpy as np

from harmonium._kernels.cftp import cftp_many, forward_many
from harmonium.inference.mcmc.cftp import ising_parameters


def _sweep(C, b, u_row, x):
    for i in range(x.size):
        x[i] = 1.0 if u_row[i] * (1.0 + np.exp(-(b[i] + C[i] @ x))) < 1.0 else 0.0


def reference_cftp(rng, C, b, n, t0, max_t):
    m = b.size
    out, horizons = np.empty((n, m)), np.empty(n, dtype=np.int64)
    for s in range(n):
        u = np.empty((0, m))
        t = t0
        while True:
            u = np.vstack([u, rng.random((t - u.shape[0], m))])
            top, bot = np.ones(m), np.zeros(m)
            for k in range(t - 1, -1, -1):
                _sweep(C, b, u[k], top)
                _sweep(C, b, u[k], bot)
            if np.array_equal(top, bot) or 2 * t > max_t:
                horizons[s] = t if np.array_equal(top, bot) else -t
                break
            t *= 2
        out[s] = top
    return out, horizons


def test_cftp_kernel_matches_reference():
    rng = np.random.default_rng(0)
    W = np.abs(rng.normal(0, 0.5, (6, 2)))
    C, b = ising_parameters(W, rng.normal(-0.5, 0.5, 6))
    out, hz = np.empty((30, 6)), np.empty(30, dtype=np.int64)
    u = np.empty((2, 6))  # smaller than the horizons needed: the kernel grows it, keeping the old rows
    cftp_many(np.random.default_rng(1), C, b, u, 1, 64, out, hz, *(np.empty(6) for _ in range(4)))
    ref, ref_hz = reference_cftp(np.random.default_rng(1), C, b, 30, 1, 64)
    np.testing.assert_array_equal(out, ref)
    np.testing.assert_array_equal(hz, ref_hz)


def test_forward_kernel_matches_reference():
    rng = np.random.default_rng(2)
    W = np.abs(rng.normal(0, 0.5, (5, 2)))
    C, b = ising_parameters(W, rng.normal(-0.5, 0.5, 5))
    out = np.empty((20, 5))
    forward_many(np.random.default_rng(3), C, b, 3, 1.0, out, np.empty(5), np.empty(5), np.empty(5))
    r = np.random.default_rng(3)
    ref = np.empty((20, 5))
    for s in range(20):
        x = np.ones(5)
        for _ in range(3):
            _sweep(C, b, r.random(5), x)
        ref[s] = x
    np.testing.assert_array_equal(out, ref)
