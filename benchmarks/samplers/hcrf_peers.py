"""harmonium's HCRF against pyhcrf on scikit-learn's digits read as sequences (issue 9).

Each 8x8 digit image is a sequence of its 8 pixel rows (T = 8, F = 8, pixel
values / 16), the label its digit (C = 10). Both systems get the same sequences,
H = 5 hidden states and the same L2 penalty ``l2 * ||w||^2`` (pyhcrf's ``c2``;
its L1 ``c1`` is set to 0), and are scored with the same accuracy code on the
same 5-fold stratified split (shuffled, seed 0). Each system keeps its own
optimiser settings: pyhcrf runs scipy's L-BFGS-B with its defaults (ftol
2.2e-9, gtol 1e-5, at most 15000 iterations, 10 correction pairs); harmonium's
``HCRF`` its defaults (ftol 1e-7, gtol 1e-5, at most 1000 iterations, 50
correction pairs). The row ``pyhcrf-maxcor50`` gives pyhcrf 50 correction pairs
too, to separate what the optimiser setting buys from what the kernels do.
Models: pyhcrf's own left-to-right topology with fixed start and end states;
harmonium's ``transitions="left_to_right"`` (default) and, as a second row,
``"full"`` (ergodic).

Every (fold, system) runs in its own subprocess with one thread (BLAS included;
harmonium ``n_jobs=1`` unless ``--n-jobs``), pyhcrf from its own virtual
environment (it needs numpy < 2)::

    python3.11 -m venv .bench-hcrf && .bench-hcrf/bin/pip install pyhcrf scikit-learn

Folds are interleaved (fold 1 of every system, then fold 2, ...), so slow
drifts of the machine's load hit every system alike. Measured per run:
``train_s`` (wall time of ``fit``), ``train_cpu_s`` (process CPU time of
``fit``), ``accuracy`` on the held-out fold, the optimiser's iterations and
function evaluations, and the load of other processes during the run.

Examples::

    nice -n 10 .venv/bin/python benchmarks/samplers/hcrf_peers.py run \
        --out benchmarks/samplers/results/hcrf-digits.jsonl
    .venv/bin/python benchmarks/samplers/hcrf_peers.py table benchmarks/samplers/results/hcrf-digits.jsonl
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]  # benchmarks/, where the shared _common.py lives
ROOT = HERE.parent
PYHCRF_PYTHON = ROOT / ".bench-hcrf" / "bin" / "python"
SYSTEMS = ("harmonium", "harmonium-full", "pyhcrf", "pyhcrf-maxcor50")


def _digits_fold(fold: int, n_splits: int = 5):
    import numpy as np
    from sklearn.datasets import load_digits
    from sklearn.model_selection import StratifiedKFold

    d = load_digits()
    X = np.ascontiguousarray(d.images / 16.0, dtype=np.float64)  # (1797, 8, 8): 8 rows of 8 pixels
    y = d.target.astype(np.int64)
    train, test = list(StratifiedKFold(n_splits, shuffle=True, random_state=0).split(X.reshape(len(X), -1), y))[fold]
    return [X[i] for i in train], y[train], [X[i] for i in test], y[test]


def _accuracy(pred, truth) -> float:
    import numpy as np

    return float(np.mean(np.asarray(pred).astype(np.int64) == np.asarray(truth)))


def _worker(cfg_path: str, out_path: str) -> None:
    cfg = json.loads(Path(cfg_path).read_text())
    Xtr, ytr, Xte, yte = _digits_fold(cfg["fold"])
    res = dict(cfg)
    if cfg["system"].startswith("harmonium"):
        from harmonium.estimators.hcrf import HCRF

        clf = HCRF(n_hidden_states=cfg["n_states"], l2=cfg["l2"], n_jobs=cfg["n_jobs"], random_state=cfg["fold"],
                   transitions="full" if cfg["system"] == "harmonium-full" else "left_to_right")
        HCRF(n_hidden_states=2, max_iter=1, random_state=0).fit(Xtr[:20], ytr[:20])  # numba: load the kernels
        w0, c0 = time.perf_counter(), time.process_time()
        clf.fit(Xtr, ytr)
        res["train_s"], res["train_cpu_s"] = time.perf_counter() - w0, time.process_time() - c0
        pred = clf.predict(Xte)
        res.update(n_iter=clf.n_iter_, n_fev=clf.n_evaluations_, converged=clf.converged_,
                   objective=clf.objective_, version=__import__("harmonium").__version__)
    else:
        import numpy as np
        import pyhcrf

        np.random.seed(cfg["fold"])  # noqa: NPY002 (pyhcrf draws its initial weights from numpy's global stream)
        extra = {"optimizer_kwargs": {"options": {"maxcor": 50}}} if cfg["system"] == "pyhcrf-maxcor50" else {}
        clf = pyhcrf.HCRF(num_states=cfg["n_states"], c1=0.0, c2=cfg["l2"], **extra)
        w0, c0 = time.perf_counter(), time.process_time()
        clf.fit(Xtr, ytr)
        res["train_s"], res["train_cpu_s"] = time.perf_counter() - w0, time.process_time() - c0
        pred = clf.predict(Xte)
        r = clf._optimizer_result
        res.update(n_iter=int(r.nit), n_fev=int(r.nfev), converged=bool(r.success), objective=float(r.fun))
    res["accuracy"] = _accuracy(pred, yte)
    res["n_train"], res["n_test"] = len(ytr), len(yte)
    Path(out_path).write_text(json.dumps(res))


def _run_one(cfg: dict, timeout: float) -> dict:
    sys.path.insert(0, str(HERE))
    from _common import THREAD_ENV, _busy_s

    python = str(PYHCRF_PYTHON) if cfg["system"].startswith("pyhcrf") else sys.executable
    env = dict(os.environ)
    for k in THREAD_ENV:
        env[k] = "1"
    with tempfile.TemporaryDirectory() as tmp:
        cfg_path, out_path = Path(tmp, "cfg.json"), Path(tmp, "out.json")
        cfg_path.write_text(json.dumps(cfg))
        t = time.perf_counter()
        b0, ru0 = _busy_s(), resource.getrusage(resource.RUSAGE_CHILDREN)
        try:
            proc = subprocess.run([python, __file__, "--_worker", str(cfg_path), str(out_path)], env=env,
                                  capture_output=True, text=True, timeout=timeout)
            rc, err = proc.returncode, proc.stderr
        except subprocess.TimeoutExpired:
            rc, err = "timeout", ""
        wall = time.perf_counter() - t
        ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        own = (ru1.ru_utime + ru1.ru_stime) - (ru0.ru_utime + ru0.ru_stime)
        busy = _busy_s() - b0
        res = json.loads(out_path.read_text()) if out_path.exists() else dict(
            cfg, error=f"worker exited with {rc}", stderr_tail=(err or "")[-3000:])
    res["subprocess_wall_s"] = wall
    res["other_busy_cores"] = max(0.0, busy - own) / wall
    return res


def cmd_run(args) -> None:
    sys.path.insert(0, str(HERE))
    from _common import git_revision, machine

    if any(s.startswith("pyhcrf") for s in args.systems) and not PYHCRF_PYTHON.exists():
        sys.exit(f"{PYHCRF_PYTHON} is missing: python3.11 -m venv .bench-hcrf && "
                 f".bench-hcrf/bin/pip install pyhcrf scikit-learn")
    stamp = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    meta = {"date": stamp, "machine": machine(), "git": git_revision(str(ROOT)), "nice": os.nice(0)}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a") as fh:
        for fold in args.folds:
            for system in args.systems:
                cfg = {"system": system, "fold": fold, "n_states": args.n_states, "l2": args.l2,
                       "n_jobs": args.n_jobs}
                res = _run_one(cfg, args.timeout)
                res.update(meta)
                fh.write(json.dumps(res) + "\n")
                fh.flush()
                nan = float("nan")
                print(f"fold {fold} {system:15s} acc {res.get('accuracy', nan):.4f} "
                      f"train {res.get('train_s', nan):7.2f} s (cpu {res.get('train_cpu_s', nan):7.2f})"
                      f" iters {res.get('n_iter')} fev {res.get('n_fev')} other load {res['other_busy_cores']:.2f}"
                      + (f" ERROR {res['error']}: {res.get('stderr_tail', '')[-400:]}" if "error" in res else ""),
                      flush=True)


def _summary(vals):
    return f"{statistics.mean(vals):.4g} ({min(vals):.4g}-{max(vals):.4g})"


def cmd_table(args) -> None:
    rows = [json.loads(line) for path in args.files for line in Path(path).read_text().splitlines() if line.strip()]
    rows = [r for r in rows if "error" not in r]
    by = {}
    for r in rows:
        by.setdefault(r["system"], []).append(r)
    ref = {r["fold"]: r for r in by.get("pyhcrf", [])}
    print("| system | folds | accuracy mean (min-max) | train s mean (min-max) | train CPU s mean (min-max) "
          "| speed-up vs pyhcrf per fold, wall | speed-up, CPU | iterations mean | other load |")
    print("|---|---|---|---|---|---|---|---|---|")
    for system in [s for s in SYSTEMS if s in by] + [s for s in by if s not in SYSTEMS]:
        rs = sorted(by[system], key=lambda r: r["fold"])
        speed = [ref[r["fold"]]["train_s"] / r["train_s"] for r in rs if r["fold"] in ref]
        speed_cpu = [ref[r["fold"]]["train_cpu_s"] / r["train_cpu_s"] for r in rs if r["fold"] in ref]
        print(f"| {system} | {len(rs)} | {_summary([r['accuracy'] for r in rs])} | "
              f"{_summary([r['train_s'] for r in rs])} | {_summary([r['train_cpu_s'] for r in rs])} | "
              f"{_summary(speed) if speed else '-'} | {_summary(speed_cpu) if speed else '-'} | "
              f"{statistics.mean(r['n_iter'] for r in rs):.0f} | "
              f"{statistics.mean(r['other_busy_cores'] for r in rs):.2f} |")


def main(argv=None) -> None:
    if argv is None and len(sys.argv) > 1 and sys.argv[1] == "--_worker":
        _worker(sys.argv[2], sys.argv[3])
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run every (fold, system) and append one JSON line each")
    r.add_argument("--out", required=True)
    r.add_argument("--systems", nargs="+", default=list(SYSTEMS), choices=SYSTEMS)
    r.add_argument("--folds", nargs="+", type=int, default=[0, 1, 2, 3, 4])
    r.add_argument("--n-states", type=int, default=5)
    r.add_argument("--l2", type=float, default=1.0)
    r.add_argument("--n-jobs", type=int, default=1, help="harmonium's threads (the peer is single-threaded)")
    r.add_argument("--timeout", type=float, default=1800.0)
    t = sub.add_parser("table", help="markdown summary of result files")
    t.add_argument("files", nargs="+")
    args = ap.parse_args(argv)
    {"run": cmd_run, "table": cmd_table}[args.cmd](args)


if __name__ == "__main__":
    main()
