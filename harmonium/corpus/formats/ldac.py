"""LDA-C format (Blei's ``lda-c``, gensim's ``BleiCorpus``) plus a vocabulary file.

One document per line, ``N`` followed by ``N`` ``word:count`` pairs with
0-based word ids::

    3 0:2 5:1 17:4
    0
    2 1:1 5:3

An empty document is the line ``0``. Empty lines are errors, except at the
end of the file. The file may be gzip-compressed (``.gz``; recognised by its content).

The vocabulary lives in a separate file, one term per line (line ``i`` is
word id ``i``). By default it is ``path`` with its extension replaced by
``.vocab`` (``corpus.ldac`` -> ``corpus.vocab``, ``corpus.ldac.gz`` ->
``corpus.vocab``); see :func:`default_vocab_path`. When that default file does
not exist the reader uses placeholder terms "0".."max_id", so unused words
after the largest id present are not recovered without a vocabulary file.

The reader parses blocks of 256 KiB with vectorised numpy; a block with
anything unusual in it is parsed line by line instead (the reference
behaviour). Either way an error names the file and the line.
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
from harmonium.errors import CorpusError

__all__ = ["default_vocab_path", "read", "write"]


def default_vocab_path(path) -> str:
    """``path`` without ``.gz`` and with its extension replaced by ``.vocab``.

    ``data/ap.ldac`` -> ``data/ap.vocab``; ``ap.ldac.gz`` -> ``ap.vocab``;
    ``ap`` -> ``ap.vocab``.
    """
    path = os.fspath(path)
    if path.endswith(".gz"):
        path = path[:-3]
    return os.path.splitext(path)[0] + ".vocab"


def _fast_block(block: bytes):
    """Vectorised parse of a block; ``None`` when anything is off (the slow path decides)."""
    scanned = scan(block, colon=True)
    if scanned is None or scanned[1].size == 0:
        return None
    b, ends, _ = scanned
    n = ends.size
    after = b[ends + 1]
    last = np.flatnonzero((after == 10) | (after == 13))
    if last.size != block.count(b"\n"):  # an empty line: the slow path reports it
        return None
    values = parse_ints(block.replace(b":", b" "))
    if values is None or values.size != n:
        return None
    first = np.empty_like(last)
    first[0] = 0
    first[1:] = last[:-1] + 1
    n_fields = last - first + 1
    lengths = values[first]
    if not np.array_equal(n_fields, 2 * lengths + 1):
        return None
    j = np.arange(n) - np.repeat(first, n_fields)  # field index within its line
    if not np.array_equal(after == 58, (j & 1) == 1):
        return None
    pairs = values[j > 0].reshape(-1, 2)
    return lengths, pairs


def _slow_block(block: bytes, first_line: int, name: str):
    """Line-by-line parse; raises naming the line. Returns lengths, pairs, blank line."""
    lengths, pairs, pair_line = [], [], []
    blank = None
    for i, line in enumerate(block.split(b"\n")[:-1]):
        lineno = first_line + i
        parts = line.split()
        if not parts:
            if blank is None:
                blank = lineno
            continue
        if blank is not None:
            raise CorpusError(
                f"line {blank} of {name} is empty; an empty document is written '0'."
            )
        if b":" in parts[0]:
            shown = parts[0].decode("utf-8", errors="replace")
            raise CorpusError(
                f"line {lineno} of {name} should start with the number of pairs N; "
                f"got {shown!r}."
            )
        n = int_field(parts[0], "number of pairs", lineno, name)
        if n != len(parts) - 1:
            raise CorpusError(
                f"line {lineno} of {name} says N={n} but has {len(parts) - 1} word:count pairs."
            )
        for p in parts[1:]:
            wc = p.split(b":")
            if len(wc) != 2:
                shown = p.decode("utf-8", errors="replace")
                raise CorpusError(f"{shown!r} on line {lineno} of {name} is not a word:count pair.")
            pairs.append((int_field(wc[0], "word id", lineno, name),
                          int_field(wc[1], "count", lineno, name)))
            pair_line.append(lineno)
        lengths.append(n)
    return (np.array(lengths, dtype=np.int64), np.array(pairs, dtype=np.int64).reshape(-1, 2),
            np.array(pair_line, dtype=np.int64), blank)


def _check_pairs(pairs: np.ndarray, line_of, n_words: int | None, name: str) -> None:
    w, c = pairs[:, 0], pairs[:, 1]
    checks = [
        (w < 0, lambda i: f"negative word id {w[i]} on line {line_of(i)} of {name}."),
        (w > INT32_MAX, lambda i: f"word id {w[i]} on line {line_of(i)} of {name} "
                                   "exceeds 2**31-1."),
        (c < 1, lambda i: f"count {c[i]} on line {line_of(i)} of {name}: counts must be "
                          "positive integers."),
        (c > INT32_MAX, lambda i: f"count {c[i]} on line {line_of(i)} of {name} "
                                   "exceeds 2**31-1."),
    ]
    if n_words is not None:
        checks.insert(2, (w >= n_words, lambda i: f"word id {w[i]} >= vocabulary size "
                                                  f"{n_words} on line {line_of(i)} of {name}."))
    for bad, message in checks:
        if bad.any():
            raise CorpusError(message(int(np.flatnonzero(bad)[0])))


def read(path, *, vocab_path=None) -> Corpus:
    """Read an LDA-C corpus.

    Parameters
    ----------
    path : str or path-like
        The LDA-C file (optionally ``.gz``).
    vocab_path : str, path-like or False, optional
        The vocabulary file (one term per line). By default
        :func:`default_vocab_path` of ``path`` (``corpus.ldac`` ->
        ``corpus.vocab``), used when it exists; when it does not, or with
        ``False``, the terms are placeholders "0".."max_id". A ``vocab_path``
        given explicitly must exist.

    Returns
    -------
    Corpus
        One document per line, in file order.

    Raises
    ------
    CorpusError
        Naming the line, when N differs from the number of pairs, an id or
        count is not an integer, a word id is negative or >= the vocabulary
        size, a count is not positive, a line is empty, or the vocabulary
        file is missing (explicit path) or malformed.
    """
    name = name_of(path)
    vocabulary = None
    if vocab_path is None:
        candidate = default_vocab_path(path)
        if os.path.exists(candidate):
            vocabulary = read_vocab_file(candidate)
    elif vocab_path is not False:
        vocabulary = read_vocab_file(vocab_path)
    n_words = None if vocabulary is None else len(vocabulary)

    all_lengths: list[np.ndarray] = []
    all_pairs: list[np.ndarray] = []
    pending_blank = None
    with open_binary(path) as f, gzip_errors(name):
        for block, first_line in iter_line_blocks(f, 1):
            fast = _fast_block(block)
            if fast is not None:
                lengths, pairs = fast
                pair_doc = np.cumsum(lengths)

                def line_of(i, pair_doc=pair_doc, first_line=first_line):
                    return first_line + int(np.searchsorted(pair_doc, i, side="right"))

                blank = None
            else:
                lengths, pairs, pair_line, blank = _slow_block(block, first_line, name)

                def line_of(i, pair_line=pair_line):
                    return int(pair_line[i])

            if pending_blank is not None and lengths.size:
                raise CorpusError(
                    f"line {pending_blank} of {name} is empty; an empty document is written '0'."
                )
            pending_blank = pending_blank or blank
            _check_pairs(pairs, line_of, n_words, name)
            all_lengths.append(lengths)
            all_pairs.append(pairs.astype(np.int32))

    lengths = np.concatenate(all_lengths) if all_lengths else np.zeros(0, dtype=np.int64)
    pairs = np.concatenate(all_pairs) if all_pairs else np.zeros((0, 2), dtype=np.int32)
    del all_pairs
    if vocabulary is None:
        vocabulary = Vocabulary.range(int(pairs[:, 0].max()) + 1 if pairs.size else 0)
    return corpus_from_doc_lengths(lengths, pairs[:, 0], pairs[:, 1], vocabulary)


def write(corpus: Corpus, path, *, vocab_path=None) -> None:
    """Write ``corpus`` in LDA-C format plus its vocabulary file.

    Parameters
    ----------
    corpus : Corpus
    path : str or path-like
        The LDA-C file; gzip-compressed when it ends with ``.gz``.
    vocab_path : str, path-like or False, optional
        Where the vocabulary goes; by default :func:`default_vocab_path` of
        ``path``. ``False`` writes none.

    Notes
    -----
    Each file is written to a temporary name and renamed. Metadata (document
    ids, labels) are not part of the format and are not written.
    """
    corpus = check_and_write_vocab(corpus, "ldac.write", vocab_path, default_vocab_path(path))
    m = corpus.counts
    indptr = m.indptr
    with atomic_binary_writer(path) as f:
        row = 0
        while row < m.shape[0]:
            # rows whose entries fit in one batch (at least one row)
            stop = int(np.searchsorted(indptr, indptr[row] + WRITE_ROWS, side="right")) - 1
            stop = min(max(stop, row + 1), m.shape[0])
            lo, hi = int(indptr[row]), int(indptr[stop])
            pairs = [f"{w}:{c}" for w, c in zip(m.indices[lo:hi].tolist(),
                                                 m.data[lo:hi].tolist(), strict=True)]
            bounds = (indptr[row : stop + 1] - lo).tolist()
            lines = []
            for a, b in zip(bounds[:-1], bounds[1:], strict=True):
                lines.append(" ".join([str(b - a), *pairs[a:b]]))
            f.write(("\n".join(lines) + "\n").encode("ascii"))
            row = stop
