"""harmonium's Gibbs LDA against peers (tomotopy, topica, lda) on the same token stream.

Every (system, K, threads, repeat) runs in its own subprocess, so memory is
per system. Each loads the corpus, splits it 90/10 by document (seed 0) and
each test document's tokens 50/50 (seed 0), and trains on the training
documents: the same documents and the same tokens for every system (peers get
the word strings of harmonium's vocabulary, or the same count matrix), with
alpha = 0.1 per topic, beta = 0.01, no hyperparameter optimisation.

Measured per run (see _peers.py for how each system is clocked):

* throughput: n_train_tokens x sweeps / seconds of sweeping, over the sweeps
  (P, 2P], P = (iters - 1) // 2 (the second half of the run, the same window
  for every system), initialisation and evaluation excluded; and per thread;
* quality: held-out perplexity by document completion of the final topics,
  with theta from harmonium's fixed-topics Gibbs sampler (50 sweeps) and
  harmonium's scoring, the same for every system; every ``--eval-every``
  sweeps too for systems that can pause (harmonium, tomotopy, lda), giving a
  perplexity-against-training-seconds trace;
* transform: documents/s of the system's own inference on the observed test
  halves, and the perplexity of the held-out halves with that theta;
* memory: RSS after loading the data (baseline), peak RSS (VmHWM) while the
  system prepared, trained and was scored (reset after loading the data), and
  ru_maxrss of the whole process.

Examples::

    .venv/bin/python benchmarks/lda/lda_peers.py --corpus debian --topics 100 \\
        --systems harmonium tomotopy topica-sparse topica-warp lda --threads 1 2 \\
        --iters 20 --repeats 3 --no-quality --out benchmarks/lda/results/debian-k100-throughput.jsonl
    .venv/bin/python benchmarks/lda/lda_peers.py --corpus debian --topics 100 --iters 100 --eval-every 20 \\
        --out benchmarks/lda/results/debian-k100-quality.jsonl
    .venv/bin/python benchmarks/lda/lda_peers.py --table benchmarks/lda/results/*.jsonl   # tables only

harmonium options pass through: ``--harmonium-params '{"sampler": "sparse"}'``;
several variants at once with ``--harmonium-variants '{"sparse": {...},
"alias": {...}}' --systems harmonium:sparse harmonium:alias``. A harmonium
variant whose parameters include ``n_jobs`` runs at every ``--threads`` value
(n_jobs set to it); otherwise harmonium runs at 1 thread only. A run that
fails (e.g. a parameter not accepted yet) is recorded with its error.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import shlex
import statistics
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]  # benchmarks/, where the shared _common.py lives
sys.path.insert(0, str(HERE))

import _common as C  # noqa: E402
from _peers import ALPHA, SYSTEMS, make_runner  # noqa: E402


# -- one run, in a subprocess ----------------------------------------------------------------
def worker(cfg: dict) -> dict:
    res = dict(cfg)
    res["started"] = _dt.datetime.now().isoformat(timespec="seconds")
    try:
        data = C.load_data(cfg["corpus"], cfg.get("max_docs"))
        res["data"] = data.describe()
        res["rss_data_mib"] = C.rss_mib()
        res["hwm_reset"] = C.reset_hwm()
        runner = make_runner(cfg["system"], cfg["K"], cfg["threads"], cfg["seed"], cfg.get("options"))
        res["versions"] = runner.versions()
        res["settings"] = runner.settings()
        t = time.perf_counter()
        runner.prepare(data)
        res["prepare_s"] = time.perf_counter() - t
        res["rss_prepared_mib"] = C.rss_mib()

        eval_s = [0.0]

        def evaluate(phi):
            t = time.perf_counter()
            p = C.heldout_perplexity(C.check_phi(phi, cfg["K"], data.corpus.n_words), ALPHA, data,
                                     n_iter=cfg["eval_iters"])
            eval_s[0] += time.perf_counter() - t
            return p

        do_quality = cfg["quality"]
        fit = runner.fit(cfg["iters"], cfg["eval_every"] if do_quality else 0, evaluate)
        res["peak_train_mib"] = C.hwm_mib()
        n = data.n_train_tokens
        res.update({k: v for k, v in fit.items() if k != "trace"})
        res["tokens_per_s"] = n * fit["measured_iters"] / fit["measured_s"]
        res["tokens_per_s_per_thread"] = res["tokens_per_s"] / cfg["threads"]
        trace = list(fit["trace"])
        if do_quality:
            phi = C.check_phi(runner.phi(), cfg["K"], data.corpus.n_words)
            perp = evaluate(phi)
            trace.append({"iteration": cfg["iters"], "train_s": fit["train_s"], "cpu_s": fit.get("train_cpu_s"),
                          "perplexity": perp})
            res["perplexity"] = perp
            if cfg.get("transform", True):
                t = time.perf_counter()
                theta, tinfo = runner.transform(data, cfg.get("transform_iters"))
                tinfo["total_s"] = time.perf_counter() - t
                tinfo["docs_per_s"] = data.observed.n_docs / tinfo["infer_s"]
                tinfo["perplexity_own_theta"] = C.perplexity_of_theta(theta, phi, data)
                res["transform"] = tinfo
        res["trace"] = trace
        res["settings"] = runner.settings()
        res["eval_s"] = eval_s[0]
        res["peak_mib"] = C.hwm_mib()
        res["maxrss_mib"] = C.maxrss_mib()
        # harmonium's final-state phi, an array the peers do not hold: made and scored after the peak is read
        fs = getattr(runner, "final_state_phi", None) if do_quality else None
        if fs is not None:
            res["perplexity_final_state"] = evaluate(C.check_phi(fs, cfg["K"], data.corpus.n_words))
            del fs
        if do_quality and hasattr(runner, "extra_trace"):  # after the peak is read: extra fits do not count
            res["trace"] = sorted(res["trace"] + runner.extra_trace(evaluate),
                                  key=lambda p: (p["iteration"], bool(p.get("estimate"))))
            res["eval_s"] = eval_s[0]
    except Exception as exc:  # noqa: BLE001 - recorded, the harness goes on
        res["error"] = f"{type(exc).__name__}: {exc}"
        res["traceback"] = traceback.format_exc()
        res["maxrss_mib"] = C.maxrss_mib()
    return res


# -- tables ----------------------------------------------------------------------------------
def _fmt(x, digits=1, scale=1.0):
    return "n/a" if x is None else f"{x / scale:.{digits}f}"


def seconds_to(trace: list[dict], target: float):
    """Training seconds at which the trace first reaches ``target`` (linear interpolation); (seconds, exact?)."""
    prev = None
    for p in trace:
        if p["perplexity"] <= target:
            if prev is None:
                return p["train_s"], False
            f = (prev["perplexity"] - target) / (prev["perplexity"] - p["perplexity"])
            return prev["train_s"] + f * (p["train_s"] - prev["train_s"]), True
        prev = p
    return None, True


def tables(records: list[dict], target: float | None = None, max_other_load: float | None = None) -> str:
    """Markdown tables of the runs, leaving out runs during which others used more than ``max_other_load`` cores."""
    groups: dict[tuple, list[dict]] = {}
    lines = []
    if max_other_load is not None:
        busy = [r for r in records if r.get("other_busy_cores", 0.0) > max_other_load]
        records = [r for r in records if r.get("other_busy_cores", 0.0) <= max_other_load]
        if busy:
            lines.append(f"({len(busy)} runs left out, other processes used more than {max_other_load} cores: "
                         + ", ".join(sorted({f"{r['system']}/K={r['K']}/t={r['threads']}" for r in busy})) + ")")
    for r in records:
        key = (r["corpus"], r.get("max_docs"), r["K"], r["system"], r["threads"], r["iters"])
        groups.setdefault(key, []).append(r)
    for ck in sorted({k[:3] for k in groups}, key=lambda c: (c[0], c[1] or 0, c[2])):
        corpus, max_docs, K = ck
        rows = [(k, v) for k, v in groups.items() if k[:3] == ck]
        ok_any = [r for _, v in rows for r in v if "error" not in r]
        d = ok_any[0]["data"] if ok_any else {}
        lines.append(f"\n### {corpus}{'' if max_docs is None else f' (first {max_docs} rows)'}, K = {K}: "
                     f"{d.get('n_train_docs', '?')} training documents, {d.get('n_train_tokens', '?')} tokens, "
                     f"V = {d.get('n_words', '?')}\n")
        lines.append("| system | threads | sweeps | runs | tokens/s min | median | max | per thread (median) "
                     "| x harmonium | fit wall s | prepare s | RSS data MiB | peak RSS MiB | other load (cores, max) |")
        lines.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        base = None
        for (_, _, _, system, threads, _iters), v in rows:
            ok = [r for r in v if "error" not in r]
            if system == "harmonium" and threads == 1 and ok:
                base = statistics.median(r["tokens_per_s"] for r in ok)
        for (_, _, _, system, threads, iters), v in sorted(rows, key=lambda kv: (kv[0][3] != "harmonium", kv[0][3:])):
            ok = [r for r in v if "error" not in r]
            if not ok:
                err = v[0].get("error", "?").splitlines()[0][:120]
                lines.append(f"| {system} | {threads} | {iters} | 0/{len(v)} | failed: {err} ||||||||| ")
                continue
            tps = sorted(r["tokens_per_s"] for r in ok)
            med = statistics.median(tps)
            lines.append(
                f"| {system} | {threads} | {iters} | {len(ok)}/{len(v)} | {_fmt(tps[0], 2, 1e6)} M | "
                f"{_fmt(med, 2, 1e6)} M | {_fmt(tps[-1], 2, 1e6)} M | {_fmt(med / threads, 2, 1e6)} M | "
                f"{'n/a' if not base else f'{med / base:.2f}'} | "
                f"{_fmt(statistics.median(r['fit_wall_s'] for r in ok), 2)} | "
                f"{_fmt(statistics.median(r['prepare_s'] for r in ok), 2)} | "
                f"{_fmt(max(r['rss_data_mib'] for r in ok), 0)} | {_fmt(max(r['peak_mib'] for r in ok), 0)} | "
                f"{_fmt(max(r.get('other_busy_cores', 0.0) for r in ok), 2)} |")
        qual = [(k, r) for k, v in rows for r in v if "error" not in r and "perplexity" in r]
        if qual:
            tgt = target
            if tgt is None:
                tgt = max(r["perplexity"] for _, r in qual)
            lines.append(f"\nQuality (document completion, scored by harmonium; 'seconds to {tgt:.1f}' = "
                         "training seconds until the held-out perplexity first reaches it, interpolated "
                         "between evaluations; '<=' where only the final point is known):\n")
            lines.append("| system | threads | sweeps | perplexity (our theta) | final state only | trace "
                         "| seconds to target | transform docs/s | transform sweeps | perplexity (own theta) |")
            lines.append("|---|---|---|---|---|---|---|---|---|---|")
            for (_, _, _, system, threads, iters), r in sorted(qual, key=lambda kr: (kr[0][3] != "harmonium",
                                                                                        kr[0][3:])):
                tr = r.get("trace", [])
                s, exact = seconds_to(tr, tgt)
                st = "n/a" if s is None else (f"{s:.1f}" if exact else f"<= {s:.1f}")
                trace_s = " ".join(f"{p['iteration']}:{p['perplexity']:.0f}" for p in tr)
                t = r.get("transform", {})
                lines.append(f"| {system} | {threads} | {iters} | {r['perplexity']:.1f} | "
                             f"{_fmt(r.get('perplexity_final_state', r['perplexity']), 1)} | {trace_s} | {st} | "
                             f"{_fmt(t.get('docs_per_s'), 0)} | {t.get('n_iter', 'n/a')} | "
                             f"{_fmt(t.get('perplexity_own_theta'), 1)} |")
    return "\n".join(lines)


# -- command line ----------------------------------------------------------------------------
def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if C.serve_worker(argv, worker):
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", choices=C.CORPORA, default="debian")
    ap.add_argument("--max-docs", type=int, default=None, help="read only the first N rows of the corpus")
    ap.add_argument("--topics", type=int, nargs="+", default=[100])
    ap.add_argument("--systems", nargs="+", default=list(SYSTEMS),
                    help=f"{' '.join(SYSTEMS)}, or harmonium:LABEL for a --harmonium-variants entry")
    ap.add_argument("--threads", type=int, nargs="+", default=[1])
    ap.add_argument("--iters", type=int, default=20, help="training sweeps")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0, help="seed of repeat r is seed + r")
    ap.add_argument("--eval-every", type=int, default=0, help="held-out perplexity every N sweeps (0: at the end)")
    ap.add_argument("--eval-iters", type=int, default=50, help="sweeps of our fixed-topics theta inference")
    ap.add_argument("--no-quality", action="store_true", help="throughput and memory only")
    ap.add_argument("--quality-runs", type=int, default=1, help="repeats that also measure quality/transform")
    ap.add_argument("--transform-iters", type=int, default=None,
                    help="sweeps of every system's own inference (default: each system's default)")
    ap.add_argument("--harmonium-params", default="{}", help="JSON: extra harmonium.LDA arguments")
    ap.add_argument("--harmonium-variants", default="{}", help='JSON: {"label": {params}} for harmonium:label')
    ap.add_argument("--tomotopy-params", default="{}", help='JSON, e.g. {"parallel": "PARTITION"}')
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per run")
    ap.add_argument("--out", default=None, help="append JSON lines here")
    ap.add_argument("--table", nargs="+", metavar="JSONL", help="only print the tables of these result files")
    ap.add_argument("--target-perplexity", type=float, default=None)
    ap.add_argument("--quiet-cores", type=float, default=0.25,
                    help="before each run wait until other processes use fewer cores than this")
    ap.add_argument("--max-wait", type=float, default=300, help="seconds to wait for a quiet machine")
    ap.add_argument("--max-other-load", type=float, default=0.25,
                    help="tables leave out runs during which other processes used more cores than this")
    args = ap.parse_args(argv)

    if args.table:
        recs = C.read_records(args.table)
        print(tables(recs, args.target_perplexity, args.max_other_load))
        return

    hparams = json.loads(args.harmonium_params)
    variants = json.loads(args.harmonium_variants)
    tparams = json.loads(args.tomotopy_params)
    command = "python " + " ".join(shlex.quote(a) for a in ["benchmarks/lda/lda_peers.py", *argv])
    meta = {"command": command, "machine": C.machine(), "date": _dt.date.today().isoformat()}
    out = Path(args.out) if args.out else None
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
    records = []
    for K in args.topics:
        for system in args.systems:
            base = system.split(":", 1)[0]
            options = {}
            if base == "harmonium":
                options = variants[system.split(":", 1)[1]] if ":" in system else hparams
            elif base == "tomotopy":
                options = tparams
            threads_list = args.threads
            if base == "lda" or (base == "harmonium" and "n_jobs" not in options):
                threads_list = [1]
            for threads in threads_list:
                for rep in range(args.repeats):
                    cfg = {"corpus": args.corpus, "max_docs": args.max_docs, "system": system, "K": K,
                           "threads": threads, "iters": args.iters, "repeat": rep,
                           "seed": args.seed + rep, "eval_every": args.eval_every, "eval_iters": args.eval_iters,
                           "quality": (not args.no_quality) and rep < args.quality_runs,
                           "transform_iters": args.transform_iters, "options": options, **meta}
                    print(f"[{time.strftime('%H:%M:%S')}] {args.corpus} K={K} {system} threads={threads} "
                          f"rep={rep} ...", end=" ", flush=True)
                    r = C.run_recorded(cfg, args.timeout, __file__, quiet_cores=args.quiet_cores,
                                       max_wait=args.max_wait, out=out)
                    records.append(r)
                    if "error" in r:
                        print(f"FAILED ({r['error'].splitlines()[0][:200]})", flush=True)
                    else:
                        q = f", perplexity {r['perplexity']:.1f}" if "perplexity" in r else ""
                        print(f"{r['tokens_per_s'] / 1e6:.2f} M tokens/s, peak {r['peak_mib']:.0f} MiB{q} "
                              f"({r['subprocess_wall_s']:.0f} s; other load {r['other_busy_cores']:.2f} cores, "
                              f"before {r['busy_cores_before']:.2f}, waited {r['waited_s']:.0f} s)", flush=True)
    print(tables(records, args.target_perplexity, args.max_other_load))


if __name__ == "__main__":
    main()
