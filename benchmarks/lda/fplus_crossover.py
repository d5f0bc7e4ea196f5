"""CPU seconds of a SparseLDA and an F+LDA sweep from the same states, against the states' list lengths.

Issue 21. ``sampler="auto"`` runs, each sweep, whichever of the two exact sweeps its cost model
(``harmonium.inference.mcmc.lda.fplus.fplus_is_cheaper``) predicts cheaper, from the token-weighted mean
numbers of non-zero topics of the tokens' words (k_w, what a SparseLDA draw walks) and documents (k_d, what
an F+LDA draw walks). This script measures both costs on the chain's own states: one SparseLDA chain
(alpha = 0.1, beta = 0.01, the time-to-quality benchmark's training split, seed 0) from a random start;
before each of its sweeps, the state is copied twice and one F+LDA sweep and one SparseLDA sweep are timed
on the copies (CPU seconds, order alternating), with the state's exact k_w and k_d. One JSON line a sweep.

    OUT=benchmarks/lda/results/fplus-crossover.jsonl
    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/fplus_crossover.py debian 1000 30 >> $OUT
    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/fplus_crossover.py pypi 1000 8 >> $OUT
    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/fplus_crossover.py pypi 100 30 >> $OUT

``fit FILE``: how much of the records' summed CPU the present rule spends over the cheaper sweep of each
state, and the rule (SPARSE_NS fixed, the other three constants on a grid) that would spend least on them,
with the picks it changes per corpus and K (in-sample, on single timings: an optimistic bound).

    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/fplus_crossover.py fit $OUT
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: _common

import _common as C  # noqa: E402

from harmonium._kernels import lda_fplus  # noqa: E402
from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs  # noqa: E402
from harmonium.inference.mcmc.lda import fplus  # noqa: E402


def main(argv) -> None:
    corpus, K, n_sweeps = argv[0], int(argv[1]), int(argv[2])
    data, tokens, model, rng, state = C.lda_start(corpus, K, 0)
    sweeps = {"fplus": fplus.make_sweep(model, tokens), "sparse": cgs.sparse_sweep(model, tokens)}
    D = tokens.doc_ptr.shape[0] - 1
    N = tokens.words.shape[0]
    row = np.zeros(K, dtype=np.int32)

    def copy(st):
        return cgs.CollapsedGibbsState(st.z.copy(), None, st.n_wk.copy(), st.n_k.copy())

    sweeps["fplus"](np.random.default_rng(1), copy(state), 0, D)  # kernels compiled or loaded off the clock
    for t in range(n_sweeps):
        kw, kd = lda_fplus.sampled_list_lengths(tokens.doc_ptr, tokens.words, state.z, state.n_wk, 1, row)
        copies = {name: copy(state) for name in sweeps}
        cpu = {}
        for name in (("fplus", "sparse") if t % 2 == 0 else ("sparse", "fplus")):
            c0 = time.process_time()
            sweeps[name](np.random.default_rng(100 + t), copies[name], 0, D)
            cpu[name] = time.process_time() - c0
        print(json.dumps({"corpus": corpus, "K": K, "sweep": t + 1,
                          "k_w": round(float(kw), 1), "k_d": round(float(kd), 1),
                          "fplus_s": round(cpu["fplus"], 3), "sparse_s": round(cpu["sparse"], 3),
                          "fplus_ns_per_token": round(1e9 * cpu["fplus"] / N, 1),
                          "sparse_ns_per_token": round(1e9 * cpu["sparse"] / N, 1),
                          "rule_picks": "fplus" if fplus.fplus_is_cheaper(kw, kd) else "sparse"}), flush=True)
        state = copies["sparse"]  # the chain goes on with the SparseLDA sweep


def fit_rule(path) -> None:
    records = [r for r in map(json.loads, Path(path).read_text().splitlines()) if "k_w" in r]
    cells = sorted({(r["corpus"], r["K"]) for r in records})

    def picks(rule, r):
        """Whether ``rule`` (SPARSE_NS, SPARSE_NS_PER_WORD_TOPIC, FPLUS_NS, FPLUS_NS_PER_DOC_TOPIC) picks F+LDA."""
        a, b, c, d = rule
        return c + d * r["k_d"] < a + b * r["k_w"]

    def spend(rule, rs):
        return sum(r["fplus_s"] if picks(rule, r) else r["sparse_s"] for r in rs)

    now = (fplus.SPARSE_NS, fplus.SPARSE_NS_PER_WORD_TOPIC, fplus.FPLUS_NS, fplus.FPLUS_NS_PER_DOC_TOPIC)
    grid = [(now[0], b, c, d) for b in np.arange(0.8, 2.41, 0.1) for c in np.arange(50, 451, 25)
            for d in np.arange(0.0, 3.01, 0.25)]
    best = min(grid, key=lambda g: spend(g, records))
    oracle = sum(min(r["fplus_s"], r["sparse_s"]) for r in records)
    print(f"{len(records)} sweeps; present rule {now}: {spend(now, records):.2f} CPU s; best on the grid "
          f"{tuple(round(float(x), 2) for x in best)}: {spend(best, records):.2f}; "
          f"the cheaper sweep each time {oracle:.2f}")
    print("| corpus, K | sweeps | present rule | best rule | cheaper each time | picks changed |")
    print("|---|---|---|---|---|---|")
    for cell in cells:
        rs = [r for r in records if (r["corpus"], r["K"]) == cell]
        changed = sum(picks(now, r) != picks(best, r) for r in rs)
        print(f"| {cell[0]}, {cell[1]} | {len(rs)} | {spend(now, rs):.2f} | {spend(best, rs):.2f} | "
              f"{sum(min(r['fplus_s'], r['sparse_s']) for r in rs):.2f} | {changed} |")


if __name__ == "__main__":
    if sys.argv[1:2] == ["fit"]:
        fit_rule(sys.argv[2])
    else:
        main(sys.argv[1:])
