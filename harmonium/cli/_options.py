"""What every command shares: the corpus readers' options, corpus loading, and messages in the CLI's words.

The readers (:mod:`harmonium.corpus.formats`) take keyword arguments; the CLI
exposes each as a flag on every command that reads a corpus (``_READER_OPTIONS``
is the one table of them). Library messages name Python arguments
(``format=``, ``text_column``, ``fit(resume=True)``); :func:`cli_message`
rewrites them into the flags the user typed, with one table (``_FLAGS``).
"""

from __future__ import annotations

import functools
import re

import click

from harmonium.corpus.formats import FORMATS
from harmonium.corpus.load import BUNDLED  # noqa: F401 - the bundled corpora's names, for the commands

# dest of the click option: (flag, keyword of the readers, help); which formats take each keyword is read from the
# readers' signatures (harmonium.corpus.load.reader_formats)
_READER_OPTIONS = {
    "encoding": ("--encoding", "encoding", "Text encoding of a lines/TSV/CSV corpus (default: utf-8)."),
    "text_column": ("--text-column", "text_column", "Text column of a TSV/CSV corpus (default: text)."),
    "label_column": ("--label-column", "label_column", "Label column of a TSV/CSV corpus."),
    "id_column": ("--id-column", "id_column",
                  "Document-id column of a TSV/CSV corpus (default: the row number)."),
    "feature_columns": ("--feature-columns", "feature_columns",
                        "Comma-separated numeric columns of a TSV/CSV corpus (the documents' features)."),
    "tag_column": ("--tag-column", "tag_column", "Tag column of a TSV/CSV corpus."),
    "tag_separator": ("--tag-separator", "tag_separator",
                      "Separator of the tags in --tag-column (default: ',')."),
    "vocab_file": ("--vocab-file", "vocab_path",
                   "Vocabulary file of a uci/ldac/mm/npz corpus, one word a line (default: the file beside it, "
                   "if any)."),
}


def reader_options(f):
    """Add ``--format`` and the readers' options; the command gets them as one ``reader`` dict."""

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        reader = {dest: kwargs.pop(dest) for dest in ("fmt", *_READER_OPTIONS)}
        return f(*args, reader=reader, **kwargs)

    for dest, (flag, _, text) in reversed(_READER_OPTIONS.items()):
        wrapper = click.option(flag, dest, default=None, help=text)(wrapper)
    return click.option("--format", "fmt", type=click.Choice(FORMATS), default=None,
                        help="Corpus format; default: from the file's extension.")(wrapper)


def corpus_options(f):
    """:func:`reader_options` plus ``--n-docs`` (the first N documents)."""
    f = click.option("--n-docs", type=click.IntRange(min=1), default=None, help="Use only the first N documents.")(f)
    return reader_options(f)


def load_corpus(source: str, reader: dict | None = None, vocabulary=None, n_docs: int | None = None,
                verify: bool = True):
    """:func:`harmonium.corpus.load_corpus` with the reader flags of one command (``reader``).

    A flag the source's reader does not take is a usage error naming the flag
    and the formats that take it (never silently ignored).
    """
    from harmonium.corpus.load import load_corpus as load
    from harmonium.corpus.load import reader_formats, source_kind

    reader = dict(reader or {})
    fmt = reader.pop("fmt", None)
    given = {_READER_OPTIONS[dest][1]: value for dest, value in reader.items() if value is not None}
    flags = {keyword: flag for flag, keyword, _ in _READER_OPTIONS.values()}
    kind = source_kind(source, fmt)
    if kind in ("ondisk", "bundled") and (fmt is not None or given):
        named = ", ".join(["--format"] * (fmt is not None) + [flags[k] for k in given])
        what = "the bundled corpus" if kind == "bundled" else "the on-disk corpus"
        raise click.UsageError(f"{named}: {what} {source!r} takes no reader options.")
    takes = reader_formats()
    for keyword in given:
        if kind not in ("ondisk", "bundled") and kind not in takes.get(keyword, ()):
            raise click.UsageError(f"{flags[keyword]} applies to {'/'.join(takes.get(keyword, ()))} corpora; "
                                   f"{source!r} is read as {kind}.")
    return load(source, format=fmt, vocabulary=vocabulary, n_docs=n_docs, verify=verify, **given)


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
    (re.compile(r"\bcompare\(plots=True\) draws"), "compare draws its plots"),
    (re.compile(r"\bpass plots=False\b"), "pass --no-plots"),
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
