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
