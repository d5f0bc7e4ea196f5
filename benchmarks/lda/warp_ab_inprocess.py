"""The serial WarpLDA sweep of two versions of ``harmonium/_kernels/lda_warp.py`` in one process, alternating sweep by
sweep (issue 21; the warp twin of ``sweep_ab_inprocess.py``, whose state, rounds and report it uses).

BASE is a saved copy of lda_warp.py (e.g. ``git show HEAD~1:harmonium/_kernels/lda_warp.py > /tmp/warp-base.py``); the
other version is the working tree's. From one state (the time-to-quality benchmark's training split of CORPUS, K
topics, seed 0, WARM serial sparse sweeps, with the (D, K) n_dk table that the warp sweep reads), each version runs
:class:`~harmonium.inference.mcmc.lda.warp.WarpSweep` (the gather of the word-major z and the kernel) on its own copy
of the state with the same Generator seed, ROUNDS rounds, the order reversed every other round. Prints each
version's median CPU seconds a sweep, the quartiles of the per-round ratio base / version (> 1: faster than the
base) and a hash of z after the rounds (equal: the same chain).

    git show HEAD~1:harmonium/_kernels/lda_warp.py > /tmp/warp-base.py
    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/warp_ab_inprocess.py /tmp/warp-base.py 1000 5 40 debian

2026-11-29 (eleventh session, AMD EPYC VM; the lookups by unsigned index): results/warp-ab-unsigned-amd.txt.
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/lda: sweep_ab_inprocess

from sweep_ab_inprocess import ab_main, with_kernels  # noqa: E402

from harmonium._kernels import lda_warp as tree  # noqa: E402
from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs  # noqa: E402
from harmonium.inference.mcmc.lda import warp  # noqa: E402


def warp_sweeper(mod, state, tokens, model):
    """One serial warp sweep with ``mod``'s kernels on a private copy of ``state`` (the sweep's module global
    :data:`warp.kern` points at ``mod`` while it runs); the returned function carries its copy's ``z``."""
    copy = cgs.CollapsedGibbsState(state.z.copy(), state.n_dk.copy(), state.n_wk.copy(), state.n_k.copy())
    rng = np.random.default_rng(9)
    sweep = warp.WarpSweep(model, tokens, compiled=mod.warp_sweep)
    n_docs = len(tokens.doc_ptr) - 1
    return with_kernels(warp, mod, lambda: sweep(rng, copy, 0, n_docs), copy.z)  # mod's gather too


def main(argv) -> None:
    ab_main(argv, warp_sweeper, tree, "base_lda_warp", doc_counts=True)


if __name__ == "__main__":
    main(sys.argv[1:])
