"""Which data should stay on a thread between the 2-thread sweep's rounds: the documents or the words? (issue 21)

The word-partitioned sweep (``parallel_gibbs._Partitioned``) runs, in round r, the cell of shard p and word block
(p + r) mod P on thread p: a thread keeps its shard's documents (z, their rows) and receives the other block's
word lists and rows of n_wk, which the other thread wrote in the round before. The word lists are read at random,
one list a token; a shard's z is read and written in sequence. This script runs the same cells with the thread
of a cell chosen by its word block instead (thread b samples block b in every round, and a shard's documents
move between the threads), which gives the same chain (each cell has its shard's random stream and n_k; the
z hashes are printed), so the two differ only in which data crosses between the cores.

From one warm state (the benchmark's training split of CORPUS, K topics, seed 0, 30 serial sparse sweeps, no
n_dk table, as ``LDA`` runs), three runs alternate round by round (order reversed every other round):

* ``serial``: the 1-thread sweep;
* ``shards``: ``PartitionedSparse`` on 2 threads as the library runs it (thread p: shard p);
* ``blocks``: the same sweep, thread b: block b.

Prints each run's median CPU and wall seconds a sweep, the per-round ratios against ``serial`` (quartiles), and
the per-round wall ratio shards / blocks (> 1: blocks faster).

    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/threads_sticky_ab.py debian 100 40      # corpus, K, rounds
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/lda: sweep_ab_inprocess

from sweep_ab_inprocess import alternate, report_against_serial, warm_state  # noqa: E402

from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs  # noqa: E402
from harmonium.inference.mcmc.lda import parallel_gibbs as pg  # noqa: E402
from harmonium.parallel.threads import BlockRunner, child_generators  # noqa: E402


class ByBlock:
    """A runner that gives the calling thread the cell of word block 0 and the worker the cell of block 1."""

    def __init__(self):
        self.runner = BlockRunner(2)

    def __call__(self, fn, args):
        by_block = sorted(range(len(args)), key=lambda j: args[j][4])  # args: (rng, state, n_k, p, block, ...)
        out = self.runner(fn, [args[j] for j in by_block])
        result = [None] * len(args)
        for j, r in zip(by_block, out, strict=True):
            result[j] = r
        return result


def main(argv) -> None:
    corpus, K, rounds = argv[0], int(argv[1]), int(argv[2])
    tokens, model, state = warm_state(corpus, K, 30, doc_counts=False)
    serial = cgs.build_kernel(sampler="sparse", compute_log_joint=False)

    def copy():
        return cgs.CollapsedGibbsState(state.z.copy(), None, state.n_wk.copy(), state.n_k.copy())

    states = {"serial": copy(), "shards": copy(), "blocks": copy()}
    rngs = {name: np.random.default_rng(7) for name in states}
    shards = pg.PartitionedSparse(model, tokens, 2)
    blocks = pg.PartitionedSparse(model, tokens, 2, shards.layout)
    blocks.runner = ByBlock()

    def run_serial():
        states["serial"], _ = serial(rngs["serial"], states["serial"], tokens, model)

    def run(name, sweep):
        return lambda: sweep(child_generators(rngs[name], 2), states[name])

    wall: dict = {}
    cpu = alternate({"serial": run_serial, "shards": run("shards", shards), "blocks": run("blocks", blocks)},
                    rounds, wall)
    print(f"{corpus}, K = {K}, {rounds} rounds")
    report_against_serial(cpu, wall, states)
    ratio = np.array(wall["shards"]) / np.array(wall["blocks"])
    print(f"shards / blocks wall per round, quartiles {np.round(np.quantile(ratio, [0.25, 0.5, 0.75]), 3)}; "
          f"CPU {np.round(np.quantile(np.array(cpu['shards']) / np.array(cpu['blocks']), [0.25, 0.5, 0.75]), 3)}")


if __name__ == "__main__":
    main(sys.argv[1:])
