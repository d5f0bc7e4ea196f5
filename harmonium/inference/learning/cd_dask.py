"""Data-parallel contrastive divergence for harmoniums on Dask (one contract with AD-LDA and VB).

The CD-k gradient of the mean log-likelihood (seed 000 eqs. 14-17, §3.2; seed 001 eq. 6) is a
difference of sums over rows:

    g = (1/B) sum_b [ S(x_b) - S(x~_b) ],   S(x) = E_{h|x}[ d log p*(x, h) / d param ]

where x~_b is the k-step reconstruction of row b. Rows are independent given the parameters,
so the rows of a mini-batch split across shards. **Local step** (:func:`shard_gradient`): the
worker takes its next ``batch_rows`` rows (cycling through its shard), draws h ~ p(h | x), runs
:func:`harmonium.inference.learning.cd.negative_phase` and returns sum_b [S(x_b) - S(x~_b)]
(``Harmonium.statistics``, the sufficient statistics) and B. **Global step**
(:func:`fit_cd`): g = sum_p sums_p / sum_p B_p, then param <- param + eta g, sent with the next
local step. Plain CD-k (no momentum, no weight decay, no persistent chains) on word-count
documents (one wing read from an on-disk corpus); each local step gets a seed from the
driver's Generator, so a run depends on the seed and the number of shards only.

The estimators' path (``EFH.fit(X, client=...)``, driver in :mod:`harmonium.estimators._efh_dask`)
uses :func:`efh_shard_open` / :func:`efh_shard_step`: the rows converted to the wing's units as the
estimator converts them, a random order per epoch on each shard, every row once an epoch, and for
PCD persistent hidden chains held by the shard (:func:`efh_shard_get_chains` /
:func:`efh_shard_set_chains` for checkpoints); the driver applies momentum and weight decay.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from harmonium.inference.learning.cd import negative_phase
from harmonium.parallel.dask_shards import ShardedRun, open_shard

_INT64_MAX = np.iinfo(np.int64).max


class CDShard:
    """A worker's rows: a CSR count matrix and the document lengths."""

    def __init__(self, spec, dtype):
        data = open_shard(spec)
        self.x = sp.csr_matrix((data.data.astype(dtype), data.indices, data.indptr),
                               shape=(data.n_docs, data.n_words))
        self.lengths = np.asarray(self.x.sum(axis=1)).ravel().astype(np.float64)
        self.batch_rows = 1

    def batch(self, step: int):
        n = self.x.shape[0]
        n_batches = -(-n // self.batch_rows)
        lo = ((step - 1) % n_batches) * self.batch_rows
        hi = min(lo + self.batch_rows, n)
        return self.x[lo:hi], self.lengths[lo:hi]


def shard_open(spec, dtype: str, batch_rows: int):
    state = CDShard(spec, np.dtype(dtype))
    state.batch_rows = max(1, int(batch_rows))
    return state, int(state.x.shape[0])


def shard_statistics(state: CDShard, model):
    """sum over every row of the shard of S(x): the data term of the gradient (for checks)."""
    return model.statistics((state.x,), state.lengths)


def shard_gradient(state: CDShard, model, step: int, seed: int, n_gibbs: int, mean_field: bool):
    """CD-k local step on the shard's mini-batch ``step``: (sum_b S(x_b) - S(x~_b), B)."""
    rng = np.random.Generator(np.random.PCG64(seed))
    x, lengths = state.batch(step)
    xs = (x,)
    h = model.hidden.sample(rng, model.hidden_eta(xs, lengths), model.hidden_params())
    xs_neg, _ = negative_phase(rng, model, h, lengths, n_gibbs, mean_field=mean_field)
    pos = model.statistics(xs, lengths)
    neg = model.statistics(xs_neg, lengths)
    return {k: np.asarray(pos[k], dtype=np.float64) - np.asarray(neg[k], dtype=np.float64) for k in pos}, x.shape[0]


def fit_cd(run: ShardedRun, model, rng: np.random.Generator, *, n_steps: int, learning_rate: float,
           batch_rows: int = 100, n_gibbs: int = 1, mean_field: bool = False, callback=None):
    """``n_steps`` data-parallel CD-k updates of ``model`` (its params are replaced, not mutated);
    each update uses ``batch_rows`` rows from every shard. Returns (model, stats)."""
    run.place(shard_open, [(model.dtype.str, batch_rows)] * run.n_shards)
    stats = {"bytes_sent": [], "bytes_received": []}
    learn = set(model.learnable())
    for step in range(1, n_steps + 1):
        sent, received = run.bytes_sent, run.bytes_received
        seeds = [int(s) for s in rng.integers(0, _INT64_MAX, size=run.n_shards)]
        outs = run.map(shard_gradient, [(model, step, seeds[p], n_gibbs, mean_field) for p in range(run.n_shards)])
        n_rows = sum(b for _, b in outs)
        params = dict(model.params)
        for k in outs[0][0]:
            if k in learn:
                g = outs[0][0][k].copy()
                for sums, _ in outs[1:]:
                    g += sums[k]
                params[k] = params[k] + (learning_rate / n_rows) * g.astype(params[k].dtype)
        model = model.with_params(params)
        stats["bytes_sent"].append(run.bytes_sent - sent)
        stats["bytes_received"].append(run.bytes_received - received)
        if callback is not None and callback(step, model):
            break
    return model, stats


# -- the estimators' data-parallel CD / PCD (``EFH.fit(X, client=...)``) ---------------------------------
def rows_in_units(data, units, dtype):
    """A shard's CSR counts as the first wing's data, converted as ``_HarmoniumEstimator`` converts them:
    binary wings take occurrences (count > 0), the units check the values, then the model's dtype.
    Returns (x, lengths or None)."""
    from harmonium.models.undirected.units import BernoulliUnits

    values = np.ones(data.data.shape[0]) if isinstance(units, BernoulliUnits) else data.data.astype(np.float64)
    x = sp.csr_matrix((values, data.indices, data.indptr), shape=(data.n_docs, data.n_words))
    x = units.check_data(x, "the on-disk corpus (wing 'words')")
    x = x.astype(dtype) if sp.issparse(x) else np.ascontiguousarray(x, dtype=dtype)
    lengths = np.asarray(x.sum(axis=1), dtype=np.float64).ravel() if units.needs_lengths else None
    return x, lengths


class EFHShard:
    """A worker's rows of a one-wing harmonium, its per-epoch visiting order and (PCD) its fantasy chains."""

    def __init__(self, spec, units, dtype, batch_rows: int, persistent: bool, n_hidden: int):
        self.x, self.lengths = rows_in_units(open_shard(spec), units, np.dtype(dtype))
        self.batch_rows = max(1, int(batch_rows))
        self.chains = np.zeros((self.batch_rows, int(n_hidden)), dtype=np.dtype(dtype)) if persistent else None
        self.epoch = -1
        self.order = None


def efh_shard_open(spec, units, dtype: str, batch_rows: int, persistent: bool, n_hidden: int):
    """Place a shard; statistics = (rows, index of its first empty row or -1, column sums of x (float64))."""
    state = EFHShard(spec, units, dtype, batch_rows, persistent, n_hidden)
    x = state.x
    nnz = np.diff(x.indptr) if sp.issparse(x) else np.count_nonzero(x, axis=1)
    empty = np.flatnonzero(nnz == 0)
    sums = np.asarray(x.sum(axis=0), dtype=np.float64).ravel()
    return state, (int(x.shape[0]), int(empty[0]) if empty.size else -1, sums)


def efh_shard_step(state: EFHShard, model, epoch: int, order_seed: int, batch: int, seed: int, n_gibbs: int,
                   mean_field: bool):
    """CD-k / PCD local step: mini-batch ``batch`` of epoch ``epoch`` of this shard (its rows in the order
    drawn from ``order_seed``, ``batch_rows`` at a time); returns ({name: sum_b S(x_b) - S(x~_b)} over the
    learnable parameters, accumulated in float64 and sent in the model's dtype, B), or (None, 0) once the
    shard's rows of this epoch are used up.

    PCD (``state.chains``): the negative phase starts from the shard's persistent hidden chains, which
    are then advanced, as :func:`harmonium.inference.learning.cd.batch_update` does in one process."""
    from harmonium.inference.learning.cd import _add_stats

    n_rows = state.x.shape[0]
    if state.epoch != epoch:
        state.order = np.random.Generator(np.random.PCG64(order_seed)).permutation(n_rows)
        state.epoch = epoch
    idx = np.sort(state.order[batch * state.batch_rows:(batch + 1) * state.batch_rows])
    if idx.size == 0:
        return None, 0
    rng = np.random.Generator(np.random.PCG64(seed))
    xs = (state.x[idx],)
    lengths = None if state.lengths is None else state.lengths[idx]
    n = idx.size
    hp = model.hidden_params()
    eta_pos = model.hidden_eta(xs, lengths)
    h = state.chains[:n] if state.chains is not None else model.hidden.sample(rng, eta_pos, hp)
    xs_neg, eta_neg = negative_phase(rng, model, h, lengths, n_gibbs, mean_field=mean_field)
    if state.chains is not None:
        state.chains[:n] = model.hidden.sample(rng, eta_neg, hp)
    sums = {k: np.zeros(model.params[k].shape, dtype=np.float64) for k in model.learnable()}
    _add_stats(model, sums, xs, eta_pos, lengths, 1.0)
    _add_stats(model, sums, xs_neg, eta_neg, lengths, -1.0)
    return {k: v.astype(model.dtype, copy=False) for k, v in sums.items()}, n


def efh_shard_get_chains(state: EFHShard):
    """The shard's persistent chains (for a checkpoint), or None."""
    return state.chains


def efh_shard_set_chains(state: EFHShard, chains) -> int:
    """Restore the shard's persistent chains from a checkpoint."""
    state.chains = np.array(chains, dtype=state.chains.dtype)
    return int(state.chains.shape[0])
