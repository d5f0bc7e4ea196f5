"""Data-parallel training on Dask (``distributed``): shards, worker-held state, one contract.

Every distributed algorithm in harmonium is written as two functions:

* a **local step** ``fn(shard_state, *args) -> statistics`` that runs on the
  worker holding a shard of the corpus, mutates that shard's private state
  (topic assignments, gamma...) and returns *sufficient statistics* only
  (count deltas, expected counts), never documents;
* a **global step** on the driver that merges the statistics of all shards in
  shard order (so the result does not depend on which worker answers first)
  and decides what the next local steps receive.

This module is the part that knows about Dask and nothing about models:

* :func:`plan_shards` cuts an on-disk corpus (:mod:`harmonium.corpus.ondisk`)
  into contiguous document ranges of about equal numbers of entries, reading
  only its ``indptr``. Workers open their own range of the memory-mapped
  files (:func:`open_shard`): the driver never holds the corpus.
* :class:`ShardedRun` places one state object per shard in a worker process
  (a module-level store in that process, keyed by run and shard), sends local
  steps to the worker that owns each shard, and gathers their results. If the
  owner of a shard leaves the cluster (killed, lost), :class:`WorkerLost` is
  raised at once instead of waiting forever; the caller then rebuilds the
  shards from its last checkpoint (:meth:`ShardedRun.replace`).
* ``client=None`` runs the very same local steps in this process, one shard
  after another: the reference that a Dask run must reproduce bit for bit.
* :func:`sharded_run` opens a whole run for an estimator: the data as an
  on-disk corpus (a temporary copy when they are in memory), its shards on
  the cluster, and the clean-up; :func:`n_shards_of` and
  :func:`ondisk_fingerprint` are the checks every distributed fit shares.
* Bytes moved are counted: the array payload of every argument sent to a
  worker and every result received (:attr:`ShardedRun.bytes_sent`,
  :attr:`ShardedRun.bytes_received`).

Seed 003 ("Approximate Collapsed Gibbs Sampling"): conditionally independent
draws are "easily parallelized"; Newman et al. (2009) AD-LDA and the
distributed E-step of Hoffman et al. (2010) are the two strategies built on it
(:mod:`harmonium.inference.mcmc.lda.dask_gibbs`, :mod:`harmonium.inference.vi.lda_dask_vb`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from harmonium.corpus.corpus import Corpus
from harmonium.corpus.ondisk import build_ondisk_corpus, open_ondisk_corpus, release_pages
from harmonium.errors import CorpusError, InvalidParameterError

__all__ = ["ShardData", "ShardSpec", "ShardedRun", "WorkerLost", "metered", "n_shards_of", "new_stats",
           "ondisk_fingerprint", "open_shard", "payload_nbytes", "plan_shards", "sharded_run"]

#: Worker-process-local store of shard states: (run id, shard index) -> state.
_STORE: dict = {}
#: Arguments larger than this go to the worker directly (``scatter(direct=True)``), not inside the task.
DIRECT_BYTES = 1 << 16


class WorkerLost(RuntimeError):  # noqa: N818 - the name says what happened
    """A worker holding shard state left the cluster; the run must be rebuilt from a checkpoint."""


@dataclass(frozen=True)
class ShardSpec:
    """Documents ``lo .. hi-1`` of the on-disk corpus at ``path`` (entries ``entry_lo .. entry_hi-1``)."""

    path: str
    index: int
    lo: int
    hi: int
    entry_lo: int
    entry_hi: int


class ShardData:
    """One shard's CSR counts, copied out of the memory map (bounded by the shard's size)."""

    def __init__(self, indptr, indices, data, n_words: int):
        self.indptr, self.indices, self.data, self.n_words = indptr, indices, data, int(n_words)

    @property
    def n_docs(self) -> int:
        return self.indptr.shape[0] - 1

    def tokens(self):
        """The token stream (doc_ptr int64, words int32), tokens of a document in word-id order,
        as :meth:`harmonium.corpus.Corpus.tokens` makes it."""
        from harmonium.corpus.corpus import TokenStream

        words = np.repeat(self.indices, self.data).astype(np.int32, copy=False)
        running = np.zeros(self.data.shape[0] + 1, dtype=np.int64)
        np.cumsum(self.data, out=running[1:])
        return TokenStream(running[self.indptr], words)


def plan_shards(path, n_shards: int) -> list[ShardSpec]:
    """Cut the on-disk corpus at ``path`` into at most ``n_shards`` ranges of about equal entries.

    Reads the manifest and ``indptr`` only (n_docs + 1 integers).
    """
    if isinstance(n_shards, bool) or not isinstance(n_shards, (int, np.integer)) or n_shards < 1:
        raise InvalidParameterError(f"The 'n_shards' parameter must be an int >= 1. Got {n_shards!r}.")
    path = os.path.abspath(os.fspath(path))
    corpus = open_ondisk_corpus(path, verify=False)
    indptr = np.asarray(corpus.counts.indptr, dtype=np.int64)
    n_docs = indptr.shape[0] - 1
    if n_docs == 0:
        raise CorpusError(f"on-disk corpus {path!r} has no documents (plan_shards).")
    n = max(1, min(int(n_shards), n_docs))
    cuts = np.searchsorted(indptr, indptr[-1] * np.arange(1, n) / n, side="left").clip(0, n_docs)
    bounds = [0, *sorted(int(c) for c in cuts), n_docs]
    return [ShardSpec(path, p, bounds[p], bounds[p + 1], int(indptr[bounds[p]]), int(indptr[bounds[p + 1]]))
            for p in range(n) if bounds[p + 1] > bounds[p]]


def open_shard(spec: ShardSpec) -> ShardData:
    """Read one shard's documents from the memory-mapped files (on the worker), checking its word ids."""
    corpus = open_ondisk_corpus(spec.path, verify=False)
    m = corpus.counts
    a, b = spec.entry_lo, spec.entry_hi
    if int(m.indptr[spec.lo]) != a or int(m.indptr[spec.hi]) != b:
        raise CorpusError(f"on-disk corpus {spec.path!r} changed since the shards were planned (shard {spec.index}).")
    indptr = np.asarray(m.indptr[spec.lo:spec.hi + 1], dtype=np.int64) - a
    indices = np.array(m.indices[a:b], dtype=np.int32)
    data = np.array(m.data[a:b], dtype=np.int32)
    release_pages(m.indices)
    release_pages(m.data)
    if indices.size and (indices.min() < 0 or indices.max() >= corpus.n_words or data.min() < 1):
        raise CorpusError(f"shard {spec.index} of {spec.path!r} (documents {spec.lo}..{spec.hi - 1}) has word ids "
                          f"outside 0..{corpus.n_words - 1} or counts < 1.")
    return ShardData(indptr, indices, data, corpus.n_words)


def payload_nbytes(obj) -> int:
    """Bytes of array payload in ``obj`` (arrays, scalars, nested tuples/lists/dicts): what a transfer moves
    apart from a small framing overhead."""
    if isinstance(obj, np.ndarray):
        return int(obj.nbytes)
    if isinstance(obj, (bytes, bytearray)):
        return len(obj)
    if isinstance(obj, (tuple, list)):
        return sum(payload_nbytes(o) for o in obj)
    if isinstance(obj, dict):
        return sum(payload_nbytes(o) for o in obj.values())
    if isinstance(obj, ShardSpec):
        return len(obj.path) + 32
    params = getattr(obj, "params", None)  # a model (e.g. a Harmonium): its parameter arrays
    if isinstance(params, dict):
        return payload_nbytes(params) + 8
    return 8


# -- worker side ------------------------------------------------------------------------------------
def _place(run_id: str, spec: ShardSpec, init, args):
    state, out = init(spec, *args)
    _STORE[(run_id, spec.index)] = state
    return out


def _call(run_id: str, index: int, fn, args):
    try:
        state = _STORE[(run_id, index)]
    except KeyError:
        raise WorkerLost(f"shard {index} of run {run_id} is not held by this worker (it was restarted)") from None
    return fn(state, *args)


def _unpack(fn, packed):
    return fn(*packed)


def _drop(run_id: str) -> int:
    keys = [k for k in _STORE if k[0] == run_id]
    for k in keys:
        del _STORE[k]
    return len(keys)


def _worker_rss() -> int:
    import resource

    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024


# -- driver side ------------------------------------------------------------------------------------
class ShardedRun:
    """Shard states held by Dask workers (or in this process when ``client`` is None).

    Parameters
    ----------
    client : distributed.Client or None
    specs : list of ShardSpec
    poll_s : float
        How often a wait checks that the owners of the shards are still alive.
    """

    def __init__(self, client, specs: list[ShardSpec], *, poll_s: float = 0.25):
        self.client = client
        self.specs = list(specs)
        self.poll_s = poll_s
        self.run_id = uuid.uuid4().hex[:12]
        self.owners: list[str | None] = [None] * len(self.specs)
        self.bytes_sent = 0
        self.bytes_received = 0
        self._step = 0
        #: Workers found unreachable: never given shards again by :meth:`place`, even while the scheduler
        #: still lists them.
        self.lost: set[str] = set()
        #: The workers' peak memory, set by :func:`sharded_run` when its block completes.
        self.peak_rss_bytes: dict | None = None

    @property
    def n_shards(self) -> int:
        return len(self.specs)

    def workers(self) -> list[str]:
        """The addresses of the cluster's workers, asked of the scheduler now.

        Not ``Client.scheduler_info()``: that returns the client's cached identity, which its periodic refresh
        (every 2 s) overwrites with one that lists no workers (distributed 2026.8, ``n_workers=0``); read between
        the two, every owner looked gone, and a CI run under load raised WorkerLost with both workers alive."""
        if self.client is None:
            return []
        return sorted(self.client.sync(self.client.scheduler.identity, n_workers=-1)["workers"])

    def _submit(self, fn, p: int, *args):
        self._step += 1
        size = payload_nbytes(args)
        self.bytes_sent += size
        where = [self.owners[p]]
        if size > DIRECT_BYTES:  # straight to the worker, not through the scheduler inside the task
            try:
                packed = self.client.scatter([args], workers=where, direct=True, hash=False)[0]
            except OSError as e:  # CommClosedError: the owner died before the scheduler noticed
                self.lost.add(where[0])
                raise WorkerLost(f"the worker holding shard {p} ({where[0]}) cannot be reached: {e}") from e
            return self.client.submit(_unpack, fn, packed, workers=where, allow_other_workers=False, pure=False,
                                      key=f"harmonium-{self.run_id}-{self._step}-{p}")
        return self.client.submit(fn, *args, workers=where, allow_other_workers=False, pure=False,
                                  key=f"harmonium-{self.run_id}-{self._step}-{p}")

    def _gather(self, futures) -> list:
        from distributed import wait

        while True:
            try:  # wait() raises TimeoutError when the futures are not all done in time
                wait(futures, timeout=self.poll_s, return_when="ALL_COMPLETED")
            except TimeoutError:
                pass
            errors = [f for f in futures if f.status == "error"]
            if errors:
                exc = errors[0].exception()
                self.client.cancel(futures)
                if isinstance(exc, WorkerLost) or type(exc).__name__ in ("KilledWorker", "CommClosedError"):
                    raise WorkerLost(str(exc)) from exc
                raise exc
            not_done = [p for p, f in enumerate(futures) if not f.done()]
            if not not_done:
                break
            alive = set(self.workers())
            lost = [p for p in not_done if self.owners[p] not in alive]
            if lost:
                self.lost.update(self.owners[p] for p in lost)
                self.client.cancel(futures)
                raise WorkerLost(f"the worker holding shard {lost[0]} ({self.owners[lost[0]]}) left the cluster")
        results = self.client.gather(futures, direct=True)
        self.bytes_received += payload_nbytes(results)
        return results

    def place(self, init, args_per_shard) -> list:
        """Create every shard's state on its worker: ``init(spec, *args) -> (state, statistics)``.

        Shards go round-robin over the workers alive now; returns the statistics in shard order.
        """
        if self.client is None:
            return [_place(self.run_id, spec, init, args) for spec, args in zip(self.specs, args_per_shard,
                                                                                 strict=True)]
        workers = [w for w in self.workers() if w not in self.lost]
        if not workers:
            raise WorkerLost("the Dask cluster has no workers")
        self.owners = [workers[p % len(workers)] for p in range(self.n_shards)]
        return self._gather(self._submit_all([(_place, p, self.run_id, spec, init, args) for p, (spec, args)
                                              in enumerate(zip(self.specs, args_per_shard, strict=True))]))

    def map(self, fn, args_per_shard) -> list:
        """The local step ``fn(state, *args)`` on every shard; the results in shard order."""
        if self.client is None:
            out = [_call(self.run_id, p, fn, args) for p, args in enumerate(args_per_shard)]
            return out
        return self._gather(self._submit_all([(_call, p, self.run_id, p, fn, args)
                                              for p, args in enumerate(args_per_shard)]))

    def _submit_all(self, calls) -> list:
        """Submit every shard's task; if one cannot be sent (WorkerLost) the ones already sent are cancelled."""
        futures = []
        try:
            for fn, p, *args in calls:
                futures.append(self._submit(fn, p, *args))
        except WorkerLost:
            self.client.cancel(futures)
            raise
        return futures

    def replace(self) -> None:
        """Forget every shard state (after a lost worker) under a new run id; call :meth:`place` again."""
        self.close()
        self.run_id = uuid.uuid4().hex[:12]

    def close(self) -> None:
        """Drop this run's shard states from every worker (or this process)."""
        if self.client is None:
            _drop(self.run_id)
            return
        try:  # not to workers found dead: a broadcast would retry connecting to them for up to 30 s
            workers = [w for w in self.workers() if w not in self.lost]
            if workers:
                self.client.run(_drop, self.run_id, workers=workers)
        except (OSError, TimeoutError):  # a worker going away while we clean up holds nothing of ours
            time.sleep(0)

    def peak_rss(self) -> dict:
        """Peak resident set size of every worker process (bytes), or of this process."""
        if self.client is None:
            return {"driver": _worker_rss()}
        return dict(self.client.run(_worker_rss))


# -- opening a run for an estimator ------------------------------------------------------------------
def n_shards_of(client, n_shards, where: str) -> int:
    """``n_shards`` checked (an int >= 1), or the number of ``client``'s workers when it is None."""
    if n_shards is None:
        if client is None:
            raise InvalidParameterError(f"{where} with client=None needs n_shards (the in-process reference run).")
        n_shards = len(client.scheduler_info()["workers"])
    if isinstance(n_shards, bool) or not isinstance(n_shards, (int, np.integer)) or n_shards < 1:
        raise InvalidParameterError(f"The 'n_shards' parameter of {where} must be an int >= 1. Got {n_shards!r}.")
    return int(n_shards)


def ondisk_fingerprint(path: str) -> dict:
    """:meth:`Corpus.fingerprint` ``("lengths")`` of the on-disk corpus at ``path`` (indptr only: cheap at any size)."""
    return open_ondisk_corpus(path, verify=False).fingerprint("lengths")


def _ondisk_path(X, coerce: Callable, tmp_holder: list) -> str:
    """The directory of an on-disk corpus for ``X`` (``coerce(X)`` written to a temporary directory if in memory)."""
    if isinstance(X, (str, os.PathLike)):
        return os.path.abspath(os.fspath(X))
    if isinstance(X, Corpus):
        filename = getattr(X.counts.data, "filename", None)
        if filename is not None and os.path.exists(os.path.join(os.path.dirname(filename), "manifest.json")):
            return os.path.dirname(os.path.abspath(filename))
    corpus = coerce(X)
    tmp = tempfile.mkdtemp(prefix="harmonium-shards-")
    tmp_holder.append(tmp)
    build_ondisk_corpus([corpus], tmp, corpus.vocabulary)
    return tmp


@contextmanager
def sharded_run(X, client, n_shards: int, coerce: Callable):
    """``(run, path)``: ``X`` as an on-disk corpus at ``path`` and the :class:`ShardedRun` of its ``n_shards``
    shards on ``client``'s cluster.

    ``X`` is the path of an on-disk corpus, a Corpus opened from one, or
    in-memory data that ``coerce(X) -> Corpus`` converts and that is then
    written to a temporary directory. When the block completes,
    ``run.peak_rss_bytes`` holds the workers' peak memory
    (:meth:`ShardedRun.peak_rss`); always, the run is closed and the
    temporary copy removed.
    """
    tmp: list = []
    try:
        path = _ondisk_path(X, coerce, tmp)
        run = ShardedRun(client, plan_shards(path, n_shards))
        try:
            yield run, path
            run.peak_rss_bytes = run.peak_rss()
        finally:
            run.close()
    finally:
        for d in tmp:
            shutil.rmtree(d, ignore_errors=True)


def metered(kernel, run: ShardedRun, stats: dict, seconds_key: str = "step_seconds"):
    """``kernel`` that also appends its bytes sent and received and its seconds to ``stats`` (when it completes)."""

    def step(*args):
        sent, received, ts = run.bytes_sent, run.bytes_received, time.perf_counter()
        out = kernel(*args)
        stats[seconds_key].append(time.perf_counter() - ts)
        stats["bytes_sent"].append(run.bytes_sent - sent)
        stats["bytes_received"].append(run.bytes_received - received)
        return out

    return step


def new_stats(run: ShardedRun, seconds_key: str = "step_seconds", **extra) -> dict:
    """The ``dask_stats_`` of a run before its first step."""
    return {"bytes_sent": [], "bytes_received": [], seconds_key: [], "recoveries": 0, "n_shards": run.n_shards,
            **extra}
