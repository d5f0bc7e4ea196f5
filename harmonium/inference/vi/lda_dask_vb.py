"""Variational LDA with a distributed E-step (batch VB and online VB) on Dask.

Batch VB (Blei et al. 2003; seed 004 eqs. 4-6): the E-step of each document
depends on the topics only through exp(E_q[log phi]), so the documents split
across workers. **Local step** (:func:`shard_estep`): the worker receives the
rows of exp(E_q[log phi]) for the words of its shard, updates the gamma_d of
its documents (kept on the worker between iterations, for warm starts) and
returns its expected counts sum_d n_dw phi_dwk for those words: the sufficient
statistics of eq. 5. **Global step**: lambda = beta + sum_p sstats_p, shards
added in shard order.

Online VB (Hoffman et al. 2010 Algorithm 2): mini-batch t is spread over the
shards, each contributing its next ceil(S / P) documents (cycling through its
documents); the local step is the same E-step on those documents
(:func:`shard_online_step`), which also announces the word ids of its next
mini-batch so that one round trip a step suffices. The global step is
lambda <- (1 - rho_t) lambda + rho_t (beta + D / S sum_p sstats_p) with
rho_t = (tau0 + t)^(-kappa), kept as c u + b as in
:func:`harmonium.inference.vi.lda_vb.build_online_kernel` (:func:`online_apply`).
"""

from __future__ import annotations

import numpy as np
from scipy.special import digamma

from harmonium._kernels import lda_vb as kv
from harmonium.inference.vi.lda_vb import OnlineVBState, VBData, initial_gamma, step_size
from harmonium.io.modelfile import read_model_file, write_model_file
from harmonium.parallel.dask_shards import open_shard


class VBShard:
    """A shard held by a worker: its documents with word ids renumbered to the shard's own words, and gamma."""

    def __init__(self, spec, n_topics: int):
        data = open_shard(spec)
        self.spec = spec
        self.ids, local = np.unique(data.indices, return_inverse=True)
        self.ids = self.ids.astype(np.int32)
        self.data = VBData(data.indptr, local.astype(np.int32), data.data, self.ids.shape[0])
        self.n_topics = int(n_topics)
        self.gamma = None
        self.batch_docs = 1

    def batch(self, step: int) -> tuple[np.ndarray, VBData]:
        """The documents of online mini-batch ``step`` (1-based) on this shard, word ids renumbered."""
        n = self.data.n_docs
        n_batches = -(-n // self.batch_docs)
        lo = ((step - 1) % n_batches) * self.batch_docs
        hi = min(lo + self.batch_docs, n)
        a, b = int(self.data.indptr[lo]), int(self.data.indptr[hi])
        ids, local = np.unique(self.data.indices[a:b], return_inverse=True)
        batch = VBData(self.data.indptr[lo:hi + 1] - a, local.astype(np.int32), self.data.data[a:b], ids.shape[0])
        return self.ids[ids], batch


def shard_open(spec, n_topics: int, batch_docs: int = 1):
    """Read the shard; statistics = the shard's word ids (which rows of lambda it needs) and its token count."""
    state = VBShard(spec, n_topics)
    state.batch_docs = max(1, int(batch_docs))
    return state, (state.ids, int(state.data.data.sum(dtype=np.int64)))


def _estep(data: VBData, eb_rows, alpha, gamma, max_iter: int, tol: float):
    sstats = np.zeros((data.n_words, alpha.shape[0]))
    iters = kv.vb_estep(data.indptr, data.indices, data.data, 0, data.n_docs, 0, np.ascontiguousarray(eb_rows),
                        alpha, gamma, sstats, max_iter, tol, True)
    return sstats, int(iters)


def shard_estep(state: VBShard, eb_rows, alpha, restart: bool, max_iter: int, tol: float):
    """Batch VB local step: E-step on every document of the shard (gamma in place; restarted if
    ``restart``); returns (sstats rows for the shard's words, inner iterations)."""
    if restart or state.gamma is None:
        state.gamma = initial_gamma(state.data, alpha)
    return _estep(state.data, eb_rows, alpha, state.gamma, max_iter, tol)


def shard_elbo_docs(state: VBShard, elog_rows, alpha) -> float:
    """The shard's document terms of the ELBO (phi at its optimum given gamma and lambda)."""
    d = state.data
    return float(kv.vb_doc_bound(d.indptr, d.indices, d.data, 0, d.n_docs, 0, np.ascontiguousarray(elog_rows),
                                 alpha, state.gamma))


def shard_theta(state: VBShard):
    g = state.gamma
    return (g / g.sum(axis=1, keepdims=True)).astype(np.float32)


def shard_save_gamma(state: VBShard, path: str, iteration: int) -> str:
    write_model_file(path, cls="VBShard", params={"lo": state.spec.lo, "hi": state.spec.hi},
                     arrays={"gamma": state.gamma}, kind="checkpoint", extra={"iteration": int(iteration)})
    return path


def shard_load_gamma(state: VBShard, path: str) -> int:
    arrays = read_model_file(path, expected_class="VBShard").arrays
    state.gamma = np.array(arrays["gamma"])
    return int(state.gamma.shape[0])


def shard_online_ids(state: VBShard, step: int):
    """The global word ids of the shard's mini-batch ``step``."""
    return state.batch(step)[0]


def shard_online_step(state: VBShard, step: int, lam_rows, log_colsum, alpha, max_iter: int, tol: float,
                      evaluate: bool = False):
    """Online VB local step on the shard's mini-batch ``step``: returns (word ids, sstats rows, documents,
    inner iterations, word ids of the next mini-batch, (document terms of the ELBO, tokens) or None).

    The ELBO terms (``evaluate``) are those of the batch's documents under the lambda they were sent, as
    :func:`harmonium.inference.vi.lda_vb.batch_bound` computes them in a single process."""
    ids, batch = state.batch(step)
    elog = digamma(lam_rows) - log_colsum
    gamma = initial_gamma(batch, alpha)
    sstats, iters = _estep(batch, np.exp(elog), alpha, gamma, max_iter, tol)
    bound = None
    if evaluate:
        docs = kv.vb_doc_bound(batch.indptr, batch.indices, batch.data, 0, batch.n_docs, 0, elog, alpha, gamma)
        bound = (float(docs), int(batch.data.sum(dtype=np.int64)))
    return ids, sstats, batch.n_docs, iters, state.batch(step + 1)[0], bound


def merge_rows(parts) -> tuple[np.ndarray, np.ndarray]:
    """Sum row statistics ``[(ids, rows), ...]`` in order: (union of ids, summed rows)."""
    ids = np.unique(np.concatenate([p[0] for p in parts]))
    out = np.zeros((ids.shape[0], parts[0][1].shape[1]))
    for pid, rows in parts:
        out[np.searchsorted(ids, pid)] += rows
    return ids, out


def online_apply(state: OnlineVBState, ids, sstats, n_docs: int, total_docs: int, tau0: float, kappa: float,
                 beta: float) -> tuple[OnlineVBState, float]:
    """The global step of online VB (Hoffman et al. 2010 Algorithm 2, as in ``build_online_kernel``):
    lambda <- (1 - rho) lambda + rho (beta + D / S sstats), on the rows of ``ids`` (u updated in place)."""
    t = state.t + 1
    rho = step_size(t, tau0, kappa)
    scale = total_docs / max(n_docs, 1)
    u, c, usum = state.u_wk, (1.0 - rho) * state.c, state.usum
    if c < 1e-100:
        u *= c
        c = 1.0
        usum = u.sum(axis=0)
    sstats = sstats * (rho * scale / c)
    u[ids] += sstats
    usum = usum + sstats.sum(axis=0)
    if t % 1024 == 0:
        usum = u.sum(axis=0)
    b = (1.0 - rho) * state.b + rho * beta
    return OnlineVBState(u, c, b, usum, t), rho
