"""AD-LDA with the SparseLDA sweep on 2 threads: one visit a document, against the word-partitioned sweep (issue 21).

The word-partitioned sweep (``parallel_gibbs.PartitionedSparse``, the library's ``LDA(n_jobs=2)``) visits each
document once a word block, twice a sweep on 2 threads; each visit repeats the document's set-up
(``visit_cost_ab.py``). AD-LDA (Newman et al. 2009) visits it once: each worker sweeps its document shard with
the serial SparseLDA kernel against its own copy of n_wk and n_k (stale for the other shard's moves through the
sweep), and the moves are merged after it. The library runs AD-LDA for the samplers without a word-partitioned
sweep (``parallel_gibbs.build_kernel``: worker 0 on the shared tables, a copy for worker 1, the merge by
``apply_moves``); this script runs that scheme with the SparseLDA sweep (no n_dk table: each worker owns its
documents), timing its copy, its sweep and its merge, against the serial sweep and the library's 2-thread
sweep, alternating round by round on copies of one warm state (Debian training split, seed 0, 30 serial sweeps).

    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/threads_adlda_sparse.py 100 30     # K, rounds

2026-11-29 (tenth session, AMD EPYC VM): benchmarks/lda/README.md, "Threads: the price of a document visit".
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/lda: sweep_ab_inprocess

from sweep_ab_inprocess import alternate, report_against_serial, warm_state  # noqa: E402

from harmonium._kernels.lda_gibbs import apply_moves  # noqa: E402
from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs  # noqa: E402
from harmonium.inference.mcmc.lda import parallel_gibbs as pg  # noqa: E402
from harmonium.parallel.threads import BlockRunner, child_generators, partition_documents  # noqa: E402


def main(argv) -> None:
    K, rounds = int(argv[0]), int(argv[1])
    tokens, model, state = warm_state("debian", K, 30, doc_counts=False)
    serial = cgs.build_kernel(sampler="sparse", compute_log_joint=False)
    static = pg.build_kernel(sampler="sparse", n_threads=2, compute_log_joint=False)
    parts = partition_documents(tokens.doc_ptr, 2)
    sweeps = [cgs.sparse_sweep(model, tokens) for _ in parts]
    runner = BlockRunner(2)
    pieces: dict = {}

    def adlda(rng, st):
        rngs = child_generators(rng, 2)
        t0 = time.perf_counter()
        local = [st, cgs.CollapsedGibbsState(st.z, None, st.n_wk.copy(), st.n_k.copy())]
        first = int(tokens.doc_ptr[parts[1][0]])
        z_before = st.z[first:].copy()
        t1 = time.perf_counter()
        n = sum(runner(lambda p: sweeps[p](rngs[p], local[p], *parts[p]), [(0,), (1,)]))
        t2 = time.perf_counter()
        local.clear()
        apply_moves(tokens.words[first:], z_before, st.z[first:], st.n_wk, st.n_k)
        t3 = time.perf_counter()
        for k, v in (("copy", t1 - t0), ("sweep", t2 - t1), ("merge", t3 - t2)):
            pieces.setdefault(k, []).append(v)
        return n

    runs = {"serial": lambda rng, st: serial(rng, st, tokens, model),
            "partitioned2": lambda rng, st: static(rng, st, tokens, model), "adlda2": adlda}
    states = {n: cgs.CollapsedGibbsState(state.z.copy(), None, state.n_wk.copy(), state.n_k.copy()) for n in runs}
    rngs = {n: np.random.default_rng(9) for n in runs}
    timed = {n: (lambda n=n: runs[n](rngs[n], states[n])) for n in runs}
    wall: dict = {}
    cpu = alternate(timed, rounds, wall)
    for v in pieces.values():
        del v[:1]  # adlda2's call off the clock (alternate makes one of each run before the rounds)
    print(f"debian, K = {K}, 30 warm sweeps, {rounds} rounds")
    report_against_serial(cpu, wall)
    print("adlda2 pieces, median wall ms:", {k: round(float(np.median(v)) * 1000, 2) for k, v in pieces.items()})


if __name__ == "__main__":
    main(sys.argv[1:])
