"""The serial SparseLDA sweep without a (D, K) n_dk table (as ``LDA(n_jobs=1)`` runs it: each document's row
rebuilt from z in a walk over its tokens) against the same sweep with the table, in one process, alternating
sweep by sweep (issue 21, item 2: no dense D x K accumulators unless asked for; what that costs in time).

One kernel (the working tree's ``lda_sparse``), two private copies of one state (the time-to-quality training
split of CORPUS, K topics, seed 0, WARM serial sweeps), the same Generator seed; the arithmetic is the same
either way, so the chains must be equal (the z hashes printed). Prints the table's dtype and size, each
variant's median CPU seconds a sweep and the quartiles of the per-round ratio none / variant (> 1: faster
than without the table).

    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/doc_counts_ab.py 100 30 12 debian

2026-11-28: results/doc-counts-ab-intel.txt.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/lda: sweep_ab_inprocess

import sweep_ab_inprocess as S  # noqa: E402

from harmonium._kernels import lda_sparse as tree  # noqa: E402


def main(argv) -> None:
    K, warm, rounds = int(argv[0]), int(argv[1]), int(argv[2])
    corpus = argv[3] if len(argv) > 3 else "debian"
    tokens, model, state = S.warm_state(corpus, K, warm, doc_counts=True)
    runs = {"none": S.sweeper(tree, state, tokens, model), "table": S.sweeper(tree, state, tokens, model, table=True)}
    cpu = S.alternate(runs, rounds)
    print(f"{corpus}, K = {K}, {warm} warm sweeps, {rounds} rounds; n_dk {state.n_dk.dtype} {state.n_dk.shape}, "
          f"{state.n_dk.nbytes / 2**20:.1f} MiB")
    S.report(runs, cpu)


if __name__ == "__main__":
    main(sys.argv[1:])
