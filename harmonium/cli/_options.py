"""What every command shares: the corpus readers' options, corpus loading, and messages in the CLI's words.

The readers (:mod:`harmonium.corpus.formats`) take keyword arguments; the CLI
exposes each as a flag on every command that reads a corpus (``_READER_OPTIONS``
is the one table of them). Library messages name Python arguments
(``format=``, ``text_column``, ``fit(resume=True)``); :func:`cli_message`
rewrites them into the flags the user typed, with one table (``_FLAGS``).
"""

from __future__ import annotations

import functools
import os
import re

import click

from harmonium.corpus.formats import FORMATS

BUNDLED = ("debian",)

_TEXT = ("lines", "tsv", "csv")
_TABLE = ("tsv", "csv")
_NUMERIC = ("uci", "ldac", "mm", "npz")

# dest of the click option: (flag, keyword of the readers, formats whose reader takes it, help)
_READER_OPTIONS = {
    "encoding": ("--encoding", "encoding", _TEXT, "Text encoding of a lines/TSV/CSV corpus (default: utf-8)."),
    "text_column": ("--text-column", "text_column", _TABLE, "Text column of a TSV/CSV corpus (default: text)."),
    "label_column": ("--label-column", "label_column", _TABLE, "Label column of a TSV/CSV corpus."),
    "id_column": ("--id-column", "id_column", _TABLE,
                  "Document-id column of a TSV/CSV corpus (default: the row number)."),
    "feature_columns": ("--feature-columns", "feature_columns", _TABLE,
                        "Comma-separated numeric columns of a TSV/CSV corpus (the documents' features)."),
    "tag_column": ("--tag-column", "tag_column", _TABLE, "Tag column of a TSV/CSV corpus."),
    "tag_separator": ("--tag-separator", "tag_separator", _TABLE,
                      "Separator of the tags in --tag-column (default: ',')."),
    "vocab_file": ("--vocab-file", "vocab_path", _NUMERIC,
                   "Vocabulary file of a uci/ldac/mm/npz corpus, one word a line (default: the file beside it, "
                   "if any)."),
}


def reader_options(f):
    """Add ``--format`` and the readers' options; the command gets them as one ``reader`` dict."""

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        reader = {dest: kwargs.pop(dest) for dest in ("fmt", *_READER_OPTIONS)}
        return f(*args, reader=reader, **kwargs)

    for dest, (flag, _, _formats, text) in reversed(_READER_OPTIONS.items()):
        wrapper = click.option(flag, dest, default=None, help=text)(wrapper)
    return click.option("--format", "fmt", type=click.Choice(FORMATS), default=None,
                        help="Corpus format; default: from the file's extension.")(wrapper)


def corpus_options(f):
    """:func:`reader_options` plus ``--n-docs`` (the first N documents)."""
    f = click.option("--n-docs", type=click.IntRange(min=1), default=None, help="Use only the first N documents.")(f)
    return reader_options(f)


def load_corpus(source: str, reader: dict | None = None, vocabulary=None, n_docs: int | None = None):
    """A Corpus from a bundled dataset name or a file, mapped by word to ``vocabulary`` when given.

    Reader options that the format does not take are refused (one line naming
    the flag and the formats that take it), never silently ignored.
    """
    from harmonium.corpus.formats import infer_format, read_corpus
    from harmonium.corpus.tokenizer import Tokenizer

    reader = dict(reader or {})
    fmt = reader.pop("fmt", None)
    given = {dest: value for dest, value in reader.items() if value is not None}
    if source in BUNDLED and not os.path.exists(source):
        if fmt is not None or given:
            flags = ", ".join(["--format"] * (fmt is not None) + [_READER_OPTIONS[d][0] for d in given])
            raise click.UsageError(f"{flags}: the bundled corpus {source!r} takes no reader options.")
        from harmonium.datasets import load_debian

        # the bundled corpus is tokenized for the model (its own vocabulary is pruned)
        tok = None if vocabulary is None else Tokenizer(vocabulary=vocabulary)
        corpus = load_debian(tokenizer=tok, n_docs=n_docs)
    else:
        fmt = fmt or infer_format(source)
        kwargs = {}
        for dest, value in given.items():
            flag, keyword, formats, _ = _READER_OPTIONS[dest]
            if fmt not in formats:
                raise click.UsageError(f"{flag} applies to {'/'.join(formats)} corpora; {source!r} is read as {fmt}.")
            if dest == "feature_columns":
                value = tuple(c.strip() for c in value.split(",") if c.strip())
            kwargs[keyword] = value
        corpus = read_corpus(source, format=fmt, **kwargs)
        if n_docs is not None:
            corpus = corpus[: min(n_docs, corpus.n_docs)]
    if vocabulary is not None:
        corpus = corpus.match_vocabulary(vocabulary, source)  # unknown words: a warning; none known: an error
    return corpus


# -- library messages in the CLI's words -------------------------------------------------------------
_FLAGS = {
    "format": "--format", "encoding": "--encoding", "text_column": "--text-column", "label_column": "--label-column",
    "id_column": "--id-column", "feature_columns": "--feature-columns", "tag_column": "--tag-column",
    "tag_separator": "--tag-separator", "vocab_path": "--vocab-file", "n_topics": "--n-topics", "n_iter": "--n-iter",
    "doc_topic_prior": "--alpha", "topic_word_prior": "--beta", "inference": "--inference",
    "batch_size": "--batch-size", "sampler": "--sampler", "n_jobs": "--n-jobs", "burn_in": "--burn-in",
    "thin": "--thin", "optimize_interval": "--optimize-interval", "checkpoint_path": "--checkpoint",
    "checkpoint_every": "--checkpoint-every", "random_state": "--seed", "observed_fraction": "--observed-fraction",
    "test_size": "--test-size", "max_words": "--max-words",
}
# whole phrases first, then "The 'x' parameter", "x=value" and bare snake_case names
_PHRASES = [
    (re.compile(r"\b\w+\.fit\(resume=True\) needs checkpoint_path to be set"), "--resume needs --checkpoint FILE"),
    (re.compile(r"leave random_state at None"), "leave out --seed"),
    (re.compile(r"\(or vocab_path=False to read without one\)"), "(or leave out --vocab-file)"),
    (re.compile(r"\bresume=True\b"), "--resume"),
]
_PARAMETER = re.compile(r"\bThe '(\w+)' parameter(?: of [\w.]+)?")
_ASSIGNMENT = re.compile(r"\b(\w+)=('?)([^\s,;()']*)\2")
_SNAKE = re.compile(r"(?<![/\\.])\b([a-z]+(?:_[a-z]+)+)\b(?!\(|/|\\|\.\w)")  # not in a path, a file name or a call


def cli_message(text: str) -> str:
    """``text`` (an error or warning of the library) with Python arguments replaced by the CLI's flags."""
    for pattern, repl in _PHRASES:
        text = pattern.sub(repl, text)

    def parameter(m):
        flag = _FLAGS.get(m.group(1))
        return f"The {flag} option" if flag else m.group(0)

    def assignment(m):
        flag = _FLAGS.get(m.group(1))
        if flag is None:
            return m.group(0)
        return f"{flag} {m.group(3)}" if m.group(3) else flag

    def snake(m):
        return _FLAGS.get(m.group(1), m.group(0))

    text = _PARAMETER.sub(parameter, text)
    text = _ASSIGNMENT.sub(assignment, text)
    return _SNAKE.sub(snake, text)
