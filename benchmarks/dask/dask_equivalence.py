"""Held-out perplexity of AD-LDA over shards against the single-process collapsed sampler.

Debian (4,000 documents, 80/20 split), K = 10, 100 sweeps, seeds 0..7; document completion
(harmonium.evaluation) scores every run on the same held-out tokens. The sharded runs use
``n_shards`` in-process (bit-identical to a LocalCluster run with the same seed and shards, as
tests/integration/test_dask.py checks); ``--cluster`` runs seed 0 on a two-worker LocalCluster too.

    .venv/bin/python benchmarks/dask/dask_equivalence.py --out benchmarks/dask/results/dask-equivalence.jsonl
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from harmonium.corpus import train_test_split
from harmonium.datasets import load_debian
from harmonium.estimators.lda import LDA


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--shards", default="2,4,8")
    ap.add_argument("--cluster", action="store_true")
    ap.add_argument("--out", default="benchmarks/dask/results/dask-equivalence.jsonl")
    args = ap.parse_args()
    train, test = train_test_split(load_debian(n_docs=4000), 0.2, random_state=0)
    train = train.drop_empty()
    rows = []

    def record(kind, seed, shards, est, t0):
        r = {"kind": kind, "seed": seed, "n_shards": shards, "perplexity": est.completion_perplexity(test).perplexity,
             "fit_s": time.perf_counter() - t0, "n_docs": train.n_docs, "n_tokens": train.n_tokens}
        rows.append(r)
        print(r, flush=True)

    for s in range(args.seeds):
        t0 = time.perf_counter()
        record("serial", s, 1, LDA(10, n_iter=100, random_state=s).fit(train), t0)
        for p in (int(x) for x in args.shards.split(",")):
            t0 = time.perf_counter()
            record("adlda", s, p, LDA(10, n_iter=100, inference="parallel_gibbs", random_state=s).fit(
                train, n_shards=p), t0)
    if args.cluster:
        from distributed import Client, LocalCluster

        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                          dashboard_address=None, silence_logs=40) as cluster, Client(cluster) as client:
            t0 = time.perf_counter()
            record("adlda-cluster", 0, 2, LDA(10, n_iter=100, inference="parallel_gibbs", random_state=0).fit(
                train, client=client), t0)
    with open(args.out, "a") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    serial = np.mean([r["perplexity"] for r in rows if r["kind"] == "serial"])
    for p in sorted({r["n_shards"] for r in rows if r["kind"] == "adlda"}):
        v = [r["perplexity"] for r in rows if r["kind"] == "adlda" and r["n_shards"] == p]
        print(f"P={p}: mean {np.mean(v):.2f} vs serial {serial:.2f}: {100 * (np.mean(v) / serial - 1):+.2f}%")


if __name__ == "__main__":
    main()
