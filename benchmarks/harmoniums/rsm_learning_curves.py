"""RSM learning curves (issue 17): held-out log-likelihood per word against parameter updates, from the raw rows.

Every RSM fit of ``rsm_protocol.py`` and ``rsm_lda_regimes.py`` records its validation trace: the AIS
(5 runs x 200 temperatures, fixed seed) log-likelihood per word of its validation documents every 4
epochs. This script plots those traces, with updates = epoch x (updates per epoch of the run):

* the 10,000-document Debian subset, paper protocol at lr 0.003 with a 200-epoch cap, 3 seeds;
* the long regime (documents of >= 50 tokens) as it stalls, 3 seeds, and with its training
  documents over 100 tokens split (``corpus.split_long_documents``), 3 seeds.

The two regimes have different validation sets, so compare curves within a panel only.

    .venv/bin/python benchmarks/harmoniums/rsm_learning_curves.py
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"


def _rows(name: str):
    with open(RESULTS / name) as fh:
        for line in fh:
            r = json.loads(line)
            if r.get("validation_trace") and r.get("epochs_run"):
                yield r


def _curve(r):
    per_epoch = r["n_updates"] / r["epochs_run"]
    return [e * per_epoch for e, _ in r["validation_trace"]], [v for _, v in r["validation_trace"]]


def main() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    subset = {r["seed"]: r for r in _rows("rsm-protocol-debian.jsonl")
              if r.get("setting") == "paper-lr003" and r["epochs_run"] == 200}
    stalled, split = {}, {}
    for r in _rows("rsm-lda-regimes.jsonl"):
        if r.get("regime") != "long" or r["epochs_run"] != 160:
            continue
        if r.get("split_train_length") == 100:
            split[r["seed"]] = r
        elif not r.get("split_train_length") and not r.get("max_train_length"):
            stalled[r["seed"]] = r
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for seed, r in sorted(subset.items()):
        axes[0].plot(*_curve(r), label=f"seed {seed}")
    axes[0].set_title("Debian subset (10,000 docs), RSM-50, CD 1->5, lr 0.003")
    for runs, style, what in ((stalled, "--", "whole documents"), (split, "-", "documents > 100 tokens split")):
        for seed, r in sorted(runs.items()):
            axes[1].plot(*_curve(r), style, label=f"{what}, seed {seed}")
    axes[1].set_title("Debian documents of >= 50 tokens, RSM-50")
    for ax in axes:
        ax.set_xlabel("parameter updates (mini-batches of 100)")
        ax.set_ylabel("validation log-likelihood per word (AIS 5 x 200)")
        ax.legend(fontsize=7)
    fig.tight_layout()
    out = RESULTS / "rsm-learning-curves.png"
    fig.savefig(out, dpi=110)
    print(out, {"subset": sorted(subset), "stalled": sorted(stalled), "split": sorted(split)})


if __name__ == "__main__":
    main()
