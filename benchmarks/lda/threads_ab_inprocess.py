"""1 against 2 threads of the word-partitioned sweep, two versions of ``harmonium/_kernels/lda_sparse.py`` in one
process, alternating sweep by sweep (issue 21; for a kernel change on a machine whose speed swings by more
than the change between two processes' runs).

BASE is a saved copy of lda_sparse.py (e.g. ``git show HEAD:harmonium/_kernels/lda_sparse.py > /tmp/base.py``);
the other version is the working tree's. From one state (the benchmark's Debian training split, K topics,
seed 0, WARM serial sweeps), four copies run in turn each round (order reversed every other round): base
and tree on 2 threads (``parallel_gibbs``, the module's ``lda_sparse`` swapped for the base copy), base and
tree on 1 thread (the serial sweep). The states have no n_dk table, as ``LDA(n_jobs=t)`` makes them since
3aac47b (``--table``: with the table, as before; a base kernel from before 3aac47b's layout change of
``cell_order`` does not fit the tree's layout). Prints each
run's median wall and CPU seconds a sweep, its z hash, and per-round ratios (quartiles).

    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/threads_ab_inprocess.py /tmp/base.py 100 30 12 [CORPUS] [--table]

2026-11-27 (the no-view variant, reverted): results/threads-ab-inprocess-intel.txt; 2026-11-28 (the look-ahead
across a block's cells): results/threads-ab-cell-prefetch-intel.txt.
"""
import hashlib
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/lda: sweep_ab_inprocess

from sweep_ab_inprocess import load_base, warm_state  # noqa: E402

from harmonium._kernels import lda_sparse as tree  # noqa: E402
from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs  # noqa: E402
from harmonium.inference.mcmc.lda import parallel_gibbs as pg  # noqa: E402


def main(argv) -> None:
    base = load_base(argv[0])
    K, warm, rounds = int(argv[1]), int(argv[2]), int(argv[3])
    table = "--table" in argv
    corpus = next((a for a in argv[4:] if not a.startswith("--")), "debian")
    tokens, model, state = warm_state(corpus, K, warm, doc_counts=table)
    runs = []
    for name, mod, nt in [("base2", base, 2), ("tree2", tree, 2), ("base1", base, 1), ("tree1", tree, 1)]:
        st = cgs.CollapsedGibbsState(state.z.copy(), state.n_dk.copy() if table else None, state.n_wk.copy(),
                                     state.n_k.copy())
        kern = pg.build_kernel(sampler="sparse", n_threads=nt, compute_log_joint=False)
        runs.append({"name": name, "mod": mod, "kern": kern, "st": st, "rng": np.random.default_rng(9),
                     "wall": [], "cpu": []})

    def one(run):
        old = pg.lda_sparse, cgs.lda_sparse
        pg.lda_sparse = cgs.lda_sparse = run["mod"]
        try:
            run["kern"](run["rng"], run["st"], tokens, model)
        finally:
            pg.lda_sparse, cgs.lda_sparse = old

    for run in runs:  # compile or load, off the clock
        one(run)
    for r in range(rounds):
        for run in (runs if r % 2 == 0 else runs[::-1]):
            t, c = time.perf_counter(), time.process_time()
            one(run)
            run["wall"].append(time.perf_counter() - t)
            run["cpu"].append(time.process_time() - c)
    for run in runs:
        print(json.dumps({"name": run["name"], "wall": round(float(np.median(run["wall"])), 4),
                          "cpu": round(float(np.median(run["cpu"])), 4),
                          "z": hashlib.sha256(run["st"].z.tobytes()).hexdigest()[:12]}))
    w = {r["name"]: np.array(r["wall"]) for r in runs}
    c = {r["name"]: np.array(r["cpu"]) for r in runs}
    q = [0.25, 0.5, 0.75]
    print("tree against base on 2 threads, per round base2 / tree2 (quartiles): wall",
          np.round(np.quantile(w["base2"] / w["tree2"], q), 3), " CPU",
          np.round(np.quantile(c["base2"] / c["tree2"], q), 3))
    for v in ("base", "tree"):
        q = [0.25, 0.5, 0.75]
        print(v, "speed-up (wall 1t / 2t, per round, quartiles):", np.round(np.quantile(w[v + "1"] / w[v + "2"], q), 3),
              " CPU 2t / 1t:", np.round(np.quantile(c[v + "2"] / c[v + "1"], q), 3))


if __name__ == "__main__":
    main(sys.argv[1:])
