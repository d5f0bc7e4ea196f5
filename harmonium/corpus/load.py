"""One call from a name to a Corpus: :func:`load_corpus` (bundled datasets, corpus files, on-disk corpora).

``source`` is, in this order of precedence:

* an on-disk corpus directory (one holding ``manifest.json``, built by
  :func:`~harmonium.corpus.build_ondisk_corpus`): opened without loading its
  arrays, so a model fitted on a Dask cluster sees the files the workers read;
* an existing file: read by :func:`~harmonium.corpus.read_corpus` in ``format``
  (default: from the extension) with the reader's own keyword arguments;
* the name of a bundled dataset (:data:`BUNDLED`, e.g. ``"debian"``).

Reader options the format's reader does not take are refused with one error
naming the option and the formats that take it, never silently ignored (the
table of options is the readers' own signatures). With ``vocabulary`` (a fitted
model's), the corpus is matched to it word by word
(:meth:`~harmonium.corpus.Corpus.match_vocabulary`); a bundled corpus is then
tokenized for that vocabulary, since its own vocabulary is pruned by document
frequency.
"""

from __future__ import annotations

import importlib
import inspect
import os

from harmonium.errors import InvalidParameterError

__all__ = ["BUNDLED", "is_ondisk_corpus", "load_corpus", "reader_formats", "source_kind"]

#: Bundled datasets by name: (module, loader). Each loader takes ``tokenizer=`` and ``n_docs=``.
BUNDLED: dict[str, tuple[str, str]] = {
    "debian": ("harmonium.datasets.debian", "load_debian"),
}


def is_ondisk_corpus(source) -> bool:
    """Whether ``source`` is the directory of an on-disk corpus (it holds ``manifest.json``)."""
    return isinstance(source, (str, os.PathLike)) and os.path.isfile(os.path.join(os.fspath(source), "manifest.json"))


def reader_formats() -> dict[str, tuple[str, ...]]:
    """{keyword: formats whose reader takes it}, from the readers' signatures (``path`` and ``delimiter`` left out)."""
    from harmonium.corpus.formats import _MODULES

    out: dict[str, list[str]] = {}
    for fmt in _MODULES:  # text formats first, then uci, ldac, mm, npz
        read = importlib.import_module(f"harmonium.corpus.formats.{_MODULES[fmt]}").read
        for name, p in inspect.signature(read).parameters.items():
            if p.kind is p.KEYWORD_ONLY and name != "delimiter":
                out.setdefault(name, []).append(fmt)
    return {k: tuple(v) for k, v in out.items()}


def source_kind(source, format: str | None = None) -> str:
    """How :func:`load_corpus` reads ``source``: ``"ondisk"``, ``"bundled"`` or a file format name.

    Raises InvalidParameterError when ``format`` is not given and the file name's extension does not tell it.
    """
    name = os.fspath(source)
    if is_ondisk_corpus(name):
        return "ondisk"
    if name in BUNDLED and not os.path.exists(name):
        return "bundled"
    from harmonium.corpus.formats import infer_format

    return format or infer_format(name)


def _check_options(name: str, kind: str, format: str | None, options: dict) -> None:
    if kind in ("ondisk", "bundled"):
        given = ", ".join(f"{k}={v!r}" for k, v in {"format": format, **options}.items() if v is not None)
        if given:
            what = "an on-disk corpus" if kind == "ondisk" else "a bundled corpus"
            raise InvalidParameterError(f"{name!r} is {what}, which takes no reader options; got {given}.")
        return
    takes = reader_formats()
    for key in options:
        formats = takes.get(key, ())
        if kind not in formats:
            where = f"applies to {'/'.join(formats)} corpora" if formats else "is not an option of any corpus reader"
            raise InvalidParameterError(f"{key}={options[key]!r} {where}; {name!r} is read as {kind}. Leave it out, "
                                        "or give format=.")


def load_corpus(source, *, format: str | None = None, vocabulary=None, n_docs: int | None = None,
                verify: bool = True, **reader_options):
    """A :class:`~harmonium.corpus.Corpus` from an on-disk corpus directory, a corpus file or a bundled dataset.

    Parameters
    ----------
    source : str or path-like
        See the module docstring for the order in which it is read (:func:`source_kind`).
    format : str, optional
        A format of :data:`harmonium.corpus.formats.FORMATS` (files only); default: from the extension.
    vocabulary : Vocabulary, optional
        A fitted model's vocabulary: the corpus is matched to it by word (unknown
        words dropped with one warning; none known is an error).
    n_docs : int, optional
        Only the first ``n_docs`` documents.
    verify : bool, default True
        On-disk corpora: check the arrays once (:func:`~harmonium.corpus.open_ondisk_corpus`).
    **reader_options
        Keyword arguments of the format's reader (``encoding``, ``text_column``,
        ``label_column``, ``id_column``, ``feature_columns`` (a sequence, or one
        comma-separated string), ``tag_column``, ``tag_separator``, ``vocab_path``,
        ...; :func:`reader_formats`); None values are left out.

    Returns
    -------
    Corpus

    Raises
    ------
    InvalidParameterError
        A reader option the format does not take, options for a bundled dataset or
        an on-disk corpus, or a file name whose extension tells no format.
    CorpusError
        The file cannot be read (its reader's message), or no word of ``vocabulary`` occurs.

    Examples
    --------
    >>> from harmonium.corpus import load_corpus
    >>> corpus = load_corpus("debian", n_docs=500)
    >>> corpus.n_docs <= 500
    True
    """
    options = {k: v for k, v in reader_options.items() if v is not None}
    if n_docs is not None and (isinstance(n_docs, bool) or not isinstance(n_docs, int) or n_docs < 1):
        raise InvalidParameterError(f"The 'n_docs' parameter of load_corpus must be an int >= 1 or None. "
                                    f"Got {n_docs!r}.")
    name = os.fspath(source)
    kind = source_kind(name, format)
    _check_options(name, kind, format, options)
    if kind == "ondisk":
        from harmonium.corpus.ondisk import open_ondisk_corpus

        corpus = open_ondisk_corpus(name, verify=verify)
    elif kind == "bundled":
        from harmonium.corpus.tokenizer import Tokenizer

        module, loader = BUNDLED[name]
        load = getattr(importlib.import_module(module), loader)
        tokenizer = None if vocabulary is None else Tokenizer(vocabulary=vocabulary)
        corpus = load(tokenizer=tokenizer, n_docs=n_docs)
    else:
        from harmonium.corpus.formats import read_corpus

        if isinstance(options.get("feature_columns"), str):
            options["feature_columns"] = tuple(c.strip() for c in options["feature_columns"].split(",") if c.strip())
        corpus = read_corpus(name, format=kind, **options)
    if n_docs is not None and n_docs < corpus.n_docs:
        corpus = corpus[:n_docs]
    if vocabulary is not None:
        corpus = corpus.match_vocabulary(vocabulary, name)  # unknown words: a warning; none known: an error
    return corpus
