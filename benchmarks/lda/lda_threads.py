"""Thread scaling of ``parallel_gibbs``: 1 against 2 threads, CPU and wall seconds per sweep.

``--sampler`` (default "sparse") names the sampler of both thread counts: "auto" is ``LDA``'s default, whose
1-thread sweep picks F+LDA or SparseLDA each sweep and whose 2-thread sweep makes the same choice between
the word-partitioned F+LDA and SparseLDA sweeps; "fplus" runs F+LDA throughout.

Each (source, K) runs in its own process: the Debian training split (90%, seed 0; the same tokens as
lda_time_to_quality.py), one initial state (seed 0; with the (D, K) n_dk table only for the thread counts
whose ``LDA(n_jobs=t)`` keeps one in that source), one warm-up sweep per thread count off the clock,
then ``--repeats`` alternating repeats (1 thread then 2, then 2 then 1, ...), each timing ``--sweeps``
sweeps from a copy of the same state. Clocks: wall (perf_counter), the process's CPU seconds (all
threads, process_time) and the critical path of the 2-thread sweep (:class:`CriticalPath`: the main
thread's CPU seconds plus, for every parallel step, the CPU seconds of its slowest worker), which
estimates the wall time on a quiet machine from a loaded one. Each record carries the 1-minute load
average before and after, since wall scaling means little on a loaded machine. ``--src label=PATH``
runs the harmonium found at PATH (e.g. an older checkout) for a before/after comparison in the same
session.

``memory`` runs one fresh process per (source, K, threads): peak RSS (ru_maxrss) after loading and
initialising, and after the sweeps.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/lda_threads.py run --topics 100 --sweeps 10 --repeats 3 \\
        --src new=. --src old=/path/to/old/checkout --out benchmarks/lda/results/threads-debian.jsonl
    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/lda_threads.py memory --topics 100 1000 --sweeps 3 \\
        --src new=. --out benchmarks/lda/results/threads-debian-memory.jsonl
    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/lda_threads.py table benchmarks/lda/results/threads-debian*.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]


def _load() -> float:
    return float(open("/proc/loadavg").read().split()[0])


def _commit(src: str) -> str:
    try:
        return subprocess.run(["git", "-C", src, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (subprocess.CalledProcessError, FileNotFoundError):
        return "unknown"


def _problem(K: int, corpus: str = "debian", threads: int | None = None, sampler: str = "sparse"):
    """(harmonium, tokens, model, state); the state has the n_dk table unless ``threads`` is given and
    ``LDA(n_jobs=threads)`` of the source keeps none (:func:`_uses_table`)."""
    sys.path.append(str(ROOT))  # benchmarks._common; harmonium itself comes from PYTHONPATH (the source measured)
    import harmonium
    from benchmarks._common import load_data
    from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs
    from harmonium.models.directed.lda import make_model

    train = load_data(corpus).train
    tokens = train.tokens()
    model = make_model(K, train.n_words, 0.1, 0.01)
    table = True
    if threads is not None:
        from harmonium.inference.mcmc.lda import parallel_gibbs as pg

        table = _uses_table(pg, tokens, model, threads, sampler)
    state = cgs.init(np.random.default_rng(0), tokens, model, doc_counts=table)
    return harmonium, tokens, model, state


def _copy(state, table: bool = True):
    """A copy of ``state`` (made with the n_dk table), without the table when ``table`` is False."""
    fields = zip(state._fields, state, strict=True)
    return type(state)(*[None if (f == "n_dk" and not table) else a.copy() for f, a in fields])


def _uses_table(pg, tokens, model, n_threads: int, sampler: str = "sparse") -> bool:
    """Whether ``LDA(n_jobs=n_threads, sampler=sampler)`` of the source measured keeps the (D, K) n_dk table:
    ``parallel_gibbs.needs_doc_counts`` where the source has it; before it, the table on 2 threads only."""
    from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs

    if hasattr(pg, "needs_doc_counts"):
        return bool(pg.needs_doc_counts(sampler, model, tokens, n_threads))
    return n_threads > 1 or cgs.needs_doc_counts(sampler, model, tokens)


def _balance(pg, tokens, model, n_threads: int):
    """Tokens / the sum over rounds of each round's largest cell: the schedule's bound on the speed-up."""
    if not hasattr(pg, "word_partition"):
        return None
    lay = pg.word_partition(tokens, model.n_words, n_threads)
    P = len(lay.doc_parts)
    # cells[p, b]: shard p's tokens of block b, from the blocks' words (whatever order the source lays cells in)
    block_of = np.empty(model.n_words, dtype=np.int64)
    for b, ws in enumerate(lay.block_words):
        block_of[ws] = b
    cells = np.array([np.bincount(block_of[tokens.words[tokens.doc_ptr[lo]:tokens.doc_ptr[hi]]], minlength=P)
                      for lo, hi in lay.doc_parts])
    from harmonium.parallel.threads import round_block

    longest = sum(max(cells[p, round_block(p, r, P)] for p in range(P)) for r in range(P))
    return float(tokens.words.shape[0] / longest)


class CriticalPath:
    """Wraps ``parallel_gibbs.run_blocks`` and ``BlockRunner`` to add up, per call, the largest CPU time of one
    worker thread.

    With the main thread's own CPU time this is the sweep's critical path: the wall time it would take
    with a core for each worker and no other load (memory stalls included, since they count as CPU time).
    A ``BlockRunner`` runs the first block on the main thread, whose CPU time already counts it: for its
    calls the largest block's time less the first block's is added.
    """

    def __init__(self, pg):
        self.run_blocks, self.total = pg.run_blocks, 0.0
        pg.run_blocks = self
        if hasattr(pg, "BlockRunner"):  # older checkouts have none
            path = self

            class TimedRunner(pg.BlockRunner):
                def __call__(self, fn, args):
                    res = super().__call__(path.timed(fn), args)
                    path.total += max(t for _, t in res) - res[0][1]
                    return [r for r, _ in res]

            pg.BlockRunner = TimedRunner

    @staticmethod
    def timed(fn):
        def run(*a):
            t0 = time.thread_time()
            out = fn(*a)
            return out, time.thread_time() - t0
        return run

    def __call__(self, fn, args):
        res = self.run_blocks(self.timed(fn), args)
        self.total += max(t for _, t in res)
        return [r for r, _ in res]


def worker(args) -> None:
    harmonium, tokens, model, base = _problem(args.topics, args.corpus)
    from harmonium.inference.mcmc.lda import parallel_gibbs as pg

    path = CriticalPath(pg)

    kernels = {t: pg.build_kernel(sampler=args.sampler, n_threads=t, compute_log_joint=False) for t in (1, 2)}
    table = {t: _uses_table(pg, tokens, model, t, args.sampler) for t in (1, 2)}  # the state LDA(n_jobs=t) makes
    for t, kern in kernels.items():  # compile / load the cache and build the layout, off the clock
        kern(np.random.default_rng(1), _copy(base, table[t]), tokens, model)
    meta = {"src": args.label, "commit": _commit(args.path), "harmonium": harmonium.__file__, "K": args.topics,
            "corpus": args.corpus, "sampler": args.sampler,
            "n_tokens": int(tokens.words.shape[0]), "sweeps": args.sweeps,
            "balance_2": _balance(pg, tokens, model, 2), "n_dk_table": {str(t): table[t] for t in (1, 2)}}
    for rep in range(args.repeats):
        for t in ((1, 2) if rep % 2 == 0 else (2, 1)):
            state, rng = _copy(base, table[t]), np.random.default_rng(100 + rep)
            load0 = _load()
            path.total = 0.0
            w0, c0, m0 = time.perf_counter(), time.process_time(), time.thread_time()
            for _ in range(args.sweeps):
                state, _ = kernels[t](rng, state, tokens, model)
            wall, cpu = time.perf_counter() - w0, time.process_time() - c0
            critical = cpu if t == 1 else time.thread_time() - m0 + path.total
            rec = {**meta, "repeat": rep, "threads": t, "wall_s_per_sweep": wall / args.sweeps,
                   "cpu_s_per_sweep": cpu / args.sweeps, "critical_path_s_per_sweep": critical / args.sweeps,
                   "load_before": load0, "load_after": _load()}
            print(json.dumps(rec), flush=True)


def memory_worker(args) -> None:
    harmonium, tokens, model, state = _problem(args.topics, args.corpus, threads=args.threads)
    from harmonium.inference.mcmc.lda import parallel_gibbs as pg

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    kern = pg.build_kernel(sampler="sparse", n_threads=args.threads, compute_log_joint=False)
    rng = np.random.default_rng(0)
    for _ in range(args.sweeps):
        state, _ = kern(rng, state, tokens, model)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"src": args.label, "commit": _commit(args.path), "K": args.topics, "threads": args.threads,
                      "corpus": args.corpus, "n_dk_table": state.n_dk is not None,
                      "sweeps": args.sweeps, "peak_rss_mib_before_sweeps": round(before, 1),
                      "peak_rss_mib": round(after, 1)}), flush=True)


def _spawn(src: str, extra: list[str], out) -> None:
    label, _, path = src.partition("=")
    path = str(Path(path or ".").resolve())
    env = {**os.environ, "PYTHONPATH": path}
    cmd = [sys.executable, __file__, *extra, "--label", label, "--path", path]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{proc.stderr[-3000:]}")
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            out.write(line + "\n")
            out.flush()
            print(line)


def _stat(xs, fmt="{:.2f}") -> str:
    xs = sorted(xs)
    return f"{fmt.format(float(np.median(xs)))} [{fmt.format(xs[0])}–{fmt.format(xs[-1])}]"


def table(paths: list[str]) -> str:
    recs = [json.loads(line) for p in paths for line in open(p) if line.strip()]
    lines = []
    runs = [r for r in recs if "wall_s_per_sweep" in r]
    if runs:
        lines += ["| source (commit) | corpus | K | sampler | CPU s/sweep, 1 thread | 2 threads | CPU 1t / 2t "
                  "| wall s/sweep, 1 thread | 2 threads | wall 1t / 2t (speed-up) | critical-path speed-up "
                  "| load avg (1 min) | schedule bound |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]

        def key_of(r):  # records from before the corpus (sampler) option are Debian's (sparse)
            return r["src"], r["commit"], r.get("corpus", "debian"), r["K"], r.get("sampler", "sparse")

        for key in sorted({key_of(r) for r in runs}, key=lambda k: (k[2], k[3], k[0])):
            rs = [r for r in runs if key_of(r) == key]
            by = {(r["repeat"], r["threads"]): r for r in rs}
            reps = sorted({r["repeat"] for r in rs if (r["repeat"], 1) in by and (r["repeat"], 2) in by})
            c1 = [by[i, 1]["cpu_s_per_sweep"] for i in reps]
            c2 = [by[i, 2]["cpu_s_per_sweep"] for i in reps]
            w1 = [by[i, 1]["wall_s_per_sweep"] for i in reps]
            w2 = [by[i, 2]["wall_s_per_sweep"] for i in reps]
            p2 = [by[i, 2]["critical_path_s_per_sweep"] for i in reps]
            loads = [x for r in rs for x in (r["load_before"], r["load_after"])]
            bound = rs[0].get("balance_2")
            lines.append(f"| {key[0]} ({key[1]}) | {key[2]} | {key[3]} | {key[4]} | {_stat(c1, '{:.3f}')} "
                         f"| {_stat(c2, '{:.3f}')} "
                         f"| {_stat([a / b for a, b in zip(c1, c2, strict=True)])} | {_stat(w1, '{:.3f}')} "
                         f"| {_stat(w2, '{:.3f}')} | {_stat([a / b for a, b in zip(w1, w2, strict=True)])}× "
                         f"| {_stat([a / b for a, b in zip(c1, p2, strict=True)])}× "
                         f"| {min(loads):.1f}–{max(loads):.1f} | {'—' if bound is None else f'{bound:.3f}×'} |")
    mem = [r for r in recs if "peak_rss_mib" in r]
    if mem:
        lines += ["", "| source (commit) | K | threads | peak RSS MiB after load + init | after the sweeps |",
                  "|---|---|---|---|---|"]
        for r in sorted(mem, key=lambda r: (r["K"], r["src"], r["threads"])):
            lines.append(f"| {r['src']} ({r['commit']}) | {r['K']} | {r['threads']} | "
                         f"{r['peak_rss_mib_before_sweeps']:.0f} | {r['peak_rss_mib']:.0f} |")
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("run", "memory"):
        p = sub.add_parser(name)
        p.add_argument("--topics", type=int, nargs="+", default=[100, 1000])
        p.add_argument("--sweeps", type=int, default=10)
        p.add_argument("--repeats", type=int, default=3)
        if name == "memory":  # run compares 1 and 2 threads only: there --threads would be ignored, so it is refused
            p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
        p.add_argument("--src", action="append", help="label=PATH of a harmonium checkout (default new=.)")
        p.add_argument("--out", required=True)
        p.add_argument("--corpus", default="debian", help="a corpus of benchmarks/_common.py (its training split)")
        p.add_argument("--sampler", default="sparse", help="the sampler of both thread counts (run only)")
    t = sub.add_parser("table")
    t.add_argument("paths", nargs="+")
    for name in ("_worker", "_memory"):
        w = sub.add_parser(name)
        w.add_argument("--topics", type=int, required=True)
        w.add_argument("--sweeps", type=int, required=True)
        w.add_argument("--repeats", type=int, default=1)
        w.add_argument("--threads", type=int, default=1)
        w.add_argument("--label", required=True)
        w.add_argument("--path", required=True)
        w.add_argument("--corpus", default="debian")
        w.add_argument("--sampler", default="sparse")
    args = ap.parse_args(argv)
    if args.cmd == "_worker":
        return worker(args)
    if args.cmd == "_memory":
        return memory_worker(args)
    if args.cmd == "table":
        print(table(args.paths))
        return None
    srcs = args.src or ["new=."]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "a") as out:
        for K in args.topics:
            if args.cmd == "run":
                for src in srcs:
                    _spawn(src, ["_worker", "--topics", str(K), "--sweeps", str(args.sweeps),
                                 "--repeats", str(args.repeats), "--corpus", args.corpus,
                                 "--sampler", args.sampler], out)
            else:
                for th in args.threads:
                    for src in srcs:
                        _spawn(src, ["_memory", "--topics", str(K), "--sweeps", str(args.sweeps),
                                     "--threads", str(th), "--corpus", args.corpus], out)
    return None


if __name__ == "__main__":
    main()
