"""Throughput of the plain O(K) collapsed Gibbs kernel on the bundled Debian corpus.

The reference point for the fast samplers of the sampling issue. Only harmonium
runs here; the peer comparison (tomotopy, topica, lda) belongs to that issue.

    .venv/bin/python benchmarks/lda/lda_gibbs_baseline.py [--topics 20 100] [--sweeps 5] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from harmonium.datasets import load_debian
from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs
from harmonium.models.directed.lda import make_model


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--topics", type=int, nargs="+", default=[20, 100])
    ap.add_argument("--sweeps", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    t0 = time.perf_counter()
    corpus = load_debian()
    print(f"load_debian: {time.perf_counter() - t0:.2f} s, {corpus}")
    tokens = corpus.tokens()
    n = tokens.words.shape[0]
    kernel = cgs.build_kernel(compute_log_joint=False)
    for K in args.topics:
        model = make_model(K, corpus.n_words, 0.1, 0.01)
        rates = []
        for rep in range(args.repeats):
            rng = np.random.default_rng(rep)
            state = cgs.init(rng, tokens, model)
            kernel(rng, state, tokens, model)  # compile / warm up
            t = time.perf_counter()
            for _ in range(args.sweeps):
                kernel(rng, state, tokens, model)
            rates.append(n * args.sweeps / (time.perf_counter() - t))
        print(f"K={K}: tokens/s (1 thread) min {min(rates) / 1e6:.2f}M median {statistics.median(rates) / 1e6:.2f}M "
              f"max {max(rates) / 1e6:.2f}M over {args.repeats} repeats of {args.sweeps} sweeps")


if __name__ == "__main__":
    main()
