"""Property-based fuzzing of every corpus reader and of ``harmonium.load``.

Each reader gets random bytes, truncations of a valid file and mutated valid files (bit flips,
byte insertions and deletions); model files get the same plus edits of manifest.json and of the
.npy headers inside a well-formed ZIP (so the CRC does not catch them first). Whatever the input,
a reader returns a valid object or raises a ``harmonium.errors.HarmoniumError``: never another
exception, never a hang (hypothesis' ``deadline`` bounds each example).

The profile is derandomized (the examples are a function of the test only: same run in CI as
here, no example database), so the suite stays deterministic; found failures are pinned below
as plain regression tests.
"""

from __future__ import annotations

import atexit
import io
import json
import os
import shutil
import tempfile
import zipfile

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import harmonium
import harmonium.errors
from harmonium.corpus import Corpus
from harmonium.corpus.formats import read_corpus, write_corpus
from harmonium.corpus.ondisk import build_ondisk_corpus, open_ondisk_corpus
from harmonium.errors import HarmoniumError

settings.register_profile(
    "harmonium-fuzz", derandomize=True, database=None, deadline=2000, max_examples=100,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
FUZZ = settings.get_profile("harmonium-fuzz")

# -- valid files to start from ------------------------------------------------------------------------
_DIR = tempfile.mkdtemp(prefix="harmonium-fuzz-")
atexit.register(shutil.rmtree, _DIR, ignore_errors=True)  # hypothesis examples cannot use tmp_path
_X = np.array([[2, 0, 1, 0], [0, 3, 0, 1], [1, 1, 1, 0]])
_CORPUS = Corpus(sp.csr_matrix(_X), ["apple", "bean", "corn", "date"], doc_ids=["d0", "d1", "d2"])
_TEXT_LINES = "apple apple corn\nbean bean bean date\napple bean corn\n"
_TABLE = "id\ttext\tlabel\tx\nd0\tapple corn\tfruit\t1.5\nd1\tbean date\tveg\t-2\n"

# format -> (file name, reader keyword arguments)
FORMATS = {
    "lines": ("docs.txt", {}),
    "tsv": ("docs.tsv", {"label_column": "label", "feature_columns": ["x"], "id_column": "id"}),
    "csv": ("docs.csv", {}),
    "uci": ("docword.fuzz.txt", {}),
    "ldac": ("corpus.ldac", {}),
    "mm": ("corpus.mtx", {}),
    "npz": ("corpus.npz", {}),
}


def _valid_bytes(fmt: str) -> bytes:
    name, _ = FORMATS[fmt]
    path = os.path.join(_DIR, "valid-" + name)
    if fmt == "lines":
        return _TEXT_LINES.encode()
    if fmt == "tsv":
        return _TABLE.encode()
    if fmt == "csv":
        return _TABLE.replace("\t", ",").encode()
    write_corpus(_CORPUS, path, format=fmt)
    with open(path, "rb") as f:
        return f.read()


VALID = {fmt: _valid_bytes(fmt) for fmt in FORMATS}


def _read(fmt: str, data: bytes, vocab: bytes | None = None):
    """Write ``data`` under the format's file name in a fresh directory and read it back."""
    d = tempfile.mkdtemp(dir=_DIR)
    name, kwargs = FORMATS[fmt]
    path = os.path.join(d, name)
    with open(path, "wb") as f:
        f.write(data)
    if vocab is not None:
        vname = "vocab.fuzz.txt" if fmt == "uci" else os.path.splitext(name)[0] + ".vocab"
        with open(os.path.join(d, vname), "wb") as f:
            f.write(vocab)
    if fmt in ("uci",) and vocab is None:
        kwargs = {**kwargs, "vocab_path": False}
    return read_corpus(path, format=fmt, **kwargs)


def _reads_or_harmonium_error(fn, *args):
    try:
        out = fn(*args)
    except HarmoniumError:
        return None
    return out


# -- byte-level mutation strategies --------------------------------------------------------------------
@st.composite
def mutated(draw, data: bytes):
    """``data`` after 1-4 edits: flip a bit, insert a byte, delete a byte, or overwrite with a 'nasty' byte."""
    buf = bytearray(data)
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["flip", "insert", "delete", "set"]))
        if not buf and op != "insert":
            op = "insert"
        pos = draw(st.integers(0, max(len(buf) - 1, 0)))
        if op == "flip":
            buf[pos] ^= 1 << draw(st.integers(0, 7))
        elif op == "insert":
            buf.insert(pos, draw(st.integers(0, 255)))
        elif op == "delete":
            del buf[pos]
        else:
            buf[pos] = draw(st.sampled_from(b"\x00\xff\n\r\t :-.9eE\x1f\x8b%"))
    return bytes(buf)


def truncated(data: bytes):
    return st.integers(0, max(len(data) - 1, 0)).map(lambda n: data[:n])


def any_bytes_for(fmt: str):
    data = VALID[fmt]
    return st.one_of(st.binary(max_size=200), truncated(data), mutated(data))


# -- corpus readers ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_valid_files_read(fmt):
    """The starting points are valid (the fuzzers would prove little otherwise)."""
    corpus = _read(fmt, VALID[fmt])
    assert corpus.n_docs >= 2 and corpus.n_tokens > 0


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@FUZZ
@given(data=st.data())
def test_corpus_reader_fuzz(fmt, data):
    raw = data.draw(any_bytes_for(fmt))
    out = _reads_or_harmonium_error(_read, fmt, raw)
    assert out is None or isinstance(out, Corpus)


@pytest.mark.parametrize("fmt", ["uci", "ldac", "mm", "npz"])
@FUZZ
@given(vocab=st.one_of(st.binary(max_size=60), mutated(b"apple\nbean\ncorn\ndate\n")))
def test_vocabulary_file_fuzz(fmt, vocab):
    out = _reads_or_harmonium_error(_read, fmt, VALID[fmt], vocab)
    assert out is None or isinstance(out, Corpus)


# -- the on-disk corpus directory ------------------------------------------------------------------------
def _ondisk_dir() -> str:
    out = os.path.join(_DIR, "ondisk-valid")
    build_ondisk_corpus([_CORPUS.counts[:2], _CORPUS.counts[2:]], out, _CORPUS.vocabulary, doc_ids=_CORPUS.doc_ids,
                        labels=["a", "b", "a"])
    return out


_ONDISK = _ondisk_dir()
_ONDISK_FILES = sorted(os.listdir(_ONDISK))


@FUZZ
@given(data=st.data())
def test_ondisk_corpus_fuzz(data):
    name = data.draw(st.sampled_from(_ONDISK_FILES))
    with open(os.path.join(_ONDISK, name), "rb") as f:
        original = f.read()
    raw = data.draw(st.one_of(st.binary(max_size=200), truncated(original), mutated(original)))
    d = tempfile.mkdtemp(dir=_DIR)
    for other in _ONDISK_FILES:
        with open(os.path.join(_ONDISK, other), "rb") as f, open(os.path.join(d, other), "wb") as g:
            g.write(raw if other == name else f.read())
    out = _reads_or_harmonium_error(open_ondisk_corpus, d)
    assert out is None or isinstance(out, Corpus)


# -- model files -----------------------------------------------------------------------------------------
def _model_bytes() -> bytes:
    path = os.path.join(_DIR, "lda.hmn")
    harmonium.LDA(n_topics=2, n_iter=4, random_state=0).fit(_CORPUS).save(path)
    with open(path, "rb") as f:
        return f.read()


MODEL = _model_bytes()


def _load(data: bytes):
    path = os.path.join(tempfile.mkdtemp(dir=_DIR), "model.hmn")
    with open(path, "wb") as f:
        f.write(data)
    return harmonium.load(path)


def _members(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return {i.filename: zf.read(i) for i in zf.infolist()}


def _rezip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, content in members.items():
            zf.writestr(name, content)
    return buf.getvalue()


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 2**40) | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)


def _paths(obj, prefix=()):
    """Every (path of keys / indices) inside a JSON object, the root included."""
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj[:4]):
            yield from _paths(v, (*prefix, i))


@st.composite
def manifest_edits(draw):
    """The model file with 1-3 values of manifest.json replaced, deleted or renamed, re-zipped with valid CRCs."""
    members = _members(MODEL)
    manifest = json.loads(members["manifest.json"])
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(list(_paths(manifest))[1:]))
        parent = manifest
        for key in path[:-1]:
            parent = parent[key]
        op = draw(st.sampled_from(["replace", "delete"]))
        if op == "delete":
            del parent[path[-1]]
        else:
            parent[path[-1]] = draw(_JSON_VALUES)
    members["manifest.json"] = json.dumps(manifest).encode()
    return _rezip(members)


@st.composite
def member_edits(draw):
    """A .npy member (header or data) or the manifest's raw bytes mutated, re-zipped with valid CRCs."""
    members = _members(MODEL)
    name = draw(st.sampled_from(sorted(members)))
    content = members[name]
    members[name] = draw(st.one_of(mutated(content[:160]).map(lambda head: head + content[160:]),
                                   truncated(content), st.binary(max_size=100)))
    return _rezip(members)


@FUZZ
@given(raw=st.one_of(st.binary(max_size=300), truncated(MODEL), mutated(MODEL)))
def test_load_bytes_fuzz(raw):
    out = _reads_or_harmonium_error(_load, raw)
    assert out is None or isinstance(out, harmonium.LDA)


@FUZZ
@given(raw=manifest_edits())
def test_load_manifest_fuzz(raw):
    _reads_or_harmonium_error(_load, raw)


@FUZZ
@given(raw=member_edits())
def test_load_member_fuzz(raw):
    _reads_or_harmonium_error(_load, raw)


def test_valid_model_loads():
    model = _load(MODEL)
    assert model.topic_word_.shape == (2, 4)


# -- regression tests: what the fuzzers found --------------------------------------------------------------
_MM_ENTRIES = b"3 4 7\n1 1 2\n1 3 1\n2 2 3\n2 4 1\n3 1 1\n3 2 1\n3 3 1"


@pytest.mark.parametrize(
    "raw, message",
    [
        # scipy's mmread aborted the process (uncaught C++ exception) on these given a file object ...
        (b"$%MatrixMarket matrix coordinate integer general\n" + _MM_ENTRIES + b"\n", "first line must be"),
        (b"%%MatrixMarket matrix coordinate integer genera\x00l\n" + _MM_ENTRIES + b"\n", "unknown format"),
        # ... and crashed it (segmentation fault) on a stray byte after the last entry, given anything
        (b"%%MatrixMarket matrix coordinate integer general\n" + _MM_ENTRIES + b"\x8b", "other than numbers"),
        (b"%%MatrixMarket matrix coordinate integer general\n3 4 9\n1 1 2\n", "announces 27 numbers.*truncated"),
        (b"%%MatrixMarket matrix coordinate integer general\n3 4 1\n0 1 2\n", "index is not an integer in 1..3"),
    ],
)
def test_mmarket_malformed_is_a_corpus_error(raw, message):
    with pytest.raises(HarmoniumError, match=message):
        _read("mm", raw)


def test_mmarket_symmetric_and_array_layouts():
    sym = _read("mm", b"%%MatrixMarket matrix coordinate integer symmetric\n2 2 2\n1 1 3\n2 1 1\n")
    np.testing.assert_array_equal(sym.counts.toarray(), [[3, 1], [1, 0]])
    dense = _read("mm", b"%%MatrixMarket matrix array integer general\n2 3\n1\n0\n2\n0\n0\n4\n")
    np.testing.assert_array_equal(dense.counts.toarray(), [[1, 2, 0], [0, 0, 4]])


def test_truncated_gzip_is_a_corpus_error():
    for fmt in ("uci", "ldac"):  # EOFError escaped the UCI reader on a two-byte gzip magic
        with pytest.raises(HarmoniumError, match="corrupt or truncated gzip data"):
            _read(fmt, b"\x1f\x8b")


def test_every_byte_of_npz_and_model_file_overwritten():
    """Deterministic sweep: each byte of a valid file set to ~byte (a corrupted deflate stream made
    scipy.sparse.load_npz raise zlib.error and OSError). Result: a valid object or a harmonium error."""
    for pos in range(len(VALID["npz"])):
        raw = bytearray(VALID["npz"])
        raw[pos] ^= 0xFF
        _reads_or_harmonium_error(_read, "npz", bytes(raw))
    for pos in range(0, len(MODEL), 7):
        raw = bytearray(MODEL)
        raw[pos] ^= 0xFF
        _reads_or_harmonium_error(_load, bytes(raw))


def test_npy_header_left_open_is_a_model_file_error():
    members = _members(MODEL)
    members["alpha.npy"] = members["alpha.npy"].replace(b"{", b" ", 1)  # tokenize.TokenError escaped
    with pytest.raises(harmonium.errors.ModelFileError, match="truncated or corrupted"):
        _load(_rezip(members))


def test_ondisk_empty_array_file_is_a_corpus_error():
    d = tempfile.mkdtemp(dir=_DIR)
    for name in _ONDISK_FILES:
        with open(os.path.join(_ONDISK, name), "rb") as f, open(os.path.join(d, name), "wb") as g:
            g.write(b"" if name == "data.npy" else f.read())  # EOFError escaped np.load
    with pytest.raises(HarmoniumError, match="data.npy is not a readable .npy file"):
        open_ondisk_corpus(d)
