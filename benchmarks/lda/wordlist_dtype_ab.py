"""The serial SparseLDA sweep with its packed word lists in int64 (as ``LDA`` runs it) against the same lists in
int32 (as MALLET packs its type-topic counts), in one process, alternating sweep by sweep (issue 21).

One kernel (the working tree's ``lda_sparse``), two private copies of one state (the time-to-quality training
split of CORPUS, K topics, seed 0, WARM serial sweeps), the same Generator seed: the packed values are the same
in both dtypes, so the chains must be equal (the z hashes printed). int32 halves the lists' bytes (a list of
16 entries in one cache line instead of two) where every count fits in 31 - topic_bits(K) bits. Prints each
dtype's median CPU seconds a sweep and the quartiles of the per-round ratio int64 / dtype (> 1: faster than
int64).

    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/wordlist_dtype_ab.py 100 30 12 debian

2026-11-28 (not kept: int32 no faster): results/wordlist-dtype-ab-intel.txt.
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/lda: sweep_ab_inprocess

import sweep_ab_inprocess as S  # noqa: E402

from harmonium._kernels import lda_sparse as tree  # noqa: E402


def main(argv) -> None:
    K, warm, rounds = int(argv[0]), int(argv[1]), int(argv[2])
    corpus = argv[3] if len(argv) > 3 else "debian"
    tokens, model, state = S.warm_state(corpus, K, warm, doc_counts=False)
    runs = {"int64": S.sweeper(tree, state, tokens, model, list_dtype=np.int64),
            "int32": S.sweeper(tree, state, tokens, model, list_dtype=np.int32)}
    cpu = S.alternate(runs, rounds)
    print(f"{corpus}, K = {K}, {warm} warm sweeps, {rounds} rounds")
    S.report(runs, cpu)


if __name__ == "__main__":
    main(sys.argv[1:])
