"""What share of an F+LDA sweep the per-word F+ trees cost (issue 21: is a tree of the smoothing part shared across
words worth a new kernel?).

From one state (the time-to-quality benchmark's training split of CORPUS, K topics, seed 0, WARM serial sparse
sweeps), times (CPU) a loop that builds the F+ tree of every word with tokens with the kernel's own
:func:`harmonium._kernels.lda_fplus.build_tree`, as ``fplus_sweep`` does at each word's start, and the whole
serial F+LDA sweep, and prints the vocabulary, the token count and the builds' share of the sweep.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/fplus_tree_cost.py 1000 3 pypi

2026-11-28: PyPI K = 1000 5.4% and 5.7% (before and after the document entries' prefetch), Debian K = 1000
5.3%, 8.1% and 2.9% (the last with the kernel's build_tree); README "F+LDA: the document entries prefetched".
"""
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/lda: sweep_ab_inprocess

from sweep_ab_inprocess import warm_state  # noqa: E402

from harmonium._kernels.lda_fplus import build_tree, tree_size  # noqa: E402
from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs  # noqa: E402


@njit(cache=True)
def build_all_trees(counts, n_wk, alpha, beta, c, f, T):
    """The F+ tree of every word with tokens, as the sweep builds it at the word's start; returns a checksum."""
    total = 0.0
    for w in range(n_wk.shape[0]):
        if counts[w] > 0:
            build_tree(f, T, n_wk.shape[1], n_wk[w], alpha, beta, c)
            total += f[1]
    return total


def main(argv) -> None:
    K, warm, corpus = int(argv[0]), int(argv[1]), argv[2]
    tokens, model, state = warm_state(corpus, K, warm, doc_counts=False)
    counts = np.bincount(tokens.words, minlength=model.n_words)
    T, _ = tree_size(K)
    f = np.zeros(2 * T)
    c = 1.0 / (state.n_k + model.beta * model.n_words)
    alpha = np.ascontiguousarray(model.alpha, dtype=np.float64)
    build_all_trees(counts, state.n_wk, alpha, model.beta, c, f, T)  # compile, off the clock
    t = time.process_time()
    for _ in range(5):
        build_all_trees(counts, state.n_wk, alpha, model.beta, c, f, T)
    trees = (time.process_time() - t) / 5
    sweep = cgs.build_kernel(sampler="fplus", compute_log_joint=False)
    rng = np.random.default_rng(1)
    sweep(rng, state, tokens, model)  # compile and first index, off the clock
    t = time.process_time()
    for _ in range(3):
        sweep(rng, state, tokens, model)
    whole = (time.process_time() - t) / 3
    print(f"{corpus}, K = {K}: V {model.n_words}, words with tokens {int((counts > 0).sum())}, "
          f"N {tokens.words.shape[0]}; "
          f"tree builds {trees:.4f} CPU s a sweep, F+LDA sweep {whole:.4f}, share {trees / whole:.3f}")


if __name__ == "__main__":
    main(sys.argv[1:])
