"""Where does the WarpLDA-style sampler overtake SparseLDA? Time to a held-out perplexity, by K and document length.

For each corpus and each K, every sampler runs from the same random start
(seed = repeat) for a fixed budget of CPU seconds of sampling; every
``--eval-every`` CPU seconds the chain's point estimate of phi (from the
counts) is scored by document completion on the test documents (the
library's evaluation.completion, theta by 30 fixed-topic Gibbs sweeps);
scoring time is not counted. Repeats alternate the order of the samplers.
One JSON line per evaluation goes to ``--out``.

``--summarize FILE`` reads such lines and prints, for each (corpus, K), the
target perplexity (the highest final perplexity over all runs, so every run
reaches it, and a looser target 2% above it) and each sampler's CPU and wall
seconds to first reach it (min / median / max over repeats).

    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/warp_crossover.py --corpus debian --max-docs 20000 \\
        --topics 100 300 1000 --budget 30 --out benchmarks/lda/results/warp-crossover.jsonl
    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/warp_crossover.py --summarize \\
        benchmarks/lda/results/warp-crossover.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections import defaultdict

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from _common import heldout_perplexity, load_data  # noqa: E402

from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs  # noqa: E402
from harmonium.inference.mcmc.lda import warp as lda_warp  # noqa: E402
from harmonium.models.directed.lda import make_model  # noqa: E402

ALPHA, BETA = 0.1, 0.01


def make_sweep(name: str, model, tokens):
    if name.startswith("warp") and name[4:].isdigit():  # warpN: N MH steps a token and pass
        return lda_warp.make_sweep(model, tokens, mh_steps=int(name[4:]))
    return cgs.SAMPLERS[name](model, tokens)


def run_one(data, K: int, name: str, rep: int, budget: float, eval_every: float, out) -> None:
    tokens = data.train.tokens()
    model = make_model(K, data.train.n_words, ALPHA, BETA)
    rng = np.random.default_rng(rep)
    state = cgs.init(rng, tokens, model)
    sweep = make_sweep(name, model, tokens)
    D = tokens.doc_ptr.shape[0] - 1
    cpu = wall = 0.0
    next_eval = eval_every
    n = 0
    while cpu < budget:
        c0, w0 = time.process_time(), time.perf_counter()
        sweep(rng, state, 0, D)
        cpu += time.process_time() - c0
        wall += time.perf_counter() - w0
        n += 1
        if cpu >= next_eval or cpu >= budget:
            next_eval = cpu + eval_every
            phi = (state.n_wk.T + BETA) / (state.n_k[:, None] + model.n_words * BETA)
            ppl = heldout_perplexity(phi, ALPHA, data, n_iter=30, seed=0)
            rec = {"corpus": data.name, "mean_doc_length": round(data.train.n_tokens / data.train.n_docs, 2),
                   "K": K, "sampler": name, "repeat": rep, "sweep": n, "cpu_s": round(cpu, 3),
                   "wall_s": round(wall, 3), "perplexity": round(ppl, 3)}
            print(json.dumps(rec), file=out, flush=True)
            print(json.dumps(rec), flush=True)


def summarize(path: str) -> None:
    runs = defaultdict(list)
    for line in open(path):
        r = json.loads(line)
        runs[(r["corpus"], r["K"], r["sampler"], r["repeat"])].append(r)
    cells = sorted({(c, k) for c, k, _, _ in runs})
    for corpus, K in cells:
        mine = {key: v for key, v in runs.items() if key[:2] == (corpus, K)}
        final = max(v[-1]["perplexity"] for v in mine.values())
        n_eval = min(len(v) for v in mine.values())
        print(f"{corpus} K={K} median perplexity at the evaluations (CPU s of sampling ~ "
              f"{[round(statistics.median(v[j]['cpu_s'] for v in mine.values()), 1) for j in range(n_eval)]})")
        for s in sorted({key[2] for key in mine}):
            vs = [v for key, v in mine.items() if key[2] == s]
            print(f"  {s:7s} " + " ".join(f"{statistics.median(v[j]['perplexity'] for v in vs):7.1f}"
                                          for j in range(n_eval)))
        for slack in (1.0, 1.02):
            target = final * slack
            print(f"{corpus} K={K} target {target:.1f} ({'highest final' if slack == 1 else '+2%'}; mean doc length "
                  f"{next(iter(mine.values()))[0]['mean_doc_length']})")
            by = defaultdict(list)
            for (_, _, s, _), v in mine.items():
                hit = next((r for r in v if r["perplexity"] <= target), None)
                by[s].append(hit)
            for s, hits in sorted(by.items()):
                if any(h is None for h in hits):
                    print(f"  {s:7s} not reached by every repeat")
                    continue
                cpu = [h["cpu_s"] for h in hits]
                wall = [h["wall_s"] for h in hits]
                sw = [h["sweep"] for h in hits]
                print(f"  {s:7s} cpu s min {min(cpu):6.1f} med {statistics.median(cpu):6.1f} max {max(cpu):6.1f} | "
                      f"wall med {statistics.median(wall):6.1f} | sweeps med {statistics.median(sw):5.0f} "
                      f"| s/sweep {statistics.median(c / n for c, n in zip(cpu, sw, strict=True)):.3f}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", choices=["debian", "pypi"], default="debian")
    ap.add_argument("--max-docs", type=int, default=20000)
    ap.add_argument("--topics", type=int, nargs="+", default=[100, 300, 1000])
    ap.add_argument("--samplers", nargs="+", default=["sparse", "warp"])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--budget", type=float, default=30.0, help="CPU seconds of sampling per run")
    ap.add_argument("--eval-every", type=float, default=3.0, help="CPU seconds of sampling between evaluations")
    ap.add_argument("--out", default="benchmarks/lda/results/warp-crossover.jsonl")
    ap.add_argument("--summarize", metavar="FILE")
    args = ap.parse_args()
    if args.summarize:
        summarize(args.summarize)
        return
    data = load_data(args.corpus, args.max_docs)
    print(json.dumps(data.describe()), flush=True)
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "a") as out:
        for rep in range(args.repeats):
            for K in args.topics:
                order = args.samplers if rep % 2 == 0 else args.samplers[::-1]
                for name in order:
                    run_one(data, K, name, rep, args.budget, args.eval_every, out)


if __name__ == "__main__":
    main()
