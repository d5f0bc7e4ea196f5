"""Readers and writers of corpus file formats, one module per format.

:func:`read_corpus` and :func:`write_corpus` dispatch on ``format`` (or on the
file name's extension). Each format module exposes ``read(path, **kw) -> Corpus``
and ``write(corpus, path, **kw)``.

=========  ==========================================  ==========================
format     what                                         module
=========  ==========================================  ==========================
lines      one document per line, raw text              :mod:`.lines`
tsv, csv   a text column plus label/feature/tag cols    :mod:`.table`
uci        UCI bag-of-words (docword + vocab files)     :mod:`.uci`
ldac       LDA-C (``N w:c w:c ...``) + vocab file       :mod:`.ldac`
mm         Matrix Market (+ vocab file)                 :mod:`.mmarket`
npz        scipy sparse ``.npz`` + vocab file           :mod:`.scipy_npz`
=========  ==========================================  ==========================
"""

from __future__ import annotations

import importlib
import os

from harmonium.errors import InvalidParameterError

_MODULES = {
    "lines": "lines",
    "tsv": "table",
    "csv": "table",
    "uci": "uci",
    "ldac": "ldac",
    "mm": "mmarket",
    "npz": "scipy_npz",
}

_EXTENSIONS = {
    ".txt": "lines",
    ".tsv": "tsv",
    ".csv": "csv",
    ".ldac": "ldac",
    ".lda-c": "ldac",
    ".mtx": "mm",
    ".mm": "mm",
    ".npz": "npz",
}

FORMATS = tuple(sorted(set(_MODULES)))


def infer_format(path: str | os.PathLike) -> str:
    """The format implied by ``path``'s extension (``.gz`` is looked through)."""
    name = os.fspath(path).lower()
    if name.endswith(".gz"):
        name = name[:-3]
    if os.path.basename(name).startswith("docword."):
        return "uci"
    ext = os.path.splitext(name)[1]
    try:
        return _EXTENSIONS[ext]
    except KeyError:
        raise InvalidParameterError(
            f"Cannot tell the corpus format of {os.fspath(path)!r} from its extension; "
            f"pass format= one of {', '.join(FORMATS)}."
        ) from None


def _module(fmt: str):
    if fmt not in _MODULES:
        raise InvalidParameterError(
            f"The 'format' parameter must be one of {', '.join(FORMATS)}. Got {fmt!r}."
        )
    return importlib.import_module(f"harmonium.corpus.formats.{_MODULES[fmt]}")


def read_corpus(path, format: str | None = None, **kwargs):
    """Read a :class:`~harmonium.corpus.Corpus` from ``path``.

    Parameters
    ----------
    path : str or path-like
    format : str, optional
        One of :data:`~harmonium.corpus.formats.FORMATS`; inferred from the extension when omitted.
    **kwargs
        Passed to the format's reader (e.g. ``text_column`` for tables,
        ``tokenizer`` for raw text, ``vocab_path`` for numeric formats).
    """
    fmt = format or infer_format(path)
    if fmt in ("tsv", "csv"):
        kwargs.setdefault("delimiter", "\t" if fmt == "tsv" else ",")
    return _module(fmt).read(path, **kwargs)


def write_corpus(corpus, path, format: str | None = None, **kwargs) -> None:
    """Write ``corpus`` to ``path`` in ``format`` (inferred from the extension when omitted)."""
    fmt = format or infer_format(path)
    if fmt in ("tsv", "csv"):
        kwargs.setdefault("delimiter", "\t" if fmt == "tsv" else ",")
    _module(fmt).write(corpus, path, **kwargs)
