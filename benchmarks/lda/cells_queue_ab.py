"""Does a queue of finer cells let the faster vCPU of a shared VM carry more of the 2-thread sweep? (issue 21)

The word-partitioned sweep (``parallel_gibbs``) runs P rounds of P cells on P threads, with a barrier after each
round, so a round lasts as long as its slower thread. On the 2-vCPU Intel VM each vCPU runs, for stretches of
seconds to minutes, at one of two speeds (``sweep_speed_probe.py ports``: a port-bound probe at 3.3-4.3 or
5.6-6.8 G steps a second, the host's SMT sibling busy or idle), so the 2-thread sweep usually runs at the
slower one's pace. The lever named in the seventh session: split the sweep into C > P document shards and C word
blocks (C rounds of C disjoint cells), and let P threads take a round's cells from a queue, so that the faster
thread runs more of them. Each cell has its own random stream and its own copy of n_k, merged in cell order at
the round's end, so the chain does not depend on which thread ran which cell (the library's ``_Partitioned``
sweep with a layout of C shards is exactly this chain; only the runner differs). The price: a document is visited
once a word block, C times a sweep instead of P.

This script measures both sides in one process. From one warm state (the benchmark's training split, K topics,
seed 0, WARM serial sparse sweeps), copies run in turn each round, the order reversed every other round:

* ``serial``: the 1-thread sweep;
* ``static2``: ``parallel_gibbs`` on 2 threads as the library runs it (C = 2, one cell a thread a round);
* ``queueC`` for each C in CELLS: the C-shard layout, its C cells a round taken by 2 threads from a queue
  (a two-worker ``ThreadPoolExecutor``: whichever thread is free takes the next cell);
* ``cellsC`` for each C: the same C-shard sweep with every cell on the calling thread (its CPU against
  ``serial``'s is what the finer cells cost, with no threads involved).

Prints each run's median wall and CPU seconds a sweep, and per-round ratios (quartiles) against static2 and
serial. A queue that pays shows static2 / queueC wall > 1.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/cells_queue_ab.py debian 100 30 16 4,6,8 sparse [OUT.json]

SAMPLER: ``sparse`` (the word-partitioned SparseLDA sweep) or ``auto`` (LDA's default: F+LDA or SparseLDA sweep
by sweep, by the cost rule, which counts the C-shard sweep's C document visits).
"""
from __future__ import annotations

import json
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/lda: sweep_ab_inprocess

from sweep_ab_inprocess import warm_state  # noqa: E402

from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs  # noqa: E402
from harmonium.inference.mcmc.lda import parallel_gibbs as pg  # noqa: E402
from harmonium.parallel.threads import child_generators  # noqa: E402


class QueueRunner:
    """Runs any number of cells on ``n`` threads; each free thread takes the next cell (results in cell order)."""

    def __init__(self, n: int):
        self.pool = ThreadPoolExecutor(max_workers=n)
        self.shares: list = []  # per round: the share of the round's cells that the busier thread ran

    def __call__(self, fn, args):
        def one(a):
            return threading.get_ident(), fn(*a)

        done = list(self.pool.map(one, args))
        _, counts = np.unique([t for t, _ in done], return_counts=True)
        self.shares.append(float(counts.max() / len(args)))
        return [r for _, r in done]


def sequential(fn, args):
    return [fn(*a) for a in args]


def main(argv) -> None:
    corpus, K, warm, rounds = argv[0], int(argv[1]), int(argv[2]), int(argv[3])
    cells = [int(c) for c in argv[4].split(",")]
    sampler = argv[5]
    out = argv[6] if len(argv) > 6 else None
    tokens, model, state = warm_state(corpus, K, warm, doc_counts=False)
    serial = cgs.build_kernel(sampler=sampler, compute_log_joint=False)
    static = pg.build_kernel(sampler=sampler, n_threads=2, compute_log_joint=False)
    make = pg.PARTITIONED[sampler]
    runs = [{"name": "serial", "step": lambda rng, st: serial(rng, st, tokens, model)},
            {"name": "static2", "step": lambda rng, st: static(rng, st, tokens, model)}]
    for c in cells:
        for name, runner in ((f"queue{c}", QueueRunner(2)), (f"cells{c}", sequential)):
            sweep = make(model, tokens, c)
            sweep.runner = runner
            runs.append({"name": name, "runner": runner,
                         "step": lambda rng, st, sw=sweep, c=c: sw(child_generators(rng, c), st)})
    for run in runs:
        run.update(st=cgs.CollapsedGibbsState(state.z.copy(), None, state.n_wk.copy(), state.n_k.copy()),
                   rng=np.random.default_rng(9), wall=[], cpu=[])
        run["step"](run["rng"], run["st"])  # compile or load, and the layouts' first sweep, off the clock
    for r in range(rounds):
        for run in (runs if r % 2 == 0 else runs[::-1]):
            t, c = time.perf_counter(), time.process_time()
            run["step"](run["rng"], run["st"])
            run["wall"].append(time.perf_counter() - t)
            run["cpu"].append(time.process_time() - c)
    w = {r["name"]: np.array(r["wall"]) for r in runs}
    cp = {r["name"]: np.array(r["cpu"]) for r in runs}
    q = [0.25, 0.5, 0.75]
    summary = {"corpus": corpus, "K": K, "sampler": sampler, "warm": warm, "rounds": rounds,
               "n_tokens": int(tokens.words.shape[0]), "n_docs": int(tokens.doc_ptr.shape[0] - 1), "runs": {}}
    for run in runs:
        n = run["name"]
        summary["runs"][n] = {
            "wall_median": round(float(np.median(w[n])), 4), "cpu_median": round(float(np.median(cp[n])), 4),
            "speedup_wall_vs_serial": np.round(np.quantile(w["serial"] / w[n], q), 3).tolist(),
            "cpu_vs_serial": np.round(np.quantile(cp[n] / cp["serial"], q), 3).tolist(),
            "static2_over_this_wall": np.round(np.quantile(w["static2"] / w[n], q), 3).tolist(),
            "wall": np.round(w[n], 4).tolist(), "cpu": np.round(cp[n], 4).tolist()}
        if isinstance(run.get("runner"), QueueRunner):
            summary["runs"][n]["busier_thread_share"] = np.round(np.quantile(run["runner"].shares, q), 3).tolist()
        s = summary["runs"][n]
        print(f"{n:8s} wall {s['wall_median']:.4f}  cpu {s['cpu_median']:.4f}  serial/this wall "
              f"{s['speedup_wall_vs_serial']}  cpu/serial {s['cpu_vs_serial']}  static2/this wall "
              f"{s['static2_over_this_wall']}  busier thread's share {s.get('busier_thread_share', '-')}", flush=True)
    if out:
        Path(out).write_text(json.dumps(summary, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
