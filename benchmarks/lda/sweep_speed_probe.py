"""Why one LDA sweep takes 0.19 s and the next 0.30 s on the same state: per-sweep clocks of whole fits (issue 21).

The time-to-quality runs on the 2-vCPU Intel VM put the same serial sweep (Debian, K = 100) at 0.19-0.28 CPU s
from one repeat to the next, and ``lda_threads.py`` finds 1.40-1.43x for 2 threads where the in-process
harnesses find 1.7-1.8x. This script looks inside the fits, sweep by sweep:

* ``fits``: ``LDA(n_jobs=1)`` and ``LDA(n_jobs=2)`` (``inference="parallel_gibbs"``), defaults otherwise, fitted
  one after the other, the order reversed every repeat (seed = repeat); each sweep's wall and process CPU
  seconds come from the fit's ``callback``. Shows whether the 1-thread and 2-thread sweeps swing alike.
* ``probe``: one fit (``n_jobs`` threads, ``evaluate_every = n_iter``), and after every sweep, on the thread
  that ran it (the main thread, shard 0's on 2 threads), three probes: the core's clock (a dependent chain of
  ``x = x * x + i``, 4 cycles an iteration if imul takes 3, reported as 4 n / seconds in GHz: a relative
  figure) and the latency of a random pointer chase through 2 MiB and 64 MiB (``cache_latency.py``'s chase).
  If the sweep's swing follows the clock, it is the host's frequency; if the chase, the memory system.
* ``ports``: no LDA; a port-bound probe (eight independent multiply-add chains) and the clock probe, alone and
  on two threads at once, every half second. A core shared with another hardware thread (the host's SMT
  sibling, running another guest) slows the first and not the second.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/sweep_speed_probe.py fits debian 100 200 3 OUT.json
    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/sweep_speed_probe.py probe debian 100 200 1 OUT.json
    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/sweep_speed_probe.py ports 30 OUT.json

2026-11-28 (seventh session): ``results/sweep-speed-fits-intel.json``, ``results/sweep-speed-probe-intel.json``,
``results/sweep-speed-ports-intel.json``;
benchmarks/lda/README.md, "One thread at two speeds".
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # benchmarks/: _common, cache_latency

import _common as C  # noqa: E402
from cache_latency import chase, cycle  # noqa: E402


@njit(cache=True, nogil=True)
def clock_chain(n, x):
    """n steps of x = x * x + i: one dependent multiply and add a step, which the compiler cannot fold."""
    for i in range(n):
        x = x * x + i
    return x


def clock_ghz(n: int = 1_000_000) -> float:
    """4 n / seconds of :func:`clock_chain` (n), in GHz: the core's clock if a step takes 4 cycles."""
    t = time.perf_counter()
    clock_chain(n, 7)
    return 4 * n / (time.perf_counter() - t) / 1e9


@njit(cache=True, nogil=True)
def port_chains(n):
    """n steps of eight independent multiply-adds: bound by the core's execution ports, not by latency, so it slows
    when another hardware thread shares the core (the host's, on a VM), which :func:`clock_chain` barely feels."""
    a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = np.int64(1)
    for i in range(n):
        a0 = a0 * 3 + i
        a1 = a1 * 5 + i
        a2 = a2 * 7 + i
        a3 = a3 * 9 + i
        a4 = a4 * 11 + i
        a5 = a5 * 13 + i
        a6 = a6 * 15 + i
        a7 = a7 * 17 + i
    return a0 ^ a1 ^ a2 ^ a3 ^ a4 ^ a5 ^ a6 ^ a7


def ports(rounds: int, out: str, n: int = 20_000_000) -> None:
    """``rounds`` rounds, 0.5 s apart: :func:`port_chains` and :func:`clock_chain` alone on one thread, then each on
    two threads at once (rates in G steps a second; clock_chain as 4 n / s, like :func:`clock_ghz`)."""
    from harmonium.parallel.threads import run_blocks

    port_chains(10)
    clock_chain(10, 1)

    def rate(f, *a):
        t = time.perf_counter()
        f(*a)
        return time.perf_counter() - t

    records = []
    for r in range(rounds):
        rec = {"round": r}
        for name, f, args, unit in (("ports", port_chains, (n,), 8), ("clock", clock_chain, (n, 7), 4)):
            rec[f"{name}_alone"] = round(unit * n / rate(f, *args) / 1e9, 3)
            two = run_blocks(rate, [(f, *args), (f, *args)])  # one thread each, at once
            rec[f"{name}_two"] = [round(unit * n / x / 1e9, 3) for x in two]
        records.append(rec)
        print(rec, flush=True)
        time.sleep(0.5)
    Path(out).write_text(json.dumps(records))


def make_lda(K: int, n_iter: int, seed: int, threads: int, **kw):
    from harmonium import LDA

    par = {"inference": "parallel_gibbs", "n_jobs": threads} if threads > 1 else {}
    return LDA(n_topics=K, n_iter=n_iter, random_state=seed, **par, **kw)


def fits(corpus: str, K: int, n_iter: int, repeats: int, out: str) -> None:
    data = C.load_data(corpus)
    records = []
    for r in range(repeats):
        for threads in ((1, 2) if r % 2 == 0 else (2, 1)):
            marks = []
            model = make_lda(K, n_iter, r, threads)
            t0, c0 = time.perf_counter(), time.process_time()
            model.fit(data.train, callback=lambda i, n, info, marks=marks: marks.append(
                (time.perf_counter(), time.process_time())))
            wall = np.diff([t0] + [m[0] for m in marks])
            cpu = np.diff([c0] + [m[1] for m in marks])
            records.append({"corpus": corpus, "K": K, "repeat": r, "threads": threads,
                            "wall": wall.round(4).tolist(), "cpu": cpu.round(4).tolist()})
            late = slice(50, None)
            print(f"repeat {r}, {threads} thread(s): sweeps 51-{n_iter} wall {wall[late].sum():.2f} s, CPU "
                  f"{cpu[late].sum():.2f} s, median sweep wall {np.median(wall[late]):.3f} s", flush=True)
    Path(out).write_text(json.dumps(records))


def probe(corpus: str, K: int, n_iter: int, threads: int, out: str) -> None:
    chains = {mib: cycle((mib << 20) // 8, 1) for mib in (2, 64)}
    clock_chain(10, 1)
    chase(chains[2], 10)
    data = C.load_data(corpus)
    ends, after, ghz, lat = [], [], [], {mib: [] for mib in chains}

    def callback(i, n, info):
        ends.append(time.perf_counter())
        ghz.append(max(clock_ghz() for _ in range(3)))
        for mib, a in chains.items():
            t = time.perf_counter()
            chase(a, 100_000)
            lat[mib].append((time.perf_counter() - t) / 100_000 * 1e9)
        after.append(time.perf_counter())

    model = make_lda(K, n_iter, 0, threads, evaluate_every=n_iter)
    t0 = time.perf_counter()
    model.fit(data.train, callback=callback)
    wall = np.array(ends) - np.array([t0] + after[:-1])
    rec = {"corpus": corpus, "K": K, "threads": threads, "wall": wall.round(4).tolist(),
           "clock_ghz": np.round(ghz, 3).tolist(), "chase_2mib_ns": np.round(lat[2], 1).tolist(),
           "chase_64mib_ns": np.round(lat[64], 1).tolist()}
    Path(out).write_text(json.dumps(rec))
    late = slice(30, None)
    w, g = wall[late], np.array(ghz)[late]
    l2, l64 = np.array(lat[2])[late], np.array(lat[64])[late]
    for name, x in (("clock (GHz)", g), ("chase 2 MiB (ns)", l2), ("chase 64 MiB (ns)", l64), ("sweep wall (s)", w)):
        print(f"{name}: median {np.median(x):.3f}, 5-95% {np.percentile(x, 5):.3f}-{np.percentile(x, 95):.3f}")
    print(f"correlation with the sweep's wall (sweeps 31-{n_iter}): 1 / clock {np.corrcoef(w, 1 / g)[0, 1]:.2f}, "
          f"chase 2 MiB {np.corrcoef(w, l2)[0, 1]:.2f}, chase 64 MiB {np.corrcoef(w, l64)[0, 1]:.2f}")


if __name__ == "__main__":
    if sys.argv[1] == "ports":
        ports(int(sys.argv[2]), sys.argv[3])
    else:
        mode, corpus, K, n_iter, n, out = sys.argv[1:7]
        {"fits": fits, "probe": probe}[mode](corpus, int(K), int(n_iter), int(n), out)
