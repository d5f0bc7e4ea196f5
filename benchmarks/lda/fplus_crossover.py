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

``fit FILE``: the cost model fitted by least squares to the records (the ones with ``docs_per_token``), and the CPU
seconds the present rule, the fitted one and, per corpus, the one fitted on the other corpora spend on them,
against the cheaper sweep of each state (in-sample, on single timings: an optimistic bound).

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

    for sweep in sweeps.values():  # both kernels compiled or loaded off the clock
        sweep(np.random.default_rng(1), copy(state), 0, D)
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
                          "docs_per_token": round(D / N, 6),
                          "rule_picks": "fplus" if fplus.fplus_is_cheaper(kw, kd, D / N, K) else "sparse"}),
              flush=True)
        state = copies["sparse"]  # the chain goes on with the SparseLDA sweep


def rule_features(records) -> tuple:
    """The cost model's features (``fplus.fplus_is_cheaper``) of each record: SparseLDA's (1, k_w, D / N) and
    F+LDA's (1, k_d, log2 K) rows, and the measured ns a token of each."""
    sparse_x = np.array([(1.0, r["k_w"], r["docs_per_token"]) for r in records])
    fplus_x = np.array([(1.0, r["k_d"], np.log2(r["K"])) for r in records])
    return (sparse_x, fplus_x, np.array([r["sparse_ns_per_token"] for r in records]),
            np.array([r["fplus_ns_per_token"] for r in records]))


def fit_rule(path) -> None:
    """The cost model fitted by least squares to the records of ``path`` (those with ``docs_per_token``); the CPU
    seconds each rule spends on them (the present one, the fitted one, the fit of the other corpora held out on
    each corpus) against the cheaper sweep of each state (in-sample, on single timings: an optimistic bound)."""
    records = [r for r in map(json.loads, Path(path).read_text().splitlines()) if "docs_per_token" in r]
    cells = sorted({(r["corpus"], r["K"]) for r in records})
    sparse_x, fplus_x, sparse_ns, fplus_ns = rule_features(records)
    sparse_s = np.array([r["sparse_s"] for r in records])
    fplus_s = np.array([r["fplus_s"] for r in records])

    def fit(rows):
        a = np.linalg.lstsq(sparse_x[rows], sparse_ns[rows], rcond=None)[0]
        b = np.linalg.lstsq(fplus_x[rows], fplus_ns[rows], rcond=None)[0]
        return a, b

    def spend(picks, rows):
        return float(np.where(picks, fplus_s, sparse_s)[rows].sum())

    present = np.array([fplus.fplus_is_cheaper(r["k_w"], r["k_d"], r["docs_per_token"], r["K"]) for r in records])
    # the rule of 2026-11-27 (no per-document term, no K): SparseLDA 70 + 1.6 k_w, F+LDA 150 + 3 k_d
    before = np.array([150 + 3 * r["k_d"] < 70 + 1.6 * r["k_w"] for r in records])
    a, b = fit(np.ones(len(records), dtype=bool))
    fitted = fplus_x @ b < sparse_x @ a
    every = np.ones(len(records), dtype=bool)
    print(f"{len(records)} sweeps; fitted: SparseLDA {a[0]:.1f} + {a[1]:.2f} k_w + {a[2]:.1f} D/N ns a token, F+LDA "
          f"{b[0]:.1f} + {b[1]:.2f} k_d + {b[2]:.1f} log2 K; CPU s spent: rule before {spend(before, every):.2f}, "
          f"present rule {spend(present, every):.2f}, "
          f"fitted {spend(fitted, every):.2f}, the cheaper sweep each time {np.minimum(sparse_s, fplus_s).sum():.2f}")
    print("| corpus, K | sweeps | rule before | present rule | fitted | fitted without this corpus | "
          "cheaper each time | F+LDA sweeps (before / present) |")
    print("|---|---|---|---|---|---|---|---|")
    for cell in cells:
        rows = np.array([(r["corpus"], r["K"]) == cell for r in records])
        ha, hb = fit(np.array([r["corpus"] != cell[0] for r in records]))
        held = fplus_x @ hb < sparse_x @ ha
        print(f"| {cell[0]}, {cell[1]} | {int(rows.sum())} | {spend(before, rows):.2f} | {spend(present, rows):.2f} | "
              f"{spend(fitted, rows):.2f} | {spend(held, rows):.2f} | "
              f"{np.minimum(sparse_s, fplus_s)[rows].sum():.2f} | "
              f"{int(before[rows].sum())} / {int(present[rows].sum())} |")


if __name__ == "__main__":
    if sys.argv[1:2] == ["fit"]:
        fit_rule(sys.argv[2])
    else:
        main(sys.argv[1:])
