"""Laplace approximation: exact on Gaussians, closed-form mode and curvature on a Beta-Bernoulli posterior."""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit
from scipy import special

from harmonium.errors import HarmoniumError, InvalidParameterError
from harmonium.inference.laplace import finite_difference_hessian, laplace

MU = np.array([1.0, -2.0, 0.5])
COV = np.array([[2.0, 0.6, 0.1], [0.6, 1.0, -0.3], [0.1, -0.3, 0.5]])
PREC = np.linalg.inv(COV)
LOG_Z = 0.5 * 3 * np.log(2 * np.pi) + 0.5 * np.log(np.linalg.det(COV))  # of exp(-(x - mu)' P (x - mu) / 2)


def gauss_lp(x):
    r = x - MU
    return -0.5 * float(r @ PREC @ r)


def gauss_grad(x):
    return -(PREC @ (x - MU))


@pytest.mark.parametrize(("method", "use_hessian", "use_grad", "tol"), [
    ("L-BFGS-B", True, True, 1e-6), ("Newton-CG", True, True, 1e-6), ("trust-exact", False, True, 1e-5),
    ("L-BFGS-B", False, True, 1e-5), ("BFGS", False, False, 1e-3),
])
def test_gaussian_target_is_recovered_exactly(method, use_hessian, use_grad, tol):
    res = laplace(gauss_lp, np.zeros(3), grad=gauss_grad if use_grad else None,
                  hessian=(lambda x: -PREC) if use_hessian else None, method=method,
                  tol=1e-12 if use_grad else None)
    assert res.success
    np.testing.assert_allclose(res.mean, MU, atol=tol)
    np.testing.assert_allclose(res.covariance, COV, atol=tol * 10)
    np.testing.assert_allclose(res.precision, PREC, atol=tol * 10)
    assert res.log_evidence == pytest.approx(LOG_Z, abs=tol * 10)


# Beta-Bernoulli in logit space: log p(eta) = A eta - (A + C) log(1 + e^eta), whose integral over eta is B(A, C).
A, C = 8.0, 17.0


@njit
def bb_lp(x):
    e = x[0]
    return A * e - (A + C) * (max(e, 0.0) + np.log1p(np.exp(-abs(e))))


@njit
def bb_grad(x):
    return np.array([A - (A + C) / (1.0 + np.exp(-x[0]))])


def test_beta_bernoulli_mode_and_curvature_match_the_closed_form():
    res = laplace(bb_lp, np.array([0.0]), grad=bb_grad)
    assert res.mean[0] == pytest.approx(np.log(A / C), abs=1e-6)  # sigmoid(eta*) = A / (A + C)
    assert res.precision[0, 0] == pytest.approx(A * C / (A + C), rel=1e-5)
    # the Laplace evidence approximates log B(A, C) (Stirling-type error, about 0.4% here)
    assert res.log_evidence == pytest.approx(special.betaln(A, C), abs=0.02)
    assert res.log_evidence != pytest.approx(special.betaln(A, C), abs=1e-6)


def test_parameter_shape_is_kept():
    res = laplace(lambda x: -0.5 * float(np.sum((x - 1.0) ** 2)), np.zeros((2, 2)), grad=lambda x: -(x - 1.0))
    assert res.mean.shape == (2, 2) and res.covariance.shape == (4, 4)
    np.testing.assert_allclose(res.covariance, np.eye(4), atol=1e-5)


def test_finite_difference_hessian_of_values_and_gradients():
    x = np.array([0.3, -0.7, 1.1])
    np.testing.assert_allclose(finite_difference_hessian(gauss_grad, x), -PREC, atol=1e-6)
    np.testing.assert_allclose(finite_difference_hessian(gauss_lp, x, of_gradient=False), -PREC, atol=1e-4)


def test_flat_direction_is_reported():
    with pytest.raises(HarmoniumError, match="not positive definite"):
        laplace(lambda x: -float((x[0] + x[1]) ** 2), np.zeros(2), grad=lambda x: -2 * (x[0] + x[1]) * np.ones(2),
                hessian=lambda x: -2 * np.ones((2, 2)))


@pytest.mark.parametrize(("kwargs", "message"), [
    (dict(method="Newton-CG"), "needs 'grad'"),
    (dict(method="CG"), "'method' parameter of laplace"),
    (dict(init_position=[np.nan]), "non-empty finite array"),
    (dict(logdensity=lambda x: -np.inf), "must be finite at 'init_position'"),
    (dict(grad=3.0), "'grad' parameter"),
])
def test_bad_input(kwargs, message):
    args = dict(logdensity=lambda x: -float(x @ x), init_position=np.zeros(1))
    args.update(kwargs)
    with pytest.raises(InvalidParameterError, match=message):
        laplace(args.pop("logdensity"), args.pop("init_position"), **args)
