"""Where the 2-thread word-partitioned sweep's extra CPU goes: quiet-window samples, variants alternated.

On the shared 2-core machine, other jobs come and go every few seconds. Each sample here times ``--sweeps``
sweeps of one variant from a copy of the same state (Debian training split, ``--warm`` serial sweeps from
the initial state) with the same seed, and counts only if the other processes used under 0.1 core meanwhile
(``/proc/stat`` busy time less this process's CPU time). The variants run one after another within a few
seconds, so each row compares them on the same machine state:

* ``serial``: the exact serial sparse sweep (1 thread);
* ``P2_1thread``: the 2-shard x 2-block word-partitioned sweep with both cells of a round run one after
  the other on one thread (its algorithmic cost: every document visited once per block, the cell order);
* ``P2_word_2threads``: the same on 2 threads with words placed one by one (``partition_words(group=1)``,
  the layout before the word runs);
* ``P2_2threads``: the current 2-thread sweep (word runs, :class:`~harmonium.parallel.threads.BlockRunner`).

Prints each row's CPU (all threads) relative to ``serial`` and the wall speed-up, then medians.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/lda_threads_factors.py --topics 100 --sweeps 2 --samples 60
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.append(str(Path(__file__).resolve().parents[2]))

MODES = ("serial", "P2_1thread", "P2_word_2threads", "P2_2threads")


def _machine_busy() -> float:
    v = list(map(int, open("/proc/stat").readline().split()[1:]))
    return (sum(v) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--topics", type=int, default=100)
    ap.add_argument("--sweeps", type=int, default=2, help="sweeps a sample")
    ap.add_argument("--samples", type=int, default=30, help="clean samples wanted per variant")
    ap.add_argument("--warm", type=int, default=1, help="serial sweeps from the initial state before sampling")
    ap.add_argument("--max-seconds", type=float, default=600)
    ap.add_argument("--max-other", type=float, default=0.1, help="other processes' cores allowed during a sample")
    args = ap.parse_args(argv)

    from benchmarks._common import load_data
    from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs
    from harmonium.inference.mcmc.lda import parallel_gibbs as pg
    from harmonium.models.directed.lda import make_model
    from harmonium.parallel import threads as th

    train = load_data("debian").train
    tokens = train.tokens()
    model = make_model(args.topics, train.n_words, 0.1, 0.01)
    serial = pg.build_kernel(sampler="sparse", n_threads=1, compute_log_joint=False)
    state, warm_rng = cgs.init(np.random.default_rng(0), tokens, model), np.random.default_rng(5)
    for _ in range(args.warm):
        state, _ = serial(warm_rng, state, tokens, model)

    def copy(s):
        return type(s)(*(a.copy() for a in s))

    try:
        pg.partition_words = lambda *a: th.partition_words(*a, group=1)
        by_word = pg.PartitionedSparse(model, tokens, 2)
    finally:
        pg.partition_words = th.partition_words
    one_thread, current = pg.PartitionedSparse(model, tokens, 2), pg.PartitionedSparse(model, tokens, 2)
    one_thread.runner = lambda fn, blocks: [fn(*a) for a in blocks]
    sweeps = {"P2_1thread": one_thread, "P2_word_2threads": by_word, "P2_2threads": current}

    def run(mode, s, rng):
        for _ in range(args.sweeps):
            if mode == "serial":
                serial(rng, s, tokens, model)
            else:
                sweeps[mode](th.child_generators(rng, 2), s)

    for mode in MODES:  # compile, start the threads
        run(mode, copy(state), np.random.default_rng(1))
    cpu = {m: [] for m in MODES}
    wall = {m: [] for m in MODES}
    dirty, end = 0, time.time() + args.max_seconds
    while time.time() < end and min(len(v) for v in cpu.values()) < args.samples:
        row_c, row_w = {}, {}
        for mode in MODES:
            s, rng = copy(state), np.random.default_rng(100)
            m0, w0, c0 = _machine_busy(), time.perf_counter(), time.process_time()
            run(mode, s, rng)
            w, c, m = time.perf_counter() - w0, time.process_time() - c0, _machine_busy() - m0
            if (m - c) / w < args.max_other:
                row_c[mode], row_w[mode] = c / args.sweeps, w / args.sweeps
                cpu[mode].append(row_c[mode])
                wall[mode].append(row_w[mode])
            else:
                dirty += 1
        if len(row_c) == len(MODES):
            print(time.strftime("%H:%M:%S"), "CPU / serial:",
                  " ".join(f"{k}={v / row_c['serial']:.3f}" for k, v in row_c.items() if k != "serial"),
                  "| wall speed-up:",
                  " ".join(f"{k}={row_w['serial'] / v:.3f}" for k, v in row_w.items() if k != "serial"), flush=True)
    print(f"K = {args.topics}, {args.sweeps} sweeps a sample, {dirty} samples dropped (other load)")
    base_c, base_w = np.median(cpu["serial"]), np.median(wall["serial"])
    for mode in MODES:
        c = np.asarray(cpu[mode])
        if not c.size:
            continue
        print(f"{mode:17s} n={c.size:3d}  CPU s/sweep {np.median(c):.4f} ({np.median(c) / base_c:.3f}x serial; "
              f"q25-q75 {np.quantile(c, 0.25) / base_c:.3f}-{np.quantile(c, 0.75) / base_c:.3f})  "
              f"wall {np.median(wall[mode]):.4f}  speed-up {base_w / np.median(wall[mode]):.3f}")


if __name__ == "__main__":
    main()
