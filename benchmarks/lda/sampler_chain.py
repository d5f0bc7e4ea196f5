"""One chain of an LDA sampler on a benchmark corpus: held-out perplexity of the state and CPU seconds of
the sweeps at given sweep counts (issue 21: auto's F+LDA sweeps against SparseLDA's, seed by seed).

alpha = 0.1, beta = 0.01, the time-to-quality benchmark's training split, random start from SEED, the
sweep of ``collapsed_gibbs.SAMPLERS[SAMPLER]``; scored by ``_common.heldout_perplexity`` (document
completion, theta from 50 fixed-topics sweeps). ``fplus_sweeps``: how many of the sweeps so far were
F+LDA sweeps (auto only).

    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/sampler_chain.py debian 1000 1 auto 20,40,60

Records of 2026-11-27: results/sampler-chains.jsonl (seed 0 at 10, 20, 40, 60 sweeps; seeds 1 and 2 at
20, 40, 60; each auto chain ran beside the sparse chain of the same seed, one a vCPU).
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: _common

import _common as C  # noqa: E402

from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs  # noqa: E402
from harmonium.models.directed.lda import topic_word_mean  # noqa: E402

ALPHA, BETA = 0.1, 0.01


def main(argv) -> None:
    corpus, K, seed, sampler = argv[0], int(argv[1]), int(argv[2]), argv[3]
    evals = [int(x) for x in argv[4].split(",")]
    data, tokens, model, rng, state = C.lda_start(corpus, K, seed, alpha=ALPHA, beta=BETA)
    sweep = cgs.SAMPLERS[sampler](model, tokens)
    D = tokens.doc_ptr.shape[0] - 1
    cpu = 0.0
    for it in range(1, max(evals) + 1):
        t0 = time.process_time()
        sweep(rng, state, 0, D)
        cpu += time.process_time() - t0
        if it in evals:
            phi = topic_word_mean(state.n_wk, state.n_k, model.beta)
            ppl = round(C.heldout_perplexity(C.check_phi(phi, K, data.corpus.n_words), ALPHA, data, n_iter=50), 1)
            choices = getattr(sweep, "choices", None)
            print(json.dumps({"sampler": sampler, "corpus": corpus, "K": K, "seed": seed, "sweep": it, "ppl": ppl,
                              "cpu": round(cpu, 2),
                              "fplus_sweeps": None if choices is None else choices.count("fplus")}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
