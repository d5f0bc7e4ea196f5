"""Our diagnostics against ArviZ's on the same draws, and both paths of ``summary`` (ArviZ present / absent).

The definitions are the same (``posterior`` R package, Vehtari et al. 2021), so the numbers must agree
to rounding: relative difference < 1e-10 for R-hat, bulk / tail / mean ESS, and the MCSE of the mean,
the sd and quantiles. Draws: autocorrelated chains with one parameter log-normal (skewed) and one
chain shifted (R-hat well above 1), with an even and an odd number of draws per chain (the odd case
drops the middle draw when splitting, and the tail quantiles use every draw).
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
from scipy import signal

from harmonium.evaluation import diagnostics as D

az = pytest.importorskip("arviz")
RTOL = 1e-10


def _draws(n_draws, seed=0):
    rng = np.random.default_rng(seed)
    e = rng.standard_normal((4, n_draws, 3))
    x = signal.lfilter([1.0], [1.0, -0.8], e, axis=1)
    x[..., 1] = np.exp(0.7 * x[..., 1])
    x[0, :, 2] += 5.0
    return x


@pytest.fixture
def arviz_without_numba():
    """ArviZ 0.23's az.mcse(method="sd") fails under numpy >= 2.3 on its numba path; use its numpy path."""
    was = az.Numba.numba_flag
    az.Numba.disable_numba()
    yield
    if was:
        az.Numba.enable_numba()


@pytest.mark.parametrize("n_draws", [500, 501])
def test_rhat_ess_mcse_agree_with_arviz(n_draws, arviz_without_numba):
    x = _draws(n_draws)
    ds = az.convert_to_dataset(x)

    def theirs(fn, **kw):
        return fn(ds, **kw)["x"].values

    pairs = [
        ("rhat", D.rhat(x), theirs(az.rhat, method="rank")),
        ("ess_bulk", D.ess_bulk(x), theirs(az.ess, method="bulk")),
        ("ess_tail", D.ess_tail(x), theirs(az.ess, method="tail")),
        ("ess_mean", D.ess_mean(x), theirs(az.ess, method="mean")),
        ("mcse_mean", D.mcse_mean(x), theirs(az.mcse, method="mean")),
        ("mcse_sd", D.mcse_sd(x), theirs(az.mcse, method="sd")),
    ] + [(f"mcse_q{p}", D.mcse_quantile(x, p), theirs(az.mcse, method="quantile", prob=p)) for p in (0.05, 0.5, 0.95)]
    for name, ours, ref in pairs:
        np.testing.assert_allclose(ours, ref, rtol=RTOL, err_msg=name)
    assert D.rhat(x)[2] > 1.1  # the shifted chain: a case where R-hat matters


def test_summary_arviz_and_fallback_paths_agree(monkeypatch):
    x = _draws(400, seed=1)
    ours = D.summary(x, method="harmonium")
    with_arviz = D.summary(x, method="arviz")
    assert list(ours) == list(with_arviz)
    for key in ours:
        if key != "name":
            np.testing.assert_allclose(with_arviz[key], ours[key], rtol=RTOL, err_msg=key)
    # "auto" takes ArviZ when it is importable ...
    calls = []
    real = D._arviz_diagnostics
    monkeypatch.setattr(D, "_arviz_diagnostics", lambda *a: calls.append(1) or real(*a))
    D.summary(x)
    assert calls == [1]
    # ... and falls back to ours when it is not (sys.modules[name] = None makes the import fail)
    monkeypatch.setitem(sys.modules, "arviz", None)
    auto = D.summary(x)
    assert calls == [1]
    for key in ours:
        if key != "name":
            np.testing.assert_array_equal(auto[key], ours[key])


def test_without_arviz_the_arviz_paths_name_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "arviz", None)
    x = _draws(50)
    with pytest.raises(ImportError, match=r"pip install harmonium\[arviz\]"):
        D.summary(x, method="arviz")
    with pytest.raises(ImportError, match=r"pip install harmonium\[arviz\]"):
        D.to_inference_data({"x": x})


def test_to_inference_data_and_its_errors():
    x = _draws(60)
    idata = D.to_inference_data({"theta": x}, {"lp": x[..., 0]}, attrs={"kernel": "test"})
    np.testing.assert_array_equal(idata.posterior["theta"].values, x)
    np.testing.assert_array_equal(idata.sample_stats["lp"].values, x[..., 0])
    assert idata.posterior.attrs["kernel"] == "test"
    with pytest.raises(D.InvalidParameterError, match="'posterior' parameter"):
        D.to_inference_data({})
    with pytest.raises(D.InvalidParameterError, match=r"sample_stats\['lp'\]"):
        D.to_inference_data({"theta": x}, {"lp": x[:2, :, 0]})
    with pytest.raises(D.InvalidParameterError, match="'method' parameter of summary"):
        D.summary(x, method="pymc")


def test_summary_of_one_chain_uses_ours_and_constant_draws_match(monkeypatch):
    """ArviZ's R-hat needs 2 chains (NaN for one); "auto" then keeps our split R-hat of the two halves."""
    one = _draws(100)[:1]
    assert np.all(np.isnan(D.summary(one, method="arviz")["r_hat"]))
    np.testing.assert_array_equal(D.summary(one)["r_hat"], D.rhat(one))
    const = np.ones((2, 50, 1))
    a, b = D.summary(const, method="arviz"), D.summary(const, method="harmonium")
    for key in ("mcse_mean", "mcse_sd", "ess_bulk", "ess_tail", "r_hat"):
        np.testing.assert_array_equal(a[key], b[key], err_msg=key)
