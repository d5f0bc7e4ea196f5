"""CPU seconds of the collapsed log joint log p(w, z) (``lda_stats.collapsed_log_joint_assignments``, what the LDA
estimator records every ``evaluate_every`` sweeps) of two versions of ``harmonium/_kernels/lda_stats.py``, on one
state, and their values (issue 21).

BASE is a saved copy of lda_stats.py (``git show REV:harmonium/_kernels/lda_stats.py > /tmp/lda_stats_base.py``);
the other version is the working tree's. From the time-to-quality training split of CORPUS, K topics, seed 0,
WARM serial sweeps (with the n_dk table, so the dense kernel is checked against the z-built one too): each
version's value with the symmetric alpha (from z and from n_dk) and with an asymmetric one, and the CPU
seconds of three calls from z.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/log_joint_speed.py /tmp/lda_stats_base.py debian 100 3

2026-11-28: results/log-joint-speed-intel.txt.
"""
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/lda: sweep_ab_inprocess

from sweep_ab_inprocess import load_base, warm_state  # noqa: E402

from harmonium._kernels import lda_stats as tree  # noqa: E402


def main(argv) -> None:
    base = load_base(argv[0], "base_lda_stats")
    corpus, K, warm = argv[1], int(argv[2]), int(argv[3])
    tokens, model, state = warm_state(corpus, K, warm, doc_counts=True)
    row = np.zeros(K, dtype=np.int64)
    asym = model.alpha.copy()
    asym[0] *= 1.5
    beta = float(model.beta)
    for name, mod in (("base", base), ("tree", tree)):
        v = mod.collapsed_log_joint_assignments(tokens.doc_ptr, state.z, state.n_wk, state.n_k, model.alpha, beta, row)
        times = []
        for _ in range(3):
            c = time.process_time()
            mod.collapsed_log_joint_assignments(tokens.doc_ptr, state.z, state.n_wk, state.n_k, model.alpha, beta, row)
            times.append(time.process_time() - c)
        dense = mod.collapsed_log_joint(state.n_dk, state.n_wk, state.n_k, model.alpha, beta)
        va = mod.collapsed_log_joint_assignments(tokens.doc_ptr, state.z, state.n_wk, state.n_k, asym, beta, row)
        print(f"{corpus}, K = {K}, {name}: from z {v!r}, from n_dk {dense!r}, asymmetric alpha {va!r}; CPU ms "
              f"{[round(1e3 * t, 1) for t in times]}")


if __name__ == "__main__":
    main(sys.argv[1:])
