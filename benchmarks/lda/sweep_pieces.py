"""What the serial SparseLDA sweep spends outside its token loop, and how far its word lists reach (issue 21).

From the time-to-quality training split of CORPUS, K topics, seed 0, after WARM serial sweeps as ``LDA`` runs
them (no n_dk table), three rounds of: the start-of-sweep check of the word lists against n_wk
(``refresh_word_lists``), the write-back of n_wk from the lists (the loop that ends ``_sweep``, timed alone),
and a whole sweep (refresh included). Also prints the lists' capacity and use (entries of 8 bytes).

    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/sweep_pieces.py debian 100 30

2026-11-28: results/sweep-pieces-intel.txt.
"""
import sys
import time
from pathlib import Path

import numba

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/lda: sweep_ab_inprocess

import sweep_ab_inprocess as S  # noqa: E402

from harmonium._kernels import lda_sparse as L  # noqa: E402


@numba.njit(cache=True)
def write_back(n_wk, wptr, wlist, wlen, bits, mask):
    """The end of ``lda_sparse._sweep``: n_wk's non-zero cells from the packed lists."""
    for w in range(n_wk.shape[0]):
        for j in range(wptr[w], wptr[w] + wlen[w]):
            n_wk[w, wlist[j] & mask] = wlist[j] >> bits


def main(argv) -> None:
    corpus, K, warm = argv[0], int(argv[1]), int(argv[2])
    tokens, model, state = S.warm_state(corpus, K, warm, doc_counts=False)
    V, D = model.n_words, tokens.doc_ptr.shape[0] - 1
    sweep = S.sweeper(L, state, tokens, model)
    wptr, wtop, wlen = sweep.lists
    n_wk, row_sums = sweep.n_wk, sweep.row_sums
    bits = L.topic_bits(K)
    mask = (1 << bits) - 1

    sweep()  # builds the lists (and compiles), off the clock
    write_back(n_wk, wptr, wtop, wlen, bits, mask)
    lines = sum(len({(int(wptr[w]) + j) * 8 // 64 for j in range(int(wlen[w]))}) for w in range(V))
    print(f"{corpus}, K = {K}, {warm} warm sweeps: {tokens.words.shape[0]} tokens, {D} documents, V = {V}; word "
          f"lists: capacity {int(wptr[-1])} entries ({wptr[-1] * 8 / 2**20:.1f} MiB), in use {int(wlen.sum())} "
          f"({wlen.sum() * 8 / 2**20:.2f} MiB) on {lines} cache lines ({lines * 64 / 2**20:.2f} MiB)")
    for _ in range(3):
        t0 = time.process_time()
        L.refresh_word_lists(n_wk, row_sums, wptr, wtop, wlen)
        t1 = time.process_time()
        write_back(n_wk, wptr, wtop, wlen, bits, mask)
        t2 = time.process_time()
        sweep()
        t3 = time.process_time()
        print(f"refresh {1e3 * (t1 - t0):.2f} ms, write-back {1e3 * (t2 - t1):.2f} ms, sweep (refresh included) "
              f"{1e3 * (t3 - t2):.1f} ms")


if __name__ == "__main__":
    main(sys.argv[1:])
