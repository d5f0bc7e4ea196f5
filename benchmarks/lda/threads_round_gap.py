"""How long a round of the 2-thread word-partitioned sweep waits at its barrier, and whether the wait is static
(issue 21; the barrier's loss that "Threads: the price of a document visit" inferred).

From one warm state (the benchmark's training split of CORPUS, K topics, seed 0, 30 serial sweeps, no n_dk table),
``parallel_gibbs.PartitionedSparse`` with 2 shards x 2 blocks runs SWEEPS sweeps on the library's
:class:`~harmonium.parallel.threads.BlockRunner` (``threads`` 2; ``swap``: shard 0 on the worker thread and shard 1
on the calling one) or cell after cell on one thread (``threads`` 1). Each cell is clocked on its thread's CPU
clock and on the wall clock. Prints the median CPU ms of each shard's cells, the ratio of the sum over rounds of
the slower cell to the sum of the cells' means (the rounds' imbalance; from the medians over sweeps, the static
part), and on 2 threads the median gap between the two cells' ends in each round (the barrier's wait), split
into the cells' CPU difference and their off-CPU difference (a cell's wall less its thread's CPU: the time its
thread was not running, stolen by the host or preempted), with each vCPU's steal share from /proc/stat.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/threads_round_gap.py 100 60 2 debian        # K, sweeps, threads
    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/threads_round_gap.py 100 60 2 debian swap

2026-11-29 (eleventh session, AMD EPYC VM): results/threads-round-gap-amd.txt; benchmarks/lda/README.md, "auto's
rules re-measured on the AMD VM" (4). The off-CPU split and the steal: twelfth session,
results/threads-steal-sticky-amd.txt; README "Threads: the barrier's wait is CPU, not steal".
"""
from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/lda: sweep_ab_inprocess

from sweep_ab_inprocess import warm_state  # noqa: E402

from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs  # noqa: E402
from harmonium.inference.mcmc.lda import parallel_gibbs as pg  # noqa: E402
from harmonium.parallel.threads import BlockRunner, child_generators  # noqa: E402


def main(argv) -> None:
    K, sweeps, threads = int(argv[0]), int(argv[1]), int(argv[2])
    corpus = argv[3] if len(argv) > 3 else "debian"
    swap = len(argv) > 4 and argv[4] == "swap"
    tokens, model, state = warm_state(corpus, K, 30, doc_counts=False)
    sw = pg.PartitionedSparse(model, tokens, 2)
    dp = tokens.doc_ptr
    for p, (lo, hi) in enumerate(sw.layout.doc_parts):
        print(f"shard {p}: {hi - lo} documents, {dp[hi] - dp[lo]} tokens")
    cells = []  # (shard, round, thread CPU s, wall end, on the calling thread)
    cell = sw.cell

    def clocked(rng, st, n_k, p, block, first, last, docs):
        w = time.perf_counter()
        t = time.thread_time()
        out = cell(rng, st, n_k, p, block, first, last, docs)
        e = time.perf_counter()
        cells.append((p, 0 if first else 1, time.thread_time() - t, e,
                      threading.current_thread() is threading.main_thread(), e - w))
        return out

    sw.cell = clocked
    if threads == 1:
        sw.runner = lambda fn, args: [fn(*a) for a in args]
    elif swap:
        runner = BlockRunner(2)
        sw.runner = lambda fn, args: runner(fn, args[::-1])[::-1]
    st = cgs.CollapsedGibbsState(state.z.copy(), None, state.n_wk.copy(), state.n_k.copy())
    rng = np.random.default_rng(3)
    sw(child_generators(rng, 2), st)  # off the clock
    cells.clear()
    walls = []
    stat0 = cpu_stat()
    for _ in range(sweeps):
        w = time.perf_counter()
        sw(child_generators(rng, 2), st)
        walls.append(time.perf_counter() - w)
    stat1 = cpu_stat()
    rec = np.array(cells)
    cpu = np.zeros((sweeps, 2, 2))  # sweep, round, shard
    end = np.zeros((sweeps, 2, 2))
    cell_wall = np.zeros((sweeps, 2, 2))
    for j, (p, r, c, e, _, cw) in enumerate(rec):
        cpu[j // 4, int(r), int(p)] = c
        end[j // 4, int(r), int(p)] = e
        cell_wall[j // 4, int(r), int(p)] = cw
    med = np.median(cpu, axis=0)
    print(f"{corpus}, K = {K}, {threads} thread(s){', swapped' if swap else ''}, {sweeps} sweeps")
    print("median CPU ms a cell, [round][shard]:", np.round(med * 1e3, 2).tolist())
    for m, name in ((1, "calling thread"), (0, "worker thread")):
        sel = rec[:, 4] == m
        if sel.any():
            print(f"{name}: median CPU ms a cell {np.median(rec[sel, 2]) * 1e3:.2f}")
    per_sweep = cpu.max(axis=2).sum(axis=1) / cpu.mean(axis=2).sum(axis=1)
    print(f"slower cell / mean cell, summed over rounds: per sweep quartiles "
          f"{np.round(np.quantile(per_sweep, [0.25, 0.5, 0.75]), 4)}; "
          f"from the medians (static) {med.max(axis=1).sum() / med.mean(axis=1).sum():.4f}")
    if threads == 2:
        gap = np.abs(end[:, :, 0] - end[:, :, 1])
        print(f"median wall s a sweep {np.median(walls):.4f}; median gap between the cells' ends, ms a round "
              f"{np.round(np.median(gap, axis=0) * 1e3, 2).tolist()} "
              f"({np.median(gap.sum(axis=1) / np.array(walls)) * 100:.1f}% of a sweep's wall)")
        # the gap split: the cells' CPU differs, or one cell's thread was off its vCPU (stolen by the host or
        # preempted) for longer; wall - CPU of a cell is its time off
        off = cell_wall - cpu
        d_cpu = np.abs(cpu[:, :, 0] - cpu[:, :, 1])
        d_off = np.abs(off[:, :, 0] - off[:, :, 1])
        print(f"per round, medians: |CPU difference| {np.median(d_cpu) * 1e3:.2f} ms, |off-CPU difference| "
              f"{np.median(d_off) * 1e3:.2f} ms; a cell's off-CPU time {np.median(off) * 1e3:.2f} ms "
              f"({np.median(off / cell_wall) * 100:.1f}% of its wall)")
    steal = [(b[7] - a[7]) / max(1, sum(b) - sum(a)) for a, b in zip(stat0, stat1, strict=True)]
    print("steal, share of each vCPU's ticks over the timed sweeps:", [f"{x * 100:.1f}%" for x in steal])


def cpu_stat() -> list:
    """Each vCPU's /proc/stat tick counters (user nice system idle iowait irq softirq steal), or [] off Linux."""
    try:
        lines = Path("/proc/stat").read_text().splitlines()
    except OSError:
        return []
    return [[int(x) for x in ln.split()[1:9]] for ln in lines if ln.startswith("cpu") and ln[3:4].isdigit()]


if __name__ == "__main__":
    main(sys.argv[1:])
