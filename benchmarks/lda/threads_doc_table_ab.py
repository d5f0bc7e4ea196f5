"""The 2-thread word-partitioned sweep with and without the (D, K) n_dk table, two versions of
``parallel_gibbs.py`` in one process, alternating sweep by sweep (issue 21, item 3).

BASE is a saved copy of ``harmonium/inference/mcmc/lda/parallel_gibbs.py`` from before the change (e.g.
``git show 89fbd51:harmonium/inference/mcmc/lda/parallel_gibbs.py > /tmp/pg_base.py``), run on a state with
the table, as ``LDA(n_jobs=2)`` ran it then; the tree's version runs on a state without it, as
``LDA(n_jobs=2)`` runs it now; the serial sweep of ``LDA(n_jobs=1)`` (no table) runs alongside. From one state
(the benchmark's training split of CORPUS, K topics, seed 0, WARM serial sweeps), the three copies run in
turn each round, the order reversed every other round. Prints each run's median wall and CPU seconds a
sweep (CPU: all threads), its z hash, and per-round ratios (quartiles).

    git show 89fbd51:harmonium/inference/mcmc/lda/parallel_gibbs.py > /tmp/pg_base.py
    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/threads_doc_table_ab.py /tmp/pg_base.py 100 30 12 debian

2026-11-28: results/threads-doc-table-ab-intel.txt.
"""
import hashlib
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/lda: sweep_ab_inprocess

from sweep_ab_inprocess import alternate, load_base, warm_state  # noqa: E402

from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs  # noqa: E402
from harmonium.inference.mcmc.lda import parallel_gibbs as tree  # noqa: E402


def main(argv) -> None:
    base = load_base(argv[0], "base_parallel_gibbs")
    K, warm, rounds = int(argv[1]), int(argv[2]), int(argv[3])
    corpus = argv[4] if len(argv) > 4 else "debian"
    tokens, model, state = warm_state(corpus, K, warm, doc_counts=True)
    runs, states = {}, {}
    for name, kernel, table in [
            ("serial", cgs.build_kernel(sampler="sparse", compute_log_joint=False), False),
            ("base2", base.build_kernel(sampler="sparse", n_threads=2, compute_log_joint=False), True),
            ("tree2", tree.build_kernel(sampler="sparse", n_threads=2, compute_log_joint=False), False)]:
        st = states[name] = cgs.CollapsedGibbsState(state.z.copy(), state.n_dk.copy() if table else None,
                                                    state.n_wk.copy(), state.n_k.copy())
        rng = np.random.default_rng(9)
        runs[name] = lambda kernel=kernel, st=st, rng=rng: kernel(rng, st, tokens, model)
    wall: dict = {}
    cpu = alternate(runs, rounds, wall)
    print(f"{corpus}, K = {K}, {warm} warm sweeps, {rounds} rounds")
    q = [0.25, 0.5, 0.75]
    w = {n: np.array(v) for n, v in wall.items()}
    c = {n: np.array(v) for n, v in cpu.items()}
    for name in runs:
        z = hashlib.sha256(states[name].z.tobytes()).hexdigest()[:12]
        print(f"{name}: median wall s a sweep {np.median(w[name]):.4f}, CPU s {np.median(c[name]):.4f}; z {z}")
    for name in ("base2", "tree2"):
        print(f"{name}: speed-up over serial (wall, per round) {np.round(np.quantile(w['serial'] / w[name], q), 3)}; "
              f"CPU / serial's {np.round(np.quantile(c[name] / c['serial'], q), 3)}")
    print(f"tree2 against base2, wall base2 / tree2 per round {np.round(np.quantile(w['base2'] / w['tree2'], q), 3)}; "
          f"CPU {np.round(np.quantile(c['base2'] / c['tree2'], q), 3)}")


if __name__ == "__main__":
    main(sys.argv[1:])
