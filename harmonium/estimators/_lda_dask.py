"""How ``LDA.fit(X, client=...)`` trains on a Dask cluster (see docs/guides/scale-out.md).

``inference="parallel_gibbs"`` runs AD-LDA (:mod:`harmonium.inference.mcmc.lda.dask_gibbs`);
``"vb"`` and ``"online_vb"`` run variational LDA with a distributed E-step
(:mod:`harmonium.inference.vi.lda_dask_vb`, driven by :mod:`harmonium.estimators._lda_dask_vb`).
The corpus is an on-disk corpus directory (:func:`harmonium.corpus.ondisk.build_ondisk_corpus`)
that every worker can read: a path, or a Corpus opened from one. An in-memory Corpus is
first written to a temporary directory (workers on other machines cannot read
that: use a shared file system path there). ``client=None`` with ``n_shards``
runs the same local steps in this process (the reference for tests).

The loop is the one every fit has: the driver :func:`harmonium.inference.run.run` with the
estimator's :class:`~harmonium.inference.recorder.Recorder` (trace, checkpoints, resume).
A lost worker (killed, crashed) makes the recorder rebuild every shard from the
last checkpoint on the workers still there and go on (``MAX_RECOVERIES``
times); without ``checkpoint_path`` the error is raised.
"""

from __future__ import annotations

import numpy as np

from harmonium.corpus.ondisk import open_ondisk_corpus
from harmonium.errors import InvalidParameterError
from harmonium.estimators._base import as_corpus
from harmonium.inference.mcmc.lda.dask_gibbs import ADLDADriver
from harmonium.inference.mcmc.lda.estimates import default_burn_in, keep_sample
from harmonium.models.directed.lda import make_model
from harmonium.parallel.dask_shards import ShardedRun, metered, n_shards_of, new_stats, ondisk_fingerprint, sharded_run

DASK_INFERENCE = ("parallel_gibbs", "vb", "online_vb")
MAX_RECOVERIES = 3
_TRACE_KEYS = ("iteration", "log_joint", "log_likelihood_per_token", "n_changed", "seconds", "alpha_sum", "beta")


def _check(est, client, n_shards, sync_every) -> int:
    if est.inference not in DASK_INFERENCE:
        raise InvalidParameterError(
            f"LDA.fit(client=...) supports inference in {DASK_INFERENCE}; got inference={est.inference!r}. "
            "Use inference='parallel_gibbs' for the distributed Gibbs sampler (AD-LDA).")
    if est.optimize_interval:
        raise InvalidParameterError("LDA.fit(client=...) keeps the priors fixed: set optimize_interval=0.")
    if isinstance(sync_every, bool) or not isinstance(sync_every, (int, np.integer)) or sync_every < 1:
        raise InvalidParameterError(f"The 'sync_every' parameter of LDA.fit must be an int >= 1. Got {sync_every!r}.")
    return n_shards_of(client, n_shards, "LDA.fit")


def fit(est, X, client, *, n_shards=None, sync_every: int = 1, resume: bool = False, callback=None,
        doc_topic: bool = True):
    """Fit ``est`` (an LDA) on the cluster of ``client``; sets the usual fitted attributes and ``dask_stats_``."""
    n_shards = _check(est, client, n_shards, sync_every)
    with sharded_run(X, client, n_shards, lambda data: as_corpus(data, "LDA.fit")) as (run, path):
        if est.inference == "parallel_gibbs":
            _fit_adlda(est, run, path, sync_every, resume, callback, doc_topic)
        else:
            from harmonium.estimators._lda_dask_vb import fit_vb

            fit_vb(est, run, path, resume, callback, doc_topic)
    est.dask_stats_["peak_rss_bytes"] = run.peak_rss_bytes
    return est


def _fit_adlda(est, run: ShardedRun, path: str, sync_every: int, resume: bool, callback, want_doc_topic: bool):
    """AD-LDA: one recorder step is one merge (``sync_every`` sweeps on every shard)."""
    corpus = open_ondisk_corpus(path, verify=False)
    model = make_model(est.n_topics, corpus.n_words, est.doc_topic_prior, est.topic_word_prior)
    n_iter, s = est.n_iter, sync_every
    user = None if callback is None else (lambda step, _n, info: callback(min(step * s, n_iter), n_iter, info))
    rec = est._recorder(_TRACE_KEYS, resume=resume, callback=user, fingerprint=ondisk_fingerprint(path),
                        n_iter=-(-n_iter // s), params={**est._json_params(), "n_shards": run.n_shards,
                                                        "sync_every": s},
                        checkpoint_every=max(1, est.checkpoint_every // s))
    driver = ADLDADriver(run, model, est.n_topics, sync_every=s, checkpoint_path=est.checkpoint_path)
    if rec.checkpoint is not None:
        driver.restore(rec.checkpoint)
    else:
        driver.start(rec.rng)
    burn_in = default_burn_in(n_iter, est.thin) if est.burn_in is None else est.burn_in
    stats = new_stats(run, sync_every=s)
    done = {"step": rec.start}

    def kernel(rng, drv, _data, _model):
        done["step"] += 1
        step = done["step"]
        it = min(step * s, n_iter)
        keep = keep_sample(it, burn_in, est.thin) if s == 1 else it > burn_in and step % max(1, est.thin // s) == 0
        n_changed = drv.step(rng, keep)
        stats.setdefault("n_changed", []).append(n_changed)
        return drv, n_changed

    def evaluate(step, drv, n_changed):
        lj = drv.log_joint()
        return {"iteration": min(step * s, n_iter), "log_joint": lj, "log_likelihood_per_token": lj / drv.n_tokens,
                "n_changed": n_changed, "alpha_sum": float(model.alpha.sum()), "beta": model.beta}

    def recover(ckpt):
        done["step"] = int(ckpt.iteration)
        return driver.recover(ckpt)

    _, last = rec.drive(metered(kernel, run, stats), driver, None, model, evaluate=evaluate,
                        evaluate_due=lambda step: min(step * s, n_iter) % est.evaluate_every < s,
                        checkpoint=lambda step, drv: drv.checkpoint(step, rec.save), recover=recover,
                        max_recoveries=MAX_RECOVERIES)
    driver.check_invariants()
    est.vocabulary_ = corpus.vocabulary
    est.alpha_, est.beta_ = model.alpha, model.beta
    est.n_samples_ = driver.n_samples
    est.topic_word_ = driver.topic_word()
    est.doc_topic_ = driver.doc_topic() if want_doc_topic else None
    est.topic_word_posterior_ = None
    est.n_wk_ = driver.n_wk
    est._finish_fit(rec, min(last * s, n_iter))
    est.dask_stats_ = {**stats, "recoveries": rec.recoveries}
