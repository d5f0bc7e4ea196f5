"""The 2-thread word-partitioned SparseLDA and F+LDA sweeps on the same states, against ``auto``'s rule with P = 2
(issue 21: does the cost model's document-visit term, P D / N for the word-partitioned sweep, pick the cheaper?).

From a random start (the time-to-quality benchmark's training split of CORPUS, K topics, seed 0, no n_dk table),
a serial SparseLDA chain is run to each sweep count in SWEEPS; at each, both word-partitioned sweeps
(``parallel_gibbs.PartitionedSparse`` and ``PartitionedFPlus``, 2 threads, one layout) run ROUNDS times on fresh
copies of the state, alternating; prints the median wall and CPU seconds of each, the state's k_w and k_d and
what ``fplus.fplus_is_cheaper`` picks with 2 D / N document visits a token.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/partitioned_crossover.py pypi 100 4 10,40,80

2026-11-28: results/partitioned-crossover-intel.txt.
"""
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/lda: sweep_ab_inprocess

from sweep_ab_inprocess import warm_state  # noqa: E402

from harmonium._kernels import lda_fplus  # noqa: E402
from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs  # noqa: E402
from harmonium.inference.mcmc.lda import fplus  # noqa: E402
from harmonium.inference.mcmc.lda import parallel_gibbs as pg  # noqa: E402
from harmonium.parallel.threads import child_generators  # noqa: E402


def main(argv) -> None:
    corpus, K, rounds = argv[0], int(argv[1]), int(argv[2])
    marks = [int(x) for x in argv[3].split(",")]
    tokens, model, state = warm_state(corpus, K, 0, doc_counts=False)
    chain = cgs.build_kernel(sampler="sparse", compute_log_joint=False)
    rng = np.random.default_rng(5)
    sparse = pg.PartitionedSparse(model, tokens, 2)
    sweeps = {"sparse": sparse, "fplus": pg.PartitionedFPlus(model, tokens, 2, sparse.layout)}
    D, N = len(tokens.doc_ptr) - 1, len(tokens.words)
    row = np.zeros(K, np.int32)

    def copy():
        return cgs.CollapsedGibbsState(state.z.copy(), None, state.n_wk.copy(), state.n_k.copy())

    done = 0
    for mark in marks:
        while done < mark:
            state, _ = chain(rng, state, tokens, model)
            done += 1
        kw, kd = lda_fplus.sampled_list_lengths(tokens.doc_ptr, tokens.words, state.z, state.n_wk, 1, row)
        wall = {name: [] for name in sweeps}
        cpu = {name: [] for name in sweeps}
        for sweep in sweeps.values():  # compiled, indexes built, off the clock
            sweep(child_generators(np.random.default_rng(1), 2), copy())
        names = list(sweeps)
        for r in range(rounds):
            for name in (names if r % 2 == 0 else names[::-1]):
                st = copy()
                t, c = time.perf_counter(), time.process_time()
                sweeps[name](child_generators(np.random.default_rng(r), 2), st)
                wall[name].append(time.perf_counter() - t)
                cpu[name].append(time.process_time() - c)
        pick = "fplus" if fplus.fplus_is_cheaper(kw, kd, 2 * D / N, K) else "sparse"
        print(f"{corpus}, K = {K}, sweep {mark}: k_w {kw:.1f}, k_d {kd:.1f}; 2 threads, wall s sparse "
              f"{np.median(wall['sparse']):.3f}, fplus {np.median(wall['fplus']):.3f} (CPU s "
              f"{np.median(cpu['sparse']):.3f} / {np.median(cpu['fplus']):.3f}); the rule with P = 2 picks {pick}",
              flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
