"""Matrix Market (``.mtx``) corpora: documents are rows, words are columns.

Read and written with :func:`scipy.io.mmread` / :func:`scipy.io.mmwrite`
(coordinate format, ``integer`` field). The file may be gzip-compressed
(``.mtx.gz``). Values must be non-negative integers: ``real`` files are
accepted when every value is integral, ``complex`` files are rejected.

The terms live in an optional vocabulary file, one term per line; by default
``path + ".vocab"`` (``docs.mtx`` -> ``docs.mtx.vocab``), see
:func:`default_vocab_path`. Without it the terms are "0".."V-1".
"""

from __future__ import annotations

import os

import scipy.io

from harmonium.corpus.corpus import Corpus, _as_csr_counts
from harmonium.corpus.formats._common import (
    atomic_binary_writer,
    check_corpus,
    name_of,
    open_binary,
    read_optional_vocab,
    write_optional_vocab,
)
from harmonium.errors import CorpusError

__all__ = ["default_vocab_path", "read", "write"]


def default_vocab_path(path) -> str:
    """``path + ".vocab"``: ``docs.mtx`` -> ``docs.mtx.vocab`` (``.gz`` is dropped first)."""
    path = os.fspath(path)
    if path.endswith(".gz"):
        path = path[:-3]
    return path + ".vocab"


def read(path, *, vocab_path=None) -> Corpus:
    """Read a Matrix Market corpus (rows are documents).

    Parameters
    ----------
    path : str or path-like
        The ``.mtx`` (or ``.mtx.gz``) file.
    vocab_path : str, path-like or False, optional
        The vocabulary file; by default :func:`default_vocab_path` of
        ``path``, used when it exists. ``False`` (or a missing default file)
        gives placeholder terms "0".."V-1"; a path given explicitly must exist.

    Raises
    ------
    CorpusError
        If the file is not valid Matrix Market, holds negative, non-integer or
        complex values (the message names the document and word), or the
        vocabulary file does not have one term per column.
    """
    name = name_of(path)
    try:
        with open_binary(path) as f:
            matrix = scipy.io.mmread(f)
    except (ValueError, OverflowError, RuntimeError) as e:  # malformed header or entries
        raise CorpusError(f"{name} is not a valid Matrix Market file: {e}") from None
    if matrix.ndim != 2:
        raise CorpusError(f"{name} does not hold a 2-D matrix.")
    if matrix.dtype.kind == "c":
        raise CorpusError(f"{name} holds complex values; counts must be non-negative integers.")
    counts = _as_csr_counts(matrix, name)
    del matrix
    n_words = counts.shape[1]
    vocabulary = read_optional_vocab(vocab_path, default_vocab_path(path), n_words, name)
    return Corpus(counts, vocabulary, _validated=True)


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
    corpus = check_corpus(corpus, "mmarket.write")
    write_optional_vocab(corpus.vocabulary, vocab_path, default_vocab_path(path))
    with atomic_binary_writer(path) as f:
        scipy.io.mmwrite(f, corpus.counts,
                         comment=" harmonium corpus: rows are documents, columns are words",
                         field="integer", symmetry="general")
