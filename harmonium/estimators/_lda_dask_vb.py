"""How ``LDA.fit(X, client=...)`` drives batch and online VB with a distributed E-step.

Local and global steps: :mod:`harmonium.inference.vi.lda_dask_vb`. The driver
holds lambda (V x K); the workers hold their documents and, for batch VB,
their gamma. The loop is the fit's :class:`~harmonium.inference.recorder.Recorder`.
Checkpoints: batch VB writes each shard's gamma beside the checkpoint
(``<checkpoint>.shards/``), then lambda, the Generator and the trace; online VB
has no per-document state, so its checkpoint is the driver's alone. A lost
worker is recovered from the last checkpoint as for AD-LDA.
"""

from __future__ import annotations

import os

import numpy as np
from scipy.special import digamma

from harmonium.corpus.ondisk import open_ondisk_corpus
from harmonium.errors import CorpusError, ModelFileError
from harmonium.estimators._lda_vi import RESTART_ITERATIONS, TRACE_KEYS, _finish, _row
from harmonium.inference.vi import lda_dask_vb as dvb
from harmonium.inference.vi import lda_vb as vb
from harmonium.models.directed.lda import make_model
from harmonium.parallel.dask_shards import metered, new_stats, ondisk_fingerprint

MAX_RECOVERIES = 3


class _DaskVB:
    """The shards of one distributed VB run, and its local plus global steps; ``step`` counts the global steps."""

    def __init__(self, est, run, corpus, model, fingerprint: dict):
        self.est, self.run, self.model, self.fingerprint = est, run, model, fingerprint
        self.online = est.inference == "online_vb"
        self.P, self.V, self.n_docs = run.n_shards, corpus.n_words, corpus.n_docs
        self.batch_docs = -(-est.batch_size // self.P)
        self.total_docs = est.total_docs or corpus.n_docs
        self.n_tokens = sum(o[1] for o in self.place())
        self.n_steps = (est.n_iter * (-(-max(s.hi - s.lo for s in run.specs) // self.batch_docs)) if self.online
                        else est.n_iter)
        path = None if est.checkpoint_path is None else os.fspath(est.checkpoint_path)
        self.path, self.shard_dir = path, None if path is None else path + ".shards"
        self.step = 0
        self.next_ids = None

    def place(self) -> list:
        opened = self.run.place(dvb.shard_open, [(self.est.n_topics, self.batch_docs)] * self.P)
        self.ids = [o[0] for o in opened]
        return opened

    def start(self, step: int) -> None:
        self.step = step
        self.next_ids = self.run.map(dvb.shard_online_ids, [(step + 1,)] * self.P) if self.online else None

    def check(self, ckpt) -> None:
        if ckpt.extra.get("corpus") != self.fingerprint or ckpt.extra.get("distributed") != self.est.inference:
            raise ModelFileError(f"{self.path} is not a checkpoint of this distributed {self.est.inference} run")
        if ckpt.params.get("n_shards") != self.P:  # the shards' gamma and mini-batches are per shard
            raise ModelFileError(f"{self.path} was written with n_shards={ckpt.params.get('n_shards')}; resume "
                                 f"with the same n_shards (not {self.P}).")

    def restore(self, ckpt):
        """The state in ``ckpt`` (batch VB: every shard reloads its gamma from the checkpoint's files)."""
        if self.online:
            return vb.OnlineVBState(np.array(ckpt.arrays["u_wk"]), float(ckpt.extra["c"]), float(ckpt.extra["b"]),
                                    np.array(ckpt.arrays["usum"]), int(ckpt.extra["t"]))
        files = [os.path.join(self.shard_dir, f) for f in ckpt.extra["shards"]]
        rows = self.run.map(dvb.shard_load_gamma, [(f,) for f in files])
        if sum(rows) != self.n_docs:
            raise CorpusError(f"{self.path}: the shards' gamma cover {sum(rows)} of {self.n_docs} documents")
        return np.array(ckpt.arrays["lam_wk"])

    def recover(self, ckpt):
        self.run.replace()
        self.place()
        state = self.restore(ckpt)
        self.start(int(ckpt.iteration))
        return state

    def kernel(self, rng, state, _data, model):
        """One global step: the shards' E-steps, merged in shard order, then lambda. info = (outputs, change)."""
        est, P, step = self.est, self.P, self.step + 1
        if self.online:
            log_colsum = digamma(state.c * state.usum + self.V * state.b)
            evaluate = step % est.evaluate_every == 0 or step == self.n_steps
            outs = self.run.map(dvb.shard_online_step,
                                [(step, state.c * state.u_wk[self.next_ids[p]] + state.b, log_colsum, model.alpha,
                                  est.max_doc_iter, est.doc_tol, evaluate) for p in range(P)])
            merged_ids, sstats = dvb.merge_rows([(o[0], o[1]) for o in outs])
            state, _ = dvb.online_apply(state, merged_ids, sstats, sum(o[2] for o in outs), self.total_docs,
                                        est.learning_offset, est.learning_decay, model.beta)
            self.next_ids = [o[4] for o in outs]
            change = float("nan")
        else:
            eb = vb.exp_elog_beta(state)
            outs = self.run.map(dvb.shard_estep, [(eb[self.ids[p]], model.alpha, step <= RESTART_ITERATIONS,
                                                   est.max_doc_iter, est.doc_tol) for p in range(P)])
            lam = np.zeros((self.V, est.n_topics))
            for p, (rows, _) in enumerate(outs):
                lam[self.ids[p]] += rows
            lam += model.beta
            change = float(np.abs(lam - state).mean() / state.mean())
            state = lam
        self.step = step
        return state, (outs, change)

    def evaluate(self, step, state, info):
        outs, change = info
        if self.online:
            if outs[0][5] is None:
                return None
            docs, tokens = (sum(o[5][i] for o in outs) for i in range(2))
            return _row(step, float("nan"), docs / max(tokens, 1), change, self.model)
        elog = vb.elog_beta(state)
        docs = sum(self.run.map(dvb.shard_elbo_docs, [(elog[self.ids[p]], self.model.alpha) for p in range(self.P)]))
        e = docs + vb.elbo_global(state, self.model.beta)
        return _row(step, e, e / self.n_tokens, change, self.model)

    def checkpoint(self, step, state, save) -> None:
        """Online: the driver's state. Batch: the shards' gamma files, the commit, then older files go."""
        extra = {"beta": self.model.beta, "distributed": self.est.inference}
        if self.online:
            save(step, {"u_wk": state.u_wk, "usum": state.usum, "alpha": self.model.alpha},
                 {**extra, "t": state.t, "c": state.c, "b": state.b})
            return
        os.makedirs(self.shard_dir, exist_ok=True)
        files = [f"gamma-{p:05d}-it{step}.hmn" for p in range(self.P)]
        self.run.map(dvb.shard_save_gamma, [(os.path.join(self.shard_dir, files[p]), step) for p in range(self.P)])
        save(step, {"lam_wk": state, "alpha": self.model.alpha}, {**extra, "shards": files})
        for f in os.listdir(self.shard_dir):
            if f.startswith("gamma-") and f not in files:
                os.unlink(os.path.join(self.shard_dir, f))


def fit_vb(est, run, path: str, resume: bool, callback, want_doc_topic: bool) -> None:
    """Batch or online VB of ``est`` on the shards of ``run`` (the on-disk corpus at ``path``)."""
    corpus = open_ondisk_corpus(path, verify=False)
    model = make_model(est.n_topics, corpus.n_words, est.doc_topic_prior, est.topic_word_prior)
    fingerprint = ondisk_fingerprint(path)
    dv = _DaskVB(est, run, corpus, model, fingerprint)

    def check(ckpt):
        dv.check(ckpt)
        est._check_checkpoint(ckpt, fingerprint)

    user = None if callback is None else (lambda step, n, _info: callback(step, n, None))
    rec = est._recorder(TRACE_KEYS, resume=resume, callback=user, fingerprint=fingerprint, n_iter=dv.n_steps,
                        check=check, params={**est._json_params(), "n_shards": run.n_shards})
    if rec.checkpoint is not None:
        state = dv.restore(rec.checkpoint)
    else:
        lam = vb.random_lambda(rec.rng, corpus.n_words, est.n_topics)
        state = vb.online_state_from_lambda(lam, 0) if dv.online else lam
    dv.start(rec.start)
    stats = new_stats(run)
    state, last = rec.drive(metered(dv.kernel, run, stats), state, None, model, evaluate=dv.evaluate,
                            checkpoint=lambda step, st: dv.checkpoint(step, st, rec.save), recover=dv.recover,
                            max_recoveries=MAX_RECOVERIES)
    lam_wk = vb.online_lambda(state, in_place=True) if dv.online else state
    doc_topic = np.concatenate(run.map(dvb.shard_theta, [()] * run.n_shards)) if want_doc_topic and not dv.online \
        else None
    _finish(est, corpus, model, lam_wk, doc_topic)
    est._finish_fit(rec, last)
    est.dask_stats_ = {**stats, "recoveries": rec.recoveries}
