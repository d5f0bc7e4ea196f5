"""SciPy sparse ``.npz`` corpora (:func:`scipy.sparse.save_npz` / ``load_npz``).

Documents are rows. The archive holds plain numeric arrays only: loading goes
through :func:`scipy.sparse.load_npz`, which calls ``np.load`` with
``allow_pickle=False``, so a file carrying pickled objects is refused.

The terms live in a vocabulary file, one term per line; by default ``path``
with ``.npz`` replaced by ``.vocab.txt`` (``docs.npz`` -> ``docs.vocab.txt``),
see :func:`default_vocab_path`. Without it the terms are "0".."V-1".
"""

from __future__ import annotations

import os
import zipfile
import zlib

import scipy.sparse as sp

from harmonium.corpus.corpus import Corpus
from harmonium.corpus.formats._common import (
    atomic_binary_writer,
    check_and_write_vocab,
    corpus_from_matrix,
    fill_doc,
    name_of,
)
from harmonium.errors import CorpusError

__all__ = ["default_vocab_path", "read", "write"]


def default_vocab_path(path) -> str:
    """``docs.npz`` -> ``docs.vocab.txt`` (other names get ``.vocab.txt`` appended)."""
    path = os.fspath(path)
    if path.endswith(".npz"):
        path = path[:-4]
    return path + ".vocab.txt"


@fill_doc
def read(path, *, vocab_path=None) -> Corpus:
    """Read a corpus saved with :func:`scipy.sparse.save_npz` (rows are documents).

    Parameters
    ----------
    path : str or path-like
        The ``.npz`` file.
    {vocab_path_read}

    Raises
    ------
    CorpusError
        If the file is not a sparse-matrix ``.npz`` (or needs pickle), holds
        negative or non-integer values (naming the document and word), or the
        vocabulary file does not have one term per column.
    """
    name = name_of(path)
    path = os.fspath(path)
    with open(path, "rb") as fh:  # a missing file raises FileNotFoundError as usual
        is_zip = zipfile.is_zipfile(fh)
    if not is_zip:
        raise CorpusError(f"{name} is not a .npz (zip) archive.")
    try:
        matrix = sp.load_npz(path)
    except (ValueError, KeyError, NotImplementedError, zipfile.BadZipFile, zlib.error, EOFError, OSError) as e:
        # OSError and zlib.error: a corrupted compressed member (a bad seek, an invalid deflate stream)
        raise CorpusError(f"{name} is not a scipy sparse .npz file: {e}") from None
    return corpus_from_matrix(matrix, name, vocab_path, default_vocab_path(path))


def write(corpus: Corpus, path, *, vocab_path=None, compressed: bool = True) -> None:
    """Write ``corpus`` with :func:`scipy.sparse.save_npz` plus a vocabulary file.

    Parameters
    ----------
    corpus : Corpus
    path : str or path-like
        The ``.npz`` file (written under exactly this name; nothing is appended).
    vocab_path : str, path-like or False, optional
        Where the vocabulary goes; by default :func:`default_vocab_path` of
        ``path``. ``False`` writes none.
    compressed : bool, default True
        Deflate the arrays.

    Notes
    -----
    The matrix is stored as the corpus holds it: CSR with int32 data and
    int32 indices and indptr (int64 for both once nnz or the vocabulary size
    reaches 2**31-1). Each file is written to a temporary name and renamed.
    """
    corpus = check_and_write_vocab(corpus, "scipy_npz.write", vocab_path, default_vocab_path(path))
    m = corpus.counts
    if not isinstance(m, sp.csr_matrix):
        m = sp.csr_matrix(m)
    with atomic_binary_writer(path, compress=False) as f:
        sp.save_npz(f, m, compressed=compressed)
