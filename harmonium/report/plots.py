"""Plots of experiment tables (needs matplotlib: ``pip install 'harmonium[plot]'``).

:func:`plot_compare` draws the table of :func:`harmonium.experiments.compare.compare` (or its
``results.json``): held-out perplexity against K, classification accuracy against K (seed 000
Fig. 7 style, one panel per classifier) and fit time against held-out perplexity. With several
seeds a point is the mean and its bar spans the smallest to the largest value.
The MCMC trace and autocorrelation plots are in :mod:`harmonium.report.plots_mcmc`.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np

from harmonium.errors import InvalidParameterError
from harmonium.report.plots_mcmc import autocorrelation_plot, trace_plot

__all__ = ["autocorrelation_plot", "plot_compare", "trace_plot"]


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError(
            "harmonium's plots need matplotlib, which is the optional 'plot' extra: pip install 'harmonium[plot]'."
        ) from exc
    return plt


def _records(results) -> list[dict]:
    if hasattr(results, "records"):
        return list(results.records)
    if isinstance(results, (str, os.PathLike)):
        p = Path(results)
        if p.is_dir():
            p = p / "results.json"
        return list(json.loads(p.read_text())["records"])
    if isinstance(results, list) and all(isinstance(r, dict) for r in results):
        return results
    raise InvalidParameterError("plot_compare expects a CompareResult, a list of records, or the path of a compare "
                                f"results.json (or its folder); got {type(results).__name__}.")


def _finite(v) -> bool:
    return v is not None and isinstance(v, (int, float)) and math.isfinite(v)


def _series(records, model, column):
    """(ks, mean, lo, hi) over seeds of ``column`` for ``model``; only K with a value."""
    ks, mean, lo, hi = [], [], [], []
    for k in sorted({r["n_topics"] for r in records if r["model"] == model}):
        v = [r[column] for r in records if r["model"] == model and r["n_topics"] == k and _finite(r.get(column))]
        if v:
            ks.append(k)
            mean.append(float(np.mean(v)))
            lo.append(min(v))
            hi.append(max(v))
    return np.array(ks), np.array(mean), np.array(lo), np.array(hi)


def _errorbar(ax, x, m, lo, hi, label, marker="o"):
    # the mean of equal values can differ from them in the last bit: clip the bars at zero
    yerr = np.maximum(np.vstack([m - lo, hi - m]), 0.0)
    ax.errorbar(x, m, yerr=yerr, marker=marker, capsize=3, label=label)


def _k_axis(ax, records):
    ks = sorted({int(r["n_topics"]) for r in records})
    ax.set_xscale("log", base=2)
    ax.set_xticks(ks)
    ax.set_xticklabels([str(k) for k in ks])
    ax.minorticks_off()


def plot_compare(results, out_dir=None, *, dpi: int = 110) -> dict:
    """Perplexity vs K, accuracy vs K and time vs quality of a compare run, as figures or PNGs.

    Parameters
    ----------
    results : CompareResult, list of records, or path of ``results.json`` (or its folder)
    out_dir : path, optional
        Write ``perplexity_vs_k.png``, ``accuracy_vs_k.png`` and ``time_vs_quality.png`` here
        (figures without the data they need are not written).

    Returns
    -------
    dict name -> Path (with ``out_dir``) or matplotlib Figure (without).
    """
    records = _records(results)
    if not records:
        raise InvalidParameterError("plot_compare got an empty results table.")
    plt = _pyplot()
    models = list(dict.fromkeys(r["model"] for r in records))
    figs = {}

    if any(_finite(r.get("perplexity")) for r in records):
        fig, ax = plt.subplots(figsize=(6, 4))
        for m in models:
            x, mu, lo, hi = _series(records, m, "perplexity")
            if x.size:
                _errorbar(ax, x, mu, lo, hi, m)
        _k_axis(ax, records)
        ax.set_xlabel("number of topics K")
        ax.set_ylabel("held-out perplexity")
        ax.set_title("Held-out perplexity (shared split)")
        ax.legend(fontsize="small")
        ax.grid(alpha=0.3)
        fig.tight_layout()
        figs["perplexity_vs_k"] = fig

    clfs = [c for c in ("1nn", "logreg") if any(_finite(r.get(f"accuracy_{c}")) for r in records)]
    if clfs:
        fig, axes = plt.subplots(1, len(clfs), figsize=(5.5 * len(clfs), 4), squeeze=False, sharey=True)
        titles = {"1nn": "1-nearest neighbour", "logreg": "logistic regression"}
        for ax, c in zip(axes[0], clfs, strict=True):
            for m in models:
                x, mu, lo, hi = _series(records, m, f"accuracy_{c}")
                if x.size:
                    _errorbar(ax, x, mu, lo, hi, m)
            maj = [r["majority"] for r in records if _finite(r.get("majority"))]
            if maj:
                ax.axhline(maj[0], color="grey", ls=":", lw=1, label="majority class")
            _k_axis(ax, records)
            ax.set_xlabel("latent dimension K")
            ax.set_title(f"Accuracy, {titles[c]}")
            ax.grid(alpha=0.3)
        axes[0, 0].set_ylabel("test accuracy")
        axes[0, -1].legend(fontsize="small")
        fig.tight_layout()
        figs["accuracy_vs_k"] = fig

    quality = "perplexity" if any(_finite(r.get("perplexity")) for r in records) else (
        f"accuracy_{clfs[0]}" if clfs else None)
    if quality is not None and any(_finite(r.get("fit_seconds")) for r in records):
        fig, ax = plt.subplots(figsize=(6, 4))
        for m in models:
            pts = [(r["fit_seconds"], r[quality], r["n_topics"]) for r in records
                   if r["model"] == m and _finite(r.get("fit_seconds")) and _finite(r.get(quality))]
            if pts:
                t, q, k = zip(*pts, strict=True)
                ax.plot(t, q, marker="o", ls="-", label=m)
                for ti, qi, ki in pts:
                    ax.annotate(f"K={ki}", (ti, qi), textcoords="offset points", xytext=(4, 3), fontsize=7)
        ax.set_xscale("log")
        ax.set_xlabel("fit seconds")
        ax.set_ylabel("held-out perplexity" if quality == "perplexity" else f"accuracy ({quality[9:]})")
        ax.set_title("Time vs quality")
        ax.legend(fontsize="small")
        ax.grid(alpha=0.3)
        fig.tight_layout()
        figs["time_vs_quality"] = fig

    if out_dir is None:
        return figs
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name, fig in figs.items():
        from harmonium.io import atomic_writer

        with atomic_writer(out / f"{name}.png", "wb") as fh:
            fig.savefig(fh, format="png", dpi=dpi)
        plt.close(fig)
        paths[name] = out / f"{name}.png"
    return paths
