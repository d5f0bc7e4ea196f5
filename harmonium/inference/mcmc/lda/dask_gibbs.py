"""AD-LDA on Dask: approximate distributed collapsed Gibbs sampling (Newman et al. 2009).

Seed 003 ("Approximate Collapsed Gibbs Sampling"): drawing z_i given the
*previous* step's estimates of the word-topic counts makes the draws
conditionally independent, hence "easily parallelized". AD-LDA:

1. the documents are cut into P shards (:func:`harmonium.parallel.dask_shards.plan_shards`);
   each shard's tokens, their assignments z and the document-topic counts
   n_dk stay on one worker for the whole run;
2. **local step** (:func:`shard_sweep`): the worker brings its replica of the
   global word-topic counts n_wk, n_k up to date with the merged change it is
   sent, then runs ``sync_every`` exact SparseLDA sweeps of its documents
   against that replica (stale with respect to the other shards), and
   returns its change Delta_p = n_wk^(p) - n_wk as a sparse (index, value)
   list plus the change of n_k: sufficient statistics, no documents;
3. **global step** (:meth:`ADLDADriver.step`): n_wk <- n_wk + sum_p Delta_p
   (integers: exact, order-free), and the merged change sum_p Delta_p goes
   out with the next local step. With P = 1 and ``sync_every = 1`` this is
   the exact collapsed sampler.

Randomness: each local step gets a seed drawn from the driver's Generator
(as :func:`harmonium.parallel.threads.child_generators` does), so a run
depends on the seed and the number of shards only, never on which worker
holds a shard or answers first; a checkpoint needs only the driver's
Generator state, the shards' z, and the iteration.

Checkpoints (:meth:`ADLDADriver.checkpoint`, called by the fit's
:class:`~harmonium.inference.recorder.Recorder`): every worker writes its shard's
z (and Rao-Blackwell sum) to ``<checkpoint>.shards/shard-P-itT.hmn``, then the
driver writes its own checkpoint (n_wk, n_k, phi sum, Generator, trace, the
list of shard files) atomically: that write is the commit. On resume the
workers reload z, recount, and the driver checks the count invariants (the
recounted n_wk equals the checkpointed one, sum_k n_k equals the corpus's
token count, the shards cover every document once) before continuing; the
resumed run is bit-identical to an uninterrupted one.
"""

from __future__ import annotations

import os
import time

import numpy as np

from harmonium._kernels import lda_sparse, lda_stats
from harmonium.errors import CorpusError, ModelFileError
from harmonium.io.modelfile import read_model_file, write_model_file
from harmonium.models.directed.lda import LDAModel, counts_from_assignments
from harmonium.parallel.dask_shards import ShardedRun, open_shard

_INT64_MAX = np.iinfo(np.int64).max


def child_seeds(rng: np.random.Generator, n: int) -> list[int]:
    """``n`` seeds drawn from ``rng``: the same draws as :func:`harmonium.parallel.threads.child_generators`."""
    return [int(s) for s in rng.integers(0, _INT64_MAX, size=n)]


def _sparse(delta: np.ndarray):
    """A count change as (flat indices, values), or (None, dense values) when that is smaller
    (more than half the cells changed: 8 bytes a changed cell against 4 bytes a cell)."""
    flat = delta.ravel()
    idx = np.flatnonzero(flat)
    if 2 * idx.shape[0] > flat.shape[0]:
        return None, flat.astype(np.int32)
    return idx.astype(np.int32 if flat.shape[0] < 2**31 else np.int64), flat[idx].astype(np.int32)


def _add(flat: np.ndarray, change, sign: int = 1) -> None:
    """flat += sign * change, for a change encoded by :func:`_sparse`."""
    idx, val = change
    if idx is None:
        flat += val if sign > 0 else -val
    elif sign > 0:
        flat[idx] += val
    else:
        flat[idx] -= val


# -- worker side: the shard state and the local steps -----------------------------------------------
class ADLDAShard:
    """What a worker holds for one shard: tokens, z, n_dk, a replica of n_wk / n_k, sweep scratch."""

    def __init__(self, spec, n_topics: int):
        data = open_shard(spec)
        self.spec = spec
        self.tokens = data.tokens()
        self.n_words, self.n_topics = data.n_words, int(n_topics)
        self.z = self.n_dk = self.n_wk = self.n_k = None
        self.own = self.own_k = None
        self.theta_sum = np.zeros((data.n_docs, n_topics), dtype=np.float32)
        self.n_samples = 0

    def word_freq(self):
        freq = np.bincount(self.tokens.words, minlength=self.n_words)
        ids = np.flatnonzero(freq)
        return ids.astype(np.int32), freq[ids].astype(np.int64)

    def set_assignments(self, z, global_freq):
        K, V = self.n_topics, self.n_words
        self.z = np.ascontiguousarray(z, dtype=np.int32)
        self.n_dk, self.n_wk, self.n_k = counts_from_assignments(self.tokens.doc_ptr, self.tokens.words, self.z, K, V)
        if not np.array_equal(self.n_dk.sum(axis=1), np.diff(self.tokens.doc_ptr)):
            raise CorpusError(f"shard {self.spec.index}: n_dk does not sum to the document lengths")
        # the replica starts as this shard's own counts: the first merged change (the global counts) replaces them
        self.own = _sparse(self.n_wk)
        self.own_k = self.n_k.copy()
        self.wptr = np.zeros(V + 1, dtype=np.int64)
        np.cumsum(np.minimum(global_freq, K), out=self.wptr[1:])  # global frequencies: a word's list may hold
        self.wtop = np.empty(int(self.wptr[-1]), dtype=np.int64)  # topics seen only on other shards
        self.wlen = np.empty(V, dtype=np.int32)
        self.c, self.qcoef, self.qbuf = (np.empty(K) for _ in range(3))
        self.dtop = np.empty(K, dtype=np.int32)
        self.in_doc = np.zeros(K, dtype=np.uint8)
        self.drow = np.zeros(K, dtype=self.n_dk.dtype)  # the sweep's document-row scratch (unused with n_dk)
        return self.own, self.own_k.copy()


def shard_open(spec, n_topics: int):
    """Local step 0: read the shard; statistics = its word frequencies (ids, counts)."""
    state = ADLDAShard(spec, n_topics)
    return state, state.word_freq()


def shard_assign(state: ADLDAShard, seed: int | None, z_file: str | None, global_freq_ids, global_freq):
    """Local step 1: z drawn uniformly from ``seed``, or reloaded from ``z_file``; statistics = the shard's
    (sparse n_wk, n_k, n_docs, n_tokens)."""
    freq = np.zeros(state.n_words, dtype=np.int64)
    freq[global_freq_ids] = global_freq
    if z_file is not None:
        arrays = read_model_file(z_file, expected_class="ADLDAShard").arrays
        z = arrays["z"]
        if z.shape[0] != state.tokens.words.shape[0]:
            raise ModelFileError(f"{z_file}: {z.shape[0]} assignments for a shard of "
                                 f"{state.tokens.words.shape[0]} tokens")
        state.theta_sum = np.array(arrays["rb_theta_sum"], dtype=np.float32)
        state.n_samples = int(arrays["n_samples"][0])
    else:
        z = np.random.Generator(np.random.PCG64(seed)).integers(0, state.n_topics, size=state.tokens.words.shape[0],
                                                                  dtype=np.int32)
    own, own_k = state.set_assignments(z, freq)
    return own, own_k, int(state.tokens.doc_ptr.shape[0] - 1), int(state.tokens.words.shape[0])


def shard_sweep(state: ADLDAShard, merged, merged_k, seed: int, n_local: int, keep: bool, alpha, beta: float):
    """Local step: apply the merged change, ``n_local`` SparseLDA sweeps, return (own change, n_k change,
    n_changed). Mutates the shard's z, n_dk and replica in place."""
    flat = state.n_wk.ravel()
    _add(flat, state.own, -1)
    _add(flat, merged)
    state.n_k += merged_k - state.own_k
    base, base_k = state.n_wk.copy(), state.n_k.copy()
    rng = np.random.Generator(np.random.PCG64(seed))
    n_changed = 0
    ts = state.tokens
    for _ in range(n_local):
        lda_sparse.build_word_lists(state.n_wk, state.wptr, state.wtop, state.wlen)
        n_changed += lda_sparse.sparse_sweep(rng, ts.doc_ptr, ts.words, state.z, state.n_dk, state.n_wk, state.n_k,
                                             alpha, beta, 0, ts.doc_ptr.shape[0] - 1, state.wptr, state.wtop,
                                             state.wlen, state.c, state.qcoef, state.qbuf, state.dtop, state.in_doc,
                                             state.drow)
    base -= state.n_wk
    base *= -1
    state.own = _sparse(base)
    state.own_k = state.n_k - base_k
    if keep:
        lda_stats.accumulate_theta(state.theta_sum, state.n_dk, alpha)
        state.n_samples += 1
    return state.own, state.own_k, int(n_changed)


def shard_log_joint_docs(state: ADLDAShard, alpha) -> float:
    """The documents' part of log p(w, z): sum_d log B(n_d. + alpha) - log B(alpha)."""
    from scipy.special import gammaln

    a = float(alpha.sum())
    n_d = np.diff(state.tokens.doc_ptr).astype(np.float64)
    total = float((gammaln(a) - gammaln(n_d + a)).sum() - n_d.shape[0] * gammaln(alpha).sum())
    for lo in range(0, n_d.shape[0], 8192):  # blocks: no (D, K) float64 temporaries
        total += float(gammaln(state.n_dk[lo:lo + 8192] + alpha[None, :]).sum())
    return total


def shard_save(state: ADLDAShard, path: str, iteration: int) -> str:
    """Write the shard's z and Rao-Blackwell sum (atomically) to ``path``."""
    write_model_file(path, cls="ADLDAShard", params={"lo": state.spec.lo, "hi": state.spec.hi},
                     arrays={"z": state.z, "rb_theta_sum": state.theta_sum,
                             "n_samples": np.array([state.n_samples], dtype=np.int64)},
                     kind="checkpoint", extra={"iteration": int(iteration)})
    return path


def shard_counts(state: ADLDAShard):
    """The shard's counts recomputed from z (invariant checks): sparse n_wk, n_k."""
    _, n_wk, n_k = counts_from_assignments(state.tokens.doc_ptr, state.tokens.words, state.z, state.n_topics,
                                           state.n_words)
    return _sparse(n_wk), n_k


def shard_doc_topic(state: ADLDAShard, alpha):
    """theta_hat of the shard's documents (float32, rows sum to one)."""
    if state.n_samples:
        theta = state.theta_sum.copy()
    else:
        theta = (state.n_dk + alpha[None, :]).astype(np.float32)
    return theta / theta.sum(axis=1, keepdims=True)


# -- driver side: the global step ------------------------------------------------------------------
class ADLDADriver:
    """Drives AD-LDA over a :class:`ShardedRun`: merges the shards' statistics and checkpoints.

    The driver holds O(V K) state (n_wk, n_k, the Rao-Blackwell phi sum) and
    the document ranges of the shards, never documents or z.
    """

    def __init__(self, run: ShardedRun, model: LDAModel, n_topics: int, *, sync_every: int = 1,
                 checkpoint_path=None):
        self.run, self.model, self.K = run, model, int(n_topics)
        self.V = model.n_words
        self.sync_every = int(sync_every)
        self.checkpoint_path = None if checkpoint_path is None else os.fspath(checkpoint_path)
        self.phi_wk_sum = np.zeros((self.V, self.K))
        self.n_samples = 0
        self.shard_files: list[str] = []
        self.n_tokens = 0
        self.merged = (np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32))
        self.merged_k = np.zeros(self.K, dtype=np.int32)

    # -- setting up the shards --------------------------------------------------------------------
    def _open(self, seeds, z_files):
        run = self.run
        freqs = run.place(shard_open, [(self.K,)] * run.n_shards)
        total = np.zeros(self.V, dtype=np.int64)
        for ids, counts in freqs:
            total[ids] += counts
        ids = np.flatnonzero(total).astype(np.int32)
        outs = run.map(shard_assign, [(seeds[p], z_files[p], ids, total[ids]) for p in range(run.n_shards)])
        n_wk = np.zeros(self.V * self.K, dtype=np.int64)
        n_k = np.zeros(self.K, dtype=np.int64)
        n_docs = n_tokens = 0
        for own, own_k, d, n in outs:
            _add(n_wk, own)
            n_k += own_k
            n_docs += d
            n_tokens += n
        self.n_wk = n_wk.reshape(self.V, self.K).astype(np.int32)
        self.n_k = n_k.astype(np.int32)
        self.n_tokens = n_tokens
        specs = run.specs
        covered = all(specs[p].hi == specs[p + 1].lo for p in range(len(specs) - 1)) and specs[0].lo == 0
        if not covered or int(self.n_k.sum()) != n_tokens or not np.array_equal(self.n_wk.sum(axis=0), self.n_k):
            raise CorpusError("AD-LDA count invariants fail after loading the shards: documents lost or counted twice")
        # the first merged change is the global table itself (each replica holds only its own counts)
        self.merged = _sparse(self.n_wk)
        self.merged_k = self.n_k.copy()
        return n_docs

    def start(self, rng: np.random.Generator) -> None:
        """Read the shards and draw every z uniformly (a seed per shard from ``rng``)."""
        self._open(child_seeds(rng, self.run.n_shards), [None] * self.run.n_shards)

    # -- one global step ----------------------------------------------------------------------------
    def step(self, rng: np.random.Generator, keep: bool) -> int:
        """``sync_every`` sweeps on every shard, then the merge. Returns the number of changed z."""
        seeds = child_seeds(rng, self.run.n_shards)
        outs = self.run.map(shard_sweep, [(self.merged, self.merged_k, seeds[p], self.sync_every, keep,
                                           self.model.alpha, self.model.beta) for p in range(self.run.n_shards)])
        total = np.zeros(self.V * self.K, dtype=np.int32)
        total_k = np.zeros(self.K, dtype=np.int32)
        n_changed = 0
        for own, dk, changed in outs:
            _add(total, own)
            total_k += dk
            n_changed += changed
        self.n_wk.ravel()[:] += total
        self.n_k += total_k
        self.merged = _sparse(total)
        self.merged_k = total_k
        if keep:
            lda_stats.accumulate_phi(self.phi_wk_sum, self.n_wk, self.n_k, float(self.model.beta))
            self.n_samples += 1
        return n_changed

    def log_joint(self) -> float:
        """log p(w, z | alpha, beta): the documents' part from the shards, the topics' part here."""
        from scipy.special import gammaln

        docs = sum(self.run.map(shard_log_joint_docs, [(self.model.alpha,)] * self.run.n_shards))
        b, vb = self.model.beta, self.V * self.model.beta
        words = (gammaln(vb) - gammaln(self.n_k + vb)).sum() + (gammaln(self.n_wk + b) - gammaln(b)).sum()
        return float(docs + words)

    def check_invariants(self) -> None:
        """Recount n_wk, n_k from every shard's z and compare with the merged tables."""
        outs = self.run.map(shard_counts, [()] * self.run.n_shards)
        n_wk = np.zeros(self.V * self.K, dtype=np.int64)
        n_k = np.zeros(self.K, dtype=np.int64)
        for own, k in outs:
            _add(n_wk, own)
            n_k += k
        if not (np.array_equal(n_wk.reshape(self.V, self.K), self.n_wk) and np.array_equal(n_k, self.n_k)
                and int(n_k.sum()) == self.n_tokens):
            raise CorpusError("AD-LDA count invariants fail: the shards' z do not add up to the merged counts")

    # -- checkpoints -----------------------------------------------------------------------------------
    def shard_dir(self) -> str:
        return self.checkpoint_path + ".shards"

    def checkpoint(self, iteration: int, save) -> None:
        """Shards write their z, then ``save(iteration, arrays, extra)`` commits the driver's checkpoint
        atomically (:meth:`harmonium.inference.recorder.Recorder.save`); older shard files go after."""
        d = self.shard_dir()
        os.makedirs(d, exist_ok=True)
        files = [os.path.join(d, f"shard-{p:05d}-it{iteration}.hmn") for p in range(self.run.n_shards)]
        self.run.map(shard_save, [(files[p], iteration) for p in range(self.run.n_shards)])
        save(iteration, {"n_wk": self.n_wk, "n_k": self.n_k, "rb_phi_wk_sum": self.phi_wk_sum,
                         "alpha": self.model.alpha},
             {"beta": self.model.beta, "n_samples": self.n_samples, "distributed": "adlda",
              "shards": [[s.lo, s.hi, os.path.basename(f)] for s, f in zip(self.run.specs, files, strict=True)]})
        for old in self.shard_files:
            if old not in files and os.path.exists(old):
                os.unlink(old)
        self.shard_files = files

    def restore(self, ckpt):
        """Rebuild every shard from the checkpoint ``ckpt`` (its shard files) and check the counts against it."""
        shards = ckpt.extra.get("shards")
        if ckpt.extra.get("distributed") != "adlda" or shards is None:
            raise ModelFileError(f"{self.checkpoint_path} is not a checkpoint of a distributed AD-LDA run")
        if [(s.lo, s.hi) for s in self.run.specs] != [(a, b) for a, b, _ in shards]:
            raise ModelFileError(f"{self.checkpoint_path} was written with other shards "
                                 f"({len(shards)}); resume with the same n_shards")
        files = [os.path.join(self.shard_dir(), f) for _, _, f in shards]
        self._open([None] * self.run.n_shards, files)
        if not (np.array_equal(self.n_wk, ckpt.arrays["n_wk"]) and np.array_equal(self.n_k, ckpt.arrays["n_k"])):
            raise CorpusError(f"{self.checkpoint_path}: the shards' z do not add up to the checkpointed counts "
                              "(documents lost or counted twice)")
        self.phi_wk_sum = np.array(ckpt.arrays["rb_phi_wk_sum"])
        self.n_samples = int(ckpt.extra["n_samples"])
        self.shard_files = files
        return self

    def recover(self, ckpt):
        """After :class:`~harmonium.parallel.dask_shards.WorkerLost`: new shard states on the workers alive now
        (waiting up to 30 s for one), rebuilt from the checkpoint ``ckpt``."""
        self.run.replace()
        deadline = time.monotonic() + 30
        while not self.run.workers() and time.monotonic() < deadline:
            time.sleep(0.2)
        return self.restore(ckpt)

    def doc_topic(self) -> np.ndarray:
        return np.concatenate(self.run.map(shard_doc_topic, [(self.model.alpha,)] * self.run.n_shards), axis=0)

    def topic_word(self) -> np.ndarray:
        if self.n_samples:
            phi = (self.phi_wk_sum / self.n_samples).T
        else:
            phi = ((self.n_wk + self.model.beta) / (self.n_k + self.V * self.model.beta)).T
        return phi / phi.sum(axis=1, keepdims=True)
