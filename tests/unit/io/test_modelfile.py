"""Model files: round trips, atomic writes, every way a file can be bad, migrations, golden file."""

from __future__ import annotations

import importlib.util
import io
import json
import math
import os
import pickle
import zipfile
from pathlib import Path

import numpy as np
import pytest

import harmonium
from harmonium.errors import ModelFileError
from harmonium.io import (
    FORMAT_VERSION,
    MIGRATIONS,
    ModelFile,
    atomic,
    modelfile,
    read_model_file,
    write_model_file,
)

DATA = Path(__file__).resolve().parents[2] / "data"
GOLDEN_V1 = DATA / "golden_model_v1.hmn"


# --------------------------------------------------------------------------- helpers


def _arrays() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    return {
        "components": rng.random((3, 5)),
        "fortran32": np.asfortranarray(rng.random((4, 3)).astype(np.float32)),
        "n_kw": rng.integers(0, 100, (3, 5)).astype(np.int32),
        "z": rng.integers(0, 3, 17).astype(np.int64),
        "u8": np.arange(6, dtype=np.uint8),
        "mask": np.array([True, False, True]),
        "scalar": np.array(np.nan),
        "empty": np.zeros((0, 3), dtype=np.float64),
        "terms": np.array(["apple", "pear", "ünïcödé"]),
        "raw": np.array([b"ab", b"\x00\xff"]),
        "big_endian": np.arange(4, dtype=">f8"),
        "complex": np.array([1 + 2j, -0.5j]),
        "when": np.array(["2024-01-01", "NaT"], dtype="datetime64[D]"),
        "strided": np.arange(20.0)[::3],
    }


def _content(**overrides) -> dict:
    rng = np.random.default_rng(123)
    rng.random(5)
    content = {
        "cls": "LDA",
        "params": {"n_topics": np.int64(3), "alpha": np.float32(0.25), "eta": 0.01,
                   "name": "x", "nested": {"a": [1, 2.5, None], "b": (np.bool_(True),)}},
        "arrays": _arrays(),
        "vocabulary": ["apple", "pear", "quince", "fig", "ünïcödé"],
        "rng_state": rng.bit_generator.state,
        "trace": {"log_likelihood": np.array([-3.5, -2.25]), "n_changed": [np.int32(4), 2],
                  "diverged": [math.inf, -math.inf]},
        "kind": "model",
        "extra": {"note": "hello", "seed": 123},
    }
    content.update(overrides)
    return content


def _assert_bit_identical(a: np.ndarray, b: np.ndarray) -> None:
    assert a.dtype == b.dtype and a.shape == b.shape
    assert np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


def _members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as zf:
        return {name: zf.read(name) for name in zf.namelist()}


def _write_zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def _rewrite(path: Path, *, manifest=None, drop=(), add=None) -> Path:
    """Rewrite a model file with a changed manifest and members (to craft bad files)."""
    members = _members(path)
    m = json.loads(members["manifest.json"])
    if manifest is not None:
        m = manifest(m)
    members["manifest.json"] = json.dumps(m).encode()
    for name in drop:
        del members[name]
    members.update(add or {})
    return _write_zip(path, members)


def _npy(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr)  # test-only: may write object arrays the reader must refuse
    return buf.getvalue()


@pytest.fixture
def model_path(tmp_path) -> Path:
    return write_model_file(tmp_path / "model.hmn", **_content())


def _small_file(tmp_path) -> Path:
    return write_model_file(
        tmp_path / "small.hmn", cls="Toy", params={"k": 2},
        arrays={"a": np.arange(4.0), "b": np.array([[1, 2]], dtype=np.int32)},
        vocabulary=["x", "y"], rng_state=np.random.default_rng(0).bit_generator.state,
        trace={"ll": [1.0]},
    )


# --------------------------------------------------------------------------- round trip


def test_round_trip_every_field(tmp_path):
    content = _content()
    path = write_model_file(tmp_path / "m.hmn", **content)
    assert path == tmp_path / "m.hmn"
    mf = read_model_file(path, expected_class="LDA", expected_kind="model")
    assert isinstance(mf, ModelFile) and mf.path == path
    m = mf.manifest
    assert m["format"] == "harmonium-model"
    assert m["format_version"] == FORMAT_VERSION == 1
    assert m["class"] == mf.cls == "LDA"
    assert m["library_version"] == harmonium.__version__
    assert m["kind"] == mf.kind == "model"
    assert mf.params == {"n_topics": 3, "alpha": 0.25, "eta": 0.01, "name": "x",
                         "nested": {"a": [1, 2.5, None], "b": [True]}}
    assert type(mf.params["n_topics"]) is int and type(mf.params["alpha"]) is float
    assert mf.vocabulary == content["vocabulary"]
    assert mf.rng_state == content["rng_state"]
    assert mf.trace == {"log_likelihood": [-3.5, -2.25], "n_changed": [4, 2],
                        "diverged": [math.inf, -math.inf]}
    assert mf.extra == {"note": "hello", "seed": 123}
    assert set(mf.arrays) == set(content["arrays"]) == set(m["arrays"])
    for name, arr in content["arrays"].items():
        _assert_bit_identical(mf.arrays[name], arr)
        assert m["arrays"][name] == {"dtype": arr.dtype.str, "shape": list(arr.shape)}
        assert mf.arrays[name].flags.writeable


def test_layout_manifest_first_arrays_stored(model_path):
    with zipfile.ZipFile(model_path) as zf:
        infos = zf.infolist()
    assert infos[0].filename == "manifest.json"
    assert infos[0].compress_type == zipfile.ZIP_DEFLATED
    assert {i.filename for i in infos[1:]} == {f"{n}.npy" for n in _arrays()}
    assert all(i.compress_type == zipfile.ZIP_STORED for i in infos[1:])


def test_compressed_round_trip(tmp_path):
    arrays = {"counts": np.zeros((50, 40), dtype=np.int32), "x": np.arange(7.0)}
    plain = write_model_file(tmp_path / "p.hmn", cls="T", params={}, arrays=arrays)
    packed = write_model_file(tmp_path / "c.hmn", cls="T", params={}, arrays=arrays,
                              compress=True)
    assert packed.stat().st_size < plain.stat().st_size / 4
    with zipfile.ZipFile(packed) as zf:
        assert all(i.compress_type == zipfile.ZIP_DEFLATED for i in zf.infolist())
    for name, arr in arrays.items():
        _assert_bit_identical(read_model_file(packed).arrays[name], arr)


def test_defaults_and_readable_by_numpy(tmp_path):
    path = write_model_file(tmp_path / "d.hmn", cls="T", params={}, arrays={"a": np.ones(2)})
    mf = read_model_file(path)
    assert mf.vocabulary is None and mf.rng_state is None
    assert mf.trace == {} and mf.extra == {} and mf.kind == "model"
    with np.load(path, allow_pickle=False) as npz:  # arrays can be rescued with numpy alone
        np.testing.assert_array_equal(npz["a"], np.ones(2))


@pytest.mark.parametrize("name", ["PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64"])
def test_rng_state_round_trip_continues_identically(tmp_path, name):
    rng = np.random.Generator(getattr(np.random, name)(99))
    rng.standard_normal(11)
    path = write_model_file(tmp_path / "r.hmn", cls="T", params={}, arrays={},
                            rng_state=rng)
    state = read_model_file(path).rng_state
    restored = np.random.Generator(getattr(np.random, name)())
    restored.bit_generator.state = state
    np.testing.assert_array_equal(restored.random(100), rng.random(100))
    np.testing.assert_array_equal(restored.integers(0, 2**62, 10), rng.integers(0, 2**62, 10))


def test_pcg64_state_beyond_64_bits_is_exact(tmp_path):
    state = np.random.default_rng(5).bit_generator.state
    assert state["state"]["state"] > 2**64
    path = write_model_file(tmp_path / "r.hmn", cls="T", params={}, arrays={}, rng_state=state)
    assert read_model_file(path).rng_state["state"] == state["state"]


def test_vocabulary_object_is_accepted(tmp_path):
    vocab = harmonium.Vocabulary(["a", "b", "c"])
    path = write_model_file(tmp_path / "v.hmn", cls="T", params={}, arrays={}, vocabulary=vocab)
    assert read_model_file(path).vocabulary == ["a", "b", "c"]


def test_same_content_same_bytes(tmp_path):
    a = write_model_file(tmp_path / "a.hmn", **_content())
    b = write_model_file(tmp_path / "b.hmn", **_content())
    assert a.read_bytes() == b.read_bytes()


def test_overwrite_replaces_and_keeps_mode(tmp_path):
    path = write_model_file(tmp_path / "m.hmn", cls="Old", params={}, arrays={})
    os.chmod(path, 0o640)
    write_model_file(path, cls="New", params={}, arrays={})
    assert read_model_file(path).cls == "New"
    assert path.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.hmn"]


def test_new_file_mode_follows_umask(tmp_path):
    old = os.umask(0o027)
    try:
        path = write_model_file(tmp_path / "m.hmn", cls="T", params={}, arrays={})
    finally:
        os.umask(old)
    assert path.stat().st_mode & 0o777 == 0o640


# --------------------------------------------------------------------------- write rejections


@pytest.mark.parametrize(
    ("overrides", "match"),
    [
        ({"arrays": {"bad": np.array([{}, 1], dtype=object)}}, r"array 'bad' has dtype object"),
        ({"arrays": {"rec": np.zeros(2, dtype=[("a", "f8")])}}, r"array 'rec' has dtype"),
        ({"arrays": {"a/b": np.ones(1)}}, r"array name 'a/b' is not allowed"),
        ({"arrays": {"": np.ones(1)}}, r"array name '' is not allowed"),
        ({"arrays": [np.ones(1)]}, r"`arrays` must be a dict"),
        ({"params": {"tokenizer": {"stop": {"a", "b"}}}},
         r"params\['tokenizer'\]\['stop'\] is a set"),
        ({"params": {"fn": print}}, r"params\['fn'\] is a builtin_function_or_method"),
        ({"params": {3: "x"}}, r"params has the key 3 of type int"),
        ({"params": {"w": np.array([None])}}, r"params\['w'\] is a numpy array of dtype object"),
        ({"params": None}, r"`params` must be a dict"),
        ({"trace": {"ll": [1.0, 1 + 2j]}}, r"trace\['ll'\]\[1\] is a complex"),
        ({"extra": {"when": np.datetime64("2024-01-01")}}, r"extra\['when'\] is a numpy"),
        ({"vocabulary": ["a", 3]}, r"vocabulary term 1 is 3"),
        ({"vocabulary": "abc"}, r"`vocabulary` must be a sequence of str"),
        ({"rng_state": 42}, r"`rng_state` must be a bit generator state"),
        ({"kind": "snapshot"}, r"`kind` must be one of"),
        ({"cls": ""}, r"`cls` must be a non-empty str"),
    ],
)
def test_write_rejects_unstorable_content(tmp_path, overrides, match):
    with pytest.raises(ModelFileError, match=r"Cannot write model file '.*m\.hmn': " + match):
        write_model_file(tmp_path / "m.hmn", **_content(**overrides))
    assert list(tmp_path.iterdir()) == []


def test_write_into_missing_directory_raises_oserror(tmp_path):
    with pytest.raises(FileNotFoundError):
        write_model_file(tmp_path / "nope" / "m.hmn", cls="T", params={}, arrays={})
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------- atomicity


def _failing_writer(monkeypatch, fail_on_call: int, exc: BaseException):
    real = np.lib.format.write_array
    calls = []

    def writer(fp, arr, *args, **kwargs):
        calls.append(1)
        if len(calls) == fail_on_call:
            fp.write(b"\x93NUMPY partial garbage")
            raise exc
        return real(fp, arr, *args, **kwargs)

    monkeypatch.setattr(np.lib.format, "write_array", writer)


@pytest.mark.parametrize("exc", [OSError(28, "No space left on device"), KeyboardInterrupt()])
def test_failure_mid_write_leaves_old_file_and_no_temp(tmp_path, monkeypatch, model_path, exc):
    before = model_path.read_bytes()
    _failing_writer(monkeypatch, fail_on_call=3, exc=exc)
    with pytest.raises(type(exc)):
        write_model_file(model_path, **_content(cls="Other"))
    assert model_path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == [model_path.name]
    monkeypatch.undo()
    assert read_model_file(model_path).cls == "LDA"


def test_failure_mid_write_of_new_file_leaves_nothing(tmp_path, monkeypatch):
    _failing_writer(monkeypatch, fail_on_call=1, exc=OSError("disk gone"))
    with pytest.raises(OSError, match="disk gone"):
        write_model_file(tmp_path / "new.hmn", **_content())
    assert list(tmp_path.iterdir()) == []


def test_failing_rename_leaves_old_file_and_no_temp(tmp_path, monkeypatch, model_path):
    before = model_path.read_bytes()

    def broken_replace(src, dst):
        raise PermissionError("rename refused")

    monkeypatch.setattr(atomic.os, "replace", broken_replace)
    with pytest.raises(PermissionError, match="rename refused"):
        write_model_file(model_path, **_content(cls="Other"))
    assert model_path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == [model_path.name]


def test_write_fsyncs_before_rename(tmp_path, monkeypatch):
    events = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(atomic.os, "fsync", lambda fd: (events.append("fsync"), real_fsync(fd)))
    monkeypatch.setattr(atomic.os, "replace",
                        lambda a, b: (events.append("replace"), real_replace(a, b)))
    write_model_file(tmp_path / "m.hmn", cls="T", params={}, arrays={"a": np.ones(3)})
    assert events[:2] == ["fsync", "replace"]


# --------------------------------------------------------------------------- bad files


def test_missing_file(tmp_path):
    with pytest.raises(ModelFileError,
                       match=r"Cannot read model file '.*absent\.hmn': file not found"):
        read_model_file(tmp_path / "absent.hmn")


def test_directory(tmp_path):
    with pytest.raises(ModelFileError, match="is a directory"):
        read_model_file(tmp_path)


def test_empty_file(tmp_path):
    (tmp_path / "e.hmn").write_bytes(b"")
    with pytest.raises(ModelFileError, match="the file is empty"):
        read_model_file(tmp_path / "e.hmn")


@pytest.mark.parametrize("fraction", [0.5, 0.1, 0.9, 0.999])
def test_truncated_file(model_path, fraction):
    data = model_path.read_bytes()
    model_path.write_bytes(data[: int(len(data) * fraction)])
    with pytest.raises(ModelFileError, match=r"model\.hmn': the file is truncated or corrupted"):
        read_model_file(model_path)


def test_truncated_at_every_length(tmp_path):
    path = _small_file(tmp_path)
    data = path.read_bytes()
    for n in range(1, len(data)):
        path.write_bytes(data[:n])
        with pytest.raises(ModelFileError):
            read_model_file(path)


@pytest.mark.parametrize("member", ["manifest.json", "components.npy", "n_kw.npy", "scalar.npy"])
def test_flipped_bytes_inside_member(model_path, member):
    with zipfile.ZipFile(model_path) as zf:
        info = zf.getinfo(member)
    data = bytearray(model_path.read_bytes())
    local_header = 30 + len(info.filename.encode()) + len(info.extra)
    # the last bytes of the member: array data, not the .npy header
    pos = info.header_offset + local_header + info.compress_size - 3
    data[pos] ^= 0x5A
    model_path.write_bytes(bytes(data))
    with pytest.raises(ModelFileError, match="truncated or corrupted"):
        read_model_file(model_path)


def test_every_single_byte_flip_is_caught_or_harmless(tmp_path):
    """No flipped byte may escape as another exception or load different content."""
    path = _small_file(tmp_path)
    good = read_model_file(path)
    data = path.read_bytes()
    n_errors = 0
    for pos in range(len(data)):
        bad = bytearray(data)
        bad[pos] ^= 0xFF
        path.write_bytes(bytes(bad))
        try:
            mf = read_model_file(path)
        except ModelFileError:
            n_errors += 1
            continue
        assert mf.manifest == good.manifest, pos  # e.g. a flipped timestamp: content intact
        for name, arr in good.arrays.items():
            _assert_bit_identical(mf.arrays[name], arr)
    assert n_errors > len(data) // 2


def test_pickle_file(tmp_path):
    path = tmp_path / "model.pkl"
    with open(path, "wb") as fh:
        pickle.dump({"components": np.ones(3)}, fh)
    with pytest.raises(ModelFileError,
                       match="it looks like a Python pickle; harmonium never loads pickles"):
        read_model_file(path)


def test_bare_npy_file(tmp_path):
    path = tmp_path / "a.npy"
    np.save(path, np.ones(3))
    with pytest.raises(ModelFileError, match="not a ZIP archive; it is a bare .npy array"):
        read_model_file(path)


def test_text_file(tmp_path):
    path = tmp_path / "m.json"
    path.write_text('{"format": "harmonium-model"}')
    with pytest.raises(ModelFileError, match=r"not a harmonium model file \(not a ZIP archive\)"):
        read_model_file(path)


def test_foreign_zip_without_manifest(tmp_path):
    path = _write_zip(tmp_path / "f.zip", {"readme.txt": b"hello"})
    with pytest.raises(ModelFileError, match="not a harmonium model file .*has no manifest.json"):
        read_model_file(path)


def test_npz_with_object_array(tmp_path):
    path = tmp_path / "o.npz"
    np.savez(path, a=np.ones(2), b=np.array([{"x": 1}, None], dtype=object))
    with pytest.raises(ModelFileError, match="has no manifest.json"):
        read_model_file(path)


@pytest.mark.parametrize("declared", ["|O", "<f8"])
def test_object_member_is_never_unpickled(model_path, monkeypatch, declared):
    def no_unpickling(*args, **kwargs):
        raise AssertionError("something tried to unpickle")

    def fix(m):
        m["arrays"]["evil"] = {"dtype": declared, "shape": [2]}
        return m

    _rewrite(model_path, manifest=fix,
             add={"evil.npy": _npy(np.array([{"x": 1}, None], dtype=object))})
    monkeypatch.setattr(pickle, "load", no_unpickling)
    monkeypatch.setattr(pickle, "loads", no_unpickling)
    with pytest.raises(ModelFileError, match="(would need pickle|never loads pickles)"):
        read_model_file(model_path)


def test_invalid_manifest_json(model_path):
    members = _members(model_path)
    members["manifest.json"] = b"{not json"
    _write_zip(model_path, members)
    with pytest.raises(ModelFileError, match="manifest.json is not valid UTF-8 JSON"):
        read_model_file(model_path)


def test_foreign_format_string(model_path):
    _rewrite(model_path, manifest=lambda m: {**m, "format": "gensim-model"})
    with pytest.raises(ModelFileError, match="format 'gensim-model', expected 'harmonium-model'"):
        read_model_file(model_path)


def test_newer_format_version(model_path):
    _rewrite(model_path, manifest=lambda m: {**m, "format_version": 3})
    with pytest.raises(ModelFileError, match=r"written by a newer harmonium "
                                             r"\(format_version 3 > 1\); upgrade harmonium"):
        read_model_file(model_path)


@pytest.mark.parametrize("version", ["1", 1.0, True, -1, None])
def test_invalid_format_version(model_path, version):
    _rewrite(model_path, manifest=lambda m: {**m, "format_version": version})
    with pytest.raises(ModelFileError, match="invalid format_version"):
        read_model_file(model_path)


def test_missing_manifest_key(model_path):
    _rewrite(model_path, manifest=lambda m: {k: v for k, v in m.items() if k != "trace"})
    with pytest.raises(ModelFileError, match="lacks the key.*trace"):
        read_model_file(model_path)


def test_wrong_expected_class(model_path):
    with pytest.raises(ModelFileError, match="it holds a 'LDA' model, expected 'HDP'"):
        read_model_file(model_path, expected_class="HDP")


def test_wrong_expected_kind(model_path):
    with pytest.raises(ModelFileError, match="it is a model file, expected a checkpoint file"):
        read_model_file(model_path, expected_kind="checkpoint")


@pytest.mark.parametrize(
    ("field", "value", "match"),
    [
        ("shape", [5, 3], r"array 'components' does not match the manifest.*shape \(5, 3\)"),
        ("dtype", "<f4", r"array 'components' does not match the manifest.*dtype <f4"),
    ],
)
def test_manifest_array_mismatch(model_path, field, value, match):
    def fix(m):
        m["arrays"]["components"][field] = value
        return m

    _rewrite(model_path, manifest=fix)
    with pytest.raises(ModelFileError, match=match):
        read_model_file(model_path)


def test_missing_array_member(model_path):
    _rewrite(model_path, drop=["n_kw.npy"])
    with pytest.raises(ModelFileError,
                       match=r"missing array member\(s\) listed in the manifest: 'n_kw.npy'"):
        read_model_file(model_path)


def test_unlisted_array_member(model_path):
    _rewrite(model_path, add={"stowaway.npy": _npy(np.ones(2))})
    with pytest.raises(ModelFileError, match="member 'stowaway.npy' is not listed in the manifest"):
        read_model_file(model_path)


def test_unexpected_non_array_member(model_path):
    _rewrite(model_path, add={"script.py": b"print('hi')"})
    with pytest.raises(ModelFileError, match="unexpected member 'script.py'"):
        read_model_file(model_path)


def test_member_with_header_claiming_more_data(model_path):
    """A header whose shape disagrees with the member size is refused before allocating."""
    def fix(m):
        m["arrays"]["components"]["shape"] = [10**6, 10**6]
        return m

    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": "<f8", "fortran_order": False, "shape": (10**6, 10**6)})
    _rewrite(model_path, manifest=fix, add={"components.npy": header.getvalue() + b"\0" * 8})
    with pytest.raises(ModelFileError, match="has 8 data bytes, its header needs"):
        read_model_file(model_path)


# --------------------------------------------------------------------------- migrations


def _as_version_0(path: Path) -> Path:
    """Turn a v1 file into a fake 'version 0' file: key 'cls', array 'W' not 'components'."""
    def to_v0(m):
        m["format_version"] = 0
        m["cls"] = m.pop("class")
        m["arrays"]["W"] = m["arrays"].pop("components")
        return m

    members = _members(path)
    members["W.npy"] = members.pop("components.npy")
    _write_zip(path, members)
    return _rewrite(path, manifest=to_v0)


def _migrate_0_to_1(manifest, arrays):
    manifest["class"] = manifest.pop("cls")
    arrays["components"] = arrays.pop("W")
    manifest["arrays"]["components"] = manifest["arrays"].pop("W")
    return manifest, arrays


def test_old_version_without_migration_is_refused(model_path):
    _as_version_0(model_path)
    with pytest.raises(ModelFileError, match="format_version 0 is not supported.*no migration "
                                             "from version 0 to 1"):
        read_model_file(model_path)


def test_migration_upgrades_old_file(model_path, monkeypatch):
    _as_version_0(model_path)
    monkeypatch.setitem(MIGRATIONS, 0, _migrate_0_to_1)
    mf = read_model_file(model_path, expected_class="LDA")
    assert mf.manifest["format_version"] == 1
    assert mf.cls == "LDA"
    _assert_bit_identical(mf.arrays["components"], _arrays()["components"])
    assert "W" not in mf.arrays


def test_migrations_apply_in_order(model_path, monkeypatch):
    _as_version_0(model_path)
    calls = []

    def step0(m, a):
        calls.append(("0->1", m["format_version"]))
        return _migrate_0_to_1(m, a)

    def step1(m, a):
        calls.append(("1->2", m["format_version"]))
        m["params"]["added_in_v2"] = True
        return m, a

    monkeypatch.setattr(modelfile, "FORMAT_VERSION", 2)
    monkeypatch.setitem(MIGRATIONS, 0, step0)
    monkeypatch.setitem(MIGRATIONS, 1, step1)
    mf = read_model_file(model_path)
    assert calls == [("0->1", 0), ("1->2", 1)]
    assert mf.manifest["format_version"] == 2 and mf.params["added_in_v2"] is True


def test_broken_migration_is_one_model_file_error(model_path, monkeypatch):
    _as_version_0(model_path)

    def broken(m, a):
        raise KeyError("W")

    monkeypatch.setitem(MIGRATIONS, 0, broken)
    with pytest.raises(ModelFileError, match="upgrading from format_version 0 to 1 failed") as info:
        read_model_file(model_path)
    assert isinstance(info.value.__cause__, KeyError)


def test_migration_that_forgets_the_manifest_is_caught(model_path, monkeypatch):
    _as_version_0(model_path)

    def sloppy(m, a):
        m["class"] = m.pop("cls")
        a["components"] = a.pop("W")  # forgets manifest["arrays"]
        return m, a

    monkeypatch.setitem(MIGRATIONS, 0, sloppy)
    with pytest.raises(ModelFileError, match="arrays do not match the manifest"):
        read_model_file(model_path)


# --------------------------------------------------------------------------- golden file


def test_golden_v1_loads_field_by_field():
    mf = read_model_file(GOLDEN_V1, expected_class="Toy")
    m = mf.manifest
    assert m["format"] == "harmonium-model"
    assert m["format_version"] == 1
    assert m["class"] == "Toy"
    assert m["library_version"] == "0.1.0"
    assert m["kind"] == "model"
    assert m["params"] == {"n_topics": 2, "doc_topic_prior": 0.5, "topic_word_prior": 0.01,
                           "name": "golden", "flags": [True, False, None]}
    assert m["vocabulary"] == ["apple", "pear", "quince"]
    assert m["trace"] == {"log_likelihood": [-10.5, -9.25], "n_changed": [5, 2]}
    assert m["extra"] == {"note": "golden file for format_version 1"}
    assert m["rng_state"] == {
        "bit_generator": "PCG64",
        "state": {"state": 106109998354757338487759794254962536736,
                  "inc": 111681826193847172507703028426039656569},
        "has_uint32": 0,
        "uinteger": 0,
    }
    assert m["rng_state"] == np.random.Generator(np.random.PCG64(20240607)).bit_generator.state
    assert m["arrays"] == {
        "components": {"dtype": "<f8", "shape": [2, 3]},
        "n_kw": {"dtype": "<i4", "shape": [2, 3]},
        "doc_lengths": {"dtype": "<i8", "shape": [4]},
    }
    expected = {
        "components": np.array([[0.125, 0.25, 0.625], [1 / 3, 1e-300, -2.5e10]], dtype="<f8"),
        "n_kw": np.array([[1, 2, 3], [4, 5, -6]], dtype="<i4"),
        "doc_lengths": np.array([3, 0, 7, 2**40], dtype="<i8"),
    }
    assert set(mf.arrays) == set(expected)
    for name, arr in expected.items():
        _assert_bit_identical(mf.arrays[name], arr)
    rng = np.random.Generator(np.random.PCG64())
    rng.bit_generator.state = mf.rng_state
    np.testing.assert_array_equal(rng.random(4), np.random.default_rng(20240607).random(4))


def test_golden_script_matches_golden_file(tmp_path):
    spec = importlib.util.spec_from_file_location("make_golden", DATA / "make_golden.py")
    make_golden = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_golden)
    assert make_golden.GOLDEN == GOLDEN_V1
    written = read_model_file(write_model_file(tmp_path / "g.hmn", **make_golden.golden_content()))
    golden = read_model_file(GOLDEN_V1)
    assert {k: v for k, v in written.manifest.items() if k != "library_version"} == \
        {k: v for k, v in golden.manifest.items() if k != "library_version"}
    for name, arr in golden.arrays.items():
        _assert_bit_identical(written.arrays[name], arr)
