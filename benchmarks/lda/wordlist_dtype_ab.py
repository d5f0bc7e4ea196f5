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
import hashlib
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/lda: sweep_ab_inprocess

import sweep_ab_inprocess as S  # noqa: E402

from harmonium._kernels import lda_sparse as tree  # noqa: E402
from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs  # noqa: E402
from harmonium.models.directed.lda import doc_count_dtype  # noqa: E402


def sweeper(state, tokens, model, dtype):
    """One serial sweep of the tree's kernel on a private copy of ``state``, its word lists packed in ``dtype``."""
    K, V = model.n_topics, model.n_words
    z, n_wk, n_k = state.z.copy(), state.n_wk.copy(), state.n_k.copy()
    row_sums = np.bincount(tokens.words, minlength=V).astype(np.int64)
    if np.dtype(dtype).itemsize == 4 and row_sums.max() >= 1 << (31 - tree.topic_bits(K)):
        raise SystemExit(f"a word's count does not fit an int32 entry at K = {K}")
    wptr = np.zeros(V + 1, dtype=np.int64)
    np.cumsum(np.minimum(cgs.word_slots(model, tokens), K), out=wptr[1:])
    wtop, wlen = np.empty(int(wptr[-1]), dtype=dtype), np.zeros(V, dtype=np.int32)
    scratch = (np.empty(K), np.empty(K), np.empty(K), np.empty(K, dtype=np.int32), np.zeros(K, dtype=np.uint8),
               np.zeros(K, dtype=doc_count_dtype(tokens.doc_ptr)))
    rng = np.random.default_rng(7)

    def sweep():
        tree.refresh_word_lists(n_wk, row_sums, wptr, wtop, wlen)
        tree.sparse_sweep(rng, tokens.doc_ptr, tokens.words, z, None, n_wk, n_k, model.alpha, model.beta, 0,
                          tokens.doc_ptr.shape[0] - 1, wptr, wtop, wlen, *scratch)

    sweep.z = z
    return sweep


def main(argv) -> None:
    K, warm, rounds = int(argv[0]), int(argv[1]), int(argv[2])
    corpus = argv[3] if len(argv) > 3 else "debian"
    tokens, model, state = S.warm_state(corpus, K, warm, doc_counts=False)
    runs = {"int64": sweeper(state, tokens, model, np.int64), "int32": sweeper(state, tokens, model, np.int32)}
    for sweep in runs.values():  # compile or load, off the clock
        sweep()
    cpu = {name: [] for name in runs}
    for r in range(rounds):
        for name in (("int64", "int32") if r % 2 == 0 else ("int32", "int64")):
            c = time.process_time()
            runs[name]()
            cpu[name].append(time.process_time() - c)
    print(f"{corpus}, K = {K}, {warm} warm sweeps, {rounds} rounds")
    b = np.array(cpu["int64"])
    for name, sweep in runs.items():
        a = np.array(cpu[name])
        z = hashlib.sha256(sweep.z.tobytes()).hexdigest()[:12]
        print(f"{name}: median CPU s a sweep {np.median(a):.4f}; int64 / {name} per round, quartiles "
              f"{np.round(np.quantile(b / a, [0.25, 0.5, 0.75]), 3)}; z {z}")


if __name__ == "__main__":
    main(sys.argv[1:])
