"""The serial F+LDA sweep of two versions of ``harmonium/_kernels/lda_fplus.py`` in one process, alternating sweep
by sweep (issue 21; the F+LDA twin of ``sweep_ab_inprocess.py``, whose state, rounds and report it uses).

BASE is a saved copy of lda_fplus.py (e.g. ``git show HEAD~1:harmonium/_kernels/lda_fplus.py > /tmp/base.py``);
the other version is the working tree's. From one state (the time-to-quality benchmark's training split of
CORPUS, K topics, seed 0, WARM serial sparse sweeps, no n_dk table), each version runs
:class:`~harmonium.inference.mcmc.lda.fplus.FPlusSweep` (the whole sweep: document lists, gather, kernel,
scatter) on its own copy of the state with the same Generator seed, ROUNDS rounds, the order reversed every
other round. Prints each version's median CPU seconds a sweep, the quartiles of the per-round ratio base /
version (> 1: faster than the base) and a hash of z after the rounds (equal: the same chain).

    git show ef1feb7:harmonium/_kernels/lda_fplus.py > /tmp/fplus-base.py
    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/fplus_ab_inprocess.py /tmp/fplus-base.py 1000 3 8 pypi

2026-11-28 (the document entries prefetched): results/fplus-ab-prefetch-intel.txt.
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/lda: sweep_ab_inprocess

from sweep_ab_inprocess import ab_main, with_kernels  # noqa: E402

from harmonium._kernels import lda_fplus as tree  # noqa: E402
from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs  # noqa: E402
from harmonium.inference.mcmc.lda import fplus  # noqa: E402


def fplus_sweeper(mod, state, tokens, model):
    """One serial F+LDA sweep with ``mod``'s kernels on a private copy of ``state`` (the sweep's module global
    :data:`fplus.kern` points at ``mod`` while it runs); the returned function carries its copy's ``z``."""
    copy = cgs.CollapsedGibbsState(state.z.copy(), None, state.n_wk.copy(), state.n_k.copy())
    rng = np.random.default_rng(9)
    previous = fplus.kern
    fplus.kern = mod
    try:
        # mod's descent passed in (kernels before ff1e560 take no pick=None); both alike, compiled off the clock
        sweep = fplus.FPlusSweep(model, tokens, pick=mod.tree_pick)
    finally:
        fplus.kern = previous
    n_docs = len(tokens.doc_ptr) - 1
    return with_kernels(fplus, mod, lambda: sweep(rng, copy, 0, n_docs), copy.z)


def main(argv) -> None:
    ab_main(argv, fplus_sweeper, tree, "base_lda_fplus")


if __name__ == "__main__":
    main(sys.argv[1:])
