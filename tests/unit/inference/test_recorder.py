"""The fit recorder on a toy chain: trace rows when due, checkpoints when due and at the last iteration,
a user callback that stops, convergence, and a resumed run identical to an uninterrupted one."""

from __future__ import annotations

import numpy as np
import pytest

from harmonium.inference.recorder import Recorder
from harmonium.io import load_checkpoint


def _kernel(rng, state, data, model):
    x = state + rng.standard_normal(2)
    return x, float(np.abs(x).sum())


def _fit(path, n_iter=10, *, resume=False, callback=None, evaluate_every=2, every=3, check=None, converged=None):
    rec = Recorder("Toy", n_iter, ("iteration", "size", "seconds"), params={"n_iter": n_iter},
                   fingerprint={"n": 2}, checkpoint_path=path, checkpoint_every=every,
                   evaluate_every=evaluate_every, callback=callback)
    rec.begin(7, resume=resume, check=check)
    state = np.array(rec.checkpoint.arrays["x"]) if rec.checkpoint is not None else np.zeros(2)
    saved = []

    def snapshot(st):
        saved.append(rec.rng.bit_generator.state["state"]["state"])
        return {"x": st}, {"note": 1}

    state, last = rec.drive(_kernel, state, None, None, snapshot=snapshot, converged=converged,
                            evaluate=lambda it, st, info: {"iteration": it, "size": info})
    return rec, state, last, saved


def test_trace_and_checkpoints_when_due(tmp_path):
    path = tmp_path / "toy.hmn"
    rec, state, last, saved = _fit(path)
    assert last == 10 and rec.trace["iteration"] == [2, 4, 6, 8, 10] and len(rec.trace["seconds"]) == 5
    assert len(saved) == 4  # after 3, 6, 9 and the last, 10
    ck = load_checkpoint(path, expected_class="Toy")
    assert ck.iteration == 10 and ck.extra == {"corpus": {"n": 2}, "seed": 7, "note": 1}
    np.testing.assert_array_equal(ck.arrays["x"], state)
    assert ck.rng.bit_generator.state == rec.rng.bit_generator.state
    only_last, *_ = _fit(None, evaluate_every=0)
    assert only_last.trace["iteration"] == [10]


def test_stop_checkpoint_and_resume_is_the_uninterrupted_run(tmp_path):
    full, x_full, _, _ = _fit(None)
    path = tmp_path / "toy.hmn"
    _, _, last, _ = _fit(path, callback=lambda it, n, info: it == 4)  # a trace row is due at 4 anyway
    assert last == 4 and load_checkpoint(path).iteration == 4  # the stop writes a checkpoint (3 was due)
    seen = []
    resumed, x, last, _ = _fit(path, resume=True, check=seen.append)
    assert len(seen) == 1 and resumed.start == 4 and last == 10 and resumed.seed == 7
    np.testing.assert_array_equal(x, x_full)
    assert resumed.trace["iteration"] == full.trace["iteration"]
    assert resumed.trace["size"] == full.trace["size"]
    assert resumed.rng.bit_generator.state == full.rng.bit_generator.state
    # negative control: without the checkpoint's Generator (a fresh stream from the seed) the run differs
    wrong = Recorder("Toy", 10, ("iteration",), params={})
    wrong.begin(7)
    wrong.start = 4
    x_wrong, _ = wrong.drive(_kernel, np.array(load_checkpoint(path).arrays["x"]), None, None,
                             evaluate=lambda it, st, info: {"iteration": it})
    assert not np.array_equal(x_wrong, x_full)


def test_a_refused_checkpoint_is_not_used(tmp_path):
    path = tmp_path / "toy.hmn"
    _fit(path, callback=lambda it, n, info: it == 4)

    def refuse(ckpt):
        raise ValueError("other run")

    with pytest.raises(ValueError, match="other run"):
        _fit(path, resume=True, check=refuse)


def test_converged_stops_after_a_trace_row(tmp_path):
    rec, _, last, saved = _fit(tmp_path / "toy.hmn", converged=lambda trace: len(trace["iteration"]) == 2)
    assert last == 4 and rec.trace["iteration"] == [2, 4] and len(saved) == 2  # after 3, and at the stop


# -- the hooks of distributed fits: a checkpoint written by the caller, a step schedule, recovery ----------
def _lossy_fit(path, *, lose_at=(), recover=True, n_iter=10):
    """The toy chain with a ``WorkerLost`` raised (once each) at the iterations in ``lose_at``."""
    from harmonium.parallel.dask_shards import WorkerLost

    rec = Recorder("Toy", n_iter, ("iteration", "size", "seconds"), params={}, fingerprint={"n": 2},
                   checkpoint_path=path, checkpoint_every=3)
    rec.begin(7)
    pending = set(lose_at)
    counter = {"it": 0}
    written = []

    def kernel(rng, state, data, model):
        counter["it"] += 1
        if counter["it"] in pending:
            pending.discard(counter["it"])
            raise WorkerLost("gone")
        return _kernel(rng, state, data, model)

    def checkpoint(it, st):
        written.append(it)
        rec.save(it, {"x": st}, {})

    def restore(ckpt):
        counter["it"] = int(ckpt.iteration)
        return np.array(ckpt.arrays["x"])

    state, last = rec.drive(kernel, np.zeros(2), None, None, checkpoint=checkpoint,
                            evaluate=lambda it, st, info: {"iteration": it, "size": info} if it % 4 else None,
                            evaluate_due=lambda it: it % 2 == 0, recover=restore if recover else None)
    return rec, state, last, written


def test_recovery_from_a_lost_worker_is_the_uninterrupted_run(tmp_path):
    from harmonium.parallel.dask_shards import WorkerLost

    full, x_full, _, written = _lossy_fit(tmp_path / "a.hmn")
    assert written == [3, 6, 9, 10]  # the caller's checkpoint hook, when due and at the last iteration
    assert full.trace["iteration"] == [2, 6, 10]  # evaluate_due's schedule; rows of None are left out
    lost, x, last, _ = _lossy_fit(tmp_path / "b.hmn", lose_at=(5, 8))
    assert last == 10 and lost.recoveries == 2
    np.testing.assert_array_equal(x, x_full)
    assert lost.trace["iteration"] == full.trace["iteration"] and lost.trace["size"] == full.trace["size"]
    assert lost.rng.bit_generator.state == full.rng.bit_generator.state
    with pytest.raises(WorkerLost, match="no checkpoint"):  # lost before the first checkpoint
        _lossy_fit(tmp_path / "c.hmn", lose_at=(2,))
    with pytest.raises(WorkerLost, match="gone"):  # no recover hook: the error as it came
        _lossy_fit(tmp_path / "d.hmn", lose_at=(5,), recover=False)
