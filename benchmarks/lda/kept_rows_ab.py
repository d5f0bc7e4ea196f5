"""Rows kept between a document's visits in the 2-thread SparseLDA sweep: measured, and not kept (issue 21).

Without an n_dk table the word-partitioned sweep (``parallel_gibbs.PartitionedSparse``) rebuilds a document's
row of counts from z at each of its P visits a sweep, by a walk over all its tokens. The patch
``results/kept-rows-not-kept.patch`` keeps the row instead: at each visit but the sweep's last the worker
writes it, packed ``count << bits | topic`` (int32 where it fits; capacity min(N_d, K) a document), and the
next visit reads it back in O(k_d) instead of walking N_d tokens; the next document's row is prefetched.
The chain differs from the library's only in the order of a document's topic list at its later visits.

This script times, on copies of one warm state (Debian training split, K topics, seed 0, no table), in one
process, alternating round by round:

* ``serial``: the 1-thread sweep;
* ``walk1t`` / ``kept1t``: the 2-shard word-partitioned sweep with every cell on one thread, the rows walked
  (the library's behaviour, forced by passing no kept rows) / kept (the patch);
* ``walk2t`` / ``kept2t``: the same on 2 threads (with ``--threads``).

It needs the patch applied (``kept_rows`` exists only there):

    git apply benchmarks/lda/results/kept-rows-not-kept.patch
    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/kept_rows_ab.py 100 200          # K, rounds
    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/kept_rows_ab.py 100 50 --threads
    git checkout harmonium/

2026-11-29 (tenth session, AMD EPYC VM): benchmarks/lda/README.md, "Threads: the price of a document visit".
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/lda: sweep_ab_inprocess

from sweep_ab_inprocess import alternate, report_against_serial, warm_state  # noqa: E402

from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs  # noqa: E402
from harmonium.inference.mcmc.lda import parallel_gibbs as pg  # noqa: E402
from harmonium.parallel.threads import child_generators  # noqa: E402


class Walked(pg.PartitionedSparse):
    """The patched sweep with no kept rows passed: every visit walks z, as the library's sweep does."""

    def docs(self, state):
        return (None, None, None)

    def cell(self, rng, state, n_k, p, block, first, last, docs=(None, None, None)):
        return super().cell(rng, state, n_k, p, block, first, last, (None, None, None))


def main(argv) -> None:
    if not hasattr(pg.PartitionedSparse, "kept_rows"):
        raise SystemExit("apply benchmarks/lda/results/kept-rows-not-kept.patch first (git apply)")
    K, rounds = int(argv[0]), int(argv[1])
    threads = "--threads" in argv
    tokens, model, state = warm_state("debian", K, 30, doc_counts=False)
    serial = cgs.build_kernel(sampler="sparse", compute_log_joint=False)
    runs = {"serial": lambda rng, st: serial(rng, st, tokens, model)}

    def seq(fn, args):
        return [fn(*a) for a in args]

    plan = [("walk1t", Walked, seq), ("kept1t", pg.PartitionedSparse, seq)]
    if threads:
        plan += [("walk2t", Walked, None), ("kept2t", pg.PartitionedSparse, None)]
    for name, cls, runner in plan:
        sw = cls(model, tokens, 2)
        if runner is not None:
            sw.runner = runner
        runs[name] = lambda rng, st, sw=sw: sw(child_generators(rng, 2), st)
    states = {n: cgs.CollapsedGibbsState(state.z.copy(), None, state.n_wk.copy(), state.n_k.copy()) for n in runs}
    rngs = {n: np.random.default_rng(9) for n in runs}
    wall: dict = {}
    cpu = alternate({n: (lambda n=n: runs[n](rngs[n], states[n])) for n in runs}, rounds, wall)
    q = [0.25, 0.5, 0.75]
    C = {n: np.array(v) for n, v in cpu.items()}
    W = {n: np.array(v) for n, v in wall.items()}
    print(f"debian, K = {K}, 30 warm sweeps, {rounds} rounds")
    report_against_serial(cpu, wall, states)
    print("walk1t / kept1t CPU per round", np.round(np.quantile(C["walk1t"] / C["kept1t"], q), 3))
    if threads:
        print("walk2t / kept2t wall per round", np.round(np.quantile(W["walk2t"] / W["kept2t"], q), 3))


if __name__ == "__main__":
    main(sys.argv[1:])
