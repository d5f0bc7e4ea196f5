"""UCI bag-of-words format: a ``docword`` file plus a ``vocab`` file.

The format of the UCI Machine Learning Repository "Bag of Words" data sets
(KOS, NIPS, Enron, NYTimes, PubMed)::

    docword.kos.txt            vocab.kos.txt
    ---------------            -------------
    3430          <- D         aarp
    6906          <- W         abandon
    353160        <- NNZ       abandoned
    1 61 2        <- docID wordID count (1-based ids)
    1 76 1
    ...

The docword file may be gzip-compressed (``docword.nytimes.txt.gz``; recognised
by its content). The
vocabulary file holds one term per line; line ``w`` is word id ``w`` (1-based
in the file, 0-based in the :class:`~harmonium.corpus.Corpus`). UCI document
``d`` becomes corpus document ``d - 1``; documents that have no entry are empty.

The reader parses the file in blocks of 256 KiB with vectorised numpy
(``np.fromstring`` after a byte-level check of the layout, ``_common.scan``) and
validates every block. A block with anything unusual in it (extra blanks,
characters that are not digits) is parsed line by line instead, the reference
behaviour; either way an error names the file and the line.
"""

from __future__ import annotations

import os

import numpy as np

from harmonium.corpus.corpus import Corpus
from harmonium.corpus.formats._common import (
    INT32_MAX,
    WRITE_ROWS,
    atomic_binary_writer,
    check_and_write_vocab,
    corpus_from_doc_lengths,
    gzip_errors,
    int_field,
    iter_line_blocks,
    name_of,
    open_binary,
    parse_ints,
    read_vocab_file,
    scan,
)
from harmonium.corpus.vocabulary import Vocabulary
from harmonium.errors import CorpusError, InvalidParameterError

__all__ = ["default_vocab_path", "read", "write"]


# ---------------------------------------------------------------------------
# UCI
# ---------------------------------------------------------------------------
def default_vocab_path(path) -> str:
    """The vocabulary file that goes with a docword file.

    ``docword.`` becomes ``vocab.`` in the file name and a ``.gz`` suffix is
    dropped: ``data/docword.kos.txt.gz`` -> ``data/vocab.kos.txt``.

    Raises
    ------
    InvalidParameterError
        If the file name does not contain ``docword.``.
    """
    path = os.fspath(path)
    head, base = os.path.split(path)
    if "docword." not in base:
        raise InvalidParameterError(
            f"Cannot derive the vocabulary file of {path!r}: its name has no 'docword.'; "
            "pass vocab_path= (or vocab_path=False for placeholder terms)."
        )
    base = base.replace("docword.", "vocab.", 1)
    if base.endswith(".gz"):
        base = base[:-3]
    return os.path.join(head, base)


_HEADER = (("D", "the number of documents"), ("W", "the vocabulary size"),
           ("NNZ", "the number of entries"))


def _read_header(f, name: str) -> tuple[int, int, int]:
    values = []
    for i, (key, what) in enumerate(_HEADER):
        line = f.readline()
        if not line:
            raise CorpusError(
                f"{name} ends after {i} header line(s); a UCI docword file starts with "
                "three lines D, W and NNZ."
            )
        text = line.strip()
        if not text.isdigit():
            shown = text.decode("utf-8", errors="replace")
            raise CorpusError(
                f"line {i + 1} of {name} should hold {key}, {what} (a non-negative integer); "
                f"got {shown!r}."
            )
        values.append(int(text))
    n_docs, n_words, nnz = values
    if n_words > INT32_MAX + 1 or n_docs > INT32_MAX:
        raise CorpusError(f"{name}: D={n_docs} or W={n_words} exceeds 2**31.")
    return n_docs, n_words, nnz


def _slow_triples(block: bytes, first_line: int, name: str) -> tuple[np.ndarray, list[int]]:
    """Parse a block line by line; raises naming the first bad line."""
    rows, lines = [], []
    for i, line in enumerate(block.split(b"\n")[:-1]):
        parts = line.split()
        if not parts:
            continue
        lineno = first_line + i
        if len(parts) != 3:
            raise CorpusError(
                f"line {lineno} of {name} has {len(parts)} fields; expected 'docID wordID count'."
            )
        rows.append([int_field(p, what, lineno, name)
                     for p, what in zip(parts, ("document id", "word id", "count"), strict=True)])
        lines.append(lineno)
    return np.array(rows, dtype=np.int64).reshape(-1, 3), lines


def _block_triples(block: bytes, first_line: int, name: str):
    """The (docID, wordID, count) rows of a block and a function: row -> line number."""
    scanned = scan(block)
    if scanned is not None:
        b, ends, line_end = scanned
        n = ends.size
        row_end = ends[2::3]
        if (
            n % 3 == 0
            and np.count_nonzero(line_end) == n // 3
            and line_end[row_end + 1].all()
        ):
            values = parse_ints(block)
            if values is not None and values.size == n:

                def line_of(i: int) -> int:
                    return first_line + block.count(b"\n", 0, int(row_end[i]))

                return values.reshape(-1, 3), line_of
    rows, lines = _slow_triples(block, first_line, name)
    return rows, lambda i: int(lines[i])


def _check_triples(t: np.ndarray, line_of, d: int, w: int, name: str) -> None:
    checks = (
        (t[:, 0] < 1, "document id {v} < 1 on line {line} of {name} (UCI ids are 1-based).", 0),
        (t[:, 0] > d, "document id {v} > D={d} on line {line} of {name}.", 0),
        (t[:, 1] < 1, "word id {v} < 1 on line {line} of {name} (UCI ids are 1-based).", 1),
        (t[:, 1] > w, "word id {v} > W={w} on line {line} of {name}.", 1),
        (t[:, 2] < 1, "count {v} on line {line} of {name}: counts must be positive integers.", 2),
        (t[:, 2] > INT32_MAX, "count {v} on line {line} of {name} exceeds 2**31-1.", 2),
    )
    for bad, message, col in checks:
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise CorpusError(message.format(v=int(t[i, col]), line=line_of(i), name=name,
                                             d=d, w=w))


def read(path, *, vocab_path=None) -> Corpus:
    """Read a UCI bag-of-words corpus.

    Parameters
    ----------
    path : str or path-like
        The docword file (``docword.NAME.txt``, optionally ``.gz``).
    vocab_path : str, path-like or False, optional
        The vocabulary file; by default :func:`default_vocab_path` of ``path``
        (``docword.kos.txt`` -> ``vocab.kos.txt``). ``False`` reads no
        vocabulary file and uses placeholder terms "0".."W-1".

    Returns
    -------
    Corpus
        ``n_docs = D`` and ``n_words = W`` as the header says; UCI document
        ``d`` is corpus document ``d - 1``. Repeated (docID, wordID) entries
        are summed.

    Raises
    ------
    CorpusError
        Naming the line, when the header is missing or inconsistent with the
        entries (NNZ), an id is out of range (``"word id 5012 > W=5000 on line
        17 of docword.kos.txt"``), a count is not a positive integer, or the
        vocabulary file is missing or has a number of terms other than W.
    """
    name = name_of(path)
    if vocab_path is None:
        vocab_path = default_vocab_path(path)
    with open_binary(path) as f, gzip_errors(name):
        n_docs, n_words, nnz = _read_header(f, name)
        if vocab_path is False:
            vocabulary = Vocabulary.range(n_words)
        else:
            vocabulary = read_vocab_file(vocab_path, expected=n_words, what=f" (W of {name})")
        parts: list[np.ndarray] = []
        n_seen = 0
        for block, first_line in iter_line_blocks(f, 4):
            triples, line_of = _block_triples(block, first_line, name)
            _check_triples(triples, line_of, n_docs, n_words, name)
            if n_seen + len(triples) > nnz:
                raise CorpusError(
                    f"{name} has more entries than its header's NNZ={nnz} "
                    f"(entry {nnz + 1} is on line {line_of(nnz - n_seen)})."
                )
            n_seen += len(triples)
            parts.append(triples.astype(np.int32))
    if n_seen != nnz:
        raise CorpusError(
            f"{name} header says NNZ={nnz} but the file has {n_seen} entries (truncated?)."
        )
    triples = np.concatenate(parts) if parts else np.zeros((0, 3), dtype=np.int32)
    del parts
    docs = triples[:, 0]
    if docs.size > 1 and (docs[1:] < docs[:-1]).any():
        triples = triples[np.argsort(docs, kind="stable")]
        docs = triples[:, 0]
    doc_lengths = np.bincount(docs, minlength=n_docs + 1)[1:]
    word_ids = triples[:, 1] - 1
    counts = np.ascontiguousarray(triples[:, 2])
    del triples, docs
    return corpus_from_doc_lengths(doc_lengths, word_ids, counts, vocabulary)


def write(corpus: Corpus, path, *, vocab_path=None) -> None:
    """Write ``corpus`` as a UCI docword file plus a vocabulary file.

    Parameters
    ----------
    corpus : Corpus
    path : str or path-like
        The docword file; gzip-compressed when it ends with ``.gz``.
    vocab_path : str, path-like or False, optional
        Where the vocabulary goes; by default :func:`default_vocab_path` of
        ``path``. ``False`` writes no vocabulary file.

    Notes
    -----
    Each file is written to a temporary name and renamed. Document ids,
    labels and other metadata are not part of the format and are not written.
    """
    corpus = check_and_write_vocab(corpus, "uci.write", vocab_path, default_vocab_path(path))
    m = corpus.counts
    with atomic_binary_writer(path) as f:
        f.write(f"{m.shape[0]}\n{m.shape[1]}\n{m.nnz}\n".encode("ascii"))
        for lo in range(0, m.nnz, WRITE_ROWS):
            hi = min(lo + WRITE_ROWS, m.nnz)
            t = np.empty((hi - lo, 3), dtype=np.int64)
            # 1-based row of each entry: indptr[row] <= k < indptr[row + 1]
            t[:, 0] = np.searchsorted(m.indptr, np.arange(lo, hi), side="right")
            t[:, 1] = m.indices[lo:hi]
            t[:, 1] += 1
            t[:, 2] = m.data[lo:hi]
            f.write((("%d %d %d\n" * (hi - lo)) % tuple(t.ravel().tolist())).encode("ascii"))
