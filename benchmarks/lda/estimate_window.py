"""The default estimate's window: phi averaged over the last share of a chain's sweeps against its last state.

Issue 21. One SparseLDA chain (alpha = 0.1, beta = 0.01, the benchmark's training split), scored by the
benchmark's own document completion (``_common.heldout_perplexity``, theta from 50 fixed-topics sweeps).
At each sweep count in EVALS the current state's phi is scored, and so is the Rao-Blackwellised average
of (n_wk + beta) / (n_k + V beta) over the sweeps (n - round(n * share), n], every THIN-th, for each
share in SHARES and thin in THINS (key ``b{share}t{thin}n{samples}``). The windows end on sweep n, as
``harmonium.inference.mcmc.lda.estimates.default_burn_in`` places them (the records of 2026-11-27 were
made before this placement: where round(n * share) was not a multiple of thin, their last sample fell
1-4 sweeps before n; benchmarks/lda/README.md "The default estimate" marks those).

    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/estimate_window.py CORPUS K SEED EVALS SHARES THINS
    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/estimate_window.py debian 100 1 150,200,250 0.1,0.2 1,5
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: _common

import _common as C  # noqa: E402

from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs  # noqa: E402
from harmonium.models.directed.lda import topic_word_mean  # noqa: E402

ALPHA, BETA = 0.1, 0.01


def main(argv):
    corpus, K, seed = argv[0], int(argv[1]), int(argv[2])
    evals = [int(x) for x in argv[3].split(",")]
    fracs = [float(x) for x in argv[4].split(",")]
    thins = [int(x) for x in argv[5].split(",")]
    data, tokens, model, rng, state = C.lda_start(corpus, K, seed, alpha=ALPHA, beta=BETA)
    kernel = cgs.build_kernel(sampler="sparse", compute_log_joint=False)
    dt = np.float64 if K <= 100 else np.float32
    acc = {}
    for s in evals:
        for f in fracs:
            width = int(round(s * f))
            for t in thins:
                if width // t >= 2 or t == 1:
                    b = s - t * (width // t)  # the samples b + t, ..., s end on sweep s, as default_burn_in's
                    acc[(s, f, t)] = [b, np.zeros((K, data.train.n_words), dt), 0]

    def score(phi):
        return round(C.heldout_perplexity(C.check_phi(phi, K, data.corpus.n_words), ALPHA, data, n_iter=50), 1)

    for it in range(1, max(evals) + 1):
        state, _ = kernel(rng, state, tokens, model)
        phi = None
        for key, a in acc.items():
            s, f, t = key
            if a[0] < it <= s and (it - a[0]) % t == 0:
                phi = topic_word_mean(state.n_wk, state.n_k, model.beta) if phi is None else phi
                a[1] += phi
                a[2] += 1
        if it in evals:
            phi = topic_word_mean(state.n_wk, state.n_k, model.beta)
            row = {"corpus": corpus, "K": K, "seed": seed, "sweep": it, "state": score(phi)}
            for key, a in list(acc.items()):
                if key[0] == it:
                    row[f"b{key[1]}t{key[2]}n{a[2]}"] = score((a[1] / a[2]).astype(np.float64))
                    del acc[key]
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
