"""How ``LDA.fit(X, client=...)`` drives batch and online VB with a distributed E-step.

Local and global steps: :mod:`harmonium.inference.vi.lda_dask_vb`. The driver
holds lambda (V x K); the workers hold their documents and, for batch VB,
their gamma. Checkpoints: batch VB writes each shard's gamma beside the
checkpoint (``<checkpoint>.shards/``), then lambda, the Generator and the
trace; online VB has no per-document state, so its checkpoint is the driver's
alone. A lost worker is recovered from the last checkpoint as for AD-LDA.
"""

from __future__ import annotations

import os
import time

import numpy as np

from harmonium.corpus.ondisk import open_ondisk_corpus
from harmonium.errors import CorpusError, ModelFileError
from harmonium.estimators._lda_vi import RESTART_ITERATIONS, _new_trace, _record
from harmonium.inference.vi import lda_dask_vb as dvb
from harmonium.inference.vi import lda_vb as vb
from harmonium.io import load_checkpoint, save_checkpoint
from harmonium.models.directed.lda import make_model
from harmonium.parallel.dask_shards import WorkerLost
from harmonium.parallel.seeds import check_random_state

MAX_RECOVERIES = 3


def fit_vb(est, run, path: str, fingerprint: dict, resume: bool, callback, want_doc_topic: bool) -> None:
    corpus = open_ondisk_corpus(path, verify=False)
    V, K = corpus.n_words, est.n_topics
    model = make_model(K, V, est.doc_topic_prior, est.topic_word_prior)
    online = est.inference == "online_vb"
    P = run.n_shards
    batch_docs = -(-est.batch_size // P)
    stats = {"bytes_sent": [], "bytes_received": [], "step_seconds": [], "recoveries": 0, "n_shards": P}
    ckpt_path = None if est.checkpoint_path is None else os.fspath(est.checkpoint_path)
    shard_dir = None if ckpt_path is None else ckpt_path + ".shards"
    params = {**est._json_params(), "n_shards": P}

    def place():
        return [out[0] for out in run.place(dvb.shard_open, [(K, batch_docs)] * P)]

    opened = run.place(dvb.shard_open, [(K, batch_docs)] * P)
    ids = [o[0] for o in opened]
    n_tokens = sum(o[1] for o in opened)
    n_docs = corpus.n_docs
    total_docs = est.total_docs or n_docs
    n_steps = est.n_iter * (-(-max(s.hi - s.lo for s in run.specs) // batch_docs)) if online else est.n_iter

    def restore():
        ckpt = load_checkpoint(ckpt_path, expected_class="LDA")
        if ckpt.extra.get("corpus") != fingerprint or ckpt.extra.get("distributed") != est.inference:
            raise ModelFileError(f"{ckpt_path} is not a checkpoint of this distributed {est.inference} run")
        if online:
            st = vb.OnlineVBState(np.array(ckpt.arrays["u_wk"]), float(ckpt.extra["c"]), float(ckpt.extra["b"]),
                                  np.array(ckpt.arrays["usum"]), int(ckpt.extra["t"]))
        else:
            files = [os.path.join(shard_dir, f) for f in ckpt.extra["shards"]]
            rows = run.map(dvb.shard_load_gamma, [(f,) for f in files])
            if sum(rows) != n_docs:
                raise CorpusError(f"{ckpt_path}: the shards' gamma cover {sum(rows)} of {n_docs} documents")
            st = np.array(ckpt.arrays["lam_wk"])
        return ckpt, st

    if resume and ckpt_path is not None and os.path.exists(ckpt_path):
        ckpt, state = restore()
        rng, est.seed_ = ckpt.rng, ckpt.extra.get("seed")
        step, trace = int(ckpt.iteration), {k: list(v) for k, v in ckpt.trace.items()}
    else:
        rng, est.seed_ = check_random_state(est.random_state, "LDA")
        lam = vb.random_lambda(rng, V, K)
        state = vb.online_state_from_lambda(lam, 0) if online else lam
        step, trace = 0, _new_trace()
    next_ids = run.map(dvb.shard_online_ids, [(step + 1,)] * P) if online else None
    t0 = time.perf_counter() - (trace["seconds"][-1] if trace["seconds"] else 0.0)
    recoveries = 0
    while step < n_steps:
        sent, received, ts = run.bytes_sent, run.bytes_received, time.perf_counter()
        try:
            if online:
                colsum = state.c * state.usum + V * state.b
                log_colsum = digamma_row(colsum)
                evaluate = (step + 1) % est.evaluate_every == 0 or step + 1 == n_steps
                outs = run.map(dvb.shard_online_step,
                               [(step + 1, state.c * state.u_wk[next_ids[p]] + state.b, log_colsum, model.alpha,
                                 est.max_doc_iter, est.doc_tol, evaluate) for p in range(P)])
                merged_ids, sstats = dvb.merge_rows([(o[0], o[1]) for o in outs])
                state, rho = dvb.online_apply(state, merged_ids, sstats, sum(o[2] for o in outs), total_docs,
                                              est.learning_offset, est.learning_decay, model.beta)
                next_ids = [o[4] for o in outs]
                change = float("nan")
            else:
                eb = vb.exp_elog_beta(state)
                outs = run.map(dvb.shard_estep, [(eb[ids[p]], model.alpha, step + 1 <= RESTART_ITERATIONS,
                                                  est.max_doc_iter, est.doc_tol) for p in range(P)])
                lam = np.zeros((V, K))
                for p, (rows, _) in enumerate(outs):
                    lam[ids[p]] += rows
                lam += model.beta
                change = float(np.abs(lam - state).mean() / state.mean())
                state = lam
            step += 1
            stats["step_seconds"].append(time.perf_counter() - ts)
            stats["bytes_sent"].append(run.bytes_sent - sent)
            stats["bytes_received"].append(run.bytes_received - received)
            stop = bool(callback(step, n_steps, None)) if callback is not None else False
            last = stop or step == n_steps
            if online and (step % est.evaluate_every == 0 or last) and outs[0][5] is not None:
                docs, tokens = (sum(o[5][i] for o in outs) for i in range(2))
                _record(trace, step, float("nan"), docs / max(tokens, 1), change, t0, model)
            elif not online and (step % est.evaluate_every == 0 or last):
                elog = vb.elog_beta(state)
                docs = sum(run.map(dvb.shard_elbo_docs, [(elog[ids[p]], model.alpha) for p in range(P)]))
                e = docs + vb.elbo_global(state, model.beta)
                _record(trace, step, e, e / n_tokens, change, t0, model)
            if ckpt_path is not None and (step % est.checkpoint_every == 0 or last):
                extra = {"corpus": fingerprint, "seed": est.seed_, "beta": model.beta, "distributed": est.inference}
                if online:
                    save_checkpoint(ckpt_path, cls="LDA", params=params,
                                    state_arrays={"u_wk": state.u_wk, "usum": state.usum, "alpha": model.alpha},
                                    rng=rng, iteration=step, trace=trace,
                                    extra={**extra, "t": state.t, "c": state.c, "b": state.b})
                else:
                    os.makedirs(shard_dir, exist_ok=True)
                    files = [f"gamma-{p:05d}-it{step}.hmn" for p in range(P)]
                    run.map(dvb.shard_save_gamma, [(os.path.join(shard_dir, files[p]), step) for p in range(P)])
                    save_checkpoint(ckpt_path, cls="LDA", params=params,
                                    state_arrays={"lam_wk": state, "alpha": model.alpha}, rng=rng, iteration=step,
                                    trace=trace, extra={**extra, "shards": files})
                    for f in os.listdir(shard_dir):
                        if f.startswith("gamma-") and f not in files:
                            os.unlink(os.path.join(shard_dir, f))
        except WorkerLost:
            recoveries += 1
            if ckpt_path is None or not os.path.exists(ckpt_path) or recoveries > MAX_RECOVERIES:
                raise
            run.replace()
            ids = place()
            ckpt, state = restore()
            rng, step = ckpt.rng, int(ckpt.iteration)
            trace = {k: list(v) for k, v in ckpt.trace.items()}
            next_ids = run.map(dvb.shard_online_ids, [(step + 1,)] * P) if online else None
            stats["recoveries"] = recoveries
            continue
        if stop:
            break
    lam_wk = vb.online_lambda(state, in_place=True) if online else state
    est.vocabulary_ = corpus.vocabulary
    est.alpha_, est.beta_ = model.alpha, float(model.beta)
    est.topic_word_posterior_ = lam_wk.T
    est.topic_word_ = est.topic_word_posterior_ / est.topic_word_posterior_.sum(axis=1, keepdims=True)
    est.doc_topic_ = (np.concatenate(run.map(dvb.shard_theta, [()] * P)) if want_doc_topic and not online
                      else None)
    est.n_samples_ = 0
    est.trace_ = trace
    est.rng_state_ = rng.bit_generator.state
    est.n_iter_ = step
    est.dask_stats_ = stats


def digamma_row(x):
    from scipy.special import digamma

    return digamma(x)
