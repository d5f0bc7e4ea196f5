"""Time to quality: wall and CPU seconds until each LDA Gibbs sampler reaches the best exact peer's perplexity.

A thin driver over ``lda_peers.py`` (same worker, same subprocess per run,
same token stream, same held-out scoring by harmonium's document completion;
see that file and ``_peers.py`` for how each system is clocked). What it adds:

* the harmonium samplers come from
  ``harmonium.inference.mcmc.lda.collapsed_gibbs.SAMPLERS`` at run time (read
  in a subprocess, so it sees the harmonium under test), each a system
  ``harmonium:<sampler>`` at 1 thread ("plain" only at K <= 100, "auto" left
  out: it only dispatches to the others), plus ``harmonium:parallel``
  (``parallel_gibbs`` with the sparse sampler, n_jobs = threads) at every
  thread count above 1 (``harmonium:parallel-SAMPLER``: with that sampler, e.g. ``parallel-auto``,
  the default's per-sweep choice between the word-partitioned F+LDA and SparseLDA
  sweeps); ``--harmonium-src LABEL=PATH`` adds the samplers of
  another harmonium checkout as ``harmonium-LABEL:<sampler>``;
* peers: tomotopy, topica-sparse, topica-warp, topica-lightlda (1 and more
  threads), lda and pyrmallet (1 thread); topica and pyrmallet cannot pause,
  so their held-out trace comes from separate fits of the ``--checkpoints``
  lengths;
* systems alternate within a repeat (repeat r runs the list rotated by r), so
  slow drifts of the shared machine's load fall on every system alike;
* every trace point carries CPU seconds of the training process (all its
  threads) as well as wall seconds; each run records the other load on the
  machine (``other_busy_cores``);
* ``table``: the target of a (corpus, K, repeat) is the best (lowest)
  perplexity after ``--iters`` sweeps among the exact peers at 1 thread
  (tomotopy, topica-sparse, lda, pyrmallet); each run's seconds to reach it
  are interpolated linearly between its trace points (initialisation
  included); harmonium's ratio to the fastest peer at the same thread count
  is taken within each repeat, and the tables give median and range over
  repeats;
* ``plot``: perplexity against CPU and wall seconds, one PNG per corpus and K.

The peers live in a separate venv; run with its python and the worktree on
PYTHONPATH (the runs' subprocesses use the same interpreter)::

    PYTHONPATH=$PWD .bench-peers/bin/python benchmarks/lda/lda_time_to_quality.py run --corpus debian \\
        --topics 100 --threads 1 --iters 200 --eval-every 25 --checkpoints 100 --repeats 3 \\
        --systems harmonium:sparse tomotopy topica-sparse topica-warp \\
        --out benchmarks/lda/results/ttq-debian-k100.jsonl
    PYTHONPATH=$PWD .bench-peers/bin/python benchmarks/lda/lda_time_to_quality.py table \\
        benchmarks/lda/results/ttq-debian-k100.jsonl
    PYTHONPATH=$PWD .bench-peers/bin/python benchmarks/lda/lda_time_to_quality.py plot \\
        benchmarks/lda/results/ttq-debian-k100.jsonl --outdir benchmarks/lda/results
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # benchmarks/: _common
sys.path.insert(0, str(HERE))  # benchmarks/lda/: lda_peers, _peers

import _common as C  # noqa: E402
import lda_peers  # noqa: E402

EXACT_PEERS = ("tomotopy", "topica-sparse", "lda", "pyrmallet")
PEERS = ("tomotopy", "topica-sparse", "topica-warp", "topica-lightlda", "lda", "pyrmallet")
SINGLE_THREAD = ("lda", "pyrmallet")
CHECKPOINTED = ("topica-sparse", "topica-warp", "topica-lightlda", "pyrmallet")


# -- which systems -------------------------------------------------------------------------------
def harmonium_samplers(src: str | None = None) -> list[str]:
    """The names in ``SAMPLERS`` of the harmonium at ``src`` (default: the one on PYTHONPATH), in a subprocess."""
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = os.pathsep.join([src, env.get("PYTHONPATH", "")])
    code = ("import json; from harmonium.inference.mcmc.lda.collapsed_gibbs import SAMPLERS; "
            "print(json.dumps(list(SAMPLERS)))")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True,
                         cwd=src or None)  # "-c" puts the working directory first on sys.path
    return [s for s in json.loads(out.stdout.strip().splitlines()[-1]) if s != "auto"]


def peer_available(system: str) -> bool:
    mod = {"tomotopy": "tomotopy", "lda": "lda", "pyrmallet": "pyrmallet"}.get(system, "topica")
    try:
        __import__(mod)
        return True
    except ImportError:
        return False


def plan(systems: list[str], K: int, threads: list[int], srcs: dict[str, str], checkpoints: list[int],
         estimate_fits: list[int] = ()) -> list[dict]:
    """(system, threads, options, harmonium_src) of every run of one repeat, in the order they run."""
    runs = []
    fits = {"estimate_fits": list(estimate_fits)} if estimate_fits else {}
    for name in systems:
        base, _, variant = name.partition(":")
        if base == "harmonium" or base.startswith("harmonium-"):
            label = base.partition("-")[2]
            src = srcs.get(label) if label else None
            if label and src is None:
                raise SystemExit(f"{name}: no --harmonium-src {label}=PATH given")
            if variant == "parallel" or variant.startswith("parallel-"):
                sampler = variant.partition("-")[2] or "sparse"  # harmonium:parallel-auto: LDA's default sampler
                for t in threads:
                    if t > 1:
                        runs.append({"system": name, "threads": t, "harmonium_src": src,
                                     "options": {"inference": "parallel_gibbs", "sampler": sampler, "n_jobs": t,
                                                 **fits}})
                continue
            if variant == "plain" and K > 100:
                continue
            runs.append({"system": name, "threads": 1, "harmonium_src": src, "options": {"sampler": variant, **fits}})
        elif base in PEERS:
            opts = {"checkpoints": checkpoints} if base in CHECKPOINTED else {}
            for t in ([1] if base in SINGLE_THREAD else threads):
                runs.append({"system": name, "threads": t, "harmonium_src": None, "options": opts})
        else:
            raise SystemExit(f"unknown system {name!r}")
    return runs


def default_systems(K: int, threads: list[int], srcs: dict[str, str]) -> list[str]:
    out = [f"harmonium:{s}" for s in harmonium_samplers()]
    if any(t > 1 for t in threads):
        out.append("harmonium:parallel")
    for label, src in srcs.items():
        out += [f"harmonium-{label}:{s}" for s in harmonium_samplers(src)]
    return out + [p for p in PEERS if peer_available(p)]


# -- the worker: lda_peers' worker, with the harmonium source put first on sys.path -------------
def worker(cfg: dict) -> dict:
    src = cfg.get("harmonium_src")
    if src:
        sys.path.insert(0, src)
    res = lda_peers.worker(cfg)
    if cfg["system"].partition(":")[0].startswith("harmonium"):
        try:
            import harmonium

            root = str(Path(harmonium.__file__).resolve().parents[1])
            res.setdefault("versions", {}).update(harmonium_file=harmonium.__file__, git=C.git_revision(root))
        except ImportError:
            pass
    return res


def warm_cache(runs: list[dict], corpus: str, K: int, timeout: float) -> None:
    """Run each harmonium system of ``runs`` once, small (300 documents, 2 sweeps, its own options), unrecorded:
    its process fills numba's on-disk cache, so the timed runs load the kernels instead of compiling them
    (compiling adds 60-70 MiB of LLVM to a process's peak RSS and seconds to its clock, once per install)."""
    for spec in runs:
        if not spec["system"].startswith("harmonium"):
            continue
        options = {k: v for k, v in spec["options"].items() if k != "estimate_fits"}
        cfg = {"corpus": corpus, "max_docs": 300, "K": K, "iters": 2, "repeat": -1, "seed": 0, "eval_every": 1,
               "eval_iters": 2, "quality": True, "transform": False, **spec, "options": options}
        print(f"[{time.strftime('%H:%M:%S')}] warming numba's cache: {spec['system']} threads={spec['threads']}",
              flush=True)
        r = C.run_in_subprocess(cfg, timeout, __file__)
        if "error" in r:
            raise SystemExit(f"--warm-cache: {spec['system']} failed: {r['error'].splitlines()[0][:200]}")


# -- analysis ------------------------------------------------------------------------------------
#: What harmonium's trace scores (``table``/``plot --endpoint``): "estimate", the estimator's ``topic_word_``
#: (what ``LDA(n_iter=n)`` returns) at the last sweep and at the lengths of the separate fits of
#: ``--harmonium-fits``, the current state's topics at the other trace points; or "state", the chain's current
#: state at every point, as every peer's runs are scored (``perplexity_final_state`` of the record).
ENDPOINT = {"value": "estimate"}


def points(r: dict) -> list[dict]:
    """The run's trace with initialisation added to both clocks: [{iteration, wall, cpu, perplexity}]."""
    iw, ic = r.get("init_s", 0.0) or 0.0, r.get("init_cpu_s", 0.0) or 0.0
    out = []
    trace = r.get("trace", [])
    if ENDPOINT["value"] == "state":
        trace = [p for p in trace if not p.get("estimate")]
    else:  # a length with a separate fit: that fit's estimate replaces the state point
        fitted = {p["iteration"] for p in trace if p.get("estimate")}
        trace = [p for p in trace if p.get("estimate") or p["iteration"] not in fitted]
    for p in trace:
        cpu = p.get("cpu_s")
        last = p["iteration"] == r["iters"]
        if cpu is None and last:
            cpu = r.get("train_cpu_s")
        perp = p["perplexity"]
        if last and ENDPOINT["value"] == "state" and r.get("perplexity_final_state") is not None:
            perp = r["perplexity_final_state"]
        out.append({"iteration": p["iteration"], "wall": p["train_s"] + iw,
                    "cpu": None if cpu is None else cpu + ic, "perplexity": perp})
    return sorted(out, key=lambda p: p["iteration"])


def time_to(r: dict, target: float, clock: str) -> tuple[float, bool]:
    """Seconds (``clock`` "wall" or "cpu") at which the run first reaches ``target``, interpolated linearly
    between trace points; (inf, True) if never; (t, False) if already at the first point (an upper bound)."""
    prev = None
    for p in points(r):
        if p[clock] is None:
            continue
        if p["perplexity"] <= target:
            if prev is None:
                return p[clock], False
            f = (prev["perplexity"] - target) / (prev["perplexity"] - p["perplexity"])
            return prev[clock] + f * (p[clock] - prev[clock]), True
        prev = p
    return math.inf, True


def sweeps_to(r: dict, target: float) -> float:
    """Sweeps at which the run first reaches ``target``, interpolated linearly between trace points; inf if never."""
    prev = None
    for p in points(r):
        if p["perplexity"] <= target:
            if prev is None:
                return float(p["iteration"])
            f = (prev["perplexity"] - target) / (prev["perplexity"] - p["perplexity"])
            return prev["iteration"] + f * (p["iteration"] - prev["iteration"])
        prev = p
    return math.inf


def _ok(records):
    return [r for r in records if "error" not in r and "perplexity" in r]


def targets(records: list[dict]) -> dict[tuple, tuple[float, str]]:
    """(corpus, max_docs, K, repeat) -> (best exact 1-thread peer's final perplexity, which peer)."""
    out: dict[tuple, tuple[float, str]] = {}
    for r in _ok(records):
        if r["system"] in EXACT_PEERS and r["threads"] == 1:
            key = (r["corpus"], r.get("max_docs"), r["K"], r["repeat"])
            if key not in out or r["perplexity"] < out[key][0]:
                out[key] = (r["perplexity"], r["system"])
    return out


def perplexity_at(r: dict, n: int):
    """Held-out perplexity after ``n`` sweeps: the run's point at ``n`` (:func:`points`, so ``--endpoint`` applies)."""
    return next((p["perplexity"] for p in points(r) if p["iteration"] == n), None)


def _label(r):
    return f"{r['system']} ({r['threads']}t)"


def _stat(xs, fmt="{:.1f}", bound=""):
    """Median [min–max] of xs (None dropped; inf counted as "not reached"), each figure after ``bound`` ("≤ ": an
    upper bound)."""
    xs = [x for x in xs if x is not None]
    if not xs:
        return "n/a"
    if any(math.isinf(x) for x in xs):
        fin = [x for x in xs if not math.isinf(x)]
        return f"not reached in {len(xs) - len(fin)}/{len(xs)}" + (
            f" (else {bound}{fmt.format(statistics.median(fin))})" if fin else "")
    s = bound + fmt.format(statistics.median(xs))
    return s if len(xs) == 1 else f"{s} [{fmt.format(min(xs))}–{fmt.format(max(xs))}]"


def _ratio(peer_s: float, ours_s: float) -> float:
    """peer / ours; inf (shown as "not reached") when harmonium never reached the target."""
    return math.inf if math.isinf(ours_s) else peer_s / ours_s


def tables(records: list[dict]) -> str:
    tg = targets(records)
    lines = []
    cells = sorted({(r["corpus"], r.get("max_docs"), r["K"]) for r in records}, key=lambda c: (c[0], c[1] or 0, c[2]))
    for cell in cells:
        recs = [r for r in records if (r["corpus"], r.get("max_docs"), r["K"]) == cell]
        ok = _ok(recs)
        corpus, max_docs, K = cell
        d = ok[0]["data"] if ok else {}
        iters = sorted({r["iters"] for r in recs})
        n_peer = min((r["iters"] for r in recs if not r["system"].startswith("harmonium")), default=iters[0])
        reps = sorted({r["repeat"] for r in recs})
        cell_t = {k[3]: v for k, v in tg.items() if k[:3] == cell}
        lines.append(f"\n### {corpus}{'' if max_docs is None else f' (first {max_docs} rows)'}, K = {K}, "
                     f"{'/'.join(map(str, iters))} sweeps, repeats {len(reps)}: {d.get('n_train_docs', '?')} "
                     f"training documents, {d.get('n_train_tokens', '?')} tokens, V = {d.get('n_words', '?')}\n")
        lines.append("Target per repeat (best exact 1-thread peer after the last sweep): "
                     + ", ".join(f"r{k}: {v[0]:.1f} ({v[1]})" for k, v in sorted(cell_t.items())) + "\n")
        lines.append(f"| system | runs | sweeps | perplexity after {n_peer} | at last sweep | last state only "
                     "| CPU s to target | wall s to target | CPU s, all sweeps | tokens/s (M) | peak RSS MiB "
                     "| other load, cores (median, max) |")
        lines.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
        by: dict[str, list[dict]] = {}
        for r in recs:
            by.setdefault(_label(r), []).append(r)
        order = sorted(by, key=lambda s: (not s.startswith("harmonium"), s))
        for lab in order:
            v = by[lab]
            good = _ok(v)
            if not good:
                lines.append(f"| {lab} | 0/{len(v)} | failed: {v[0].get('error', '?').splitlines()[0][:100]} "
                             "||||||||||")
                continue
            cpu_t = [time_to(r, cell_t[r["repeat"]][0], "cpu") for r in good if r["repeat"] in cell_t]
            wall_t = [time_to(r, cell_t[r["repeat"]][0], "wall") for r in good if r["repeat"] in cell_t]
            bound = "≤ " if any(not e for _, e in cpu_t) else ""
            loads = [r.get("other_busy_cores", 0.0) for r in good]
            lines.append(
                f"| {lab} | {len(good)}/{len(v)} | {'/'.join(str(n) for n in sorted({r['iters'] for r in good}))} | "
                f"{_stat([perplexity_at(r, n_peer) for r in good])} | {_stat([r['perplexity'] for r in good])} | "
                f"{_stat([r.get('perplexity_final_state') for r in good])} | "
                f"{_stat([t for t, _ in cpu_t], bound=bound)} | "
                f"{_stat([t for t, _ in wall_t], bound=bound)} | "
                f"{_stat([r.get('train_cpu_s', 0) + r.get('init_cpu_s', 0) for r in good])} | "
                f"{_stat([r['tokens_per_s'] / 1e6 for r in good], '{:.2f}')} | "
                f"{max(r['peak_mib'] for r in good):.0f} | {statistics.median(loads):.2f}, {max(loads):.2f} |")
        lines.append("\nRatios within each repeat: the fastest peer's seconds to the target / harmonium's "
                     "(> 1: harmonium faster), median [min–max] over repeats; peak RSS harmonium / tomotopy.\n")
        lines.append("| harmonium system | vs fastest peer (same threads), CPU | wall | which peer (CPU) "
                     "| vs fastest exact peer, CPU | wall | peak RSS / tomotopy (same threads) |")
        lines.append("|---|---|---|---|---|---|---|")
        for lab in order:
            if not lab.startswith("harmonium"):
                continue
            rows = {"cpu": [], "wall": [], "cpu_x": [], "wall_x": [], "rss": []}
            who = []
            for rep in reps:
                if rep not in cell_t:
                    continue
                tgt = cell_t[rep][0]
                h = [r for r in _ok(by[lab]) if r["repeat"] == rep]
                if not h:
                    continue
                h = h[0]
                th = h["threads"]
                peers = [r for r in ok if r["repeat"] == rep and r["threads"] == th
                         and not r["system"].startswith("harmonium")]
                for clock in ("cpu", "wall"):
                    ht = time_to(h, tgt, clock)[0]
                    pt = {r["system"]: time_to(r, tgt, clock)[0] for r in peers}
                    if not pt:
                        continue
                    best = min(pt, key=pt.get)
                    ex = [pt[s] for s in pt if s in EXACT_PEERS]
                    rows[clock].append(_ratio(pt[best], ht))
                    if ex:
                        rows[clock + "_x"].append(_ratio(min(ex), ht))
                    if clock == "cpu":
                        who.append(best)
                tomo = [r for r in peers if r["system"] == "tomotopy"]
                if tomo:
                    rows["rss"].append(h["peak_mib"] / tomo[0]["peak_mib"])
            lines.append(f"| {lab} | {_stat(rows['cpu'], '{:.2f}')} | {_stat(rows['wall'], '{:.2f}')} | "
                         f"{', '.join(sorted(set(who))) or 'n/a'} | {_stat(rows['cpu_x'], '{:.2f}')} | "
                         f"{_stat(rows['wall_x'], '{:.2f}')} | {_stat(rows['rss'], '{:.2f}')} |")
        lines.append("\nWhere the time goes: sweeps to the repeat's target (interpolated), CPU s per sweep "
                     "(the last fit's sweeps, initialisation excluded) and CPU s of initialisation, "
                     "median [min–max] over repeats.\n")
        lines.append("| system | sweeps to target | CPU s per sweep | init CPU s |")
        lines.append("|---|---|---|---|")
        for lab in order:
            good = [r for r in _ok(by[lab]) if r["repeat"] in cell_t]
            if not good:
                continue
            lines.append(f"| {lab} | {_stat([sweeps_to(r, cell_t[r['repeat']][0]) for r in good])} | "
                         f"{_stat([r.get('train_cpu_s', 0) / r['iters'] for r in good], '{:.3f}')} | "
                         f"{_stat([r.get('init_cpu_s', 0) for r in good], '{:.2f}')} |")
    return "\n".join(lines)


def per_repeat(records: list[dict]) -> str:
    """Per (cell, repeat): the fastest exact 1-thread peer and the split of the CPU ratio into
    (peer's CPU s per sweep / ours) x (peer's sweeps to the target / ours), both up to the target."""
    ok = _ok(records)
    lines = ["| corpus, K | repeat: fastest peer | our sweeps to target | peer's | our CPU s per sweep | peer's "
             "| per-sweep ratio × sweeps ratio = ratio |", "|---|---|---|---|---|---|---|"]
    for (corpus, max_docs, K, rep), (target, _who) in sorted(targets(ok).items(), key=lambda kv: (kv[0][0], kv[0][2],
                                                                                                  kv[0][3])):
        rs = [r for r in ok if (r["corpus"], r.get("max_docs"), r["K"], r["repeat"]) == (corpus, max_docs, K, rep)
              and r["threads"] == 1]
        ours = [r for r in rs if r["system"].startswith("harmonium")]
        peers = [r for r in rs if r["system"] in EXACT_PEERS]
        if not ours or not peers:
            continue
        best = min(peers, key=lambda r: time_to(r, target, "cpu")[0])
        tp, to = time_to(best, target, "cpu")[0], time_to(ours[0], target, "cpu")[0]
        sp, so = sweeps_to(best, target), sweeps_to(ours[0], target)
        if math.isinf(tp) or math.isinf(to):
            continue
        cp, co = tp / sp, to / so
        lines.append(f"| {corpus}, {K} | r{rep}: {best['system']} | {so:.1f} | {sp:.0f} | {co:.3f} | {cp:.3f} "
                     f"| {cp / co:.2f} × {sp / so:.2f} = {tp / to:.2f} |")
    return "\n".join(lines)


def plot(records: list[dict], outdir: str) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tg = targets(records)
    written = []
    for cell in sorted({(r["corpus"], r.get("max_docs"), r["K"]) for r in records}, key=str):
        recs = _ok([r for r in records if (r["corpus"], r.get("max_docs"), r["K"]) == cell])
        if not recs:
            continue
        fig, axes = plt.subplots(1, 2, figsize=(13, 5), sharey=True)
        labels = sorted({_label(r) for r in recs}, key=lambda s: (not s.startswith("harmonium"), s))
        colors = {lab: plt.cm.tab10(i % 10) for i, lab in enumerate(labels)}
        for ax, clock, name in ((axes[0], "cpu", "CPU seconds (training process, all threads)"),
                                (axes[1], "wall", "wall seconds")):
            for r in recs:
                pts = [p for p in points(r) if p[clock] is not None]
                lab = _label(r)
                ax.plot([p[clock] for p in pts], [p["perplexity"] for p in pts], "o-", ms=3, color=colors[lab],
                        label=lab if r["repeat"] == min(x["repeat"] for x in recs if _label(x) == lab) else None,
                        alpha=0.8)
            tvals = [v[0] for k, v in tg.items() if k[:3] == cell]
            if tvals:
                ax.axhline(statistics.median(tvals), color="k", ls="--", lw=0.8,
                           label="target (best exact peer, median over repeats)")
            ax.set_xlabel(name)
            ax.grid(alpha=0.3)
        allp = [p["perplexity"] for r in recs for p in points(r)]
        lo = min(allp)
        axes[0].set_ylim(lo * 0.98, min(max(allp), lo * 1.6))
        axes[0].set_ylabel("held-out perplexity (document completion, harmonium's scoring)")
        axes[1].legend(fontsize=7)
        corpus, max_docs, K = cell
        fig.suptitle(f"{corpus}{'' if max_docs is None else f' (first {max_docs} rows)'}, K = {K}: "
                     "perplexity against training time (initialisation included, evaluation excluded)")
        fig.tight_layout()
        path = Path(outdir) / f"ttq-{corpus}{'' if max_docs is None else f'-{max_docs}'}-k{K}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp.png")
        fig.savefig(tmp, dpi=110)
        os.replace(tmp, path)
        plt.close(fig)
        written.append(str(path))
    return written


# -- command line ----------------------------------------------------------------------------------
def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if C.serve_worker(argv, worker):
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    run = sub.add_parser("run", help="run the grid, appending one JSON line per run to --out")
    run.add_argument("--corpus", choices=C.CORPORA, default="debian")
    run.add_argument("--max-docs", type=int, default=None)
    run.add_argument("--topics", type=int, nargs="+", default=[100])
    run.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    run.add_argument("--systems", nargs="+", default=None,
                     help="default: every harmonium sampler, harmonium:parallel, every installed peer")
    run.add_argument("--harmonium-src", nargs="*", default=[], metavar="LABEL=PATH",
                     help="another harmonium checkout; its samplers run as harmonium-LABEL:<sampler>")
    run.add_argument("--iters", type=int, default=200, help="sweeps of every peer (the target is set at the last)")
    run.add_argument("--harmonium-iters", type=int, default=None,
                     help="sweeps of the harmonium systems (default --iters; more lets a slower-mixing sampler "
                          "reach the target; the table reads its perplexity at --iters from the trace)")
    run.add_argument("--eval-every", type=int, default=25)
    run.add_argument("--eval-iters", type=int, default=50)
    run.add_argument("--checkpoints", type=int, nargs="*", default=[100],
                     help="lengths of the extra fits that give topica and pyrmallet a trace")
    run.add_argument("--harmonium-fits", type=int, nargs="*", default=[],
                     help="lengths of extra harmonium fits, each on its own clock, scored on its topic_word_ (what "
                          "LDA(n_iter=L) returns); at those lengths they replace the state trace point")
    run.add_argument("--repeats", type=int, default=3)
    run.add_argument("--first-repeat", type=int, default=0, help="number the repeats from here (to add repeats)")
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--timeout", type=float, default=1800)
    run.add_argument("--out", required=True)
    run.add_argument("--quiet-cores", type=float, default=100.0,
                     help="wait until others use fewer cores than this (default: never wait; the load is recorded)")
    run.add_argument("--max-wait", type=float, default=0)
    run.add_argument("--dry-run", action="store_true", help="print the runs and stop")
    run.add_argument("--warm-cache", action="store_true",
                     help="before the repeats, run every harmonium system once on the first 300 documents for 2 "
                          "sweeps, unrecorded, so that numba's on-disk cache holds its kernels (as after a user's "
                          "first fit) and no timed run compiles; each record says warm_cache")
    tab = sub.add_parser("table", help="tables of result files")
    tab.add_argument("jsonl", nargs="+")
    pl = sub.add_parser("plot", help="perplexity against seconds, one PNG per corpus and K")
    pl.add_argument("jsonl", nargs="+")
    pl.add_argument("--outdir", default=str(HERE / "results"))
    for p in (tab, pl):
        p.add_argument("--endpoint", choices=("estimate", "state"), default="estimate",
                       help="harmonium's last trace point: the estimator's averaged topic_word_ (default) or the "
                            "chain's last state, like every other trace point and every peer")
    args = ap.parse_args(argv)
    ENDPOINT["value"] = getattr(args, "endpoint", "estimate")

    if args.cmd == "table":
        records = C.read_records(args.jsonl)
        print(tables(records))
        print("\nPer repeat (the CPU ratio split into per-sweep and sweeps-to-target ratios):\n")
        print(per_repeat(records))
        return
    if args.cmd == "plot":
        for p in plot(C.read_records(args.jsonl), args.outdir):
            print(p)
        return

    srcs = dict(s.split("=", 1) for s in args.harmonium_src)
    meta = C.run_meta("benchmarks/lda/lda_time_to_quality.py", argv)
    meta["warm_cache"] = bool(args.warm_cache)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    for K in args.topics:
        systems = args.systems or default_systems(K, args.threads, srcs)
        runs = plan(systems, K, args.threads, srcs, args.checkpoints, args.harmonium_fits)
        if args.warm_cache and not args.dry_run:
            warm_cache(runs, args.corpus, K, args.timeout)
        for rep in range(args.first_repeat, args.first_repeat + args.repeats):
            k = rep % len(runs)
            for spec in runs[k:] + runs[:k]:
                iters = args.iters
                if spec["system"].startswith("harmonium") and args.harmonium_iters:
                    iters = args.harmonium_iters
                cfg = {"corpus": args.corpus, "max_docs": args.max_docs, "K": K, "iters": iters,
                       "repeat": rep, "seed": args.seed + rep, "eval_every": args.eval_every,
                       "eval_iters": args.eval_iters, "quality": True, "transform": False, **spec, **meta}
                print(f"[{time.strftime('%H:%M:%S')}] {args.corpus} K={K} rep={rep} {spec['system']} "
                      f"threads={spec['threads']} ...", end=" ", flush=True)
                if args.dry_run:
                    print()
                    continue
                r = C.run_recorded(cfg, args.timeout, __file__, quiet_cores=args.quiet_cores,
                                   max_wait=args.max_wait, out=out)
                if "error" in r:
                    print(f"FAILED ({r['error'].splitlines()[0][:200]})", flush=True)
                else:
                    print(f"perplexity {r['perplexity']:.1f}, {r.get('train_cpu_s', 0):.1f} CPU s, "
                          f"{r['train_s']:.1f} s sweeping, peak {r['peak_mib']:.0f} MiB "
                          f"({r['subprocess_wall_s']:.0f} s; other load {r['other_busy_cores']:.2f} cores)",
                          flush=True)
    if not args.dry_run:
        print(tables(C.read_records([out])))


if __name__ == "__main__":
    main()
