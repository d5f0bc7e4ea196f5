"""Matrix Market (``.mtx``) corpora: documents are rows, words are columns.

Written with :func:`scipy.io.mmwrite` (coordinate format, ``integer`` field); read by a
small parser here (coordinate or array; integer, real or pattern; any symmetry), since
scipy's reader can crash the process on malformed files. The file may be gzip-compressed
(``.mtx.gz``). Values must be non-negative integers: ``real`` files are
accepted when every value is integral, ``complex`` files are rejected.

The terms live in an optional vocabulary file, one term per line; by default
``path + ".vocab"`` (``docs.mtx`` -> ``docs.mtx.vocab``), see
:func:`default_vocab_path`. Without it the terms are "0".."V-1".
"""

from __future__ import annotations

import os
import re
import warnings

import numpy as np
import scipy.io
import scipy.sparse as sp

from harmonium.corpus.corpus import Corpus
from harmonium.corpus.formats._common import (
    INT32_MAX,
    atomic_binary_writer,
    check_and_write_vocab,
    corpus_from_matrix,
    fill_doc,
    name_of,
    open_binary,
)
from harmonium.errors import CorpusError

__all__ = ["default_vocab_path", "read", "write"]

_BANNER = b"%%MatrixMarket"


def default_vocab_path(path) -> str:
    """``path + ".vocab"``: ``docs.mtx`` -> ``docs.mtx.vocab`` (``.gz`` is dropped first)."""
    path = os.fspath(path)
    if path.endswith(".gz"):
        path = path[:-3]
    return path + ".vocab"


_FIELDS = {"integer": 3, "real": 3, "double": 3, "pattern": 2, "complex": 4}
_SYMMETRIES = ("general", "symmetric", "skew-symmetric", "hermitian")
_NUMBER_TEXT = re.compile(rb"[0-9eE+\-.\s]*")


def _parse(data: bytes, name: str) -> sp.coo_matrix:
    """A Matrix Market coordinate or array file as a COO matrix, every malformation a CorpusError.

    Our own parser, not :func:`scipy.io.mmread`: scipy's C++ reader aborts or crashes the process
    on some malformed files (a missing banner given a file object, a stray byte after the last
    entry), and a corpus reader must fail with an error on any bytes.
    """

    def bad(what: str) -> CorpusError:
        return CorpusError(f"{name} is not a valid Matrix Market file: {what}.")

    lines = data.split(b"\n", 1)
    banner = lines[0].split()
    if len(banner) != 5 or banner[0] != _BANNER or banner[1].lower() != b"matrix":
        raise bad(f"the first line must be '%%MatrixMarket matrix <format> <field> <symmetry>' "
                  f"(got {lines[0][:60]!r})")
    layout, field, symmetry = (t.decode("ascii", errors="replace").lower() for t in banner[2:])
    if layout not in ("coordinate", "array") or field not in _FIELDS or symmetry not in _SYMMETRIES:
        raise bad(f"unknown format, field or symmetry {layout!r} {field!r} {symmetry!r}")
    if field == "complex":
        raise CorpusError(f"{name} holds complex values; counts must be non-negative integers.")
    rest = lines[1] if len(lines) > 1 else b""
    body_start = 0
    while rest[body_start:body_start + 1] == b"%" or rest[body_start:body_start + 1] in (b"\n", b"\r"):
        end = rest.find(b"\n", body_start)
        if end < 0:
            raise bad("it ends before the size line")
        body_start = end + 1
    size_end = rest.find(b"\n", body_start)
    size_line, body = (rest[body_start:], b"") if size_end < 0 else (rest[body_start:size_end], rest[size_end + 1:])
    try:
        sizes = [int(t) for t in size_line.split()]
    except ValueError:
        raise bad(f"the size line {size_line[:60]!r} must hold integers") from None
    n_size = 3 if layout == "coordinate" else 2
    if len(sizes) != n_size or min(sizes) < 0 or max(sizes) > INT32_MAX:
        raise bad(f"the size line {size_line[:60]!r} must hold {n_size} non-negative integers below 2**31")
    if not _NUMBER_TEXT.fullmatch(body):
        raise bad("the entries hold something other than numbers")
    n_rows, n_cols = sizes[:2]
    n_values = sizes[2] * _FIELDS[field] if layout == "coordinate" else n_rows * n_cols
    if n_values > len(body):  # each number takes at least two bytes: no allocation beyond the file's size
        raise bad(f"the size line announces {n_values} numbers, more than the file holds (truncated?)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            values = np.fromstring(body, dtype=np.float64, sep=" ") if body.strip() else np.zeros(0)
        except ValueError:
            raise bad("the entries are not all numbers") from None
    if values.size != n_values:
        raise bad(f"the size line announces {n_values} numbers but the file holds {values.size} (truncated?)")
    if layout == "array":
        if symmetry != "general":
            raise bad("a dense (array) file must be 'general'")
        return sp.coo_matrix(values.reshape(n_cols, n_rows).T)
    if field == "pattern":
        ij = values.reshape(-1, 2)
        v = np.ones(ij.shape[0])
    else:
        ij, v = values.reshape(-1, 3)[:, :2], values.reshape(-1, 3)[:, 2]
    if ij.size and (not np.array_equal(ij, np.round(ij)) or ij.min() < 1
                    or ij[:, 0].max() > n_rows or ij[:, 1].max() > n_cols):
        raise bad(f"a row or column index is not an integer in 1..{n_rows} x 1..{n_cols}")
    i, j = ij[:, 0].astype(np.int64) - 1, ij[:, 1].astype(np.int64) - 1
    if symmetry != "general":
        off = i != j
        sign = -1.0 if symmetry == "skew-symmetric" else 1.0
        i, j, v = np.concatenate([i, j[off]]), np.concatenate([j, i[off]]), np.concatenate([v, sign * v[off]])
    if field == "integer" and v.size and np.abs(v).max() > 2**53:
        raise bad("an integer entry is too large")
    return sp.coo_matrix((v, (i, j)), shape=(n_rows, n_cols))


@fill_doc
def read(path, *, vocab_path=None) -> Corpus:
    """Read a Matrix Market corpus (rows are documents).

    Parameters
    ----------
    path : str or path-like
        The ``.mtx`` (or ``.mtx.gz``) file.
    {vocab_path_read}

    Raises
    ------
    CorpusError
        If the file is not valid Matrix Market, holds negative, non-integer or
        complex values (the message names the document and word), or the
        vocabulary file does not have one term per column.
    """
    name = name_of(path)
    with open_binary(path) as f:  # a missing file raises FileNotFoundError, as open does
        try:
            data = f.read()
        except (OSError, EOFError) as e:  # gzip.BadGzipFile is an OSError
            raise CorpusError(f"{name}: corrupt or truncated gzip data ({e}).") from None
    return corpus_from_matrix(_parse(data, name), name, vocab_path, default_vocab_path(path))


def write(corpus: Corpus, path, *, vocab_path=None) -> None:
    """Write ``corpus`` as a Matrix Market coordinate file plus a vocabulary file.

    Parameters
    ----------
    corpus : Corpus
    path : str or path-like
        The ``.mtx`` file; gzip-compressed when it ends with ``.gz``.
    vocab_path : str, path-like or False, optional
        Where the vocabulary goes; by default :func:`default_vocab_path` of
        ``path``. ``False`` writes none.

    Notes
    -----
    Each file is written to a temporary name and renamed. Metadata (document
    ids, labels) are not part of the format and are not written.
    """
    corpus = check_and_write_vocab(corpus, "mmarket.write", vocab_path, default_vocab_path(path))
    with atomic_binary_writer(path) as f:
        scipy.io.mmwrite(f, corpus.counts,
                         comment=" harmonium corpus: rows are documents, columns are words",
                         field="integer", symmetry="general")
