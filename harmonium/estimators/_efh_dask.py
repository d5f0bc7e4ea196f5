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

The corpus is an on-disk corpus directory the workers read themselves (an in-memory corpus is
written to a temporary directory first, as for LDA). The driver holds the parameters, the
momentum buffers, the Generator and the first 1,000 rows for monitoring; the base rates come
from the shards' column sums.
"""

from __future__ import annotations

import os
import time

import numpy as np

from harmonium.corpus.ondisk import open_ondisk_corpus
from harmonium.errors import CorpusError, InvalidParameterError, ModelFileError
from harmonium.estimators._lda_dask import ondisk_fingerprint, sharded_run
from harmonium.inference.learning import cd
from harmonium.inference.learning import cd_dask as cdd
from harmonium.io import load_checkpoint, save_checkpoint
from harmonium.models.undirected.units import BernoulliUnits
from harmonium.parallel.dask_shards import ShardedRun, ShardSpec, WorkerLost, open_shard
from harmonium.parallel.seeds import check_random_state

MAX_RECOVERIES = 3
_INT64_MAX = np.iinfo(np.int64).max
_MONITOR_ROWS = 1000
_IGNORED = ("n_iter", "checkpoint_path", "checkpoint_every", "evaluate_every", "random_state")


class _Shape:
    """Stands in for the data where only its shape is read (``_new_model``, ``_initial_model``)."""

    def __init__(self, n_rows: int, n_cols: int):
        self.shape = (int(n_rows), int(n_cols))


def _check(est, client, n_shards, features) -> int:
    name = type(est).__name__
    wings = est._wing_units()
    if features is not None or len(wings) != 1:
        raise InvalidParameterError(
            f"{name}.fit(client=...) trains one-wing harmoniums whose words are read from an on-disk corpus; "
            f"this {name} has wings {[n for n, _ in wings]}"
            f"{' and features= was given' if features is not None else ''}. Fit it without client (in one process).")
    if n_shards is None:
        if client is None:
            raise InvalidParameterError(f"{name}.fit with client=None needs n_shards (the in-process reference run).")
        n_shards = len(client.scheduler_info()["workers"])
    if isinstance(n_shards, bool) or not isinstance(n_shards, (int, np.integer)) or n_shards < 1:
        raise InvalidParameterError(f"The 'n_shards' parameter of {name}.fit must be an int >= 1. Got {n_shards!r}.")
    return int(n_shards)


def fit(est, X, client, *, n_shards=None, features=None, resume: bool = False, callback=None):
    """Fit ``est`` by data-parallel CD on the cluster of ``client`` (``client=None``: the same local steps in
    this process); sets the usual fitted attributes and ``dask_stats_``."""
    n_shards = _check(est, client, n_shards, features)
    with sharded_run(est, X, client, n_shards, f"{type(est).__name__}.fit") as (run, path):
        _fit(est, run, path, resume, callback)
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


def _fit(est, run: ShardedRun, path: str, resume: bool, callback):
    name = type(est).__name__
    (wing_name, units), = est._wing_units()
    dtype = np.dtype(est.dtype)
    cfg = est._config()
    P = run.n_shards
    batch_rows = -(-est.batch_size // P)
    ckpt_path = None if est.checkpoint_path is None else os.fspath(est.checkpoint_path)
    params = {**est._json_params(), "n_shards": P}

    def place():
        return run.place(cdd.efh_shard_open, [(units, dtype.str, batch_rows, cfg.persistent, est.n_hidden)] * P)

    opened = place()
    rows = [o[0] for o in opened]
    for p, (_, empty, _) in enumerate(opened):
        if empty >= 0:
            d = run.specs[p].lo + empty
            raise CorpusError(f"document {d} is empty ({name}.fit); drop empty documents with corpus.drop_empty().")
    n_rows = sum(rows)
    col_sums = opened[0][2].copy()
    for o in opened[1:]:
        col_sums += o[2]
    means = [col_sums / n_rows]
    fingerprint = {**ondisk_fingerprint(path), "n_shards": P}
    model0 = est._new_model((_Shape(n_rows, col_sums.shape[0]),))
    learn = model0.learnable()
    n_batches = -(-max(rows) // batch_rows)

    def restore():
        ckpt = load_checkpoint(ckpt_path, expected_class=name)
        if ckpt.extra.get("distributed") != "cd" or ckpt.extra.get("data") != fingerprint:
            raise ModelFileError(f"{ckpt_path} is not a checkpoint of this distributed {name} run (same on-disk "
                                 f"corpus, n_shards={P}); fit without resume or with the settings it was written with.")
        mine = est._json_params()
        for k, v in ckpt.params.items():
            if k not in _IGNORED and k != "n_shards" and mine.get(k) != v:
                raise InvalidParameterError(f"checkpoint {ckpt_path!r} was written with {k}={v!r}, but this {name} "
                                            f"has {k}={mine.get(k)!r}; use the same settings.")
        model = model0.with_params({k[2:].replace(".", ":"): np.array(v) for k, v in ckpt.arrays.items()
                                    if k.startswith("p.")})
        velocity = {k[4:].replace(".", ":"): np.array(v) for k, v in ckpt.arrays.items() if k.startswith("vel.")}
        if cfg.persistent:
            run.map(cdd.efh_shard_set_chains, [(ckpt.arrays[f"chains.{p}"],) for p in range(P)])
        return ckpt, model, velocity

    if resume and ckpt_path is not None and os.path.exists(ckpt_path):
        ckpt, model, velocity = restore()
        rng, est.seed_ = ckpt.rng, ckpt.extra.get("seed")
        epoch, n_updates = int(ckpt.iteration), int(ckpt.extra["n_updates"])
        trace = {k: list(v) for k, v in ckpt.trace.items()}
    else:
        rng, est.seed_ = check_random_state(est.random_state, name)
        model = est._initial_model(rng, (_Shape(n_rows, col_sums.shape[0]),), means)
        velocity = {k: np.zeros_like(model.params[k]) for k in learn}
        epoch, n_updates = 0, 0
        trace = {k: [] for k in ("epoch", "seconds", "learning_rate", "reconstruction_error",
                                 "pseudo_log_likelihood", "mean_abs_update")}
    est.vocabulary_ = open_ondisk_corpus(path, verify=False).vocabulary
    est.base_rates_ = means
    est.n_train_rows_ = n_rows
    est._log_partition_cache = {}
    monitor, monitor_len = _monitor_rows(path, units, dtype, n_rows)
    binary = isinstance(units, BernoulliUnits)
    stats = {"bytes_sent": [], "bytes_received": [], "epoch_seconds": [], "recoveries": 0, "n_shards": P,
             "batch_rows_per_shard": batch_rows}
    t0 = time.perf_counter() - (trace["seconds"][-1] if trace["seconds"] else 0.0)
    recoveries, stop = 0, False

    def checkpoint(it):
        arrays = {f"p.{k.replace(':', '.')}": v for k, v in model.params.items()}
        arrays.update({f"vel.{k.replace(':', '.')}": v for k, v in velocity.items()})
        if cfg.persistent:
            for p, chains in enumerate(run.map(cdd.efh_shard_get_chains, [()] * P)):
                arrays[f"chains.{p}"] = chains
        save_checkpoint(ckpt_path, cls=name, params=params, state_arrays=arrays, rng=rng, iteration=it, trace=trace,
                        extra={"data": fingerprint, "seed": est.seed_, "n_updates": n_updates, "distributed": "cd"})

    while epoch < est.n_iter:
        sent, received, ts = run.bytes_sent, run.bytes_received, time.perf_counter()
        try:
            lr, mom = float(cfg.learning_rate(epoch)), float(cfg.momentum(epoch))
            direct = mom == 0.0 and cfg.weight_decay == 0.0
            order_seeds = [int(s) for s in rng.integers(0, _INT64_MAX, size=P)]
            w_before = model.params["W:0"].copy()
            done = 0
            for b in range(n_batches):
                seeds = [int(s) for s in rng.integers(0, _INT64_MAX, size=P)]
                outs = run.map(cdd.efh_shard_step, [(model, epoch, order_seeds[p], b, seeds[p], cfg.n_gibbs,
                                                     cfg.mean_field) for p in range(P)])
                merged, n_b = merge(outs, learn)
                for k in learn:
                    step = ((lr / n_b) * merged[k]).astype(model.dtype)
                    if direct:
                        model.params[k] += step
                    else:
                        v = velocity[k]
                        v *= model.dtype.type(mom)
                        v += step
                        if cfg.weight_decay and k.startswith("W:"):
                            v -= model.dtype.type(lr * cfg.weight_decay) * model.params[k]
                        model.params[k] += v
                done += 1
            n_updates += done
            epoch += 1
            info = cd.CDInfo(done, lr, mom, float(np.abs(model.params["W:0"] - w_before).mean() / max(done, 1)),
                             time.perf_counter() - ts)
            stats["epoch_seconds"].append(info.seconds)
            stats["bytes_sent"].append(run.bytes_sent - sent)
            stats["bytes_received"].append(run.bytes_received - received)
            stop = bool(callback(epoch, est.n_iter, info)) if callback is not None else False
            last = stop or epoch == est.n_iter
            if (est.evaluate_every and epoch % est.evaluate_every == 0) or last:
                rec = cd.reconstruction_error(model, monitor, monitor_len)
                pl = float("nan")
                if binary:
                    pl = float(cd.pseudo_log_likelihood(np.random.default_rng(epoch), model, monitor).mean())
                for key, value in (("epoch", epoch), ("seconds", time.perf_counter() - t0),
                                   ("learning_rate", lr), ("reconstruction_error", rec),
                                   ("pseudo_log_likelihood", pl), ("mean_abs_update", info.mean_abs_update)):
                    trace[key].append(value)
            if ckpt_path is not None and (epoch % est.checkpoint_every == 0 or last):
                checkpoint(epoch)
        except WorkerLost:
            recoveries += 1
            if ckpt_path is None or not os.path.exists(ckpt_path) or recoveries > MAX_RECOVERIES:
                raise
            run.replace()
            place()
            ckpt, model, velocity = restore()
            rng, epoch, n_updates = ckpt.rng, int(ckpt.iteration), int(ckpt.extra["n_updates"])
            trace = {k: list(v) for k, v in ckpt.trace.items()}
            stats["recoveries"] = recoveries
            continue
        if stop:
            break
    est.model_ = model
    est.trace_ = trace
    est.rng_state_ = rng.bit_generator.state
    est.n_iter_ = epoch
    est._state = None  # partial_fit starts new momentum buffers / chains in this process
    est.dask_stats_ = stats
