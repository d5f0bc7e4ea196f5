"""Perfect sampling of GB-EFH data by monotone coupling from the past (seed 000 §5.1).

Seed 000 generates the §5.1 training data exactly "by employing the perfect sampling technique
(Childs et al. 2001) when all the elements of the matrix V = W W^T are non-negative". With h summed
out, GB-EFH's visible marginal is (seed 000 eq. 28, with theta)

    p(x | W) ~ exp( theta^T x + x^T V x / 2 ) = exp( b^T x + sum_{i<k} V_ik x_i x_k ),  b = theta + diag(V) / 2,

a binary pairwise (Ising) model; V_ik >= 0 makes it attractive, so the heat-bath Gibbs sampler is
monotone and Propp & Wilson's (1996) coupling from the past needs only the top (all ones) and
bottom (all zeros) chains: run both from time -T to 0 with shared uniforms, doubling T (and
re-using the uniforms of the times already visited) until they meet; the common state is an exact
draw from p(x | W). Childs, Patterson & MacKay's summary states extend this to non-attractive
models; they are not needed (nor implemented) for V >= 0, which :func:`ising_parameters` checks.

:func:`forward_sample` (fixed-horizon sampling from the top state) is *not* exact; it is the tests'
negative control. Kernels: :mod:`harmonium._kernels.cftp`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from harmonium._kernels.cftp import cftp_many, forward_many
from harmonium.errors import InvalidParameterError

__all__ = ["CFTPInfo", "conditional", "forward_sample", "ising_parameters", "sample", "sampler"]


class CFTPInfo(NamedTuple):
    """horizons: the T (sweeps from the past) each draw needed; all_coalesced: every draw met within max_sweeps."""

    horizons: np.ndarray
    all_coalesced: bool


def ising_parameters(W, theta=None, *, check: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(C, b): the zero-diagonal coupling V - diag(V) and the bias theta + diag(V) / 2 of p(x | W)."""
    W = np.asarray(W, dtype=np.float64)
    if W.ndim != 2:
        raise InvalidParameterError(f"cftp: W must be a 2-D (M, J) array; got shape {W.shape}.")
    V = W @ W.T
    theta = np.zeros(W.shape[0]) if theta is None else np.asarray(theta, dtype=np.float64).ravel()
    if theta.shape != (W.shape[0],):
        raise InvalidParameterError(f"cftp: theta must have {W.shape[0]} entries; got {theta.shape}.")
    C = V.copy()
    np.fill_diagonal(C, 0.0)
    if check and C.min() < 0:
        i, k = np.unravel_index(int(np.argmin(C)), C.shape)
        raise InvalidParameterError(
            f"cftp: monotone coupling from the past needs V = W W^T >= 0 off the diagonal; V[{i}, {k}] = "
            f"{C[i, k]:.3g}. Use Gibbs sampling for this W, or a W with non-negative V (seed 000 §5.1).")
    return np.ascontiguousarray(C), theta + 0.5 * np.diag(V)


def conditional(C, b, x, i: int) -> float:
    """p(x_i = 1 | x_-i) = sigmoid(b_i + sum_k C_ik x_k) (the heat-bath update; for the tests' pi P = pi)."""
    return float(1.0 / (1.0 + np.exp(-(b[i] + C[i] @ x))))


def sample(rng: np.random.Generator, W, theta=None, n: int = 1, *, initial_sweeps: int = 1,
           max_sweeps: int = 1 << 16) -> tuple[np.ndarray, CFTPInfo]:
    """``n`` exact draws x ~ p(x | W, theta) of GB-EFH, shape (n, M), by monotone CFTP.

    Draws that did not coalesce within ``max_sweeps`` are flagged in ``info`` (their rows hold
    the top chain's state and are not exact).
    """
    if int(n) < 0 or int(initial_sweeps) < 1 or int(max_sweeps) < int(initial_sweeps):
        raise InvalidParameterError("cftp.sample: need n >= 0 and 1 <= initial_sweeps <= max_sweeps.")
    C, b = ising_parameters(W, theta)
    m = C.shape[0]
    out = np.empty((int(n), m))
    horizons = np.empty(int(n), dtype=np.int64)
    u = np.empty((min(int(max_sweeps), max(64, int(initial_sweeps))), m))
    cftp_many(rng, C, b, u, int(initial_sweeps), int(max_sweeps), out, horizons, np.empty(m), np.empty(m), np.empty(m),
              np.empty(m))
    return out, CFTPInfo(horizons, bool((horizons > 0).all()))


def forward_sample(rng: np.random.Generator, W, theta=None, n: int = 1, *, n_sweeps: int = 1,
                   start: float = 1.0) -> np.ndarray:
    """Fixed-horizon heat-bath sampling from the all-``start`` state (biased; the negative control)."""
    C, b = ising_parameters(W, theta, check=False)
    m = C.shape[0]
    out = np.empty((int(n), m))
    forward_many(rng, C, b, int(n_sweeps), float(start), out, np.empty(m), np.empty(m), np.empty(m))
    return out


def sampler(**kwargs):
    """``(rng, model, n) -> xs`` drawing exactly from a GB-EFH model's p(x | W) (for eq. 12's samples)."""

    def draw(rng, model, n):
        x, _ = sample(rng, model.params["W:0"], model.params["v:0:bias"], n, **kwargs)
        return (x,)

    return draw
