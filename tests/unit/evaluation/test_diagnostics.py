"""MCMC diagnostics against known cases: iid draws, AR(1) chains with known ESS, shifted chains.

Tolerances on ESS come from the estimator's own spread: over 20 replications of 4 x 20,000 AR(1)
draws, the relative sd of the estimate is about 2% (rho = 0.5), 4.5% (rho = 0.9) and 1.5%
(rho = -0.5); the assertions allow 5 sd (fixed seeds).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import signal, stats

from harmonium.errors import InvalidParameterError
from harmonium.evaluation import diagnostics as D


def ar1(rng, n_chains, n, rho):
    """Stationary AR(1) chains with unit marginal variance."""
    e = rng.standard_normal((n_chains, n)) * np.sqrt(1 - rho * rho)
    e[:, 0] = rng.standard_normal(n_chains)
    return signal.lfilter([1.0], [1.0, -rho], e, axis=1)


def test_iid_normal_draws():
    x = np.random.default_rng(0).standard_normal((4, 2000, 3))
    size = 8000
    for f in (D.ess_bulk, D.ess_mean, D.ess, D.ess_tail):
        e = f(x)
        assert e.shape == (3,)
        assert np.all(np.abs(e / size - 1) < 0.15), (f.__name__, e)
    assert np.all(D.rhat(x) < 1.01)
    sd = x.reshape(-1, 3).std(axis=0, ddof=1)
    np.testing.assert_allclose(D.mcse_mean(x), sd / np.sqrt(D.ess_mean(x)), rtol=1e-12)
    np.testing.assert_allclose(D.mcse_mean(x), 1 / np.sqrt(size), rtol=0.15)
    # quantile MCSE: asymptotically sqrt(p (1 - p) / n) / phi(q_p)
    p = 0.9
    expected = np.sqrt(p * (1 - p) / size) / stats.norm.pdf(stats.norm.ppf(p))
    np.testing.assert_allclose(D.mcse_quantile(x, p), expected, rtol=0.3)
    np.testing.assert_allclose(D.mcse_sd(x), 1 / np.sqrt(2 * size), rtol=0.2)


@pytest.mark.parametrize(("rho", "rel_tol"), [(0.5, 0.10), (0.9, 0.23), (-0.5, 0.08)])
def test_ar1_ess_matches_theory(rho, rel_tol):
    rng = np.random.default_rng(int(abs(rho) * 100) + (rho < 0))
    x = ar1(rng, 4, 20000, rho)[:, :, None]
    expected = 4 * 20000 * (1 - rho) / (1 + rho)
    assert D.ess(x)[0] == pytest.approx(expected, rel=rel_tol)
    assert D.ess_bulk(x)[0] == pytest.approx(expected, rel=rel_tol + 0.05)  # rank-normalised, split


def test_autocorrelation_by_fft_matches_direct_sum():
    x = ar1(np.random.default_rng(3), 1, 500, 0.7)[0]
    acf = D.autocorrelation(x)
    c = x - x.mean()
    direct = np.array([np.sum(c[: 500 - t] * c[t:]) for t in range(20)]) / np.sum(c * c)
    np.testing.assert_allclose(acf[:20], direct, atol=1e-12)
    assert acf[1] == pytest.approx(0.7, abs=0.1)


def test_rhat_flags_shifted_and_rescaled_chains():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((4, 1000, 1))
    shifted = x.copy()
    shifted[0] += 5.0
    assert D.rhat(shifted)[0] > 1.5
    rescaled = x.copy()
    rescaled[0] *= 4.0  # same mean: only the folded (tail) R-hat sees it
    assert D.rhat(rescaled)[0] > 1.1
    trending = x + np.linspace(0, 6, 1000)[None, :, None]  # one non-stationary chain shape: split R-hat sees it
    assert D.rhat(trending)[0] > 1.3


def test_summary_table_and_names():
    x = np.random.default_rng(5).standard_normal((2, 100, 2, 3))
    s = D.summary(x)
    assert s["name"][:2] == ["x[0, 0]", "x[0, 1]"] and len(s["name"]) == 6
    for key in ("mean", "sd", "q5", "q50", "q95", "mcse_mean", "mcse_sd", "ess_bulk", "ess_tail", "r_hat"):
        assert s[key].shape == (2, 3), key
    text = D.format_summary(s)
    assert text.splitlines()[0].split()[:3] == ["name", "mean", "sd"] and len(text.splitlines()) == 7
    one = D.summary(np.random.default_rng(6).standard_normal((2, 50)), names=["theta"])
    assert one["name"] == ["theta"] and np.ndim(one["mean"]) == 0


def test_constant_and_invalid_draws():
    const = np.ones((2, 50, 1))
    assert D.ess_bulk(const)[0] == 100
    assert np.isnan(D.rhat(const)[0])
    with pytest.raises(InvalidParameterError, match="shape \\(n_chains, n_draws"):
        D.ess_bulk(np.zeros(10))
    with pytest.raises(InvalidParameterError, match="at least 4 draws"):
        D.rhat(np.zeros((2, 3)))
    with pytest.raises(InvalidParameterError, match="'prob' parameter"):
        D.mcse_quantile(np.zeros((2, 10)), 1.5)
