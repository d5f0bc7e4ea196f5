"""Laplace approximation of any twice-differentiable log density.

Seed 003 ("Deterministic Approximation (Laplace Approximation, ...)"); MacKay (2003), Information
Theory, Inference, and Learning Algorithms, ch. 27; Bishop (2006), PRML section 4.4, eqs.
4.132-4.135: around the mode x* of log p~(x) (an unnormalised density),

    q(x) = N(x | x*, A^-1),     A = -grad grad log p~(x*),
    log Z ~= log p~(x*) + (d / 2) log(2 pi) - (1 / 2) log det A.

The mode is found by ``scipy.optimize.minimize`` on -log p~ (L-BFGS-B by default, or Newton-CG
with the Hessian when given). The Hessian is the user's, or central finite differences of the
gradient (of the values when there is no gradient), symmetrised. Deterministic: no ``rng``.
Functions may be numpy callables or numba-jitted ones (called from Python here); positions keep the
shape of ``init_position`` and the covariance is over the flattened parameters.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from scipy import optimize

from harmonium._validation import Options, validate_params
from harmonium.errors import HarmoniumError, InvalidParameterError

OWNER = "laplace"


class LaplaceResult(NamedTuple):
    """The Gaussian approximation N(mean, covariance) and the evidence estimate.

    mean : the mode x*, shaped like ``init_position``.
    covariance, precision : (d, d) A^-1 and A = -Hessian of log p~ at the mode (flattened order).
    log_evidence : log p~(x*) + d/2 log 2 pi - 1/2 log det A.
    logdensity : log p~(x*).
    success, message, n_iter : what the optimiser reported.
    """

    mean: np.ndarray
    covariance: np.ndarray
    precision: np.ndarray
    log_evidence: float
    logdensity: float
    success: bool
    message: str
    n_iter: int


def finite_difference_hessian(fun: Callable, x, step=None, *, of_gradient: bool = True) -> np.ndarray:
    """Symmetrised central-difference Hessian at flat ``x``.

    ``of_gradient=True``: ``fun`` is the gradient, H[:, j] = (g(x + h e_j) - g(x - h e_j)) / 2h with
    h_j = eps^(1/3) max(1, |x_j|). Otherwise ``fun`` is the scalar function and second differences
    with h_j = eps^(1/4) max(1, |x_j|) are used.
    """
    x = np.asarray(x, dtype=np.float64)
    d = x.shape[0]
    power = 1.0 / 3.0 if of_gradient else 0.25
    h = np.full(d, float(step)) if step is not None else np.finfo(float).eps ** power * np.maximum(1.0, np.abs(x))
    H = np.empty((d, d))
    if of_gradient:
        for j in range(d):
            e = np.zeros(d)
            e[j] = h[j]
            H[:, j] = (np.asarray(fun(x + e), dtype=np.float64) - np.asarray(fun(x - e), dtype=np.float64)) / (2 * h[j])
    else:
        f0 = float(fun(x))
        for i in range(d):
            for j in range(i, d):
                ei = np.zeros(d)
                ej = np.zeros(d)
                ei[i] = h[i]
                ej[j] = h[j]
                if i == j:
                    H[i, i] = (float(fun(x + ei)) - 2 * f0 + float(fun(x - ei))) / (h[i] * h[i])
                else:
                    H[i, j] = (float(fun(x + ei + ej)) - float(fun(x + ei - ej)) - float(fun(x - ei + ej))
                               + float(fun(x - ei - ej))) / (4 * h[i] * h[j])
                    H[j, i] = H[i, j]
    return 0.5 * (H + H.T)


def laplace(logdensity: Callable, init_position, *, grad: Callable | None = None, hessian: Callable | None = None,
            data: tuple = (), method: str = "L-BFGS-B", tol: float | None = None, max_iter: int = 1000,
            fd_step: float | None = None) -> LaplaceResult:
    """Laplace approximation of ``logdensity(x, *data)`` (unnormalised) around its mode.

    Parameters
    ----------
    logdensity : callable
        log p~(x, *data).
    init_position : array
        Where the optimiser starts; its shape is the parameter shape.
    grad, hessian : callable, optional
        Gradient (shape of x) and Hessian ((d, d) over the flattened x) of log p~. Without the
        Hessian, finite differences of the gradient (or of the values without a gradient).
    method : {"L-BFGS-B", "BFGS", "Newton-CG", "trust-exact"}
        ``scipy.optimize.minimize`` method; Newton-CG and trust-exact need ``grad`` and use
        ``hessian`` (or its finite-difference version).
    tol, max_iter : optimiser tolerance and iteration limit.
    fd_step : float, optional
        Finite-difference step (default eps^(1/3) max(1, |x|) on gradients).

    Raises
    ------
    HarmoniumError
        When -Hessian at the optimum is not positive definite (no local maximum found).
    """
    validate_params(OWNER, {"method": method}, {"method": [Options(("L-BFGS-B", "BFGS", "Newton-CG", "trust-exact"))]})
    for name, fn in (("logdensity", logdensity), ("grad", grad), ("hessian", hessian)):
        if fn is not None and not callable(fn):
            raise InvalidParameterError(f"The {name!r} parameter of {OWNER} must be a callable or None. Got {fn!r}.")
    if logdensity is None:
        raise InvalidParameterError(f"The 'logdensity' parameter of {OWNER} must be a callable. Got None.")
    if method in ("Newton-CG", "trust-exact") and grad is None:
        raise InvalidParameterError(f"method={method!r} of {OWNER} needs 'grad'. Got None.")
    x0 = np.array(init_position, dtype=np.float64)
    shape = x0.shape
    x0 = x0.reshape(-1)
    if x0.size == 0 or not np.all(np.isfinite(x0)):
        raise InvalidParameterError(f"The 'init_position' parameter of {OWNER} must be a non-empty finite array.")

    def value(x):
        return float(logdensity(x.reshape(shape), *data))

    def negative(x):
        v = value(x)
        return -v if math.isfinite(v) else np.inf

    def negative_grad(x):
        return -np.asarray(grad(x.reshape(shape), *data), dtype=np.float64).reshape(-1)

    def hess_of(x):
        if hessian is not None:
            return np.asarray(hessian(x.reshape(shape), *data), dtype=np.float64).reshape(x.size, x.size)
        if grad is not None:
            return -finite_difference_hessian(negative_grad, x, fd_step)
        return finite_difference_hessian(value, x, fd_step, of_gradient=False)

    v0 = value(x0)
    if not math.isfinite(v0):
        raise InvalidParameterError(f"The log density given to {OWNER} must be finite at 'init_position'. Got {v0}.")
    kw = {}
    if grad is not None:
        kw["jac"] = negative_grad
    if method in ("Newton-CG", "trust-exact"):
        kw["hess"] = lambda x: -hess_of(x)
    res = optimize.minimize(negative, x0, method=method, tol=tol, options={"maxiter": int(max_iter)}, **kw)
    mode = np.asarray(res.x, dtype=np.float64)
    precision = -hess_of(mode)
    precision = 0.5 * (precision + precision.T)
    eigvals, eigvecs = np.linalg.eigh(precision)
    if not (eigvals.min() > 1e-12 * max(1.0, float(np.abs(eigvals).max()))):
        raise HarmoniumError(
            f"The negative Hessian of the log density at the optimum found by {OWNER} is not positive definite "
            f"(smallest eigenvalue {eigvals.min():.3g}): no local maximum was found ({res.message})."
        )
    logdet = float(np.log(eigvals).sum())
    covariance = (eigvecs / eigvals) @ eigvecs.T
    covariance = 0.5 * (covariance + covariance.T)
    lp = value(mode)
    log_evidence = lp + 0.5 * mode.size * math.log(2.0 * math.pi) - 0.5 * logdet
    return LaplaceResult(mode.reshape(shape), covariance, precision, log_evidence, lp, bool(res.success),
                         str(res.message), int(getattr(res, "nit", 0)))
