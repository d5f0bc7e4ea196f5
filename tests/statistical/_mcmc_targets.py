"""Targets with known answers for the sampler tests, and the MCSE-scaled moment check.

Every target is a numba-jitted log density and gradient of a flat float64 vector (so the chains
run compiled), a numpy twin, exact draws where cheap, and the exact expectations of a few
functions f_k(x). Data are compile-time constants (small), so every target shares the chains'
data-free signature and the compiled loops are built once.

Suite budget (DESIGN.md, statistical tests 3): each moment assertion is |z| < Z = 4.5 with z the
error over the MCSE computed from our own ESS; two-sided p = 6.8e-6 under normality, about 2e-5
allowing a 5% error in the ESS. The sampler suite makes fewer than 250 such assertions (and a
handful of chi-square / KS tests at alpha = 1e-4): false-alarm rate < 1%. Seeds are fixed; nothing
is retried.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numba import njit
from scipy import special

from harmonium.evaluation.diagnostics import ess_mean

Z = 4.5


@dataclass
class Target:
    name: str
    dim: int
    logdensity: object  # jitted f(x) -> float
    grad: object  # jitted f(x) -> array
    logdensity_np: object
    grad_np: object
    functions: list  # f(draws (..., d)) -> (...)
    truths: list  # exact E[f]
    labels: list = field(default_factory=list)
    exact_draws: object = None  # rng, n -> (n, d)


def moment_z(draws: np.ndarray, target: Target) -> np.ndarray:
    """z = (mean of f - E f) / MCSE for each function of the target; draws (chains, draws, d)."""
    zs = []
    for f, truth in zip(target.functions, target.truths, strict=True):
        v = f(draws)
        est = v.mean()
        ess = float(ess_mean(v[:, :, None])[0])
        mcse = v.std(ddof=1) / math.sqrt(ess)
        zs.append((est - truth) / mcse)
    return np.array(zs)


# -- standard Gaussian, d = 5 --------------------------------------------------------------------------
@njit
def std_lp(x):
    return -0.5 * np.sum(x * x)


@njit
def std_grad(x):
    return -x


def _coord(i, power=1):
    return lambda v: v[..., i] ** power


def gaussian_moments(dim, cov):
    fns, truths, labels = [], [], []
    for i in range(dim):
        fns += [_coord(i), _coord(i, 2)]
        truths += [0.0, cov[i, i]]
        labels += [f"E x{i}", f"E x{i}^2"]
    if dim > 1:
        fns.append(lambda v: v[..., 0] * v[..., 1])
        truths.append(cov[0, 1])
        labels.append("E x0 x1")
    return fns, truths, labels


STD5 = Target("std_gauss5", 5, std_lp, std_grad, lambda x: -0.5 * float(x @ x), lambda x: -x,
              *gaussian_moments(5, np.eye(5)), exact_draws=lambda rng, n: rng.standard_normal((n, 5)))


# -- equicorrelated Gaussians, rho = 0.9 -----------------------------------------------------------------
def equicorrelated(dim, rho=0.9):
    return (1 - rho) * np.eye(dim) + rho * np.ones((dim, dim))


_P10 = np.linalg.inv(equicorrelated(10))
_P2 = np.linalg.inv(equicorrelated(2))


@njit
def corr10_lp(x):
    return -0.5 * x @ (_P10 @ x)


@njit
def corr10_grad(x):
    return -(_P10 @ x)


@njit
def corr2_lp(x):
    return -0.5 * x @ (_P2 @ x)


@njit
def corr2_grad(x):
    return -(_P2 @ x)


def _corr_target(name, dim, lp, gr, prec):
    cov = equicorrelated(dim)
    chol = np.linalg.cholesky(cov)
    return Target(name, dim, lp, gr, lambda x: -0.5 * float(x @ prec @ x), lambda x: -(prec @ x),
                  *gaussian_moments(dim, cov), exact_draws=lambda rng, n: rng.standard_normal((n, dim)) @ chol.T)


CORR10 = _corr_target("corr_gauss10", 10, corr10_lp, corr10_grad, _P10)
CORR2 = _corr_target("corr_gauss2", 2, corr2_lp, corr2_grad, _P2)


# -- Haario's banana: x1 ~ N(0, 100), x2 + B (x1^2 - 100) ~ N(0, 1) ------------------------------------------
B = 0.03


@njit
def banana_lp(x):
    u = x[1] + B * (x[0] * x[0] - 100.0)
    return -x[0] * x[0] / 200.0 - 0.5 * u * u


@njit
def banana_grad(x):
    u = x[1] + B * (x[0] * x[0] - 100.0)
    return np.array([-x[0] / 100.0 - u * 2.0 * B * x[0], -u])


def _banana_draws(rng, n):
    x1 = 10.0 * rng.standard_normal(n)
    return np.stack([x1, rng.standard_normal(n) - B * (x1 * x1 - 100.0)], axis=1)


BANANA = Target(
    "banana", 2, banana_lp, banana_grad, lambda x: float(banana_lp.py_func(x)), lambda x: banana_grad.py_func(x),
    [_coord(0), _coord(0, 2), _coord(1), _coord(1, 2)],
    # E x2^2 = 1 + B^2 Var(x1^2) = 1 + B^2 * 2 * 100^2
    [0.0, 100.0, 0.0, 1.0 + B * B * 2.0 * 100.0 ** 2], ["E x1", "E x1^2", "E x2", "E x2^2"], _banana_draws,
)


# -- Beta-Bernoulli posterior in logit space ----------------------------------------------------------------
# prior Beta(2, 3), 6 successes in 20 trials: theta | y ~ Beta(8, 17); eta = logit(theta) with the
# Jacobian theta (1 - theta): log p(eta) = A log sigmoid(eta) + C log sigmoid(-eta).
A_POST, C_POST = 8.0, 17.0


@njit
def betabern_lp(x):
    e = x[0]
    # A e - (A + C) log(1 + e^e), computed stably
    return A_POST * e - (A_POST + C_POST) * (max(e, 0.0) + math.log1p(math.exp(-abs(e))))


@njit
def betabern_grad(x):
    s = 1.0 / (1.0 + math.exp(-x[0]))
    return np.array([A_POST - (A_POST + C_POST) * s])


_ETA_MEAN = float(special.digamma(A_POST) - special.digamma(C_POST))
_ETA_VAR = float(special.polygamma(1, A_POST) + special.polygamma(1, C_POST))

BETABERN = Target(
    "beta_bernoulli_logit", 1, betabern_lp, betabern_grad, lambda x: float(betabern_lp.py_func(x)),
    lambda x: betabern_grad.py_func(x),
    [_coord(0), lambda v: (v[..., 0] - _ETA_MEAN) ** 2, lambda v: special.expit(v[..., 0])],
    [_ETA_MEAN, _ETA_VAR, A_POST / (A_POST + C_POST)], ["E eta", "Var eta", "E theta"],
    lambda rng, n: special.logit(rng.beta(A_POST, C_POST, size=(n, 1))),
)

TARGETS = {t.name: t for t in (STD5, CORR10, CORR2, BANANA, BETABERN)}


# -- the stationary law of ULA (biased by construction), derived ----------------------------------------------
def ula_gaussian_covariance(precision, step_size, inverse_mass):
    """Stationary covariance of ULA on N(m, P^-1) with diagonal inverse mass D (its mean is m, exactly).

    x' - m = A (x - m) + sqrt(2 h) D^1/2 xi with A = I - h D P, h = eps^2 / 2, so the covariance S
    solves the discrete Lyapunov equation S = A S A^T + 2 h D (stable while the spectral radius of A is
    below 1). For D = I it is (P (I - h P / 2))^-1.
    """
    from scipy.linalg import solve_discrete_lyapunov

    precision = np.atleast_2d(np.asarray(precision, dtype=np.float64))
    d = np.asarray(inverse_mass, dtype=np.float64) * np.ones(precision.shape[0])
    h = 0.5 * step_size * step_size
    a = np.eye(d.size) - h * d[:, None] * precision
    if np.abs(np.linalg.eigvals(a)).max() >= 1.0:
        raise ValueError("ULA is unstable at this step size: no stationary law")
    return solve_discrete_lyapunov(a, 2.0 * h * np.diag(d))


def ula_stationary_1d(grad, step_size, inverse_mass, lo, hi, n_grid=1601):
    """Grid points and probabilities of ULA's stationary law in one dimension, by quadrature.

    ULA's transition density is k(x, x') = N(x'; x + h m g(x), 2 h m), h = eps^2 / 2, m the inverse
    mass. On a fine grid the chain becomes a finite Markov chain with rows k(x_i, x_j) dx (renormalised;
    the mass beyond [lo, hi] must be negligible); its stationary vector solves p (K - I) = 0, sum p = 1.
    Exact up to the quadrature error, which ``test_ula_stationary_law_helpers_agree`` bounds.
    """
    x = np.linspace(lo, hi, n_grid)
    h = 0.5 * step_size * step_size
    mean = x + h * inverse_mass * np.array([float(np.ravel(grad(np.array([v])))[0]) for v in x])
    var = 2.0 * h * inverse_mass
    k = np.exp(-0.5 * (x[None, :] - mean[:, None]) ** 2 / var)
    k /= k.sum(axis=1, keepdims=True)
    m = (k - np.eye(n_grid)).T
    m[-1] = 1.0
    rhs = np.zeros(n_grid)
    rhs[-1] = 1.0
    p = np.linalg.solve(m, rhs)
    return x, p
