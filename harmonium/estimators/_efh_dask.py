"""How ``EFH.fit(X, client=...)`` (and GBEFH, ReplicatedSoftmax, RatePoisson) trains on a Dask cluster.

Data-parallel CD-k / PCD (docs/guides/scale-out.md). The CD-k gradient of the mean
log-likelihood (seed 000 eqs. 14-17, §3.2; seed 001 eq. 6) is a sum over the rows of a
mini-batch, g = (1/B) sum_b [S(x_b) - S(x~_b)], so a mini-batch splits across shards:

* **local step** (:func:`harmonium.inference.learning.cd_dask.efh_shard_step`): shard p takes its
  next ceil(batch_size / P) rows, draws h ~ p(h | x) (PCD: takes its own persistent chains),
  reconstructs k sweeps and returns sum_b [S(x_b) - S(x~_b)] and B_p;
* **global step** (here): g = sum_p sums_p / sum_p B_p (shards added in shard order), then the
  update of :func:`harmonium.inference.learning.cd.batch_update` (Hinton 2010 §§ 5, 9, 10):
  v <- momentum v + eta (g - weight_decay W), param <- param + v (param <- param + eta g when
  both are 0). The new parameters go out with the next local step.

The loop is the fit's :class:`~harmonium.inference.recorder.Recorder` (trace, checkpoints, resume,
recovery from a lost worker). The corpus is an on-disk corpus directory the workers read themselves
(an in-memory corpus is written to a temporary directory first, as for LDA). The driver holds the parameters, the
momentum buffers, the Generator and the first 1,000 rows for monitoring; the base rates come
from the shards' column sums.
"""

from __future__ import annotations

import numbers
import time

import numpy as np

from harmonium.corpus.ondisk import open_ondisk_corpus
from harmonium.errors import CorpusError, InvalidParameterError, ModelFileError
from harmonium.estimators._base import as_corpus
from harmonium.inference.learning import cd
from harmonium.inference.learning import cd_dask as cdd
from harmonium.models.undirected.units import BernoulliUnits
from harmonium.parallel.dask_shards import (
    ShardedRun,
    ShardSpec,
    metered,
    n_shards_of,
    new_stats,
    ondisk_fingerprint,
    open_shard,
    sharded_run,
)

MAX_RECOVERIES = 3
_INT64_MAX = np.iinfo(np.int64).max
_MONITOR_ROWS = 1000
_TRACE_KEYS = ("epoch", "seconds", "learning_rate", "reconstruction_error", "pseudo_log_likelihood", "mean_abs_update")


class _Shape:
    """Stands in for the data where only its shape is read (``_new_model``, ``_initial_model``)."""

    def __init__(self, n_rows: int, n_cols: int):
        self.shape = (int(n_rows), int(n_cols))


def _check(est, client, n_shards, features, validation) -> int:
    name = type(est).__name__
    others = {"n_gibbs": not isinstance(est.n_gibbs, numbers.Integral),
              "validation": validation is not None or est._opt("validation_fraction") > 0,
              "sparsity_target": est._opt("sparsity_target") is not None,
              "fast_learning_rate": est._opt("fast_learning_rate") > 0}
    bad = [k for k, v in others.items() if v]
    if bad:
        raise InvalidParameterError(f"{name}.fit(client=...) / n_shards: data-parallel CD does not support "
                                    f"{', '.join(bad)} (a CD-k schedule, validation / early stopping, a "
                                    "sparsity target); fit in one process for those.")
    wings = est._wing_units()
    if features is not None or len(wings) != 1:
        raise InvalidParameterError(
            f"{name}.fit(client=...) trains one-wing harmoniums whose words are read from an on-disk corpus; "
            f"this {name} has wings {[n for n, _ in wings]}"
            f"{' and features= was given' if features is not None else ''}. Fit it without client (in one process).")
    return n_shards_of(client, n_shards, f"{name}.fit")


def fit(est, X, client, *, n_shards=None, features=None, resume: bool = False, callback=None, validation=None):
    """Fit ``est`` by data-parallel CD on the cluster of ``client`` (``client=None``: the same local steps in
    this process); sets the usual fitted attributes and ``dask_stats_``."""
    n_shards = _check(est, client, n_shards, features, validation)
    where = f"{type(est).__name__}.fit"
    with sharded_run(X, client, n_shards, lambda data: as_corpus(data, where)) as (run, path):
        _fit(est, run, path, resume, callback)
    est.dask_stats_["peak_rss_bytes"] = run.peak_rss_bytes
    return est


def merge(outs, names) -> tuple[dict, int]:
    """The global step's merge: {name: sum_p sums_p[name]} (float64, shards in shard order) and sum_p B_p,
    over the shards that had rows left in this epoch."""
    parts = [o for o in outs if o[1] > 0]
    merged = {}
    for k in names:
        g = parts[0][0][k].astype(np.float64)
        for sums, _ in parts[1:]:
            g += sums[k]
        merged[k] = g
    return merged, sum(o[1] for o in parts)


def _monitor_rows(path: str, units, dtype, n_rows: int):
    """The first min(1,000, D) rows of the corpus, converted as the shards convert theirs."""
    corpus = open_ondisk_corpus(path, verify=False)
    m = min(_MONITOR_ROWS, n_rows)
    hi = int(corpus.counts.indptr[m])
    x, lengths = cdd.rows_in_units(open_shard(ShardSpec(path, -1, 0, m, 0, hi)), units, dtype)
    return (x,), lengths


class _CDShards:
    """The state of a data-parallel CD run: the driver's model and momentum buffers, the shards (and their PCD
    chains) on the workers; ``kernel`` is one epoch, the global step after each mini-batch's local steps."""

    def __init__(self, est, run: ShardedRun, path: str):
        self.est, self.run, self.name = est, run, type(est).__name__
        (_, self.units), = est._wing_units()
        self.dtype = np.dtype(est.dtype)
        self.cfg = est._config()
        self.P = run.n_shards
        self.batch_rows = -(-est.batch_size // self.P)
        opened = self.place()
        self.rows = [o[0] for o in opened]
        for p, (_, empty, _) in enumerate(opened):
            if empty >= 0:
                raise CorpusError(f"document {run.specs[p].lo + empty} is empty ({self.name}.fit); drop empty "
                                  "documents with corpus.drop_empty().")
        self.n_rows = sum(self.rows)
        col_sums = opened[0][2].copy()
        for o in opened[1:]:
            col_sums += o[2]
        self.means = [col_sums / self.n_rows]
        self.shape = (_Shape(self.n_rows, col_sums.shape[0]),)
        self.fingerprint = {**ondisk_fingerprint(path), "n_shards": self.P}
        self.model0 = est._new_model(self.shape)
        self.learn = self.model0.learnable()
        self.n_batches = -(-max(self.rows) // self.batch_rows)
        self.monitor, self.monitor_len = _monitor_rows(path, self.units, self.dtype, self.n_rows)
        self.binary = isinstance(self.units, BernoulliUnits)
        self.model = self.velocity = None
        self.epoch = self.n_updates = 0

    def place(self) -> list:
        return self.run.place(cdd.efh_shard_open, [(self.units, self.dtype.str, self.batch_rows,
                                                    self.cfg.persistent, self.est.n_hidden)] * self.P)

    def start(self, rng) -> None:
        self.model = self.est._initial_model(rng, self.shape, self.means)
        self.velocity = {k: np.zeros_like(self.model.params[k]) for k in self.learn}

    def check(self, ckpt) -> None:
        """Refuse a checkpoint of another run: not distributed CD on this corpus and n_shards, other settings."""
        est = self.est
        if ckpt.extra.get("distributed") != "cd" or ckpt.extra.get("data") != self.fingerprint:
            raise ModelFileError(f"{est.checkpoint_path} is not a checkpoint of this distributed {self.name} run "
                                 f"(same on-disk corpus, n_shards={self.P}); fit without resume or with the settings "
                                 "it was written with.")
        est._check_resume(ckpt, [k for k in est._resume_params(ckpt) if k != "n_shards"], self.fingerprint,
                          ckpt.extra.get("data"), data="data", missing=est._resume_missing)

    def restore(self, ckpt):
        """The driver's model and momentum from ``ckpt``; the workers get their PCD chains back."""
        self.model = self.model0.with_params({k[2:].replace(".", ":"): np.array(v) for k, v in ckpt.arrays.items()
                                              if k.startswith("p.")})
        self.velocity = {k[4:].replace(".", ":"): np.array(v) for k, v in ckpt.arrays.items()
                         if k.startswith("vel.")}
        if self.cfg.persistent:
            self.run.map(cdd.efh_shard_set_chains, [(ckpt.arrays[f"chains.{p}"],) for p in range(self.P)])
        self.epoch, self.n_updates = int(ckpt.iteration), int(ckpt.extra["n_updates"])
        return self

    def recover(self, ckpt):
        self.run.replace()
        self.place()
        return self.restore(ckpt)

    def kernel(self, rng, st, _data, _model):
        """One epoch: every mini-batch's local steps, merged, then the momentum update of the driver's model."""
        cfg, model, P, epoch = self.cfg, self.model, self.P, self.epoch
        ts = time.perf_counter()
        lr, mom = float(cfg.learning_rate(epoch)), float(cfg.momentum(epoch))
        direct = mom == 0.0 and cfg.weight_decay == 0.0
        order_seeds = [int(s) for s in rng.integers(0, _INT64_MAX, size=P)]
        w_before = model.params["W:0"].copy()
        for b in range(self.n_batches):
            seeds = [int(s) for s in rng.integers(0, _INT64_MAX, size=P)]
            outs = self.run.map(cdd.efh_shard_step, [(model, epoch, order_seeds[p], b, seeds[p], cfg.n_gibbs,
                                                      cfg.mean_field) for p in range(P)])
            merged, n_b = merge(outs, self.learn)
            for k in self.learn:
                step = ((lr / n_b) * merged[k]).astype(model.dtype)
                if direct:
                    model.params[k] += step
                else:
                    v = self.velocity[k]
                    v *= model.dtype.type(mom)
                    v += step
                    if cfg.weight_decay and k.startswith("W:"):
                        v -= model.dtype.type(lr * cfg.weight_decay) * model.params[k]
                    model.params[k] += v
        done = self.n_batches
        self.n_updates += done
        self.epoch += 1
        return st, cd.CDInfo(done, lr, mom, float(np.abs(model.params["W:0"] - w_before).mean() / max(done, 1)),
                             time.perf_counter() - ts)

    def evaluate(self, epoch, st, info) -> dict:
        pl = float("nan")
        if self.binary:
            pl = float(cd.pseudo_log_likelihood(np.random.default_rng(epoch), self.model, self.monitor).mean())
        return {"epoch": epoch, "learning_rate": info.learning_rate, "mean_abs_update": info.mean_abs_update,
                "reconstruction_error": cd.reconstruction_error(self.model, self.monitor, self.monitor_len),
                "pseudo_log_likelihood": pl}

    def snapshot(self, st) -> tuple[dict, dict]:
        arrays = {f"p.{k.replace(':', '.')}": v for k, v in self.model.params.items()}
        arrays.update({f"vel.{k.replace(':', '.')}": v for k, v in self.velocity.items()})
        if self.cfg.persistent:
            for p, chains in enumerate(self.run.map(cdd.efh_shard_get_chains, [()] * self.P)):
                arrays[f"chains.{p}"] = chains
        return arrays, {"n_updates": self.n_updates, "distributed": "cd"}


def _fit(est, run: ShardedRun, path: str, resume: bool, callback):
    shards = _CDShards(est, run, path)
    rec = est._recorder(_TRACE_KEYS, resume=resume, callback=callback, fingerprint=shards.fingerprint,
                        check=shards.check, params={**est._json_params(), "n_shards": run.n_shards})
    if rec.checkpoint is not None:
        shards.restore(rec.checkpoint)
    else:
        shards.start(rec.rng)
    est.vocabulary_ = open_ondisk_corpus(path, verify=False).vocabulary
    est.base_rates_ = shards.means
    est.n_train_rows_ = shards.n_rows
    est._log_partition_cache = {}
    stats = new_stats(run, "epoch_seconds", batch_rows_per_shard=shards.batch_rows)
    _, last = rec.drive(metered(shards.kernel, run, stats, "epoch_seconds"), shards, None, None,
                        evaluate=shards.evaluate, snapshot=shards.snapshot, recover=shards.recover,
                        max_recoveries=MAX_RECOVERIES)
    est.model_ = shards.model
    est._finish_fit(rec, last)
    est._state = None  # partial_fit starts new momentum buffers / chains in this process
    est.dask_stats_ = {**stats, "recoveries": rec.recoveries}
