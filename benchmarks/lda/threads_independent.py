"""Is the 2-thread sweep's extra CPU on this machine the cost of sharing data, or of running two threads at all?

Issue 21's thread goal (2 threads >= 1.85x one at K = 100) was met on an AMD machine (1.95x) and missed on
the 2-vCPU Intel VM (1.40-1.43x), where two threads of the word-partitioned sweep (``parallel_gibbs``) cost
about 1.30x the CPU of one. ``corun_contention.py`` put two *processes* side by side, minutes apart from
the thread runs, and the machine's swing hid any effect. This script holds everything but one factor
fixed, in one process, alternating round by round so that the swing falls on all alike:

* ``serial``: one serial SparseLDA sweep (the state's n_dk, as ``lda_threads.py``'s 1-thread run);
* ``independent``: two threads at once, each a serial sweep of the whole corpus on its own copy of the
  state (no array shared, no barrier: what running two threads costs on this machine, nothing else);
* ``partitioned``: the 2-thread word-partitioned sweep (shared n_dk, n_wk and word lists; a barrier a
  round), the library's ``LDA(n_jobs=2)``;
* ``partitioned_1t``: the same sweep's two cells a round run one after the other on one thread (the same
  work and the same z as ``partitioned``: the z hashes are printed).

CPU per sweep: ``serial`` the process CPU of its sweep, ``independent`` half of the process CPU of its
two sweeps, ``partitioned`` the process CPU of its sweep. If ``independent`` / ``serial`` (f) is as large
as ``partitioned`` / ``serial`` (g), two busy vCPUs are what cost the CPU, and no change to the sweep's
sharing can reach 2 / f; if f is near 1 while g is not, the cost is in the partitioned sweep itself, and
g splits into its work on one thread (``partitioned_1t`` / ``serial``) and what running its two cells at
once adds (``partitioned`` / ``partitioned_1t``).

    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/threads_independent.py 100 30 12       # K, warm, rounds
    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/threads_independent.py 100 0 12        # from the random start
    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/threads_independent.py 100 0 10 fresh  # round 1 = sweep 1
    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/threads_independent.py 100 30 12 walk   # no n_dk table

With ``walk`` the states carry no (D, K) table, so that every sweep finds each document's counts by a walk over
its tokens, as ``LDA`` runs on short documents (``parallel_gibbs.keeps_doc_table``); without it they carry the
table, as the records before the thirteenth session's did.

With ``fresh`` the rounds start again from the warm state after the off-clock first calls, so that round 1
is the first sweep from it, as in ``lda_threads.py``'s repeats (which start from the random state).
"""
from __future__ import annotations

import hashlib
import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/lda: sweep_ab_inprocess

from sweep_ab_inprocess import warm_state  # noqa: E402

from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs  # noqa: E402
from harmonium.inference.mcmc.lda import parallel_gibbs as pg  # noqa: E402


class OneThread:
    """A block runner that runs a round's cells one after the other on the calling thread."""

    def __call__(self, fn, args):
        return [fn(*a) for a in args]


def copy_state(state):
    n_dk = None if state.n_dk is None else state.n_dk.copy()
    return cgs.CollapsedGibbsState(state.z.copy(), n_dk, state.n_wk.copy(), state.n_k.copy())


def main(argv) -> None:
    K, warm, rounds = int(argv[0]), int(argv[1]), int(argv[2])
    walk = "walk" in argv[3:]
    tokens, model, state = warm_state("debian", K, warm, doc_counts=not walk)
    serial = cgs.build_kernel(sampler="sparse", compute_log_joint=False)
    part = pg.build_kernel(sampler="sparse", n_threads=2, compute_log_joint=False)
    # each thread its own kernel: a kernel keeps its sweep's scratch and word lists (SweepCache)
    pair = [cgs.build_kernel(sampler="sparse", compute_log_joint=False) for _ in range(2)]
    runs = {
        "serial": {"st": [copy_state(state)], "rng": [np.random.default_rng(9)]},
        "independent": {"st": [copy_state(state), copy_state(state)],
                        "rng": [np.random.default_rng(9), np.random.default_rng(10)]},
        "partitioned": {"st": [copy_state(state)], "rng": [np.random.default_rng(9)]},
        "partitioned_1t": {"st": [copy_state(state)], "rng": [np.random.default_rng(9)]},
    }
    part_1t = pg.PartitionedSparse(model, tokens, 2)
    part_1t.runner = OneThread()
    pool = ThreadPoolExecutor(max_workers=2)

    def one(name):
        run = runs[name]
        if name == "serial":
            run["st"][0], _ = serial(run["rng"][0], run["st"][0], tokens, model)
        elif name == "partitioned":
            run["st"][0], _ = part(run["rng"][0], run["st"][0], tokens, model)
        elif name == "partitioned_1t":
            part_1t(pg.child_generators(run["rng"][0], 2), run["st"][0])
        else:
            futs = [pool.submit(pair[j], run["rng"][j], run["st"][j], tokens, model) for j in range(2)]
            for j, f in enumerate(futs):
                run["st"][j], _ = f.result()

    for name in runs:  # compile or load, off the clock
        one(name)
    if "fresh" in argv[3:]:  # round 1 is then the first sweep from the state (lists rebuilt)
        for run in runs.values():
            run["st"] = [copy_state(state) for _ in run["st"]]
            run["rng"] = [np.random.default_rng(9 + j) for j in range(len(run["rng"]))]
    cpu = {name: [] for name in runs}
    wall = {name: [] for name in runs}
    order = list(runs)
    for r in range(rounds):
        for name in (order if r % 2 == 0 else order[::-1]):
            t, c = time.perf_counter(), time.process_time()
            one(name)
            wall[name].append(time.perf_counter() - t)
            cpu[name].append((time.process_time() - c) / (2 if name == "independent" else 1))
    c = {k: np.array(v) for k, v in cpu.items()}
    w = {k: np.array(v) for k, v in wall.items()}
    q = [0.25, 0.5, 0.75]

    def quartiles(x):
        return np.round(np.quantile(x, q), 3).tolist()

    out = {"K": K, "warm": warm, "rounds": rounds, "doc_table": not walk,
           "cpu_per_sweep_median": {k: round(float(np.median(v)), 4) for k, v in c.items()},
           "wall_median": {k: round(float(np.median(v)), 4) for k, v in w.items()},
           "f_independent_cpu_over_serial_quartiles": quartiles(c["independent"] / c["serial"]),
           "g_partitioned_cpu_over_serial_quartiles": quartiles(c["partitioned"] / c["serial"]),
           "partitioned_1t_cpu_over_serial_quartiles": quartiles(c["partitioned_1t"] / c["serial"]),
           "partitioned_cpu_over_partitioned_1t_quartiles": quartiles(c["partitioned"] / c["partitioned_1t"]),
           "z_partitioned_equals_1t": hashlib.sha256(runs["partitioned"]["st"][0].z.tobytes()).hexdigest()
           == hashlib.sha256(runs["partitioned_1t"]["st"][0].z.tobytes()).hexdigest(),
           "partitioned_wall_speedup_quartiles": quartiles(w["serial"] / w["partitioned"]),
           # over all rounds together, as lda_threads.py sums its sweeps: expensive early sweeps weigh more
           "partitioned_wall_speedup_total": round(float(w["serial"].sum() / w["partitioned"].sum()), 3),
           "partitioned_wall_speedup_by_round": np.round(w["serial"] / w["partitioned"], 3).tolist(),
           "serial_wall_by_round": np.round(w["serial"], 3).tolist(),
           "independent_throughput_speedup_quartiles": quartiles(2 * w["serial"] / w["independent"])}
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
