"""The ``lines`` format: one raw-text document per line.

Reading tokenizes every line with a :class:`~harmonium.corpus.tokenizer.Tokenizer`;
the document ids are the 0-based line numbers ("0", "1", ...), so they still
point into the file when the tokenizer drops short documents. Writing puts each
document on one line as its tokens separated by single spaces, every term
repeated by its count, so that::

    read(path, tokenizer=Tokenizer(token_pattern=r"\\S+", lowercase=False))

gives back the same counts (the vocabulary comes back in alphabetical order
and without the terms that no document uses). Files whose name ends in
``.gz`` are written gzip-compressed; gzip-compressed files are recognised by
their content when read.
"""

from __future__ import annotations

import os

from harmonium._validation import NONE, InstanceOf, Interval, validate_params
from harmonium.corpus.corpus import Corpus
from harmonium.corpus.formats._common import (
    atomic_text_writer,
    check_corpus,
    decode,
    document_strings,
    read_bytes,
)
from harmonium.corpus.tokenizer import Tokenizer
from harmonium.errors import CorpusError

__all__ = ["read", "write"]


def read(
    path: str | os.PathLike,
    *,
    tokenizer: Tokenizer | None = None,
    encoding: str = "utf-8",
    max_rows: int | None = None,
) -> Corpus:
    """Read a corpus with one document per line.

    Parameters
    ----------
    path : str or path-like
        A text file; gzip-compressed content (e.g. ``.gz``) is decompressed.
    tokenizer : Tokenizer, optional
        Fitted on the file's lines with ``fit_transform``; default ``Tokenizer()``.
    encoding : str, default "utf-8"
    max_rows : int, optional
        Read only the first ``max_rows`` lines.

    Returns
    -------
    Corpus
        ``doc_ids`` are the 0-based line numbers as str.

    Raises
    ------
    CorpusError
        Naming the file and line when a line is not valid ``encoding``, or
        when the tokenizer finds no documents or no vocabulary.
    """
    validate_params(
        "lines.read",
        {"tokenizer": tokenizer, "encoding": encoding, "max_rows": max_rows},
        {
            "tokenizer": [NONE, InstanceOf((Tokenizer,), "a Tokenizer")],
            "encoding": [InstanceOf((str,), "a str")],
            "max_rows": [NONE, Interval("int", 1, None)],
        },
    )
    name = os.fspath(path)
    text = decode(read_bytes(path), encoding, name)
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    docs = text.split("\n")
    if docs and docs[-1] == "":  # the newline that ends the last line
        docs.pop()
    if max_rows is not None:
        del docs[max_rows:]
    if not docs:
        raise CorpusError(f"{name}: the file has no lines; expected one document per line.")
    tok = Tokenizer() if tokenizer is None else tokenizer
    try:
        return tok.fit_transform(docs)
    except CorpusError as exc:
        raise CorpusError(f"{name}: {exc}") from None


def write(corpus: Corpus, path: str | os.PathLike) -> None:
    """Write ``corpus`` with one line per document of space-separated tokens.

    Each term is repeated by its count, in word-id order. Documents without
    tokens become empty lines. ``.gz`` paths are gzip-compressed. The file is
    written under a temporary name and renamed, so a failed write leaves no
    partial file.

    Raises
    ------
    CorpusError
        If a term used by some document is empty or contains whitespace (it
        could not be read back).
    """
    corpus = check_corpus(corpus, "lines.write")
    with atomic_text_writer(path) as f:
        f.writelines(line + "\n" for line in document_strings(corpus))
