"""Reports and plots: the self-contained HTML report, the pyLDAvis export, matplotlib figures.

* :func:`write_report` / :func:`report_data` (:mod:`harmonium.report.html`, :mod:`harmonium.report.data`);
* :func:`pyldavis_data` / :func:`write_pyldavis` (:mod:`harmonium.report.pyldavis`);
* :func:`plot_compare` (:mod:`harmonium.report.plots`, needs the ``plot`` extra), and the MCMC
  ``trace_plot`` / ``autocorrelation_plot`` (:mod:`harmonium.report.plots_mcmc`).

Names are imported on first use, so ``import harmonium.report`` stays light.
"""

from __future__ import annotations

import importlib

_LAZY = {
    "write_report": "harmonium.report.html", "render_report": "harmonium.report.html",
    "report_data": "harmonium.report.data", "pyldavis_data": "harmonium.report.pyldavis",
    "write_pyldavis": "harmonium.report.pyldavis", "plot_compare": "harmonium.report.plots",
    "trace_plot": "harmonium.report.plots_mcmc", "autocorrelation_plot": "harmonium.report.plots_mcmc",
}

__all__ = sorted(_LAZY)


def __getattr__(name):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'harmonium.report' has no attribute {name!r}")
