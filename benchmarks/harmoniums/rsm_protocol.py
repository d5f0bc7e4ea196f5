"""Replicated Softmax trained as in the paper vs as before, one factor at a time (issue 17), against LDA.

Salakhutdinov & Hinton (2009, §4) train the RSM on mini-batches of 100 documents by CD whose
number of Gibbs steps starts at 1 and rises gradually to 5, for many more updates than our
earlier 20 epochs of CD-1. This script trains RSM-50 on the Debian corpus restricted to its 2,000
most frequent words (the split of ``efh_peers.py rsm-lda``: 90/10, seed 0) under a list of named
settings that each change one factor of the baseline, and scores every model by the same AIS
estimate of held-out perplexity (log Z per test length, ``n_ais_runs`` x ``n_temperatures``); LDA-50
by collapsed Gibbs, scored by left-to-right, is the reference.

To keep each run within a few minutes on the shared 2-core machine the runs use a seeded random
subset of the training split (``--n-train``), hold out ``--n-valid`` further training documents
for validation (used only by the early-stopping settings; every setting trains on the same
``--n-train`` documents) and score a seeded subset of the test split (``--n-test``).

Settings (``--settings``; one row each)::

    base       CD-1, 20 epochs, lr 0.01, momentum 0.9, weight decay 0.001, batches of 100 (as before)
    long       base, up to --max-epochs epochs, early stopping on validation AIS (training length)
    cd15       base with CD-k rising 1 -> 5 over the 20 epochs (k only)
    lr003      base with learning rate 0.003 (learning rate only)
    mom0       base with momentum 0 (momentum only)
    paper      CD 1 -> 5 over up to --max-epochs epochs, early stopping (the paper's protocol)
    paper-lr003, paper-mom0, paper-pcd
               paper with learning rate 0.003 / momentum 0 / persistent CD (one factor each)
    lda        LDA-50, collapsed Gibbs, 200 sweeps, alpha 0.1, beta 0.01 (reference)

Example::

    OPENBLAS_NUM_THREADS=1 nice -n 10 .venv/bin/python benchmarks/harmoniums/rsm_protocol.py \\
        --settings base long cd15 lr003 paper lda --out benchmarks/harmoniums/results/rsm-protocol-debian.jsonl
    .venv/bin/python benchmarks/harmoniums/rsm_protocol.py \\
        --table benchmarks/harmoniums/results/rsm-protocol-debian.jsonl
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402
import numpy as np  # noqa: E402

BASE = {"learning": "cd", "n_gibbs": 1, "n_iter": 20, "learning_rate": 0.01, "momentum": 0.9, "weight_decay": 0.001,
        "batch_size": 100}


def settings(max_epochs: int, every: int, patience: int) -> dict:
    stop = {"validation_every": every, "patience": patience}
    return {
        "base": dict(BASE),
        "long": {**BASE, "n_iter": max_epochs, **stop},
        "cd15": {**BASE, "n_gibbs": (1, 5)},
        "lr003": {**BASE, "learning_rate": 0.003},
        "mom0": {**BASE, "momentum": 0.0},
        "paper": {**BASE, "n_gibbs": (1, 5), "n_iter": max_epochs, **stop},
        "paper-lr003": {**BASE, "n_gibbs": (1, 5), "n_iter": max_epochs, **stop, "learning_rate": 0.003},
        "paper-mom0": {**BASE, "n_gibbs": (1, 5), "n_iter": max_epochs, **stop, "momentum": 0.0},
        "paper-pcd": {**BASE, "n_gibbs": (1, 5), "n_iter": max_epochs, **stop, "learning": "pcd"},
    }


def _data(args):
    import efh_peers as E

    _, train, test = E._debian("2000")
    rng = np.random.default_rng(args.subset_seed)
    order = rng.permutation(train.n_docs)
    tr = train[np.sort(order[:args.n_train])]
    va = train[np.sort(order[args.n_train:args.n_train + args.n_valid])]
    te = test[np.sort(rng.permutation(test.n_docs)[:args.n_test])] if args.n_test else test
    return tr, va, te


def run_rsm(name: str, kw: dict, tr, va, te, args) -> dict:
    from harmonium.estimators.efh import ReplicatedSoftmax

    rsm = ReplicatedSoftmax(50, **kw, evaluate_every=max(1, kw.get("validation_every", 5)), n_ais_runs=args.ais_runs,
                            n_temperatures=args.ais_temperatures, validation_ais=(5, 200), random_state=args.seed)
    t = time.perf_counter()
    rsm.fit(tr, validation=va if "patience" in kw else None)
    fit_s = time.perf_counter() - t
    t = time.perf_counter()
    res = rsm.perplexity(te, random_state=0)
    eval_s = time.perf_counter() - t
    n_updates = int(rsm._state.n_updates)
    val = [(e, v) for e, v in zip(rsm.trace_["epoch"], rsm.trace_["validation_loglik"], strict=True)
           if v == v]
    params = {k: list(v) if isinstance(v, tuple) else v for k, v in kw.items()}
    return {"setting": name, "system": "rsm", "params": params, "epochs_run": int(rsm.n_iter_),
            "n_updates": n_updates, "best_epoch": rsm.best_iteration_, "validation_trace": val,
            "perplexity": res.perplexity, "perplexity_interval": list(res.perplexity_interval),
            "fit_s": fit_s, "eval_s": eval_s}


def run_lda(tr, te, args) -> dict:
    from harmonium import LDA
    from harmonium.evaluation import perplexity

    lda = LDA(50, n_iter=200, doc_topic_prior=0.1, topic_word_prior=0.01, random_state=args.seed)
    t = time.perf_counter()
    lda.fit(tr)
    fit_s = time.perf_counter() - t
    t = time.perf_counter()
    res = perplexity(lda, te, n_particles=20, random_state=0)
    return {"setting": "lda", "system": "lda", "perplexity": res.perplexity,
            "perplexity_interval": list(res.perplexity_interval), "fit_s": fit_s, "eval_s": time.perf_counter() - t}


def table(paths) -> None:
    rows = [json.loads(line) for p in paths for line in Path(p).read_text().splitlines() if line.strip()]
    print("| setting | seed | max epochs | epochs run (best) | updates | held-out perplexity [±2 s.e.] "
          "| fit s | eval s |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        lo, hi = r["perplexity_interval"]
        ep = "" if r["system"] == "lda" else f"{r['epochs_run']} ({r['best_epoch'] or '-'})"
        up = "" if r["system"] == "lda" else f"{r['n_updates']:,}"
        mx = "" if r["system"] == "lda" else r["params"]["n_iter"]
        print(f"| {r['setting']} | {r['seed']} | {mx} | {ep} | {up} | {r['perplexity']:.1f} [{lo:.1f}, {hi:.1f}] | "
              f"{r['fit_s']:.0f} | {r['eval_s']:.0f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--settings", nargs="+", default=["base", "long", "cd15", "lr003", "paper", "lda"])
    ap.add_argument("--n-train", type=int, default=10_000)
    ap.add_argument("--n-valid", type=int, default=1_000)
    ap.add_argument("--n-test", type=int, default=2_000, help="0: the whole test split")
    ap.add_argument("--max-epochs", type=int, default=80)
    ap.add_argument("--validation-every", type=int, default=4)
    ap.add_argument("--patience", type=int, default=3)
    ap.add_argument("--ais-runs", type=int, default=10)
    ap.add_argument("--ais-temperatures", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--subset-seed", type=int, default=0)
    ap.add_argument("--out")
    ap.add_argument("--table", nargs="+")
    args = ap.parse_args()
    if args.table:
        table(args.table)
        return
    tr, va, te = _data(args)
    info = {"n_train": tr.n_docs, "n_valid": va.n_docs, "n_test": te.n_docs, "n_test_tokens": int(te.n_tokens),
            "n_words": tr.n_words}
    print(json.dumps(info), flush=True)
    table_of = settings(args.max_epochs, args.validation_every, args.patience)
    for name in args.settings:
        res = run_lda(tr, te, args) if name == "lda" else run_rsm(name, table_of[name], tr, va, te, args)
        res.update(info)
        res.update({"seed": args.seed, "command": " ".join(sys.argv), "machine": C.machine(),
                    "time": _dt.datetime.now().isoformat(timespec="seconds"),
                    "harmonium_revision": C.git_revision(str(HERE.parent)),
                    "ais": f"{args.ais_runs} runs x {args.ais_temperatures} temperatures per length"})
        print(json.dumps({k: res[k] for k in ("setting", "perplexity", "fit_s", "eval_s")}
                         | {k: res.get(k) for k in ("epochs_run", "best_epoch", "n_updates")}), flush=True)
        if args.out:
            with open(args.out, "a") as f:
                f.write(json.dumps(res) + "\n")


if __name__ == "__main__":
    main()
