"""How ``LDA.fit(X, client=...)`` trains on a Dask cluster (see docs/guides/scale-out.md).

``inference="parallel_gibbs"`` runs AD-LDA (:mod:`harmonium.inference.mcmc.lda.dask_gibbs`);
``"vb"`` and ``"online_vb"`` run variational LDA with a distributed E-step
(:mod:`harmonium.inference.vi.lda_dask_vb`). The corpus is an on-disk corpus
directory (:func:`harmonium.corpus.ondisk.build_ondisk_corpus`) that every
worker can read: a path, or a Corpus opened from one. An in-memory Corpus is
first written to a temporary directory (workers on other machines cannot read
that: use a shared file system path there). ``client=None`` with ``n_shards``
runs the same local steps in this process (the reference for tests).

A lost worker (killed, crashed) makes the driver rebuild every shard from the
last checkpoint on the workers still there and go on (``max_recoveries``
times); without ``checkpoint_path`` the error is raised.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from contextlib import contextmanager

import numpy as np

from harmonium.corpus.corpus import Corpus
from harmonium.corpus.ondisk import build_ondisk_corpus, open_ondisk_corpus
from harmonium.errors import InvalidParameterError
from harmonium.estimators._base import as_corpus
from harmonium.inference.mcmc.lda.dask_gibbs import ADLDADriver
from harmonium.inference.mcmc.lda.estimates import keep_sample
from harmonium.io import load_checkpoint
from harmonium.models.directed.lda import make_model
from harmonium.parallel.dask_shards import ShardedRun, WorkerLost, plan_shards
from harmonium.parallel.seeds import check_random_state

DASK_INFERENCE = ("parallel_gibbs", "vb", "online_vb")
MAX_RECOVERIES = 3


def _ondisk_path(X, tmp_holder: list, where: str = "LDA.fit") -> str:
    """The directory of an on-disk corpus for ``X`` (written to a temporary directory if in memory)."""
    if isinstance(X, (str, os.PathLike)):
        return os.path.abspath(os.fspath(X))
    if isinstance(X, Corpus):
        filename = getattr(X.counts.data, "filename", None)
        if filename is not None and os.path.exists(os.path.join(os.path.dirname(filename), "manifest.json")):
            return os.path.dirname(os.path.abspath(filename))
    corpus = as_corpus(X, where)
    tmp = tempfile.mkdtemp(prefix="harmonium-shards-")
    tmp_holder.append(tmp)
    build_ondisk_corpus([corpus], tmp, corpus.vocabulary)
    return tmp


@contextmanager
def sharded_run(est, X, client, n_shards: int, where: str = "LDA.fit"):
    """``(run, path)``: ``X`` as an on-disk corpus at ``path`` (a temporary copy unless it is one) and the
    :class:`ShardedRun` of its ``n_shards`` shards on ``client``'s cluster.

    When the block completes, ``est.dask_stats_["peak_rss_bytes"]`` gets the workers' peak memory; always, the
    run is closed and the temporary copy removed.
    """
    tmp: list = []
    try:
        path = _ondisk_path(X, tmp, where)
        run = ShardedRun(client, plan_shards(path, n_shards))
        try:
            yield run, path
            est.dask_stats_["peak_rss_bytes"] = run.peak_rss()
        finally:
            run.close()
    finally:
        for d in tmp:
            shutil.rmtree(d, ignore_errors=True)


def ondisk_fingerprint(path: str) -> dict:
    """:meth:`Corpus.fingerprint` ``("lengths")`` of the on-disk corpus at ``path`` (indptr only: cheap at any size)."""
    return open_ondisk_corpus(path, verify=False).fingerprint("lengths")


def _check(est, client, n_shards, sync_every) -> int:
    if est.inference not in DASK_INFERENCE:
        raise InvalidParameterError(
            f"LDA.fit(client=...) supports inference in {DASK_INFERENCE}; got inference={est.inference!r}. "
            "Use inference='parallel_gibbs' for the distributed Gibbs sampler (AD-LDA).")
    if est.optimize_interval:
        raise InvalidParameterError("LDA.fit(client=...) keeps the priors fixed: set optimize_interval=0.")
    if isinstance(sync_every, bool) or not isinstance(sync_every, (int, np.integer)) or sync_every < 1:
        raise InvalidParameterError(f"The 'sync_every' parameter of LDA.fit must be an int >= 1. Got {sync_every!r}.")
    if n_shards is None:
        if client is None:
            raise InvalidParameterError("LDA.fit with client=None needs n_shards (the in-process reference run).")
        n_shards = len(client.scheduler_info()["workers"])
    if isinstance(n_shards, bool) or not isinstance(n_shards, (int, np.integer)) or n_shards < 1:
        raise InvalidParameterError(f"The 'n_shards' parameter of LDA.fit must be an int >= 1. Got {n_shards!r}.")
    return int(n_shards)


def fit(est, X, client, *, n_shards=None, sync_every: int = 1, resume: bool = False, callback=None,
        doc_topic: bool = True):
    """Fit ``est`` (an LDA) on the cluster of ``client``; sets the usual fitted attributes and ``dask_stats_``."""
    n_shards = _check(est, client, n_shards, sync_every)
    with sharded_run(est, X, client, n_shards) as (run, path):
        if est.inference == "parallel_gibbs":
            _fit_adlda(est, run, path, sync_every, resume, callback, doc_topic)
        else:
            from harmonium.estimators._lda_dask_vb import fit_vb

            fit_vb(est, run, path, ondisk_fingerprint(path), resume, callback, doc_topic)
    return est


def _fit_adlda(est, run: ShardedRun, path: str, sync_every: int, resume: bool, callback, want_doc_topic: bool):
    corpus = open_ondisk_corpus(path, verify=False)
    V, K = corpus.n_words, est.n_topics
    model = make_model(K, V, est.doc_topic_prior, est.topic_word_prior)
    fingerprint = ondisk_fingerprint(path)
    params = {**est._json_params(), "n_shards": run.n_shards, "sync_every": sync_every}
    driver = ADLDADriver(run, model, K, sync_every=sync_every, checkpoint_path=est.checkpoint_path, params=params,
                         fingerprint=fingerprint)
    burn_in = est.n_iter // 2 if est.burn_in is None else est.burn_in
    n_steps = -(-est.n_iter // sync_every)
    ckpt = None
    if resume and est.checkpoint_path is not None and os.path.exists(est.checkpoint_path):
        est._check_checkpoint(load_checkpoint(est.checkpoint_path, expected_class="LDA"), fingerprint)
        ckpt = driver.restore()
    if ckpt is not None:
        rng, est.seed_ = ckpt.rng, ckpt.extra.get("seed")
        step0, trace = int(ckpt.iteration), {k: list(v) for k, v in ckpt.trace.items()}
    else:
        rng, est.seed_ = check_random_state(est.random_state, "LDA")
        driver.start(rng)
        step0 = 0
        trace = {k: [] for k in ("iteration", "log_joint", "log_likelihood_per_token", "n_changed", "seconds",
                                 "alpha_sum", "beta")}
    stats = {"bytes_sent": [], "bytes_received": [], "step_seconds": [], "recoveries": 0, "n_shards": run.n_shards,
             "sync_every": sync_every}
    t0 = time.perf_counter() - (trace["seconds"][-1] if trace["seconds"] else 0.0)
    step, recoveries = step0, 0
    while step < n_steps:
        it = min((step + 1) * sync_every, est.n_iter)
        sent, received, ts = run.bytes_sent, run.bytes_received, time.perf_counter()
        try:
            n_changed = driver.step(rng, keep_sample(it, burn_in, est.thin) if sync_every == 1
                                    else it > burn_in and (step + 1) % max(1, est.thin // sync_every) == 0)
            step += 1
            stats["step_seconds"].append(time.perf_counter() - ts)
            stats["bytes_sent"].append(run.bytes_sent - sent)
            stats["bytes_received"].append(run.bytes_received - received)
            stats.setdefault("n_changed", []).append(n_changed)
            stop = bool(callback(it, est.n_iter, n_changed)) if callback is not None else False
            last = stop or step == n_steps
            if it % est.evaluate_every < sync_every or last:
                lj = driver.log_joint()
                for key, value in (("iteration", it), ("log_joint", lj),
                                   ("log_likelihood_per_token", lj / driver.n_tokens), ("n_changed", n_changed),
                                   ("seconds", time.perf_counter() - t0), ("alpha_sum", float(model.alpha.sum())),
                                   ("beta", model.beta)):
                    trace[key].append(value)
            if est.checkpoint_path is not None and (step % max(1, est.checkpoint_every // sync_every) == 0 or last):
                driver.checkpoint(rng, step, trace, {"seed": est.seed_})
        except WorkerLost:
            recoveries += 1
            ckpt = driver.recover(MAX_RECOVERIES - recoveries + 1)
            rng, step = ckpt.rng, int(ckpt.iteration)
            trace = {k: list(v) for k, v in ckpt.trace.items()}
            stats["recoveries"] = recoveries
            continue
        if stop:
            break
    driver.check_invariants()
    est.vocabulary_ = corpus.vocabulary
    est.alpha_, est.beta_ = model.alpha, model.beta
    est.n_samples_ = driver.n_samples
    est.topic_word_ = driver.topic_word()
    est.doc_topic_ = driver.doc_topic() if want_doc_topic else None
    est.topic_word_posterior_ = None
    est.trace_ = trace
    est.rng_state_ = rng.bit_generator.state
    est.n_iter_ = min(step * sync_every, est.n_iter)
    est.n_wk_ = driver.n_wk
    est.dask_stats_ = stats
