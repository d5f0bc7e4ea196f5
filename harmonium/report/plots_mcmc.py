"""Trace and autocorrelation plots of MCMC draws (needs matplotlib: ``pip install harmonium[plot]``).

Draws have shape (n_chains, n_draws, *param_shape), as returned by :func:`harmonium.sample`; the
parameters are flattened and plotted one row each, every chain in its own colour. The
autocorrelations are those of :func:`harmonium.evaluation.diagnostics.autocorrelation` (FFT).
"""

from __future__ import annotations

import numpy as np

from harmonium.errors import InvalidParameterError
from harmonium.evaluation.diagnostics import autocorrelation

__all__ = ["autocorrelation_plot", "trace_plot"]


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError(
            "Plotting MCMC draws needs matplotlib, which is harmonium's optional 'plot' extra: "
            "pip install 'harmonium[plot]'."
        ) from exc
    return plt


def _flat(draws, names, owner):
    x = np.asarray(draws, dtype=np.float64)
    if x.ndim < 2:
        raise InvalidParameterError(f"The 'draws' parameter of {owner} must have shape (n_chains, n_draws, ...). "
                                    f"Got shape {x.shape}.")
    x = x.reshape(x.shape[0], x.shape[1], -1)
    if names is None:
        names = [f"x[{k}]" for k in range(x.shape[2])]
    if len(names) != x.shape[2]:
        raise InvalidParameterError(f"The 'names' parameter of {owner} must hold {x.shape[2]} names. Got {len(names)}.")
    return x, list(names)


def trace_plot(draws, names=None, max_params: int = 10):
    """One row per parameter (at most ``max_params``): the draws of every chain against the iteration."""
    x, names = _flat(draws, names, "trace_plot")
    plt = _pyplot()
    k = min(x.shape[2], max_params)
    fig, axes = plt.subplots(k, 1, figsize=(8, 1.8 * k), sharex=True, squeeze=False)
    for j in range(k):
        ax = axes[j, 0]
        for c in range(x.shape[0]):
            ax.plot(x[c, :, j], lw=0.6, alpha=0.8, label=f"chain {c}")
        ax.set_ylabel(names[j])
    axes[-1, 0].set_xlabel("draw")
    axes[0, 0].legend(loc="upper right", fontsize="small", ncol=min(x.shape[0], 4))
    fig.tight_layout()
    return fig


def autocorrelation_plot(draws, names=None, max_lag: int = 50, max_params: int = 10):
    """One panel per parameter: each chain's autocorrelation up to ``max_lag``."""
    x, names = _flat(draws, names, "autocorrelation_plot")
    plt = _pyplot()
    k = min(x.shape[2], max_params)
    lags = np.arange(min(max_lag, x.shape[1] - 1) + 1)
    fig, axes = plt.subplots(k, 1, figsize=(6, 1.8 * k), sharex=True, squeeze=False)
    acf = autocorrelation(x, axis=1)
    for j in range(k):
        ax = axes[j, 0]
        for c in range(x.shape[0]):
            ax.plot(lags, acf[c, lags, j], marker=".", lw=0.8)
        ax.axhline(0.0, color="grey", lw=0.5)
        ax.set_ylabel(names[j])
    axes[-1, 0].set_xlabel("lag")
    fig.tight_layout()
    return fig
