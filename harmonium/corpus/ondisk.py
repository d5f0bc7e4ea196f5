"""Out-of-core corpora: CSR arrays in ``.npy`` files, opened as read-only memory maps.

:func:`build_ondisk_corpus` consumes an iterable of chunks (corpora or sparse
matrices over one vocabulary) and appends each chunk's ``indptr``, ``indices``
and ``data`` to files in a directory, so that only one chunk is in memory at a
time. :func:`open_ondisk_corpus` returns a :class:`~harmonium.corpus.Corpus`
whose ``indices`` and ``data`` are ``np.memmap`` views of those files: nothing
of them is copied into memory until it is read.

Directory layout (format ``"harmonium-ondisk-corpus"``, ``format_version`` 1)::

    manifest.json     format, format_version, library_version, n_docs, n_words,
                      nnz, n_tokens, arrays {name: {file, dtype, shape}},
                      vocabulary, doc_ids, labels (file names or null)
    indptr.npy        int64, shape (n_docs + 1,)
    indices.npy       int32, shape (nnz,)    word ids, sorted within a document
                      (int64 when nnz >= 2**31-1, see below)
    data.npy          int32, shape (nnz,)    counts >= 1
    vocabulary.json   JSON list of the terms
    doc_ids.jsonl     optional, one JSON string per line
    labels.jsonl      optional, one JSON value per line

On disk ``indptr`` is always int64 (it grows while chunks are appended). The
in-memory :class:`~harmonium.corpus.Corpus` layout has ``indices`` and
``indptr`` of one dtype (int32 while nnz and n_words < 2**31-1, else int64,
:func:`harmonium.corpus.corpus.index_dtype`), so :func:`open_ondisk_corpus`
loads ``indptr`` (only n_docs + 1 entries) into memory as int32 and keeps
``indices`` and ``data`` memory-mapped. When the final nnz reaches 2**31-1,
:func:`build_ondisk_corpus` rewrites ``indices.npy`` as int64 (block by block)
before the manifest is written, so such corpora also open without copying
``indices``; ``indptr`` then stays memory-mapped too.

Every file is written under a temporary name and renamed; ``manifest.json``
is written last (and removed first when a directory is rebuilt), so a
directory whose build failed or was interrupted is never loadable.

Examples
--------
Build from chunks produced one at a time, e.g. by vectorising slices of a large
file with a fixed vocabulary (here random sparse chunks stand in):

>>> import tempfile
>>> import numpy as np, scipy.sparse as sp
>>> rng = np.random.default_rng(0)
>>> def chunks():
...     for _ in range(3):
...         dense = rng.poisson(0.3, size=(4, 6))
...         yield sp.csr_matrix(dense)
>>> with tempfile.TemporaryDirectory() as tmp:
...     corpus = build_ondisk_corpus(chunks(), tmp, ["a", "b", "c", "d", "e", "f"])
...     same = open_ondisk_corpus(tmp)
...     print(corpus.n_docs, type(same.counts.data).__name__)
12 memmap
"""

from __future__ import annotations

import contextlib
import json
import mmap
import os
import secrets
import struct
import tokenize
from collections.abc import Iterable, Sequence

import numpy as np
import scipy.sparse as sp

from harmonium._version import __version__
from harmonium.corpus.corpus import Corpus, _as_csr_counts, index_dtype
from harmonium.corpus.vocabulary import Vocabulary
from harmonium.errors import CorpusError, InvalidParameterError
from harmonium.io.atomic import atomic_write_bytes, fsync_dir

__all__ = ["FORMAT", "FORMAT_VERSION", "build_ondisk_corpus", "open_ondisk_corpus", "release_pages"]

FORMAT = "harmonium-ondisk-corpus"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
#: On-disk dtypes as chunks are appended; ``indices`` becomes "<i8" when nnz needs it.
_ARRAYS = {"indptr": "<i8", "indices": "<i4", "data": "<i4"}
_VOCABULARY = "vocabulary.json"
_META = {"doc_ids": "doc_ids.jsonl", "labels": "labels.jsonl"}
_FILES = (MANIFEST, _VOCABULARY, *(f"{a}.npy" for a in _ARRAYS), *_META.values())
#: Room reserved for the .npy header, written once the final shape is known.
_NPY_HEADER_BYTES = 128
#: Entries per block when verifying the arrays.
_VERIFY_BLOCK = 1 << 22


def _npy_header(dtype: str, length: int) -> bytes:
    """A version-1.0 ``.npy`` header of exactly ``_NPY_HEADER_BYTES`` for a 1-D array."""
    text = f"{{'descr': '{dtype}', 'fortran_order': False, 'shape': ({length},), }}"
    room = _NPY_HEADER_BYTES - 10
    text = text + " " * (room - len(text) - 1) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", room) + text.encode("latin1")


def _tmp_name(directory: str, name: str) -> str:
    return os.path.join(directory, f".{name}.{secrets.token_hex(6)}.partial")


def _on_disk_dtypes(nnz: int, n_words: int) -> dict[str, str]:
    """The dtypes of the array files of a corpus with ``nnz`` entries."""
    wide = index_dtype(nnz, n_words) == np.int64
    return {**_ARRAYS, "indices": "<i8" if wide else "<i4"}


def _widen_indices(tmp_path: str, directory: str, nnz: int) -> str:
    """Rewrite the int32 ``indices`` temporary file as int64, block by block; its new path."""
    wide = _tmp_name(directory, "indices")
    try:
        with open(tmp_path, "rb") as src, open(wide, "wb") as dst:
            src.seek(_NPY_HEADER_BYTES)
            dst.write(_npy_header("<i8", nnz))
            for lo in range(0, nnz, _VERIFY_BLOCK):
                block = np.fromfile(src, dtype="<i4", count=min(_VERIFY_BLOCK, nnz - lo))
                dst.write(block.astype("<i8").data)
            dst.flush()
            os.fsync(dst.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(wide)
        raise
    os.unlink(tmp_path)
    return wide


def _json_lines(values) -> bytes:
    return "".join(json.dumps(v, ensure_ascii=False) + "\n" for v in values).encode("utf-8")


def _chunk_counts(chunk, i: int, first_doc: int, vocabulary: Vocabulary):
    """Canonical CSR counts of chunk ``i`` and its (doc_ids, labels) or Nones."""
    where = f"chunk {i}, documents from {first_doc}, build_ondisk_corpus"
    if isinstance(chunk, Corpus):
        if chunk.vocabulary is not vocabulary and chunk.vocabulary != vocabulary:
            raise CorpusError(
                f"chunk {i} has a different vocabulary ({len(chunk.vocabulary)} terms) from "
                f"the one given ({len(vocabulary)} terms) (build_ondisk_corpus)."
            )
        return chunk.counts, chunk.doc_ids, chunk.labels
    if sp.issparse(chunk) or isinstance(chunk, np.ndarray):
        if sp.issparse(chunk):
            chunk = sp.csr_matrix(chunk)  # a new object: the caller's matrix is kept as is
        m = _as_csr_counts(chunk, where)
        if m.shape[1] > len(vocabulary):
            Corpus.check_word_ids_of(m, len(vocabulary), where)
        return m, None, None
    raise InvalidParameterError(
        f"chunk {i} is a {type(chunk).__name__}; build_ondisk_corpus takes Corpus objects "
        "or scipy.sparse matrices."
    )


def build_ondisk_corpus(
    chunks: Iterable,
    directory,
    vocabulary: Vocabulary | Sequence[str],
    *,
    doc_ids: Sequence[str] | None = None,
    labels: Sequence | None = None,
    overwrite: bool = False,
) -> Corpus:
    """Write a corpus to ``directory`` chunk by chunk, then open it memory-mapped.

    Parameters
    ----------
    chunks : iterable of Corpus or scipy.sparse matrix
        Consecutive groups of documents over ``vocabulary`` (a chunk's
        columns are word ids; a :class:`Corpus` chunk must have this very
        vocabulary). Consumed once; one chunk is held at a time.
    directory : str or path-like
        Created if needed. Files of another on-disk corpus there are replaced
        only with ``overwrite=True``; other files are left alone.
    vocabulary : Vocabulary or sequence of str
    doc_ids, labels : sequence, optional
        One entry per document of the whole corpus. When omitted they are
        taken from the :class:`Corpus` chunks, if every chunk has them.
        Labels must be JSON values (str, int, float, bool).
    overwrite : bool, default False

    Returns
    -------
    Corpus
        :func:`open_ondisk_corpus` of ``directory`` (memory-mapped arrays).

    Raises
    ------
    CorpusError
        If a chunk holds invalid counts or word ids (naming the chunk and the
        document), has another vocabulary, or the metadata do not have one
        entry per document. The directory is then left without a manifest,
        not loadable.
    """
    if not isinstance(vocabulary, Vocabulary):
        vocabulary = Vocabulary(vocabulary)
    if not isinstance(overwrite, bool):
        raise InvalidParameterError(
            f"The 'overwrite' parameter of build_ondisk_corpus must be a bool. Got {overwrite!r}."
        )
    directory = os.fspath(directory)
    os.makedirs(directory, exist_ok=True)
    present = [f for f in _FILES if os.path.exists(os.path.join(directory, f))]
    if present and not overwrite:
        raise CorpusError(
            f"{directory!r} already holds on-disk corpus files ({', '.join(present)}); "
            "pass overwrite=True to replace them (build_ondisk_corpus)."
        )
    with contextlib.suppress(FileNotFoundError):
        os.unlink(os.path.join(directory, MANIFEST))  # unloadable from here on
    for leftover in os.listdir(directory):  # temporaries of an interrupted build
        if leftover.endswith((".partial", ".tmp")) and leftover.startswith(
            tuple(f".{n}." for n in (*_ARRAYS, *_META, _VOCABULARY, MANIFEST))
        ):
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(directory, leftover))
    fsync_dir(directory)

    tmp = {name: _tmp_name(directory, name) for name in (*_ARRAYS, *_META)}
    files: dict = {}
    try:
        for name in (*_ARRAYS, *_META):
            files[name] = open(tmp[name], "wb")
        for name in _ARRAYS:
            files[name].write(b"\0" * _NPY_HEADER_BYTES)
        files["indptr"].write(np.zeros(1, dtype="<i8").tobytes())
        n_docs = nnz = n_tokens = 0
        has_meta = {"doc_ids": None, "labels": None}
        for i, chunk in enumerate(chunks):
            m, chunk_ids, chunk_labels = _chunk_counts(chunk, i, n_docs, vocabulary)
            files["indptr"].write(np.ascontiguousarray(m.indptr[1:] + nnz, dtype="<i8").data)
            files["indices"].write(np.ascontiguousarray(m.indices, dtype="<i4").data)
            files["data"].write(np.ascontiguousarray(m.data, dtype="<i4").data)
            for key, values in (("doc_ids", chunk_ids), ("labels", chunk_labels)):
                has_them = values is not None
                if has_meta[key] is None:
                    has_meta[key] = has_them
                if has_meta[key] != has_them:
                    has_meta[key] = False  # some chunks lack them: keep none
                if has_meta[key]:
                    files[key].write(_json_lines(np.asarray(values).tolist()))
            n_docs += m.shape[0]
            nnz += m.nnz
            n_tokens += int(m.data.sum(dtype=np.int64))
        for key, given in (("doc_ids", doc_ids), ("labels", labels)):
            if given is not None:
                given = np.asarray(given, dtype=str) if key == "doc_ids" else np.asarray(given)
                if given.ndim != 1 or given.shape[0] != n_docs:
                    raise CorpusError(
                        f"{key} must have one entry per document ({n_docs}); got shape "
                        f"{given.shape} (build_ondisk_corpus)."
                    )
                files[key].seek(0)
                files[key].truncate()
                files[key].write(_json_lines(given.tolist()))
                has_meta[key] = True
        lengths = {"indptr": n_docs + 1, "indices": nnz, "data": nnz}
        for name, dtype in _ARRAYS.items():
            f = files[name]
            f.seek(0)
            f.write(_npy_header(dtype, lengths[name]))
        for f in files.values():
            f.flush()
            os.fsync(f.fileno())
            f.close()
        dtypes = _on_disk_dtypes(nnz, len(vocabulary))
        if dtypes["indices"] != _ARRAYS["indices"]:
            tmp["indices"] = _widen_indices(tmp["indices"], directory, nnz)
        for name in _ARRAYS:
            os.replace(tmp[name], os.path.join(directory, f"{name}.npy"))
        for key, fname in _META.items():
            if has_meta[key]:
                os.replace(tmp[key], os.path.join(directory, fname))
            else:
                os.unlink(tmp[key])
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(os.path.join(directory, fname))
        atomic_write_bytes(os.path.join(directory, _VOCABULARY),
                           json.dumps(vocabulary.terms, ensure_ascii=False).encode("utf-8"))
        manifest = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "library_version": __version__,
            "n_docs": n_docs,
            "n_words": len(vocabulary),
            "nnz": nnz,
            "n_tokens": n_tokens,
            "canonical": True,
            "arrays": {name: {"file": f"{name}.npy", "dtype": dtype, "shape": [lengths[name]]}
                       for name, dtype in dtypes.items()},
            "vocabulary": _VOCABULARY,
            **{key: (fname if has_meta[key] else None) for key, fname in _META.items()},
        }
        fsync_dir(directory)
        atomic_write_bytes(os.path.join(directory, MANIFEST),
                           json.dumps(manifest, indent=1).encode("utf-8"))
        fsync_dir(directory)
    except BaseException:
        for f in files.values():
            with contextlib.suppress(OSError):
                f.close()
        for path in tmp.values():
            with contextlib.suppress(OSError):
                os.unlink(path)
        raise
    return open_ondisk_corpus(directory, verify=False)


def _fail(directory: str, message: str) -> CorpusError:
    return CorpusError(f"on-disk corpus {directory!r}: {message} (open_ondisk_corpus).")


def _read_manifest(directory: str) -> dict:
    if not os.path.isdir(directory):
        raise CorpusError(f"{directory!r} is not a directory (open_ondisk_corpus).")
    path = os.path.join(directory, MANIFEST)
    try:
        with open(path, "rb") as f:
            manifest = json.loads(f.read().decode("utf-8"))
    except FileNotFoundError:
        raise _fail(directory, f"no {MANIFEST}; this is not an on-disk corpus or its "
                    "build did not finish") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise _fail(directory, f"{MANIFEST} is not valid JSON ({e})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        got = manifest.get("format") if isinstance(manifest, dict) else None
        raise _fail(directory, f"{MANIFEST} is of format {got!r}, not {FORMAT!r}")
    version = manifest.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise _fail(directory, f"invalid format_version {version!r}")
    if version > FORMAT_VERSION:
        raise _fail(directory, f"format_version {version} is newer than this harmonium "
                    f"({__version__}) reads ({FORMAT_VERSION}); upgrade harmonium")
    for key in ("n_docs", "n_words", "nnz", "arrays", "vocabulary"):
        if key not in manifest:
            raise _fail(directory, f"{MANIFEST} lacks {key!r}")
    return manifest


def _load_array(directory: str, manifest: dict, name: str, length: int, dtype: str) -> np.memmap:
    entry = manifest["arrays"].get(name) if isinstance(manifest["arrays"], dict) else None
    if not isinstance(entry, dict) or not isinstance(entry.get("file"), str):
        raise _fail(directory, f"{MANIFEST} does not describe the {name!r} array")
    fname = entry["file"]
    if os.path.basename(fname) != fname:
        raise _fail(directory, f"array file {fname!r} is not a plain file name")
    try:
        arr = np.load(os.path.join(directory, fname), mmap_mode="r", allow_pickle=False)
    except FileNotFoundError:
        raise _fail(directory, f"{fname} is missing") from None
    except (ValueError, OSError, EOFError, SyntaxError, tokenize.TokenError) as e:  # empty, truncated, mangled header
        raise _fail(directory, f"{fname} is not a readable .npy file ({type(e).__name__}: {e})") from None
    if arr.dtype != np.dtype(dtype) or arr.shape != (length,):
        raise _fail(directory, f"{fname} holds {arr.dtype} {arr.shape}; expected "
                    f"{np.dtype(dtype)} ({length},)")
    return arr


def _read_json_file(directory: str, fname, lines: bool):
    if not isinstance(fname, str) or os.path.basename(fname) != fname:
        raise _fail(directory, f"invalid file name {fname!r} in {MANIFEST}")
    try:
        with open(os.path.join(directory, fname), "rb") as f:
            text = f.read().decode("utf-8")
        if lines:
            # split("\n"), not splitlines(): a raw U+2028 inside a JSON string is no line break
            return [json.loads(line) for line in text.split("\n") if line]
        return json.loads(text)
    except FileNotFoundError:
        raise _fail(directory, f"{fname} is missing") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise _fail(directory, f"{fname} is not valid JSON ({e})") from None


def _blocks(arr: np.memmap, block: int):
    """``(start, values)`` blocks of a memory-mapped ``.npy`` array, read with plain file
    reads so that verifying does not leave the whole file mapped into memory."""
    with open(arr.filename, "rb") as f:
        f.seek(arr.offset)
        for lo in range(0, arr.shape[0], block):
            values = np.fromfile(f, dtype=arr.dtype, count=min(block, arr.shape[0] - lo))
            yield lo, values


def _verify(directory: str, indptr, indices, data, n_words: int) -> None:
    """Check the CSR invariants block by block (bounded memory)."""
    nnz = indices.shape[0]
    if indptr[0] != 0 or indptr[-1] != nnz:
        raise _fail(directory, f"indptr runs from {int(indptr[0])} to {int(indptr[-1])}, "
                    f"not 0 to nnz={nnz}")
    previous = 0
    for _, block in _blocks(indptr, _VERIFY_BLOCK):
        if block[0] < previous or (block[1:] < block[:-1]).any():
            raise _fail(directory, "indptr is not non-decreasing (corrupted file)")
        previous = block[-1]
    for (lo, ids), (_, counts) in zip(_blocks(indices, _VERIFY_BLOCK),
                                      _blocks(data, _VERIFY_BLOCK), strict=True):
        bad = (ids < 0) | (ids >= n_words) | (counts < 1)
        if bad.any():
            pos = lo + int(np.flatnonzero(bad)[0])
            d = int(np.searchsorted(indptr, pos, side="right")) - 1
            raise _fail(directory, f"document {d} has word id {int(indices[pos])} and count "
                        f"{int(data[pos])}; word ids must be < {n_words} and counts >= 1")


def open_ondisk_corpus(directory, *, verify: bool = True) -> Corpus:
    """Open a corpus written by :func:`build_ondisk_corpus`, without loading its arrays.

    Parameters
    ----------
    directory : str or path-like
    verify : bool, default True
        Check, reading the arrays once block by block, that ``indptr`` is
        non-decreasing from 0 to nnz, every word id is < the vocabulary size
        and every count is >= 1 (samplers index arrays with these ids).

    Returns
    -------
    Corpus
        Its ``counts`` is a CSR matrix whose ``indices`` and ``data`` are
        read-only ``np.memmap`` arrays over the ``.npy`` files; ``indptr`` is
        read into memory as int32 (the dtype of ``indices``), or stays a
        memory map when nnz >= 2**31-1 (int64 throughout).

    Raises
    ------
    CorpusError
        If the directory is missing, has no manifest (not an on-disk corpus,
        or a build that did not finish), is of another format or a newer
        format version, or its files are missing or inconsistent.
    """
    directory = os.fspath(directory)
    manifest = _read_manifest(directory)
    n_docs, n_words, nnz = manifest["n_docs"], manifest["n_words"], manifest["nnz"]
    if not all(isinstance(v, int) and v >= 0 for v in (n_docs, n_words, nnz)):
        raise _fail(directory, "n_docs, n_words and nnz must be non-negative integers")
    dtypes = _on_disk_dtypes(nnz, n_words)
    indptr = _load_array(directory, manifest, "indptr", n_docs + 1, dtypes["indptr"])
    indices = _load_array(directory, manifest, "indices", nnz, dtypes["indices"])
    data = _load_array(directory, manifest, "data", nnz, dtypes["data"])
    terms = _read_json_file(directory, manifest["vocabulary"], lines=False)
    if not isinstance(terms, list) or len(terms) != n_words:
        raise _fail(directory, f"the vocabulary file does not list n_words={n_words} terms")
    try:
        vocabulary = Vocabulary(terms)
    except CorpusError as e:
        raise _fail(directory, str(e)) from None
    meta = {}
    for key in _META:
        if manifest.get(key) is not None:
            values = _read_json_file(directory, manifest[key], lines=True)
            if len(values) != n_docs:
                raise _fail(directory, f"{manifest[key]} has {len(values)} entries for "
                            f"{n_docs} documents")
            meta[key] = values
    if verify:
        _verify(directory, indptr, indices, data, n_words)
    # The Corpus layout: indices and indptr of one dtype. indices (int32, or int64
    # as built for a large nnz) and data stay memory-mapped; only the small indptr
    # is narrowed into memory. Assigned, not passed to the constructor, as in
    # corpus._canonical_csr, so that the memmaps are kept as they are.
    idx = index_dtype(nnz, n_words)
    m = sp.csr_matrix((n_docs, n_words), dtype=np.int32)
    m.indptr = indptr if indptr.dtype == idx else np.array(indptr, dtype=idx)
    m.indices, m.data = indices, data
    if manifest.get("canonical") is True:
        m.has_canonical_format = True
    return Corpus(m, vocabulary, _validated=True, **meta)


def release_pages(arr) -> bool:
    """Drop the resident pages of a memory-mapped array from this process (``madvise(MADV_DONTNEED)``).

    Streaming algorithms (online VB) read an on-disk corpus once per pass;
    without this, every page read stays mapped and counts in the process's
    resident set until the map is closed. The data are read-only, so the pages
    are simply re-read from the file (or the page cache) when touched again.
    Returns False when ``arr`` is not backed by a memory map (nothing to do).
    """
    base = arr
    while base is not None and not isinstance(base, mmap.mmap):
        base = getattr(base, "_mmap", None) or getattr(base, "base", None)
    if base is None or not hasattr(mmap, "MADV_DONTNEED"):
        return False
    base.madvise(mmap.MADV_DONTNEED)
    return True
