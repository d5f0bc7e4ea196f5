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

This module also holds the small file helpers shared with :mod:`.table`.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import secrets
from collections.abc import Callable, Iterator

import numpy as np

from harmonium._validation import NONE, InstanceOf, Interval, validate_params
from harmonium.corpus.corpus import Corpus
from harmonium.corpus.tokenizer import Tokenizer
from harmonium.errors import CorpusError, InvalidParameterError

__all__ = ["read", "write"]

_GZIP_MAGIC = b"\x1f\x8b"
_WHITESPACE = re.compile(r"\s")


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
    if not isinstance(corpus, Corpus):
        raise InvalidParameterError(
            f"The 'corpus' parameter of lines.write must be a Corpus. Got {type(corpus).__name__}."
        )
    atomic_write(path, lambda f: f.writelines(line + "\n" for line in document_strings(corpus)))


# -- helpers shared with table.py ----------------------------------------------


def read_bytes(path: str | os.PathLike) -> bytes:
    """The file's bytes, gunzipped when the content is gzip."""
    name = os.fspath(path)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise CorpusError(f"{name}: no such file.") from None
    except IsADirectoryError:
        raise CorpusError(f"{name}: is a directory, not a corpus file.") from None
    if data.startswith(_GZIP_MAGIC):
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise CorpusError(f"{name}: corrupt or truncated gzip data ({exc}).") from None
    return data


def decode(data: bytes, encoding: str, name: str) -> str:
    """``data`` decoded; a decoding error names the file, the line and the byte."""
    try:
        text = data.decode(encoding)
    except LookupError:
        raise InvalidParameterError(
            f"The 'encoding' parameter must be a codec known to Python. Got {encoding!r}."
        ) from None
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        start = data.rfind(b"\n", 0, exc.start) + 1
        raise CorpusError(
            f"{name}: line {line} is not valid {encoding}: byte 0x{data[exc.start]:02x} at "
            f"column {exc.start - start + 1}; pass the file's encoding (e.g. encoding='latin-1') "
            "or fix the file."
        ) from None
    return text.removeprefix("\ufeff")


def check_writable_terms(corpus: Corpus, what: str) -> list[str]:
    """The vocabulary terms as a list, after checking that the used ones survive a round trip."""
    terms = list(corpus.vocabulary)
    for w in np.unique(corpus.counts.indices):
        t = terms[int(w)]
        if t == "" or _WHITESPACE.search(t):
            raise CorpusError(
                f"term {t!r} (word id {int(w)}) is empty or contains whitespace; the {what} "
                "format separates tokens by spaces and could not read it back."
            )
    return terms


def document_strings(corpus: Corpus, what: str = "lines") -> Iterator[str]:
    """Each document as its space-joined tokens (term repeated by count, word-id order)."""
    terms = np.array(check_writable_terms(corpus, what), dtype=object)
    stream = corpus.tokens()
    words = terms[stream.words]
    ptr = stream.doc_ptr
    for d in range(corpus.n_docs):
        yield " ".join(words[ptr[d] : ptr[d + 1]].tolist())


def atomic_write(path: str | os.PathLike, fill: Callable[[io.TextIOBase], None]) -> None:
    """Write text (UTF-8, "\\n" line ends) via ``fill(handle)`` to a temporary file, then rename.

    Paths ending in ``.gz`` are gzip-compressed (with a zero mtime, so equal
    corpora give equal files).
    """
    name = os.fspath(path)
    directory, base = os.path.split(os.path.abspath(name))
    tmp = os.path.join(directory, f".{base}.{secrets.token_hex(6)}.tmp")
    try:
        with open(tmp, "xb") as raw:
            if name.lower().endswith(".gz"):
                with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz:
                    _fill_text(gz, fill)
            else:
                _fill_text(raw, fill)
        os.replace(tmp, name)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _fill_text(binary, fill) -> None:
    handle = io.TextIOWrapper(binary, encoding="utf-8", newline="")
    try:
        fill(handle)
        handle.flush()
    finally:
        handle.detach()
