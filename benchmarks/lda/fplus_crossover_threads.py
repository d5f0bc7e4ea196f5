"""The F+LDA / SparseLDA crossover on P threads: wall and CPU seconds of a word-partitioned sweep of each (issue 21).

``sampler="auto"`` on P threads (``parallel_gibbs.PartitionedAuto``) picks, each sweep, the word-partitioned F+LDA
or SparseLDA sweep by the 1-thread cost rule (``fplus.fplus_is_cheaper``), with the SparseLDA sweep's document
visits counted P times. The two sweeps need not scale alike on P threads, so this script times both on the
chain's own states, as ``fplus_crossover.py`` does on one thread: one SparseLDA chain on P threads (the benchmark's
training split of CORPUS, K topics, alpha 0.1, beta 0.01, seed 0, the state ``LDA(n_jobs=P)`` makes) from the random
start; before each of its sweeps the state is copied twice, and one P-thread F+LDA sweep and one P-thread SparseLDA
sweep run on the copies (order alternating), wall and process CPU seconds (all threads), with what the rule picks.
One JSON line a sweep. Once the rule picks SparseLDA it releases F+LDA's word-major index, as in a fit, so the next
F+LDA sweep's time includes rebuilding it (tens of ms on Debian); the sweeps up to the rule's switch are unaffected.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/fplus_crossover_threads.py debian 1000 40 2   # CORPUS K SWEEPS P

2026-11-29 (thirteenth session, AMD EPYC VM): results/fplus-crossover-threads-amd.jsonl; benchmarks/lda/README.md,
"Threads: what more threads cost", item 6.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: _common

import _common as C  # noqa: E402

from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs  # noqa: E402
from harmonium.inference.mcmc.lda import parallel_gibbs as pg  # noqa: E402
from harmonium.parallel.threads import child_generators  # noqa: E402


def main(argv) -> None:
    corpus, K, n_sweeps, P = argv[0], int(argv[1]), int(argv[2]), int(argv[3])
    _, tokens, model, _, state = C.lda_start(corpus, K, 0, doc_counts=False)
    table = pg.needs_doc_counts("auto", model, tokens, P)
    state = cgs.state_from_assignments(tokens, model, state.z, doc_counts=table)
    auto = pg.PartitionedAuto(model, tokens, P)  # its rule, and the two sweeps on one layout and one set of threads
    sweeps = {"fplus": auto.fplus, "sparse": auto.sparse}
    D = tokens.doc_ptr.shape[0] - 1

    def copy(st):
        return cgs.CollapsedGibbsState(st.z.copy(), None if st.n_dk is None else st.n_dk.copy(), st.n_wk.copy(),
                                       st.n_k.copy())

    for name in sweeps:  # both kernels compiled or loaded, the threads started, off the clock
        sweeps[name](child_generators(np.random.default_rng(1), P), copy(state))
    for t in range(n_sweeps):
        kw, kd = auto.mean_list_lengths(state, 0, D)
        picks = auto.choose(state, 0, D)
        copies = {name: copy(state) for name in sweeps}
        wall, cpu = {}, {}
        for name in (("fplus", "sparse") if t % 2 == 0 else ("sparse", "fplus")):
            w0, c0 = time.perf_counter(), time.process_time()
            sweeps[name](child_generators(np.random.default_rng(100 + t), P), copies[name])
            wall[name], cpu[name] = time.perf_counter() - w0, time.process_time() - c0
        print(json.dumps({"corpus": corpus, "K": K, "threads": P, "table": table, "sweep": t + 1,
                          "k_w": round(float(kw), 1), "k_d": round(float(kd), 1),
                          "fplus_wall_s": round(wall["fplus"], 4), "sparse_wall_s": round(wall["sparse"], 4),
                          "fplus_cpu_s": round(cpu["fplus"], 4), "sparse_cpu_s": round(cpu["sparse"], 4),
                          "rule_picks": "fplus" if picks is auto.fplus else "sparse"}), flush=True)
        state = copies["sparse"]  # the chain goes on with the SparseLDA sweep


if __name__ == "__main__":
    main(sys.argv[1:])
