"""The fixed-topics sweep of ``LDA.transform`` (``lda_infer.fixed_topics_sweep_rows``) of two versions of
``harmonium/_kernels/lda_infer.py`` in one process, alternating sweep by sweep (issue 21; the transform's twin of
``sweep_ab_inprocess.py``, whose state, rounds and report it uses).

BASE is a saved copy of lda_infer.py (e.g. ``git show HEAD~1:harmonium/_kernels/lda_infer.py > /tmp/infer.py``);
the other version is the working tree's. The topics are the posterior mean of the state after WARM serial sparse
sweeps (the time-to-quality benchmark's training split of CORPUS, K topics, seed 0); the documents are the
corpus's test split, as ``infer_fixed_topics`` lays them out (its distinct words renumbered, their rows of phi
and prior tables). Each version draws its own z from the same sequential start with the same Generator seed, then
runs ROUNDS rounds of one sweep each, the order reversed every other round, accumulating the kept counts as
``transform`` does. Prints each version's median CPU seconds a sweep, the quartiles of the per-round ratio
base / version (> 1: faster than the base) and a hash of z after the rounds (equal: the same draws).

    git show HEAD~1:harmonium/_kernels/lda_infer.py > /tmp/infer-base.py
    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/infer_ab_inprocess.py /tmp/infer-base.py 100 30 12 debian
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/lda: sweep_ab_inprocess
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: _common

import _common as C  # noqa: E402
from sweep_ab_inprocess import alternate, load_base, report, warm_state  # noqa: E402

from harmonium._kernels import lda_infer as tree  # noqa: E402
from harmonium.models.directed.lda import topic_word_mean  # noqa: E402


def sweeper(mod, tokens, phi_wk, alpha):
    """One fixed-topics sweep of ``mod``'s kernel over ``tokens`` (after its sequential start), on private arrays."""
    K = alpha.shape[0]
    rows, local = np.unique(tokens.words, return_inverse=True)
    words = local.astype(np.int32).reshape(-1)
    phi_rows = np.ascontiguousarray(phi_wk[rows])
    a_cum = np.empty((rows.shape[0], K))
    mod.word_prior_tables(phi_rows, alpha, a_cum)
    n_docs = tokens.doc_ptr.shape[0] - 1
    z = np.zeros(tokens.words.shape[0], dtype=np.int32)
    total = np.zeros((n_docs, K))
    scratch = (np.empty(K, dtype=np.int32), np.empty(K), np.zeros(K, dtype=np.uint8), np.zeros(K, dtype=np.int32))
    rng = np.random.default_rng(7)
    args = (tokens.doc_ptr, words, z, phi_rows, a_cum, 0, n_docs)
    mod.fixed_topics_sweep_rows(rng, *args, True, *scratch, total, False)

    def sweep():
        mod.fixed_topics_sweep_rows(rng, *args, False, *scratch, total, True)

    sweep.z = z
    return sweep


def main(argv) -> None:
    base = load_base(argv[0], name="base_lda_infer")
    K, warm, rounds = int(argv[1]), int(argv[2]), int(argv[3])
    corpus = argv[4] if len(argv) > 4 else "debian"
    _, model, state = warm_state(corpus, K, warm, doc_counts=False)
    phi_wk = np.ascontiguousarray(topic_word_mean(state.n_wk, state.n_k, model.beta).T)
    test = C.load_data(corpus, None).test.tokens()
    runs = {"base": sweeper(base, test, phi_wk, model.alpha), "tree": sweeper(tree, test, phi_wk, model.alpha)}
    cpu = alternate(runs, rounds)
    print(f"{corpus}, K = {K}, {warm} warm sweeps, {rounds} rounds, {test.words.shape[0]} test tokens")
    report(runs, cpu)


if __name__ == "__main__":
    main(sys.argv[1:])
