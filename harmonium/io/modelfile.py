"""Model files: one ZIP archive holding a JSON manifest and one ``.npy`` member per array.

Layout of a harmonium model file (suggested extension ``.hmn``)::

    manifest.json      first member, DEFLATE-compressed UTF-8 JSON
    <name>.npy         one member per array, numpy ``.npy`` format, never pickled

The manifest keys are ``format`` (``"harmonium-model"``), ``format_version``
(int, :data:`FORMAT_VERSION`), ``class``, ``params``, ``vocabulary``,
``library_version``, ``rng_state``, ``trace``, ``arrays`` (name ->
``{"dtype", "shape"}`` of every member, checked on load), ``kind``
(``"model"`` or ``"checkpoint"``) and ``extra``.

Design choices
--------------
* **No pickle, ever.** Arrays are written with
  ``numpy.lib.format.write_array(..., allow_pickle=False)`` and read with
  ``read_array(..., allow_pickle=False)``; object dtypes are refused on both
  sides, and an object member is detected from its header before any data is
  read. Everything else is JSON.
* **Arrays are stored uncompressed (``ZIP_STORED``) by default.** Fitted
  topic-word matrices are floats that DEFLATE shrinks by about 1 %, while
  DEFLATE runs at 10-40 MB/s: a checkpoint of a 400 MB assignment vector would
  spend tens of seconds compressing. Stored members are also contiguous bytes
  at a known offset, which leaves memory-mapped loading open without a format
  change. Integrity does not depend on compression: every member carries a
  CRC-32 that is verified on load. ``compress=True`` DEFLATEs the arrays too
  (worth it for files that are shipped: sparse count matrices shrink 5-50x);
  the reader handles both. The manifest (text, vocabulary) is always DEFLATEd.
* **Atomic writes.** The archive is written to a temporary file in the target
  directory, flushed and fsynced, then renamed onto the target with
  :func:`os.replace`. A crash or an exception leaves either the old file or the
  new one, never a mixture, and no temporary file.
* **Reproducible bytes.** Member timestamps are fixed, so the same content gives
  the same bytes (useful for golden files, caches and diffing).
* **One error type.** Every problem found while reading raises a single
  :class:`~harmonium.errors.ModelFileError` naming the file and what is wrong,
  chained to the low-level exception. Nothing half-loaded is ever returned.
* **Versioned.** A file whose ``format_version`` is older than
  :data:`FORMAT_VERSION` is upgraded step by step by the functions in
  :data:`MIGRATIONS`; a newer one is refused with a request to upgrade.
"""

from __future__ import annotations

import json
import math
import re
import stat
import struct
import tokenize
import zipfile
import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from harmonium._version import __version__
from harmonium.errors import ModelFileError
from harmonium.io.atomic import atomic_writer
from harmonium.parallel.seeds import get_state

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "MIGRATIONS",
    "ModelFile",
    "read_model_file",
    "write_model_file",
]

FORMAT = "harmonium-model"
"""The value of the manifest's ``format`` key."""

FORMAT_VERSION = 1
"""The manifest ``format_version`` this library writes and the newest it reads."""

MIGRATIONS: dict[int, Callable[[dict, dict], tuple[dict, dict]]] = {}
"""Upgrades of old files, one step at a time.

``MIGRATIONS[v](manifest, arrays)`` takes the manifest and arrays of a
version-``v`` file and returns those of a version-``v + 1`` file (including an
updated ``manifest["arrays"]`` if it renames or changes arrays). The reader sets
``manifest["format_version"]`` to ``v + 1`` after each step. Version 1 is the
first version, so the table is empty.
"""

MANIFEST_NAME = "manifest.json"
KINDS = ("model", "checkpoint")
REQUIRED_KEYS = (
    "format",
    "format_version",
    "class",
    "params",
    "vocabulary",
    "library_version",
    "rng_state",
    "trace",
    "arrays",
    "kind",
    "extra",
)

_ALLOWED_KINDS = frozenset("biufcUSmM")  # numeric, bool, str, bytes, datetime: no objects
_NAME_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]{0,199}")
_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
_FIXED_DATE = (1980, 1, 1, 0, 0, 0)  # earliest ZIP timestamp: reproducible bytes
_MAX_MANIFEST_BYTES = 1 << 28  # 256 MiB: far above any real vocabulary, stops ZIP bombs
_ZIP64_THRESHOLD = 1 << 30

# Low-level exceptions that a truncated, corrupted or crafted archive can raise
# from zipfile, zlib, struct or numpy.lib.format. Each becomes one ModelFileError.
_CORRUPTION_ERRORS = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    zlib.error,
    struct.error,
    EOFError,
    OSError,
    ValueError,  # includes UnicodeDecodeError and json.JSONDecodeError
    KeyError,
    IndexError,
    OverflowError,
    RuntimeError,  # encrypted-member flag; NotImplementedError: unknown compression
    SyntaxError,  # numpy's header parser on a mangled header dict
    tokenize.TokenError,  # ... and on a header dict left open
    TypeError,
)


def _manifest_entry(key: str, *, doc: str) -> property:
    """A read-only property giving ``self.manifest[key]``."""
    return property(lambda self: self.manifest[key], doc=doc)


@dataclass(frozen=True, eq=False)  # arrays make == ambiguous; compare fields instead
class ModelFile:
    """The content of a model file, fully loaded and verified.

    Attributes
    ----------
    manifest : dict
        The manifest, upgraded to :data:`FORMAT_VERSION`.
    arrays : dict of str to numpy.ndarray
        Every array, by name; writeable, dtypes and shapes as stored.
    path : pathlib.Path
        The file it was read from.
    """

    manifest: dict
    arrays: dict
    path: Path

    # read-only views of manifest entries
    cls = _manifest_entry("class", doc='The class name stored in the manifest (e.g. ``"LDA"``).')
    params = _manifest_entry("params", doc="The hyperparameters (dict).")
    vocabulary = _manifest_entry("vocabulary", doc="The terms in id order (list of str), or None.")
    rng_state = _manifest_entry("rng_state", doc="The stored bit generator state (dict), or None.")
    trace = _manifest_entry("trace", doc="The training trace (dict: name -> list of values).")
    kind = _manifest_entry("kind", doc='``"model"`` or ``"checkpoint"``.')
    extra = _manifest_entry("extra", doc="Free-form JSON data stored by the writer (dict).")


# --------------------------------------------------------------------------- writing


def _to_json(value: Any, where: str, fail: Callable[[str], Exception]) -> Any:
    """``value`` as plain JSON types; numpy scalars and arrays become Python ones.

    ``where`` names the place (``params['alpha'][2]``) for the error message.
    Tuples and arrays become lists; dict keys must be strings so that a round
    trip returns the same keys.
    """
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)  # bool handled above; int subclasses become int
    if isinstance(value, float):
        return float(value)
    if isinstance(value, np.generic):
        if value.dtype.kind in "biufU":
            return _to_json(value.item(), where, fail)
        raise fail(f"{where} is a numpy {value.dtype} scalar, which cannot be stored as JSON")
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "biufU":
            raise fail(f"{where} is a numpy array of dtype {value.dtype}, which cannot be stored "
                       "as JSON (put large or non-numeric arrays in `arrays`)")
        return value.tolist()
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if isinstance(k, np.str_):
                k = str(k)
            if not isinstance(k, str):
                raise fail(f"{where} has the key {k!r} of type {type(k).__name__}; "
                           "JSON objects need str keys")
            out[k] = _to_json(v, f"{where}[{k!r}]", fail)
        return out
    if isinstance(value, (list, tuple)):
        return [_to_json(v, f"{where}[{i}]", fail) for i, v in enumerate(value)]
    raise fail(f"{where} is a {type(value).__name__} ({value!r:.60}), which is not "
               "JSON-serialisable (allowed: None, bool, int, float, str, list, tuple, dict "
               "with str keys, numpy numbers and numeric arrays)")


def _prepare_arrays(arrays: Mapping, fail) -> dict[str, np.ndarray]:
    if not isinstance(arrays, Mapping):
        raise fail(f"`arrays` must be a dict of name -> numpy array, got {type(arrays).__name__}")
    out = {}
    for name, value in arrays.items():
        if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
            raise fail(f"array name {name!r} is not allowed (use letters, digits, '_', '.', '-'; "
                       "at most 200 characters; not starting with '.' or '-')")
        arr = np.asarray(value)
        if arr.dtype.hasobject or arr.dtype.kind not in _ALLOWED_KINDS:
            raise fail(f"array {name!r} has dtype {arr.dtype}; model files store only numeric, "
                       "bool, str, bytes and datetime arrays (object and structured dtypes "
                       "would need pickle)")
        out[name] = arr
    return out


def _check_str_list(vocabulary, fail) -> list[str] | None:
    if vocabulary is None:
        return None
    if isinstance(vocabulary, (str, bytes)) or not isinstance(vocabulary, Iterable):
        raise fail("`vocabulary` must be a sequence of str or None, "
                   f"got {type(vocabulary).__name__}")
    terms = []
    for i, t in enumerate(vocabulary):
        if isinstance(t, np.str_):
            t = str(t)
        if not isinstance(t, str):
            raise fail(f"vocabulary term {i} is {t!r}, not a str")
        terms.append(t)
    return terms


def _rng_state_dict(rng_state, fail) -> dict | None:
    if rng_state is None:
        return None
    if isinstance(rng_state, np.random.Generator):
        rng_state = get_state(rng_state)
    elif isinstance(rng_state, np.random.BitGenerator):
        rng_state = rng_state.state
    if not isinstance(rng_state, Mapping) or not isinstance(rng_state.get("bit_generator"), str):
        raise fail("`rng_state` must be a bit generator state dict (rng.bit_generator.state), "
                   f"a numpy Generator or None, got {type(rng_state).__name__}")
    return _to_json(rng_state, "rng_state", fail)


def _zipinfo(name: str, compress: bool) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=_FIXED_DATE)
    info.compress_type = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    info.external_attr = (stat.S_IFREG | 0o644) << 16
    info.create_system = 3  # unix, so that the mode above is honoured by unzip
    return info


def _write_archive(fileobj, manifest_bytes: bytes, arrays: dict[str, np.ndarray],
                   compress: bool) -> None:
    with zipfile.ZipFile(fileobj, mode="w", allowZip64=True) as zf:
        zf.writestr(_zipinfo(MANIFEST_NAME, True), manifest_bytes)
        for name, arr in arrays.items():
            big = arr.nbytes >= _ZIP64_THRESHOLD
            with zf.open(_zipinfo(f"{name}.npy", compress), mode="w", force_zip64=big) as member:
                np.lib.format.write_array(member, arr, allow_pickle=False)


def write_model_file(
    path,
    *,
    cls: str,
    params: dict,
    arrays: dict,
    vocabulary=None,
    rng_state=None,
    trace: dict | None = None,
    kind: str = "model",
    extra: dict | None = None,
    compress: bool = False,
) -> Path:
    """Write a model file atomically.

    Parameters
    ----------
    path : str or os.PathLike
        Target file; ``.hmn`` is the suggested extension (none is added). An
        existing file is replaced only once the new one is complete.
    cls : str
        Class name of the model, e.g. ``"LDA"``; checked by ``expected_class``.
    params : dict
        Hyperparameters, JSON-serialisable (numpy scalars are converted).
    arrays : dict of str to array_like
        The arrays, stored bit for bit with their dtype, shape and byte order.
        Names use letters, digits, ``_``, ``.`` and ``-``. Object and structured
        dtypes are refused.
    vocabulary : sequence of str, optional
        Terms in word-id order (a :class:`~harmonium.corpus.Vocabulary` works).
    rng_state : dict or numpy.random.Generator, optional
        A bit generator state (``rng.bit_generator.state``); a Generator is
        converted. Large integers (PCG64's 128-bit state) are stored exactly.
    trace : dict, optional
        The training trace, name -> list of values.
    kind : {"model", "checkpoint"}
        What the file holds.
    extra : dict, optional
        Further JSON data.
    compress : bool, default False
        DEFLATE the arrays too (the manifest always is). Slower to write; worth
        it for files that are shipped and hold sparse counts.

    Returns
    -------
    pathlib.Path
        The path written.

    Raises
    ------
    ModelFileError
        If some content cannot be stored (the message names the key).
    OSError
        If the directory cannot be written; the target is then unchanged and no
        temporary file is left behind.
    """
    target = Path(path)

    def fail(what: str) -> ModelFileError:
        return ModelFileError(f"Cannot write model file '{target}': {what}.")

    if not isinstance(cls, str) or not cls:
        raise fail(f"`cls` must be a non-empty str, got {cls!r}")
    if kind not in KINDS:
        raise fail(f"`kind` must be one of {KINDS}, got {kind!r}")
    for argname, value in (("params", params), ("trace", trace), ("extra", extra)):
        if value is not None and not isinstance(value, Mapping):
            raise fail(f"`{argname}` must be a dict, got {type(value).__name__}")
    if params is None:
        raise fail("`params` must be a dict, got None")
    arrays = _prepare_arrays(arrays, fail)
    manifest = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "class": cls,
        "params": _to_json(params, "params", fail),
        "vocabulary": _check_str_list(vocabulary, fail),
        "library_version": __version__,
        "rng_state": _rng_state_dict(rng_state, fail),
        "trace": _to_json(trace or {}, "trace", fail),
        "arrays": {n: {"dtype": a.dtype.str, "shape": list(a.shape)} for n, a in arrays.items()},
        "kind": kind,
        "extra": _to_json(extra or {}, "extra", fail),
    }
    manifest_bytes = json.dumps(manifest, indent=1, ensure_ascii=False).encode("utf-8")

    with atomic_writer(target, "wb") as fh:
        _write_archive(fh, manifest_bytes, arrays, compress)
    return target


# --------------------------------------------------------------------------- reading


def _sniff(first: bytes) -> str:
    """A hint about what a non-ZIP file is, from its first bytes."""
    if first[:1] == b"\x80" and first[1:2] in (b"\x02", b"\x03", b"\x04", b"\x05"):
        return "; it looks like a Python pickle; harmonium never loads pickles"
    if first.startswith(b"\x93NUMPY"):
        return "; it is a bare .npy array, not a model file"
    if first.startswith(b"\x1f\x8b"):
        return "; it is gzip-compressed"
    if first.startswith(b"\x89HDF"):
        return "; it is an HDF5 file"
    return ""


def _open_archive(path: Path, err) -> zipfile.ZipFile:
    try:
        with open(path, "rb") as fh:
            first = fh.read(8)
    except FileNotFoundError as exc:
        raise err("file not found") from exc
    except IsADirectoryError as exc:
        raise err("it is a directory, not a file") from exc
    except OSError as exc:
        raise err(f"cannot open it ({exc.strerror or exc})") from exc
    if not first:
        raise err("the file is empty")
    if not first.startswith(_ZIP_MAGIC):
        raise err(f"not a harmonium model file (not a ZIP archive{_sniff(first)})")
    try:
        return zipfile.ZipFile(path, mode="r")
    except _CORRUPTION_ERRORS as exc:
        raise err(f"the file is truncated or corrupted ({exc})") from exc


def _read_manifest(zf: zipfile.ZipFile, err) -> dict:
    names = zf.namelist()
    if len(set(names)) != len(names):
        raise err("the archive is corrupted (duplicate member names)")
    if MANIFEST_NAME not in names:
        raise err(f"not a harmonium model file (the ZIP archive has no {MANIFEST_NAME})")
    info = zf.getinfo(MANIFEST_NAME)
    if info.file_size > _MAX_MANIFEST_BYTES:
        raise err(f"{MANIFEST_NAME} declares {info.file_size} bytes, more than any model needs; "
                  "the file is corrupted or not a harmonium model file")
    raw = zf.read(MANIFEST_NAME)
    try:
        manifest = json.loads(raw.decode("utf-8"))
    except ValueError as exc:
        raise err(f"{MANIFEST_NAME} is not valid UTF-8 JSON ({exc})") from exc
    if not isinstance(manifest, dict):
        raise err(f"{MANIFEST_NAME} is not a JSON object")
    if manifest.get("format") != FORMAT:
        raise err(f"not a harmonium model file ({MANIFEST_NAME} has format "
                  f"{manifest.get('format')!r}, expected {FORMAT!r})")
    version = manifest.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 0:
        raise err(f"{MANIFEST_NAME} has an invalid format_version {version!r}")
    if version > FORMAT_VERSION:
        raise err(f"written by a newer harmonium (format_version {version} > {FORMAT_VERSION}); "
                  "upgrade harmonium")
    return manifest


def _validate_manifest(manifest: dict, err) -> None:
    """Check the schema of a current-version manifest."""
    missing = [k for k in REQUIRED_KEYS if k not in manifest]
    if missing:
        raise err(f"{MANIFEST_NAME} lacks the key(s) {', '.join(missing)}")
    types = {
        "class": str, "params": dict, "library_version": str, "trace": dict,
        "arrays": dict, "kind": str, "extra": dict,
    }
    for key, typ in types.items():
        if not isinstance(manifest[key], typ):
            raise err(f"{MANIFEST_NAME} key {key!r} should be a {typ.__name__}, "
                      f"got {type(manifest[key]).__name__}")
    if manifest["kind"] not in KINDS:
        raise err(f"{MANIFEST_NAME} has an unknown kind {manifest['kind']!r}")
    vocab = manifest["vocabulary"]
    if vocab is not None and not (
        isinstance(vocab, list) and all(isinstance(t, str) for t in vocab)
    ):
        raise err(f"{MANIFEST_NAME} key 'vocabulary' should be a list of str or null")
    rng_state = manifest["rng_state"]
    if rng_state is not None and not (isinstance(rng_state, dict)
                                      and isinstance(rng_state.get("bit_generator"), str)):
        raise err(f"{MANIFEST_NAME} key 'rng_state' should be a bit generator state or null")
    for name, spec in manifest["arrays"].items():
        ok = (_NAME_RE.fullmatch(name) and isinstance(spec, dict)
              and isinstance(spec.get("dtype"), str) and isinstance(spec.get("shape"), list)
              and all(isinstance(n, int) and not isinstance(n, bool) and n >= 0
                      for n in spec["shape"]))
        if not ok:
            raise err(f"{MANIFEST_NAME} has an invalid entry for array {name!r}: {spec!r}")
        try:
            dtype = np.dtype(spec["dtype"])
        except (TypeError, ValueError) as exc:
            raise err(f"{MANIFEST_NAME} gives array {name!r} the unknown dtype "
                      f"{spec['dtype']!r}") from exc
        if dtype.hasobject or dtype.kind not in _ALLOWED_KINDS:
            raise err(f"array {name!r} is declared with dtype {dtype}, which would need pickle; "
                      "refusing to load it")


def _read_header(fp) -> tuple[tuple, bool, np.dtype]:
    version = np.lib.format.read_magic(fp)
    if version == (1, 0):
        return np.lib.format.read_array_header_1_0(fp)
    if version == (2, 0):
        return np.lib.format.read_array_header_2_0(fp)
    raise ValueError(f"unsupported .npy format version {version}")


def _read_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, name: str, spec, err) -> np.ndarray:
    """One array: header checked before any data is read, then read_array without pickle."""
    with zf.open(info) as fp:
        shape, _, dtype = _read_header(fp)
        header_len = fp.tell()
    if dtype.hasobject or dtype.kind not in _ALLOWED_KINDS:
        raise err(f"array member {info.filename!r} holds dtype {dtype} (pickled Python objects); "
                  "harmonium never loads pickles")
    if spec is not None:
        if np.dtype(spec["dtype"]) != dtype or list(spec["shape"]) != list(shape):
            raise err(f"array {name!r} does not match the manifest: the manifest says dtype "
                      f"{spec['dtype']} shape {tuple(spec['shape'])}, the member holds dtype "
                      f"{dtype.str} shape {tuple(shape)}")
    n_bytes = math.prod(shape) * dtype.itemsize
    if info.file_size != header_len + n_bytes:
        raise err(f"the file is truncated or corrupted (member {info.filename!r} has "
                  f"{info.file_size - header_len} data bytes, its header needs {n_bytes})")
    with zf.open(info) as fp:
        arr = np.lib.format.read_array(fp, allow_pickle=False)
        if fp.read(1):  # reading to the end also makes zipfile verify the CRC
            raise err(f"the file is corrupted (trailing bytes in {info.filename!r})")
    return arr


def _read_arrays(zf: zipfile.ZipFile, specs: dict | None, err) -> dict[str, np.ndarray]:
    arrays = {}
    for info in zf.infolist():
        if info.filename == MANIFEST_NAME:
            continue
        name, dot, ext = info.filename.rpartition(".")
        if not dot or ext != "npy" or not _NAME_RE.fullmatch(name):
            raise err(f"unexpected member {info.filename!r} in the archive")
        spec = None
        if specs is not None:
            if name not in specs:
                raise err(f"member {info.filename!r} is not listed in the manifest")
            spec = specs[name]
        arrays[name] = _read_member(zf, info, name, spec, err)
    if specs is not None:
        missing = sorted(set(specs) - set(arrays))
        if missing:
            raise err("missing array member(s) listed in the manifest: "
                      + ", ".join(f"'{m}.npy'" for m in missing))
    return arrays


def _migrate(manifest: dict, arrays: dict, err) -> tuple[dict, dict]:
    version = manifest["format_version"]
    while version < FORMAT_VERSION:
        step = MIGRATIONS.get(version)
        if step is None:
            raise err(f"format_version {version} is not supported by this harmonium "
                      f"(no migration from version {version} to {version + 1})")
        try:
            manifest, arrays = step(dict(manifest), dict(arrays))
        except ModelFileError:
            raise
        except Exception as exc:  # a migration is code; report which step broke
            raise err(f"upgrading from format_version {version} to {version + 1} failed "
                      f"({type(exc).__name__}: {exc})") from exc
        version += 1
        manifest["format_version"] = version
    return manifest, arrays


def _check_arrays_match(manifest: dict, arrays: dict, err) -> None:
    specs = manifest["arrays"]
    if set(specs) != set(arrays):
        missing = sorted(set(specs) - set(arrays))
        unlisted = sorted(set(arrays) - set(specs))
        raise err(f"arrays do not match the manifest (missing: {missing}, not listed: {unlisted})")
    for name, arr in arrays.items():
        spec = specs[name]
        if np.dtype(spec["dtype"]) != arr.dtype or list(spec["shape"]) != list(arr.shape):
            raise err(f"array {name!r} does not match the manifest: the manifest says dtype "
                      f"{spec['dtype']} shape {tuple(spec['shape'])}, the member holds dtype "
                      f"{arr.dtype.str} shape {arr.shape}")


def read_model_file(path, *, expected_class: str | None = None,
                    expected_kind: str | None = None) -> ModelFile:
    """Read and verify a model file.

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    expected_class : str, optional
        Refuse a file whose ``class`` differs (e.g. an HDP file given to LDA).
    expected_kind : {"model", "checkpoint"}, optional
        Refuse a file of the other kind.

    Returns
    -------
    ModelFile
        Manifest (upgraded to :data:`FORMAT_VERSION` by :data:`MIGRATIONS` if the
        file is older) and arrays, every array checked against the manifest.

    Raises
    ------
    ModelFileError
        For any problem: missing, empty, not a ZIP (pickles are named as such
        and never loaded), truncated or corrupted (CRC), no manifest, foreign
        format, newer ``format_version``, array members missing, unlisted or
        disagreeing with the manifest, object arrays, wrong class or kind. The
        message names the file; the low-level cause is chained.
    """
    p = Path(path)

    def err(what: str) -> ModelFileError:
        return ModelFileError(f"Cannot read model file '{p}': {what}.")

    zf = _open_archive(p, err)
    try:
        with zf:
            manifest = _read_manifest(zf, err)
            current = manifest["format_version"] == FORMAT_VERSION
            if current:  # fail cheap: check the schema and class before reading arrays
                _validate_manifest(manifest, err)
                _check_expected(manifest, expected_class, expected_kind, err)
            arrays = _read_arrays(zf, manifest["arrays"] if current else None, err)
    except ModelFileError:
        raise
    except _CORRUPTION_ERRORS as exc:
        raise err(f"the file is truncated or corrupted ({type(exc).__name__}: {exc})") from exc
    if not current:
        manifest, arrays = _migrate(manifest, arrays, err)
        _validate_manifest(manifest, err)
        _check_expected(manifest, expected_class, expected_kind, err)
    _check_arrays_match(manifest, arrays, err)
    return ModelFile(manifest=manifest, arrays=arrays, path=p)


def _check_expected(manifest: dict, expected_class, expected_kind, err) -> None:
    if expected_class is not None and manifest["class"] != expected_class:
        raise err(f"it holds a {manifest['class']!r} model, expected {expected_class!r}")
    if expected_kind is not None and manifest["kind"] != expected_kind:
        raise err(f"it is a {manifest['kind']} file, expected a {expected_kind} file")
