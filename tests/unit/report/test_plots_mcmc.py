"""MCMC plots: drawn when matplotlib is there, a clear ImportError naming the extra when it is not."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from harmonium.report import plots_mcmc

HAS_MPL = importlib.util.find_spec("matplotlib") is not None
DRAWS = np.random.default_rng(0).standard_normal((2, 100, 3))


def test_without_matplotlib_the_error_names_the_extra(monkeypatch):
    import sys

    for name in ("matplotlib", "matplotlib.pyplot"):  # None in sys.modules makes the import fail
        monkeypatch.setitem(sys.modules, name, None)
    for plot in (plots_mcmc.trace_plot, plots_mcmc.autocorrelation_plot):
        with pytest.raises(ImportError, match=r"harmonium\[plot\]"):
            plot(DRAWS)


@pytest.mark.skipif(not HAS_MPL, reason="matplotlib (the 'plot' extra) is not installed")
def test_plots_have_one_panel_per_parameter():
    import matplotlib

    matplotlib.use("Agg")
    fig = plots_mcmc.trace_plot(DRAWS, names=["a", "b", "c"])
    assert len(fig.axes) == 3
    fig = plots_mcmc.autocorrelation_plot(DRAWS, max_lag=20)
    assert len(fig.axes) == 3
