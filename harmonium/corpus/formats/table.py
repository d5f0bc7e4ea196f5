"""The ``tsv`` / ``csv`` formats: a table with a header row and one document per row.

One column holds the raw text; others may hold the document id, a class
label, numeric features and a list of tags (e.g. Debian's debtags). Parsing
uses the standard :mod:`csv` module, so quoted fields (with delimiters, quotes
or newlines inside) are read correctly. gzip-compressed files are recognised by
their content.

:func:`write` stores a corpus as columns ``id``, ``label`` (if any), one column
per feature (named by ``feature_names``, if any), ``tags`` (if any) and ``text``
(the tokens separated by spaces, each term repeated by its count, as in
:mod:`.lines`). Reading it back with::

    read(path, id_column="id", label_column="label", feature_columns=corpus.feature_names,
         tag_column="tags", tokenizer=Tokenizer(token_pattern=r"\\S+", lowercase=False))

reproduces the counts, ids, labels, features and tags (vocabulary and tag
names come back in alphabetical order, without unused entries).
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
from collections.abc import Iterator, Sequence

import numpy as np
import scipy.sparse as sp

from harmonium._heap import release_free_heap
from harmonium._validation import NONE, InstanceOf, Interval, validate_params
from harmonium.corpus.corpus import Corpus
from harmonium.corpus.formats._common import (
    atomic_text_writer,
    decode,
    document_strings,
    read_bytes,
)
from harmonium.corpus.tokenizer import Tokenizer
from harmonium.errors import CorpusError, InvalidParameterError

__all__ = ["read", "write"]

# Large enough for any document, small enough for a C long on every platform.
_FIELD_SIZE_LIMIT = 2**31 - 1

_STR = InstanceOf((str,), "a str")
_OPTIONAL_STR = [NONE, _STR]


@contextlib.contextmanager
def _field_size_limit(limit: int) -> Iterator[None]:
    """Raise csv's process-wide field size limit (128 KiB by default) for one read."""
    old = csv.field_size_limit()
    csv.field_size_limit(max(old, limit))
    try:
        yield
    finally:
        csv.field_size_limit(old)


def read(
    path: str | os.PathLike,
    *,
    delimiter: str = "\t",
    text_column: str = "text",
    label_column: str | None = None,
    feature_columns: Sequence[str] | str = (),
    tag_column: str | None = None,
    tag_separator: str = ",",
    id_column: str | None = None,
    tokenizer: Tokenizer | None = None,
    encoding: str = "utf-8",
    max_rows: int | None = None,
) -> Corpus:
    """Read a corpus from a delimited table with a header row.

    Parameters
    ----------
    path : str or path-like
        A ``.tsv`` / ``.csv`` file; gzip-compressed content is decompressed.
    delimiter : str, default "\\t"
        One character (``","`` for CSV).
    text_column : str, default "text"
        The column with the raw document text, tokenized by ``tokenizer``.
    label_column : str, optional
        One class label (str) per document -> ``Corpus.labels``.
    feature_columns : sequence of str, default ()
        Numeric columns -> ``Corpus.features`` (float64), named ``feature_names``.
    tag_column : str, optional
        Tags of each document joined by ``tag_separator`` (empty: no tags) ->
        ``Corpus.tags`` (binary document x tag CSR) and ``Corpus.tag_names`` (sorted).
    tag_separator : str, default ","
    id_column : str, optional
        Document ids -> ``Corpus.doc_ids``; without it, a document's id is its
        0-based row number (not counting the header).
    tokenizer : Tokenizer, optional
        Fitted on the text column with ``fit_transform``; default ``Tokenizer()``.
        Rows it drops (``min_doc_length``) are dropped from all metadata too.
    encoding : str, default "utf-8"
    max_rows : int, optional
        Read only the first ``max_rows`` data rows.

    Returns
    -------
    Corpus
        One document per data row that the tokenizer keeps, with the ids,
        labels, features and tags of the columns named above.

    Raises
    ------
    CorpusError
        Naming the file, and the row and line where it applies, when a column
        is missing (listing the available ones), a row has the wrong number of
        fields, a feature value is not numeric, the bytes are not valid
        ``encoding``, or the tokenizer finds no documents or no vocabulary.
    """
    if isinstance(feature_columns, str):
        feature_columns = (feature_columns,)
    params = {
        "delimiter": delimiter,
        "text_column": text_column,
        "label_column": label_column,
        "feature_columns": feature_columns,
        "tag_column": tag_column,
        "tag_separator": tag_separator,
        "id_column": id_column,
        "tokenizer": tokenizer,
        "encoding": encoding,
        "max_rows": max_rows,
    }
    validate_params(
        "table.read",
        params,
        {
            "delimiter": [_STR],
            "text_column": [_STR],
            "label_column": _OPTIONAL_STR,
            "feature_columns": [InstanceOf((list, tuple), "a list or tuple of str")],
            "tag_column": _OPTIONAL_STR,
            "tag_separator": [_STR],
            "id_column": _OPTIONAL_STR,
            "tokenizer": [NONE, InstanceOf((Tokenizer,), "a Tokenizer")],
            "encoding": [_STR],
            "max_rows": [NONE, Interval("int", 1, None)],
        },
    )
    if len(delimiter) != 1:
        raise InvalidParameterError(
            f"The 'delimiter' parameter of table.read must be one character. Got {delimiter!r}."
        )
    if not tag_separator:
        raise InvalidParameterError(
            "The 'tag_separator' parameter of table.read must be a non-empty str. Got ''."
        )
    feature_columns = list(feature_columns)
    for c in feature_columns:
        if not isinstance(c, str):
            raise InvalidParameterError(
                "The 'feature_columns' parameter of table.read must be a list or tuple of str. "
                f"Got {feature_columns!r}."
            )
    name = os.fspath(path)
    text = decode(read_bytes(path), encoding, name)
    with _field_size_limit(_FIELD_SIZE_LIMIT):
        columns = _parse(text, name, delimiter, text_column, label_column, feature_columns,
                         tag_column, tag_separator, id_column, max_rows)
    del text
    texts, ids, labels, features, tags, tag_names = columns
    del columns
    tok = Tokenizer() if tokenizer is None else tokenizer
    try:
        corpus = tok.fit_transform(
            texts,
            doc_ids=ids,
            labels=labels,
            features=features,
            feature_names=feature_columns or None,
            tags=tags,
            tag_names=tag_names,
        )
    except CorpusError as exc:
        raise CorpusError(f"{name}: {exc}") from None
    del texts, ids, labels, features, tags, tag_names
    # the file's text, its parsed rows and the tokenizer's buffers are gone: hand their heap pages back
    # (63 MiB after load_debian(); glibc keeps freed memory otherwise)
    release_free_heap()
    return corpus


def _parse(text, name, delimiter, text_column, label_column, feature_columns, tag_column,
           tag_separator, id_column, max_rows):
    """Parse the decoded table into per-document columns (lists / arrays)."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    try:
        header = next(reader, None)
        if header is None:
            raise CorpusError(f"{name}: the file is empty; expected a header row.")
        index = _column_index(header, name, text_column, label_column, feature_columns,
                              tag_column, id_column)
        n_fields = len(header)
        ti = index[text_column]
        li = index.get(label_column) if label_column is not None else None
        ii = index.get(id_column) if id_column is not None else None
        gi = index.get(tag_column) if tag_column is not None else None
        fi = [index[c] for c in feature_columns]
        texts: list[str] = []
        ids: list[str] = []
        labels: list[str] = []
        feats: list[list[float]] = []
        tag_ptr = [0]
        tag_cols: list[int] = []
        tag_id: dict[str, int] = {}
        row_no = 0
        for row in reader:
            if not row:  # a blank line
                continue
            if len(row) != n_fields:
                raise CorpusError(
                    f"{name}: row {row_no} (line {reader.line_num}) has {len(row)} fields but the "
                    f"header has {n_fields}; check the delimiter ({delimiter!r}) and the quoting."
                )
            texts.append(row[ti])
            if ii is not None:
                ids.append(row[ii])
            if li is not None:
                labels.append(row[li])
            if fi:
                feats.append(_parse_features(row, fi, feature_columns, name, row_no, reader))
            if gi is not None:
                for tag in {t.strip() for t in row[gi].split(tag_separator)}:
                    if tag:
                        tag_cols.append(tag_id.setdefault(tag, len(tag_id)))
                tag_ptr.append(len(tag_cols))
            row_no += 1
            if max_rows is not None and row_no >= max_rows:
                break
    except csv.Error as exc:
        raise CorpusError(f"{name}: malformed table at line {reader.line_num}: {exc}.") from None
    if row_no == 0:
        raise CorpusError(f"{name}: the table has a header but no data rows.")
    features = np.array(feats, dtype=np.float64) if fi else None
    tags = tag_names = None
    if gi is not None:
        tags, tag_names = _tag_matrix(tag_ptr, tag_cols, tag_id)
    return (texts, ids if ii is not None else None, labels if li is not None else None,
            features, tags, tag_names)


def _column_index(header, name, text_column, label_column, feature_columns, tag_column,
                  id_column) -> dict[str, int]:
    """Column name -> position for the requested columns; missing ones raise."""
    if header:
        header[0] = header[0].removeprefix("\ufeff")
    wanted = [("text_column", text_column), ("label_column", label_column),
              ("tag_column", tag_column), ("id_column", id_column)]
    wanted += [("feature_columns", c) for c in feature_columns]
    index: dict[str, int] = {}
    for param, col in wanted:
        if col is None:
            continue
        hits = [i for i, h in enumerate(header) if h == col]
        if not hits:
            available = ", ".join(repr(h) for h in header)
            raise CorpusError(
                f"{name}: column {col!r} ({param}) is not in the header; available columns: "
                f"{available}."
            )
        if len(hits) > 1:
            raise CorpusError(
                f"{name}: column {col!r} ({param}) appears {len(hits)} times in the header."
            )
        index[col] = hits[0]
    return index


def _parse_features(row, fi, feature_columns, name, row_no, reader) -> list[float]:
    out = []
    for i, col in zip(fi, feature_columns, strict=True):
        try:
            out.append(float(row[i]))
        except ValueError:
            raise CorpusError(
                f"{name}: feature column {col!r} must be numeric; row {row_no} "
                f"(line {reader.line_num}) has {row[i]!r}."
            ) from None
    return out


def _tag_matrix(tag_ptr, tag_cols, tag_id):
    """Binary CSR incidence with alphabetically sorted tag names."""
    names = sorted(tag_id)
    remap = np.empty(len(names), dtype=np.int64)
    remap[[tag_id[t] for t in names]] = np.arange(len(names))
    cols = remap[np.asarray(tag_cols, dtype=np.int64)] if tag_cols else np.zeros(0, np.int64)
    indptr = np.asarray(tag_ptr, dtype=np.int64)
    tags = sp.csr_matrix(
        (np.ones(cols.size, dtype=np.int8), cols, indptr), shape=(len(tag_ptr) - 1, len(names))
    )
    tags.sort_indices()
    return tags, names


def write(
    corpus: Corpus, path: str | os.PathLike, *, delimiter: str = "\t", tag_separator: str = ","
) -> None:
    """Write ``corpus`` as a table with a header row.

    Columns: ``id`` (``doc_ids``, or "0".."D-1"), ``label`` (if the corpus has
    labels), one column per feature named by ``feature_names`` (if any),
    ``tags`` (if any; names joined by ``tag_separator``) and ``text`` (tokens
    separated by spaces, each term repeated by its count). ``.gz`` paths are
    gzip-compressed; the file is written under a temporary name and renamed.
    Features are written with ``repr`` so floats read back exactly.

    Raises
    ------
    CorpusError
        If a used term is empty or contains whitespace, a tag name contains
        ``tag_separator``, or a feature name clashes with another column.
    """
    if not isinstance(corpus, Corpus):
        raise InvalidParameterError(
            f"The 'corpus' parameter of table.write must be a Corpus. Got {type(corpus).__name__}."
        )
    if not isinstance(delimiter, str) or len(delimiter) != 1:
        raise InvalidParameterError(
            f"The 'delimiter' parameter of table.write must be one character. Got {delimiter!r}."
        )
    if not isinstance(tag_separator, str) or not tag_separator:
        raise InvalidParameterError(
            "The 'tag_separator' parameter of table.write must be a non-empty str. "
            f"Got {tag_separator!r}."
        )
    header = ["id"]
    if corpus.labels is not None:
        header.append("label")
    feature_names = list(corpus.feature_names or [])
    header += feature_names
    if corpus.tags is not None:
        header.append("tags")
    header.append("text")
    if len(set(header)) != len(header):
        raise CorpusError(
            f"feature names {feature_names} clash with the other columns of the table "
            f"({', '.join(header)}); rename the features."
        )
    tag_strings = _tag_strings(corpus, tag_separator) if corpus.tags is not None else None
    ids = corpus.doc_ids if corpus.doc_ids is not None else np.arange(corpus.n_docs).astype(str)
    features = corpus.features

    def fill(handle):
        writer = csv.writer(handle, delimiter=delimiter, lineterminator="\n")
        writer.writerow(header)
        for d, text in enumerate(document_strings(corpus, "table")):
            row = [str(ids[d])]
            if corpus.labels is not None:
                row.append(str(corpus.labels[d]))
            if features is not None:
                row += [repr(float(x)) for x in features[d]]
            if tag_strings is not None:
                row.append(tag_strings[d])
            row.append(text)
            writer.writerow(row)

    with atomic_text_writer(path) as handle:
        fill(handle)


def _tag_strings(corpus: Corpus, sep: str) -> list[str]:
    names = list(corpus.tag_names)
    for t in names:
        if sep in t or t != t.strip() or not t:
            raise CorpusError(
                f"tag name {t!r} is empty, has surrounding spaces or contains the tag separator "
                f"{sep!r}; it could not be read back."
            )
    t = corpus.tags.tocsr()
    return [
        sep.join(names[int(j)] for j in t.indices[t.indptr[d] : t.indptr[d + 1]])
        for d in range(corpus.n_docs)
    ]
