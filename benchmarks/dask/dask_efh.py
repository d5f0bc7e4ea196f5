"""Data-parallel CD for harmoniums on Dask: seconds per epoch and held-out quality, 1 process vs 2 Dask workers.

Data: the Debian binary occurrence matrix on the 2,000 most frequent words (as ``efh_peers.py rbm``),
90 % for training (``train_test_split``, seed 0), written once as an on-disk corpus that every
configuration reads. Model: ``EFH(n_hidden=100, learning="pcd", batch_size=B, learning_rate=0.05)``.

Configurations (each in its own subprocess, ``threads`` BLAS/numba threads per process):

* ``serial``: ``EFH.fit(corpus)`` in one process (the fused PCD-1 kernel when momentum and weight
  decay are 0);
* ``sharded2``: ``EFH.fit(path, n_shards=2)``: the distributed algorithm's local steps run in this
  process one after the other (the reference a cluster reproduces bit for bit);
* ``dask2``: ``EFH.fit(path, client=...)`` on a LocalCluster of two worker processes (one thread each)
  on 127.0.0.1, started inside the subprocess.

Measured: seconds per epoch (median over epochs 2..E: the first includes numba compilation on fresh
workers), bytes moved per epoch (payload counted by ShardedRun), peak RSS of the workers, and the
mean held-out log-likelihood of the test rows with log Z by our AIS (``efh_peers._ais_quality``).

    OPENBLAS_NUM_THREADS=1 nice -n 10 .venv/bin/python benchmarks/dask/dask_efh.py --epochs 4 --batch-size 100 \\
        --out benchmarks/dask/results/dask-efh-debian.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import _common as C  # noqa: E402
import numpy as np  # noqa: E402

CONFIGS = ("serial", "sharded2", "dask2")


def _worker(cfg: dict) -> dict:
    from harmoniums.efh_peers import _ais_quality, _binary

    from harmonium.corpus.ondisk import open_ondisk_corpus
    from harmonium.estimators.efh import EFH

    path = cfg["path"]
    train = open_ondisk_corpus(path)
    test = np.load(cfg["test"])
    import scipy.sparse as sp

    test = sp.csr_matrix((test["data"], test["indices"], test["indptr"]), shape=tuple(test["shape"]))
    est = EFH(n_hidden=100, learning="pcd", batch_size=cfg["batch_size"], n_iter=cfg["epochs"], learning_rate=0.05,
              evaluate_every=0, random_state=cfg["seed"])
    stamps = []

    def cb(it, n, info):
        stamps.append(info.seconds)

    out = {}
    t0 = time.perf_counter()
    if cfg["config"] == "serial":
        est.fit(train, callback=cb)
    elif cfg["config"] == "sharded2":
        est.fit(path, n_shards=2, callback=cb)
    else:
        from distributed import Client, LocalCluster

        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                          dashboard_address=None, silence_logs=40) as cluster, Client(cluster) as client:
            t0 = time.perf_counter()
            est.fit(path, client=client, callback=cb)
    out["fit_s"] = time.perf_counter() - t0
    out["epoch_s"] = stamps
    out["per_epoch_s"] = statistics.median(stamps[1:] or stamps)
    stats = getattr(est, "dask_stats_", None)
    if stats is not None:
        out["bytes_sent_per_epoch"] = stats["bytes_sent"]
        out["bytes_received_per_epoch"] = stats["bytes_received"]
        out["peak_rss_mib"] = {k: v / 2**20 for k, v in stats["peak_rss_bytes"].items()}
    out["driver_maxrss_mib"] = C.maxrss_mib()
    xtr = _binary(train.counts)
    W, b, c = est.model_.W(0), est.model_.params["v:0:bias"], est.model_.params["h:bias"]
    out.update(_ais_quality(np.ascontiguousarray(W, dtype=np.float64), np.asarray(b, np.float64),
                            np.asarray(c, np.float64), xtr, _binary(test), cfg["ais_runs"], cfg["ais_temperatures"]))
    return {**cfg, **out}


def main() -> None:
    a = argparse.ArgumentParser()
    a.add_argument("--epochs", type=int, default=4)
    a.add_argument("--batch-size", type=int, default=100)
    a.add_argument("--configs", default=",".join(CONFIGS))
    a.add_argument("--seed", type=int, default=0)
    a.add_argument("--threads", type=int, default=1)
    a.add_argument("--ais-runs", type=int, default=50)
    a.add_argument("--ais-temperatures", type=int, default=2000)
    a.add_argument("--out")
    a.add_argument("--_worker", nargs=2)
    args = a.parse_args()
    if args._worker:
        cfg = json.load(open(args._worker[0]))
        res = _worker(cfg)
        json.dump(res, open(args._worker[1], "w"))
        return
    if not args.out:
        a.error("--out is required")
    from harmoniums.efh_peers import _debian

    from harmonium.corpus.ondisk import build_ondisk_corpus

    _, train, test = _debian("2000")
    tmp = tempfile.mkdtemp(prefix="dask-efh-")
    path = os.path.join(tmp, "train")
    build_ondisk_corpus([train], path, train.vocabulary)
    t = test.counts.tocsr()
    np.savez(os.path.join(tmp, "test.npz"), data=t.data, indices=t.indices, indptr=t.indptr, shape=np.array(t.shape))
    for config in args.configs.split(","):
        quiet = C.wait_quiet(1.0, 60)
        cfg = {"config": config, "path": path, "test": os.path.join(tmp, "test.npz"), "epochs": args.epochs,
               "batch_size": args.batch_size, "seed": args.seed, "threads": args.threads, "ais_runs": args.ais_runs,
               "ais_temperatures": args.ais_temperatures, "n_train": train.n_docs, "n_test": test.n_docs,
               "n_words": train.n_words}
        res = C.run_in_subprocess(cfg, 1800, os.path.abspath(__file__))
        bench_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        res.update(quiet, machine=C.machine(), git=C.git_revision(bench_dir))
        print(json.dumps({k: res.get(k) for k in ("config", "batch_size", "per_epoch_s", "epoch_s", "test_loglik",
                                                  "log_z_se", "bytes_sent_per_epoch", "peak_rss_mib",
                                                  "other_busy_cores", "error", "stderr_tail")}), flush=True)
        with open(args.out, "a") as f:
            f.write(json.dumps(res) + "\n")


if __name__ == "__main__":
    main()
