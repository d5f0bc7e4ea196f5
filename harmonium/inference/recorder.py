"""The one recorder of a fit: trace, checkpoints and resume, as the callback of :func:`~harmonium.inference.run.run`.

Every estimator that loops an algorithm hands a :class:`Recorder` to the
driver as its ``callback``. After each iteration ``it`` the recorder, in this
order,

1. runs the estimator's ``step(it, state, info)`` (what follows a sweep:
   averaging samples, moving hyperparameters, keeping a per-iteration count);
2. calls the user's ``callback(it, n_iter, info)``; True stops the run;
3. every ``evaluate_every`` iterations and at the last one, appends the
   estimator's ``evaluate(it, state, info)`` (a dict of trace values) to the
   trace, and stops when ``converged(trace)`` says so;
4. every ``checkpoint_every`` iterations and at the last one, writes a
   checkpoint (atomically, :func:`harmonium.io.save_checkpoint`) holding the
   estimator's ``snapshot(state)`` arrays and extras, the trace, the data's
   fingerprint, the seed and the bit generator state.

:meth:`Recorder.begin` opens a fit: a fresh Generator from ``random_state``,
or, with ``resume=True`` and an existing checkpoint, the checkpoint's
Generator, trace and iteration after the estimator's ``check`` has accepted
it. The estimator then rebuilds its state from :attr:`Recorder.checkpoint` and
the run continues where it stopped, bit for bit (see
:mod:`harmonium.io.checkpoint` for the three conditions that makes exact).

Distributed fits (:mod:`harmonium.parallel.dask_shards`) use the same
recorder with three more hooks of :meth:`Recorder.drive`: ``checkpoint``
writes a checkpoint whose state is partly held by workers (the shards write
their files, then :meth:`Recorder.save` commits, then older shard files go),
``evaluate_due`` replaces the ``evaluate_every`` schedule (a step of several
iterations), and ``recover`` rebuilds the shards after a lost worker: the
recorder then reloads its last checkpoint (:meth:`Recorder.adopt`) and the
run goes on from there, as a resumed run would.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from harmonium.inference.run import run
from harmonium.io import load_checkpoint, save_checkpoint
from harmonium.parallel.dask_shards import WorkerLost
from harmonium.parallel.seeds import check_random_state

__all__ = ["Recorder"]


class Recorder:
    """Trace, checkpoints and resume of one fit: the ``callback`` of the driver :func:`run`.

    Parameters
    ----------
    cls : str
        The estimator's class name: the checkpoint's class, and the name in messages.
    n_iter : int
        The last iteration of the run (the user callback's second argument).
    trace_keys : iterable of str
        The columns of a fresh trace (a resumed one has the checkpoint's).
    params : dict
        The estimator's JSON hyperparameters, stored in each checkpoint.
    fingerprint : dict, optional
        The data's fingerprint, stored under ``data_key`` in each checkpoint.
    data_key : str, default "corpus"
        The checkpoint extra that holds ``fingerprint``.
    checkpoint_path : str or path-like, optional
        Where to write checkpoints; None writes none.
    checkpoint_every : int, default 50
        Iterations between checkpoints (one is always written at the last).
    evaluate_every : int, default 1
        Iterations between trace rows (one is always written at the last); 0: the last only.
    callback : callable, optional
        The user's ``callback(iteration, n_iter, info)``; True stops the run.

    Attributes
    ----------
    rng : numpy.random.Generator
        The run's Generator (after :meth:`begin`).
    seed : int or None
        The seed that reproduces the run (the checkpoint's when resumed).
    start : int
        The iteration the run starts after (the checkpoint's, or 0).
    checkpoint : harmonium.io.Checkpoint or None
        The checkpoint resumed from.
    trace : dict of lists
    recoveries : int
        Lost workers recovered from (``recover`` of :meth:`drive`).
    """

    def __init__(self, cls: str, n_iter: int, trace_keys: Iterable[str], *, params: dict,
                 fingerprint: dict | None = None, data_key: str = "corpus", checkpoint_path=None,
                 checkpoint_every: int = 50, evaluate_every: int = 1, callback: Callable | None = None):
        self.cls = cls
        self.n_iter = int(n_iter)
        self.params = params
        self.fingerprint = fingerprint
        self.data_key = data_key
        self.checkpoint_path = checkpoint_path
        self.checkpoint_every = int(checkpoint_every)
        self.evaluate_every = int(evaluate_every)
        self.callback = callback
        self.trace: dict = {k: [] for k in trace_keys}
        self.rng: np.random.Generator | None = None
        self.seed = None
        self.start = 0
        self.checkpoint = None
        self.recoveries = 0
        self._t0 = time.perf_counter()
        self._hooks: dict = {}

    # -- opening a fit ---------------------------------------------------------------------
    def begin(self, random_state, *, resume: bool = False, check: Callable | None = None):
        """Start fresh from ``random_state``, or resume from ``checkpoint_path`` when ``resume`` and it exists.

        ``check(checkpoint)`` raises if the checkpoint belongs to another run
        (the estimator's hyperparameter, seed and data checks). Returns the
        checkpoint resumed from, or None.
        """
        ckpt = None
        if resume and self.checkpoint_path is not None and os.path.exists(self.checkpoint_path):
            ckpt = load_checkpoint(self.checkpoint_path, expected_class=self.cls)
            if check is not None:
                check(ckpt)
        if ckpt is not None:
            self.adopt(ckpt)
        else:
            self.rng, self.seed = check_random_state(random_state, self.cls)
            self.checkpoint = None
        return ckpt

    def adopt(self, ckpt) -> None:
        """Continue from ``ckpt``: its Generator, seed, iteration and trace (the clock goes on from its time)."""
        self.rng, self.seed = ckpt.rng, ckpt.extra.get("seed")
        self.start = int(ckpt.iteration)
        self.trace = {k: list(v) for k, v in ckpt.trace.items()}
        self.checkpoint = ckpt
        seconds = self.trace.get("seconds")
        self._t0 = time.perf_counter() - (seconds[-1] if seconds else 0.0)

    def seconds(self) -> float:
        """Seconds of fitting so far (a resumed run counts those before its checkpoint)."""
        return time.perf_counter() - self._t0

    # -- the loop ----------------------------------------------------------------------------
    def drive(self, kernel: Callable, state: Any, data: Any, model: Any, *, evaluate: Callable,
              snapshot: Callable | None = None, step: Callable | None = None, converged: Callable | None = None,
              n_iter: int | None = None, checkpoint: Callable | None = None, evaluate_due: Callable | None = None,
              recover: Callable | None = None, max_recoveries: int = 3):
        """Run ``kernel`` with :func:`run` from :attr:`start` to ``n_iter``, this recorder as the callback.

        ``evaluate(it, state, info) -> dict`` gives a trace row (None: no row this time); ``snapshot(state) ->
        (arrays, extra)`` what a checkpoint stores beyond the fingerprint and seed (needed when
        ``checkpoint_path`` is set); ``step(it, state, info)`` runs first after every iteration;
        ``converged(trace) -> bool`` stops the run after a trace row. Returns ``(state, last_iteration)``.

        For state held by workers: ``checkpoint(it, state)`` writes a checkpoint in place of ``snapshot``
        (calling :meth:`save` itself); ``evaluate_due(it) -> bool`` says when a trace row is due in place of
        ``evaluate_every``; ``recover(checkpoint) -> state``, after a
        :class:`~harmonium.parallel.dask_shards.WorkerLost`, rebuilds the state from the last checkpoint (which
        this recorder then adopts, :meth:`adopt`) and the run goes on, at most ``max_recoveries`` times;
        without a checkpoint the error is raised.
        """
        self._hooks = {"evaluate": evaluate, "snapshot": snapshot, "step": step, "converged": converged,
                       "checkpoint": checkpoint, "evaluate_due": evaluate_due}
        n_iter = self.n_iter if n_iter is None else n_iter
        while True:
            try:
                return run(self.rng, kernel, state, data, model, n_iter, start=self.start, callback=self)
            except WorkerLost as lost:
                self.recoveries += 1
                if recover is None:
                    raise
                if (self.checkpoint_path is None or not os.path.exists(self.checkpoint_path)
                        or self.recoveries > max_recoveries):
                    raise WorkerLost(f"{lost}; a worker was lost and there is no checkpoint to resume from (set "
                                     f"checkpoint_path) or the {max_recoveries} retries are spent") from lost
                ckpt = load_checkpoint(self.checkpoint_path, expected_class=self.cls)
                state = recover(ckpt)
                self.adopt(ckpt)

    def _evaluate_due(self, it: int) -> bool:
        due = self._hooks.get("evaluate_due")
        if due is not None:
            return bool(due(it))
        return bool(self.evaluate_every) and it % self.evaluate_every == 0

    def __call__(self, it: int, state, info) -> bool:
        hooks = self._hooks
        if hooks.get("step") is not None:
            hooks["step"](it, state, info)
        stop = bool(self.callback(it, self.n_iter, info)) if self.callback is not None else False
        last = stop or it == self.n_iter
        if self._evaluate_due(it) or last:
            row = hooks["evaluate"](it, state, info)
            if row is not None:
                self.record(row)
                if hooks.get("converged") is not None and hooks["converged"](self.trace):
                    stop = last = True
        if self.checkpoint_path is not None and (it % self.checkpoint_every == 0 or last):
            if hooks.get("checkpoint") is not None:
                hooks["checkpoint"](it, state)
            else:
                arrays, extra = hooks["snapshot"](state)
                self.save(it, arrays, extra)
        return stop

    def record(self, row: dict) -> None:
        """Append one trace row (``"seconds"`` is filled in when the trace has that column and the row not)."""
        if "seconds" in self.trace and "seconds" not in row:
            row = {**row, "seconds": self.seconds()}
        for key in self.trace:
            if key in row:
                self.trace[key].append(row[key])

    def save(self, iteration: int, arrays: dict, extra: dict | None = None) -> None:
        """Write a checkpoint after ``iteration``: ``arrays``, the trace, the fingerprint, seed and Generator."""
        head = {} if self.fingerprint is None else {self.data_key: self.fingerprint}
        save_checkpoint(self.checkpoint_path, cls=self.cls, params=self.params, state_arrays=arrays, rng=self.rng,
                        iteration=iteration, trace=self.trace, extra={**head, "seed": self.seed, **(extra or {})})
