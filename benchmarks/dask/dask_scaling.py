"""Scale-out benchmark: AD-LDA and batch VB on one process, two threads, and a two-worker Dask LocalCluster.

Corpus: the PyPI summaries prepared as an on-disk harmonium corpus (713,025
documents, 4.51M tokens, V = 37,408; /tmp/vi-pypi/train, built by the VI
benchmark from /work/shared/corpora/pypi-summaries.tsv.gz), and optionally an
8x replicated copy of it (built here with build_ondisk_corpus, chunk by chunk).

Configurations (each in its own subprocess, so that peak memory is its own):

* ``serial``: LDA(inference="collapsed_gibbs"), SparseLDA, one thread, on the memory-mapped corpus;
* ``threads2``: LDA(inference="parallel_gibbs", n_jobs=2): AD-LDA over two threads;
* ``dask2``: LDA(inference="parallel_gibbs").fit(path, client=...) on a LocalCluster of two worker
  processes (one thread each) on 127.0.0.1: AD-LDA with the shards read by the workers;
* ``vb-serial`` / ``vb-dask2``: batch VB, one process vs the distributed E-step.

Measured per sweep: seconds (hence tokens/s), bytes moved (payload of the local
steps' arguments and results as counted by ShardedRun, and the loopback
interface's byte counter from /proc/net/dev, which includes Dask's own
framing, heartbeats and both directions), peak RSS of every process
(ru_maxrss: the driver, and each worker).

    .venv/bin/python benchmarks/dask/dask_scaling.py --sweeps 8 --repeats 2 \
        --out benchmarks/dask/results/dask-pypi.jsonl
    .venv/bin/python benchmarks/dask/dask_scaling.py --replicate 8 --sweeps 3 --repeats 1 --configs serial,dask2 \
        --out benchmarks/dask/results/dask-pypi8x.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from _common import git_revision, machine, run_in_subprocess, wait_quiet  # noqa: E402

PREPARED = "/tmp/vi-pypi/train"


def _lo_bytes() -> int:
    with open("/proc/net/dev") as f:
        for line in f:
            name, _, rest = line.partition(":")
            if name.strip() == "lo":
                v = rest.split()
                return int(v[0])  # received (on loopback every byte is also counted once as transmitted)
    return 0


def _cpu_s() -> float:
    """CPU seconds (user + system) of this process so far: what a run costs whatever the machine's load."""
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def replicate(src: str, dst: str, times: int) -> str:
    """An on-disk corpus holding ``times`` copies of ``src`` (built one copy at a time)."""
    from harmonium.corpus.ondisk import build_ondisk_corpus, open_ondisk_corpus

    if os.path.exists(os.path.join(dst, "manifest.json")):
        return dst
    base = open_ondisk_corpus(src, verify=False)
    m = base.counts

    def chunks():
        import scipy.sparse as sp

        for _ in range(times):
            yield sp.csr_matrix((np.asarray(m.data), np.asarray(m.indices), np.asarray(m.indptr)), shape=m.shape)

    build_ondisk_corpus(chunks(), dst, base.vocabulary, overwrite=True)
    return dst


def worker(cfg: dict) -> dict:
    from harmonium.corpus.ondisk import open_ondisk_corpus
    from harmonium.estimators import _lda_dask
    from harmonium.estimators.lda import LDA

    path, K, sweeps = cfg["path"], cfg["K"], cfg["sweeps"]
    vb = cfg["config"].startswith("vb")
    inference = "vb" if vb else ("parallel_gibbs" if cfg["config"] in ("threads2", "dask2") else "collapsed_gibbs")
    est = LDA(K, inference=inference, n_iter=sweeps, burn_in=sweeps, evaluate_every=10**6, random_state=cfg["seed"],
              n_jobs=2 if cfg["config"] == "threads2" else 1, max_doc_iter=50)
    marks = []

    def cb(it, n, info):
        marks.append((time.perf_counter(), _lo_bytes()))

    out = {**cfg}
    marks.append((time.perf_counter(), _lo_bytes()))
    if cfg["config"].endswith("dask2"):
        from distributed import Client, LocalCluster

        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                          dashboard_address=None, silence_logs=40) as cluster, Client(cluster) as client:
            out["worker_rss_before_mib"] = {k: v / 2**20 for k, v in client.run(
                lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024).items()}
            cpu0 = client.run(_cpu_s)
            t0 = time.perf_counter()
            _lda_dask.fit(est, path, client, callback=cb, doc_topic=False)
            out["fit_s"] = time.perf_counter() - t0
            cpu1 = client.run(_cpu_s)
            out["worker_cpu_s"] = sorted(cpu1[k] - cpu0[k] for k in cpu0)
            st = est.dask_stats_
            out["worker_peak_rss_mib"] = sorted(v / 2**20 for v in st["peak_rss_bytes"].values())
            out["payload_sent_per_sweep"] = st["bytes_sent"]
            out["payload_received_per_sweep"] = st["bytes_received"]
            out["n_changed_per_sweep"] = st.get("n_changed")
    else:
        corpus = open_ondisk_corpus(path, verify=False)
        cpu0 = _cpu_s()
        t0 = time.perf_counter()
        est.fit(corpus, callback=cb)
        out["fit_s"] = time.perf_counter() - t0
        out["process_cpu_s"] = _cpu_s() - cpu0
    times = np.diff([m[0] for m in marks])
    lo = np.diff([m[1] for m in marks])
    n_tokens = int(open_ondisk_corpus(path, verify=False).counts.data.sum(dtype=np.int64))
    out.update(n_tokens=n_tokens, sweep_s=times.tolist(), loopback_bytes_per_sweep=lo.tolist(),
               driver_peak_rss_mib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
               tokens_per_s_median_after_first=float(n_tokens / np.median(times[1:])) if len(times) > 1 else None)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--_worker", nargs=2)
    ap.add_argument("--path", default=PREPARED)
    ap.add_argument("--replicate", type=int, default=1)
    ap.add_argument("--K", type=int, default=100)
    ap.add_argument("--sweeps", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--configs", default="serial,threads2,dask2")
    ap.add_argument("--out", default="benchmarks/dask/results/dask-pypi.jsonl")
    args = ap.parse_args()
    if args._worker:
        cfg = json.load(open(args._worker[0]))
        res = worker(cfg)
        with open(args._worker[1], "w") as f:
            json.dump(res, f)
        return
    path = args.path
    if args.replicate > 1:
        path = replicate(args.path, f"{args.path}-x{args.replicate}", args.replicate)
    meta = {"machine": machine(), "git": git_revision(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))}
    for rep in range(args.repeats):
        for config in args.configs.split(","):
            quiet = wait_quiet(0.5, 20)
            cfg = {"config": config, "path": path, "replicate": args.replicate, "K": args.K, "sweeps": args.sweeps,
                   "seed": rep, "threads": 2 if config == "threads2" else 1, "repeat": rep}
            res = run_in_subprocess(cfg, 3000, os.path.abspath(__file__))
            res.update(quiet, **meta)
            with open(args.out, "a") as f:
                f.write(json.dumps(res) + "\n")
            print(config, rep, {k: res.get(k) for k in ("tokens_per_s_median_after_first", "fit_s",
                                                         "worker_peak_rss_mib", "driver_peak_rss_mib",
                                                         "other_busy_cores", "error")}, flush=True)


if __name__ == "__main__":
    main()
