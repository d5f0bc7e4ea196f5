"""Private helpers shared by the corpus file formats.

* Reading: :func:`open_binary` is the one way a format opens a file to read
  (gzip recognised by its content, not its name); :func:`read_bytes` and
  :func:`decode` give a whole text file with errors that name the file/line.
* Docstrings: :data:`DOC_PARTS`, the parameter texts several numeric formats share,
  filled in by :func:`fill_doc`.
* Writing: :func:`atomic_binary_writer` and :func:`atomic_text_writer` wrap
  :func:`harmonium.io.atomic.atomic_writer` (temporary file, fsync, rename)
  and gzip-compress deterministically (``mtime=0``, no file name) when the
  target name ends with ``.gz``.
* Vocabulary files (one term per line), block-wise reading of integer text
  (:func:`iter_line_blocks`, :func:`scan`, :func:`parse_ints`,
  :func:`int_field`) for the numeric formats, and the corpus they build
  (:func:`corpus_from_doc_lengths`, :func:`corpus_from_matrix`).

Format modules import from here, never from each other.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import re
import warnings
import zlib
from collections.abc import Iterator
from typing import IO

import numpy as np
import scipy.sparse as sp

from harmonium.corpus.corpus import Corpus, _as_csr_counts, index_dtype
from harmonium.corpus.vocabulary import Vocabulary
from harmonium.errors import CorpusError, InvalidParameterError
from harmonium.io.atomic import atomic_writer

#: Bytes read per block by :func:`iter_line_blocks`; lines are never split across blocks.
BLOCK_BYTES = 1 << 18
#: Entries formatted per ``write`` call when writing numeric text.
WRITE_ROWS = 1 << 16
INT32_MAX = int(np.iinfo(np.int32).max)
_INT64 = np.iinfo(np.int64)
_GZIP_MAGIC = b"\x1f\x8b"
_WHITESPACE = re.compile(r"\s")


def name_of(path) -> str:
    """The file name of ``path``, for messages."""
    return os.path.basename(os.fspath(path))


def check_corpus(corpus, where: str) -> Corpus:
    if not isinstance(corpus, Corpus):
        raise InvalidParameterError(
            f"The 'corpus' parameter of {where} must be a Corpus. Got {type(corpus).__name__}."
        )
    return corpus


# ---------------------------------------------------------------------------
# Docstrings
# ---------------------------------------------------------------------------
#: Docstring parts that several numeric formats share word for word; :func:`fill_doc` puts each in
#: place of a docstring line that reads ``{name}``.
DOC_PARTS = {
    "vocab_path_read": """\
vocab_path : str, path-like or False, optional
    The vocabulary file; by default :func:`default_vocab_path` of
    ``path``, used when it exists. ``False`` (or a missing default file)
    gives placeholder terms "0".."V-1"; a path given explicitly must exist.""",
}
_DOC_FIELD = re.compile(r"( *)\{(\w+)\}")


def fill_doc(func):
    """Put :data:`DOC_PARTS` into ``func``'s docstring, indented as the ``{name}`` line it replaces.

    An unknown name raises KeyError when the module is imported.
    """
    if func.__doc__:  # None under python -OO
        lines = []
        for line in func.__doc__.split("\n"):
            field = _DOC_FIELD.fullmatch(line)
            if field is None:
                lines.append(line)
            else:
                indent, name = field.groups()
                lines += [indent + part if part else part for part in DOC_PARTS[name].split("\n")]
        func.__doc__ = "\n".join(lines)
    return func


# ---------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------
def open_binary(path) -> IO[bytes]:
    """Open ``path`` for binary reading, decompressing when its content is gzip.

    A missing file raises :class:`FileNotFoundError` as ``open`` does.
    """
    f = open(path, "rb")  # noqa: SIM115 - returned to the caller, who closes it
    try:
        magic = f.peek(2)[:2]
    except BaseException:
        f.close()
        raise
    if magic == _GZIP_MAGIC:
        f.close()
        return gzip.open(path, "rb")
    return f


@contextlib.contextmanager
def gzip_errors(name: str):
    """Turn the errors of a corrupt or truncated gzip stream, raised while reading, into a CorpusError."""
    try:
        yield
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise CorpusError(f"{name}: corrupt or truncated gzip data ({exc}).") from None


def read_bytes(path) -> bytes:
    """The whole file (gunzipped when its content is gzip); errors are CorpusErrors."""
    name = os.fspath(path)
    try:
        with open_binary(path) as f:
            return f.read()
    except FileNotFoundError:
        raise CorpusError(f"{name}: no such file.") from None
    except IsADirectoryError:
        raise CorpusError(f"{name}: is a directory, not a corpus file.") from None
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise CorpusError(f"{name}: corrupt or truncated gzip data ({exc}).") from None


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


# ---------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------
@contextlib.contextmanager
def atomic_binary_writer(path, *, compress: bool | None = None) -> Iterator[IO[bytes]]:
    """A binary file whose content replaces ``path`` only when the block exits cleanly.

    ``compress`` (default: ``path`` ends with ``.gz``) wraps it in a gzip
    stream with a zero mtime and no file name, so equal data give equal files.
    """
    if compress is None:
        compress = os.fspath(path).lower().endswith(".gz")
    with atomic_writer(path, "wb") as raw:
        if compress:
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as gz:
                yield gz
        else:
            yield raw


@contextlib.contextmanager
def atomic_text_writer(path) -> Iterator[io.TextIOBase]:
    """:func:`atomic_binary_writer` as UTF-8 text with ``"\\n"`` line ends."""
    with atomic_binary_writer(path) as binary:
        handle = io.TextIOWrapper(binary, encoding="utf-8", newline="")
        try:
            yield handle
            handle.flush()
        finally:
            handle.detach()


# ---------------------------------------------------------------------------
# Vocabulary files
# ---------------------------------------------------------------------------
def read_vocab_file(path, *, expected: int | None = None, what: str = "") -> Vocabulary:
    """Read a vocabulary file: UTF-8, one term per line, line ``i`` is word id ``i``.

    Trailing empty lines are ignored; an empty line elsewhere is an error, as
    are duplicate terms. ``expected`` is the vocabulary size the data need.
    """
    name = name_of(path)
    try:
        with open_binary(path) as f, gzip_errors(name):
            raw = f.read()
    except FileNotFoundError:
        raise CorpusError(
            f"vocabulary file {os.fspath(path)!r} not found{what}; pass vocab_path= "
            "to name it (or vocab_path=False to read without one)."
        ) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise CorpusError(f"vocabulary file {name} is not UTF-8 (line {line}).") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    # split("\n"), not splitlines(): the latter also splits on \x1c, \x85, \u2028 ...
    terms = [t[:-1] if t.endswith("\r") else t for t in text.split("\n")]
    while terms and terms[-1] == "":
        terms.pop()
    for i, t in enumerate(terms):
        if t == "":
            raise CorpusError(f"line {i + 1} of vocabulary file {name} is empty.")
    try:
        vocab = Vocabulary(terms)
    except CorpusError as e:
        raise CorpusError(f"{e} (vocabulary file {name})") from None
    if expected is not None and len(vocab) != expected:
        raise CorpusError(
            f"vocabulary file {name} has {len(vocab)} terms but the data have "
            f"{expected} words{what}."
        )
    return vocab


def write_vocab_file(vocabulary: Vocabulary, path) -> None:
    """Write one term per line (UTF-8), atomically; terms must be non-empty single lines."""
    for i, t in enumerate(vocabulary):
        if t == "" or "\n" in t or "\r" in t:
            raise CorpusError(
                f"term {i} ({t!r}) cannot be written to a one-term-per-line vocabulary "
                "file: terms must be non-empty and contain no line breaks."
            )
    text = "".join(t + "\n" for t in vocabulary)
    with atomic_binary_writer(path) as f:
        f.write(text.encode("utf-8"))


def check_and_write_vocab(corpus, where: str, vocab_path, default: str) -> Corpus:
    """The start of a numeric format's ``write``: check ``corpus`` (a Corpus, else an error naming
    ``where``), then write its vocabulary beside the numeric file: to ``default`` when
    ``vocab_path`` is None, nowhere when it is False, else to ``vocab_path``."""
    corpus = check_corpus(corpus, where)
    if vocab_path is None:
        vocab_path = default
    if vocab_path is not False:
        write_vocab_file(corpus.vocabulary, vocab_path)
    return corpus


def read_optional_vocab(vocab_path, default: str, n_words: int, name: str) -> Vocabulary:
    """The vocabulary of a numeric corpus file with ``n_words`` columns.

    ``vocab_path`` None: the ``default`` file when it exists, else placeholder
    terms; False: placeholder terms; a path: that file, which must exist and
    hold ``n_words`` terms.
    """
    if vocab_path is None:
        vocab_path = default if os.path.exists(default) else False
    if vocab_path is False:
        return Vocabulary.range(n_words)
    return read_vocab_file(vocab_path, expected=n_words, what=f" (columns of {name})")


def corpus_from_matrix(matrix, name: str, vocab_path, default_vocab: str) -> Corpus:
    """The corpus of a documents x words matrix read from file ``name`` (Matrix Market, ``.npz``).

    The matrix must be 2-D with non-negative integer values (checked by the Corpus coercion,
    which names the document and word); the vocabulary follows :func:`read_optional_vocab`.
    """
    if matrix.ndim != 2:
        raise CorpusError(f"{name} does not hold a 2-D matrix.")
    if matrix.dtype.kind == "c":
        raise CorpusError(f"{name} holds complex values; counts must be non-negative integers.")
    counts = _as_csr_counts(matrix, name)
    del matrix
    vocabulary = read_optional_vocab(vocab_path, default_vocab, counts.shape[1], name)
    return Corpus(counts, vocabulary, _validated=True)


# ---------------------------------------------------------------------------
# Block-wise integer text (numeric formats)
# ---------------------------------------------------------------------------
def iter_line_blocks(f, first_line: int) -> Iterator[tuple[bytes, int]]:
    """Yield ``(block, line_number_of_first_line)``; each block ends with ``b"\\n"``.

    Blocks hold whole lines only (a line longer than ``BLOCK_BYTES`` makes a
    longer block). A last line without a newline gets one.
    """
    pending: list[bytes] = []  # read, not yet yielded: no newline among them
    line = first_line
    while True:
        chunk = f.read(BLOCK_BYTES)
        if not chunk:
            break
        cut = chunk.rfind(b"\n")
        if cut < 0:
            pending.append(chunk)
            continue
        block = b"".join([*pending, chunk[: cut + 1]])
        pending = [chunk[cut + 1 :]]
        yield block, line
        line += block.count(b"\n")
    tail = b"".join(pending)
    if tail.strip():
        yield tail + b"\n", line


def scan(block: bytes, *, colon: bool = False):
    """Where the fields of a *regular* block end, for the vectorised fast paths.

    Fields are runs of bytes > 32 (with ``colon``, ``:`` separates too);
    ``block`` ends with ``b"\\n"``. The block is regular when every field is a
    plain integer (``[+-]?[0-9]+``), every separator byte (a space, a tab or,
    with ``colon``, a ``:``) stands alone between two fields, and every line
    ends in ``\\n`` or ``\\r\\n`` right after its last field; empty lines are
    allowed. Anything else (leading or trailing blanks, double spaces, other
    characters) goes to the caller's slow, line-by-line path, which is the
    reference and names lines. The checks are whole-array byte operations.

    Returns
    -------
    (b, ends, line_end) or None
        The bytes as uint8, the index of each field's last byte, and a byte
        mask of the line breaks (``\\n`` or ``\\r``) that end a non-empty line.
    """
    b = np.frombuffer(block, dtype=np.uint8)
    if b.max() > (58 if colon else 57):
        return None  # letters and other bytes that no integer field holds
    solid = b > 32
    if colon:
        solid &= b != 58
    prev = np.zeros_like(solid)
    prev[1:] = solid[:-1]
    nxt = np.zeros_like(solid)
    nxt[:-1] = solid[1:]
    punct = solid & (b < 48)
    if punct.any():
        sign = (b == 43) | (b == 45)
        digit_next = np.zeros_like(solid)
        digit_next[:-1] = (b[1:] >= 48) & (b[1:] <= 57)
        if (punct & ~sign).any() or (sign & (prev | ~digit_next)).any():
            return None  # punctuation, a sign inside a number, or a sign alone
    newline = b == 10
    cr = b == 13
    ok = prev & nxt  # (in place below: these arrays are as long as the block)
    ok |= solid
    ok |= newline
    ok |= cr
    if not ok.all():
        return None  # a separator that does not stand alone between two fields
    if cr.any():
        nl_next = np.zeros_like(solid)
        nl_next[:-1] = newline[1:]
        if (cr & ~(prev & nl_next)).any():
            return None
        prev[1:] |= cr[:-1]
    prev[1:] |= newline[:-1]
    prev[0] = True
    np.logical_not(prev, out=ok)
    ok &= newline
    if ok.any():
        return None  # blanks at the end of a line
    end = np.logical_not(nxt, out=nxt)
    end &= solid
    line_end = np.logical_or(newline, cr, out=newline)
    line_end[1:] &= solid[:-1]
    line_end[0] = False
    return b, np.flatnonzero(end), line_end


def parse_ints(block: bytes) -> np.ndarray | None:
    """All whitespace-separated integers of ``block`` as int64, or None if any is not one."""
    try:
        with warnings.catch_warnings():
            # numpy < 2.? warns and returns what it parsed (the size check catches that)
            warnings.simplefilter("ignore", DeprecationWarning)
            values = np.fromstring(block, dtype=np.int64, sep=" ")
    except ValueError:
        return None
    # fromstring saturates on overflow; let the slow path report such a value.
    if values.size and (values.max() == _INT64.max or values.min() == _INT64.min):
        return None
    return values


def int_field(token: bytes, what: str, line: int, name: str) -> int:
    """``int(token)`` or a CorpusError naming the field and the line (slow path)."""
    try:
        value = int(token)
    except ValueError:
        shown = token.decode("utf-8", errors="replace")
        raise CorpusError(
            f"{what} {shown!r} on line {line} of {name} is not an integer."
        ) from None
    if not -(2**63) <= value < 2**63:
        raise CorpusError(f"{what} {value} on line {line} of {name} is out of range.")
    return value


def corpus_from_doc_lengths(doc_lengths: np.ndarray, word_ids: np.ndarray, counts: np.ndarray,
                            vocabulary: Vocabulary) -> Corpus:
    """The corpus whose document d holds the next ``doc_lengths[d]`` (word id, count) entries.

    ``word_ids`` and ``counts`` are in document order (word ids may repeat or be unsorted within a
    document: Corpus sums and sorts them). ``indices`` and ``indptr`` get the Corpus index dtype,
    so scipy keeps them as they are.
    """
    n_words = len(vocabulary)
    indptr = np.zeros(doc_lengths.size + 1, dtype=index_dtype(len(word_ids), n_words))
    np.cumsum(doc_lengths, out=indptr[1:])
    matrix = sp.csr_matrix(
        (np.ascontiguousarray(counts), np.ascontiguousarray(word_ids, dtype=indptr.dtype), indptr),
        shape=(doc_lengths.size, n_words),
    )
    return Corpus(matrix, vocabulary)


# ---------------------------------------------------------------------------
# Token strings (text formats)
# ---------------------------------------------------------------------------
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
