"""Checkpoints: round trip, bit-identical resume, policy, and refusals."""

from __future__ import annotations

import numpy as np
import pytest

from harmonium.errors import InvalidParameterError, ModelFileError
from harmonium.io import (
    Checkpoint,
    CheckpointPolicy,
    load_checkpoint,
    read_model_file,
    save_checkpoint,
    write_model_file,
)

PARAMS = {"n_topics": 3, "alpha": 0.1}


def _toy_init(rng):
    """A stand-in for a sampler state: assignments plus counts kept in sync."""
    z = rng.integers(0, 3, 50).astype(np.int32)
    n_k = np.bincount(z, minlength=3).astype(np.int64)
    return {"z": z, "n_k": n_k, "w": np.zeros(3)}


def _toy_step(rng, state, trace):
    """One 'sweep': resample a few assignments in place, drift w, record a trace value."""
    z, n_k, w = state["z"], state["n_k"], state["w"]
    for i in rng.choice(z.size, 5, replace=False):
        n_k[z[i]] -= 1
        z[i] = rng.choice(3, p=(n_k + 1.0) / (n_k + 1.0).sum())
        n_k[z[i]] += 1
    w += rng.standard_normal(3)
    trace["energy"].append(float(w @ w))
    trace["n_changed"].append(int(rng.integers(0, 10)))


def _run(rng, state, trace, start, stop, policy=None):
    for it in range(start, stop):
        _toy_step(rng, state, trace)
        if policy is not None and policy.due(it + 1):
            policy.save(it + 1, cls="Toy", params=PARAMS, state_arrays=state, rng=rng,
                        trace=trace)


def test_round_trip(tmp_path):
    rng = np.random.default_rng(3)
    state = _toy_init(rng)
    path = save_checkpoint(tmp_path / "c.hmn", cls="Toy", params=PARAMS, state_arrays=state,
                           rng=rng, iteration=7, trace={"energy": [1.5, 2.0]},
                           extra={"seed": 3}, vocabulary=["a", "b"])
    ckpt = load_checkpoint(path, expected_class="Toy")
    assert isinstance(ckpt, Checkpoint)
    assert ckpt.path == path and ckpt.cls == "Toy"
    assert ckpt.iteration == 7
    assert ckpt.params == PARAMS
    assert ckpt.trace == {"energy": [1.5, 2.0]}
    assert ckpt.extra == {"seed": 3}
    assert ckpt.vocabulary == ["a", "b"]
    assert ckpt.manifest["kind"] == "checkpoint"
    assert ckpt.manifest["rng_state"] == rng.bit_generator.state
    for name, arr in state.items():
        assert ckpt.arrays[name].dtype == arr.dtype
        np.testing.assert_array_equal(ckpt.arrays[name], arr)
    assert ckpt.rng is not rng
    np.testing.assert_array_equal(ckpt.rng.random(20), rng.random(20))


def test_save_does_not_advance_rng(tmp_path):
    rng = np.random.default_rng(0)
    before = rng.bit_generator.state
    save_checkpoint(tmp_path / "c.hmn", cls="Toy", params={}, state_arrays={}, rng=rng,
                    iteration=0, trace={})
    assert rng.bit_generator.state == before


def test_resume_is_bit_identical(tmp_path):
    n_iter, stop_at = 10, 4

    rng = np.random.default_rng(2024)
    state = _toy_init(rng)
    trace = {"energy": [], "n_changed": []}
    _run(rng, state, trace, 0, n_iter)

    rng2 = np.random.default_rng(2024)
    state2 = _toy_init(rng2)
    trace2 = {"energy": [], "n_changed": []}
    _run(rng2, state2, trace2, 0, stop_at)
    save_checkpoint(tmp_path / "c.hmn", cls="Toy", params=PARAMS, state_arrays=state2, rng=rng2,
                    iteration=stop_at, trace=trace2)
    del rng2, state2, trace2

    ckpt = load_checkpoint(tmp_path / "c.hmn", expected_class="Toy")
    resumed_rng, resumed, resumed_trace = ckpt.rng, ckpt.arrays, ckpt.trace
    _run(resumed_rng, resumed, resumed_trace, ckpt.iteration, n_iter)

    for name in state:
        assert resumed[name].tobytes() == state[name].tobytes()
    assert resumed_trace == trace
    assert resumed_rng.bit_generator.state == rng.bit_generator.state


def test_policy_in_a_loop_keeps_one_file_per_checkpoint(tmp_path):
    policy = CheckpointPolicy(tmp_path / "run-{iteration:03d}.hmn", every=3)
    rng = np.random.default_rng(1)
    state = _toy_init(rng)
    trace = {"energy": [], "n_changed": []}
    _run(rng, state, trace, 0, 10, policy)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run-003.hmn", "run-006.hmn",
                                                          "run-009.hmn"]
    last = load_checkpoint(tmp_path / "run-009.hmn")
    assert last.iteration == 9 and len(last.trace["energy"]) == 9


def test_policy_with_fixed_path_overwrites(tmp_path):
    policy = CheckpointPolicy(tmp_path / "run.hmn", every=4)
    rng = np.random.default_rng(1)
    state = _toy_init(rng)
    trace = {"energy": [], "n_changed": []}
    _run(rng, state, trace, 0, 10, policy)
    assert [p.name for p in tmp_path.iterdir()] == ["run.hmn"]
    assert load_checkpoint(tmp_path / "run.hmn").iteration == 8


def test_policy_due():
    policy = CheckpointPolicy("x.hmn", every=5)
    assert [it for it in range(21) if policy.due(it)] == [5, 10, 15, 20]
    assert CheckpointPolicy("x.hmn", every=1).due(1)
    assert not CheckpointPolicy("x.hmn", every=1).due(0)


@pytest.mark.parametrize("every", [0, -2, 1.5, True, "3", None])
def test_policy_rejects_bad_every(every):
    with pytest.raises(InvalidParameterError, match="'every' parameter of CheckpointPolicy"):
        CheckpointPolicy("x.hmn", every=every)


def test_policy_rejects_unknown_placeholder():
    with pytest.raises(InvalidParameterError, match="'path' parameter of CheckpointPolicy"):
        CheckpointPolicy("run-{step}.hmn", every=2)


def test_failed_save_keeps_previous_checkpoint(tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    path = save_checkpoint(tmp_path / "c.hmn", cls="Toy", params={}, state_arrays={"x": np.ones(3)},
                           rng=rng, iteration=1, trace={})
    before = path.read_bytes()

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(np.lib.format, "write_array", boom)
    with pytest.raises(OSError, match="disk full"):
        save_checkpoint(path, cls="Toy", params={}, state_arrays={"x": np.zeros(3)}, rng=rng,
                        iteration=2, trace={})
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["c.hmn"]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"rng": 0}, "`rng` must be a numpy Generator"),
        ({"rng": np.random.PCG64(0)}, "`rng` must be a numpy Generator"),
        ({"iteration": -1}, r"`iteration` must be an int >= 0, got -1"),
        ({"iteration": 2.0}, r"`iteration` must be an int >= 0, got 2.0"),
        ({"extra": {"iteration": 5}}, "the key 'iteration' of `extra` is reserved"),
        ({"state_arrays": {"o": np.array([None])}}, "array 'o' has dtype object"),
    ],
)
def test_save_rejects_bad_arguments(tmp_path, kwargs, match):
    args = {"cls": "Toy", "params": {}, "state_arrays": {}, "rng": np.random.default_rng(0),
            "iteration": 1, "trace": {}}
    args.update(kwargs)
    with pytest.raises(ModelFileError, match=match):
        save_checkpoint(tmp_path / "c.hmn", **args)
    assert list(tmp_path.iterdir()) == []


def test_checkpoint_is_a_model_file(tmp_path):
    path = save_checkpoint(tmp_path / "c.hmn", cls="Toy", params={}, state_arrays={},
                           rng=np.random.default_rng(0), iteration=3, trace={})
    mf = read_model_file(path)
    assert mf.kind == "checkpoint" and mf.extra == {"iteration": 3}


def test_model_file_is_not_a_checkpoint(tmp_path):
    path = write_model_file(tmp_path / "m.hmn", cls="Toy", params={}, arrays={},
                            rng_state=np.random.default_rng(0))
    with pytest.raises(ModelFileError, match="it is a model file, expected a checkpoint file"):
        load_checkpoint(path)


def test_wrong_class(tmp_path):
    path = save_checkpoint(tmp_path / "c.hmn", cls="Toy", params={}, state_arrays={},
                           rng=np.random.default_rng(0), iteration=3, trace={})
    with pytest.raises(ModelFileError, match="it holds a 'Toy' model, expected 'LDA'"):
        load_checkpoint(path, expected_class="LDA")


@pytest.mark.parametrize(
    ("rng_state", "extra", "match"),
    [
        (None, {"iteration": 1}, "holds no RNG state"),
        ({"bit_generator": "NoSuchGen", "state": {}}, {"iteration": 1},
         "RNG state cannot be restored"),
        ({"bit_generator": "PCG64", "state": {"state": "x"}}, {"iteration": 1},
         "RNG state cannot be restored"),
        (np.random.default_rng(0), {}, r"extra\['iteration'\] should be an int >= 0, got None"),
        (np.random.default_rng(0), {"iteration": -4}, "should be an int >= 0, got -4"),
    ],
)
def test_unresumable_checkpoints(tmp_path, rng_state, extra, match):
    path = write_model_file(tmp_path / "c.hmn", cls="Toy", params={}, arrays={},
                            rng_state=rng_state, kind="checkpoint", extra=extra)
    with pytest.raises(ModelFileError, match=r"Cannot read checkpoint '.*c\.hmn': .*" + match):
        load_checkpoint(path)


def test_truncated_checkpoint(tmp_path):
    path = save_checkpoint(tmp_path / "c.hmn", cls="Toy", params={},
                           state_arrays={"x": np.arange(100.0)}, rng=np.random.default_rng(0),
                           iteration=3, trace={})
    path.write_bytes(path.read_bytes()[:300])
    with pytest.raises(ModelFileError, match="truncated or corrupted"):
        load_checkpoint(path)
