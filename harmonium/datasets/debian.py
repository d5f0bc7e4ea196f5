"""The Debian package descriptions corpus (bundled).

63,440 binary packages of Debian, one document each: the short and long
description. Per package the file also holds the archive section (a natural
class label: ``libs``, ``python``, ``doc``, ``games`` ...), the installed and
download sizes, the number of dependencies and the package's debtags
(``role::program``, ``use::gameplaying`` ...; about half the packages have none).

File: ``harmonium/datasets/data/debian-packages.tsv.gz``, a gzip-compressed
TSV with a header row and the columns ``package, section, priority,
installed_size_kb, size_bytes, n_depends, tags, text``.
"""

from __future__ import annotations

import importlib.resources
import os

from harmonium._validation import NONE, InstanceOf, Interval, validate_params
from harmonium.corpus.corpus import Corpus
from harmonium.corpus.formats import table
from harmonium.corpus.tokenizer import Tokenizer
from harmonium.errors import InvalidParameterError

__all__ = ["load_debian", "DEBIAN_FEATURES", "EXAMPLE_SCALE_VARIABLE"]

_DATA_FILE = "debian-packages.tsv.gz"

#: Environment variable that caps every :func:`~harmonium.datasets.load_debian` call at that many packages. The test
#: suite sets it to run the README's and the guides' examples, unchanged, on a small corpus.
EXAMPLE_SCALE_VARIABLE = "HARMONIUM_EXAMPLE_SCALE"

#: The numeric per-package features, in the order of ``Corpus.feature_names``.
DEBIAN_FEATURES = ("installed_size_kb", "size_bytes", "n_depends")


def default_debian_tokenizer() -> Tokenizer:
    """The tokenizer :func:`~harmonium.datasets.load_debian` uses by default.

    ``Tokenizer(stop_words="english", min_df=5, max_df=0.5, min_doc_length=1)``:
    lower case, tokens of two or more word characters, English stop words
    removed, terms kept if they occur in at least 5 documents and in at most
    half of them, packages left without any token dropped.
    """
    return Tokenizer(stop_words="english", min_df=5, max_df=0.5, min_doc_length=1)


def load_debian(*, tokenizer: Tokenizer | None = None, n_docs: int | None = None) -> Corpus:
    """Load the bundled Debian package descriptions as a :class:`~harmonium.corpus.Corpus`.

    Parameters
    ----------
    tokenizer : Tokenizer, optional
        Fitted on the descriptions (``fit_transform``). Default
        :func:`~harmonium.datasets.debian.default_debian_tokenizer`: ``Tokenizer(stop_words="english",
        min_df=5, max_df=0.5, min_doc_length=1)``.
    n_docs : int, optional
        Read only the first ``n_docs`` packages of the file (in package-name
        order), e.g. for quick experiments and tests. The vocabulary is
        learned from those packages only, and packages the tokenizer drops
        (``min_doc_length``) are not replaced, so the corpus may have fewer
        documents.

    Returns
    -------
    Corpus
        ``doc_ids``: package names; ``labels``: archive sections (str);
        ``features``: float64 columns ``installed_size_kb``, ``size_bytes``,
        ``n_depends`` (``feature_names`` exactly those); ``tags``: binary
        package x debtag matrix with sorted ``tag_names``.

    Notes
    -----
    When the environment variable ``HARMONIUM_EXAMPLE_SCALE`` holds a positive integer n, at
    most the first n packages are read (``n_docs`` becomes ``min(n_docs, n)``). The test suite
    uses it to run the documentation's examples as written, on a small corpus.

    The file is read from the installed package each call (a few seconds for
    all 63,440 packages with the default tokenizer); nothing is cached.

    Examples
    --------
    >>> corpus = load_debian(n_docs=500)
    >>> corpus.feature_names
    ['installed_size_kb', 'size_bytes', 'n_depends']
    """
    validate_params(
        "load_debian",
        {"tokenizer": tokenizer, "n_docs": n_docs},
        {
            "tokenizer": [NONE, InstanceOf((Tokenizer,), "a Tokenizer")],
            "n_docs": [NONE, Interval("int", 1, None)],
        },
    )
    n_docs = _example_scale(n_docs)
    tok = default_debian_tokenizer() if tokenizer is None else tokenizer
    resource = importlib.resources.files("harmonium.datasets").joinpath("data", _DATA_FILE)
    with importlib.resources.as_file(resource) as path:
        return table.read(
            path,
            delimiter="\t",
            text_column="text",
            label_column="section",
            feature_columns=DEBIAN_FEATURES,
            tag_column="tags",
            tag_separator=",",
            id_column="package",
            tokenizer=tok,
            max_rows=n_docs,
        )


def _example_scale(n_docs: int | None) -> int | None:
    value = os.environ.get(EXAMPLE_SCALE_VARIABLE, "").strip()
    if not value:
        return n_docs
    try:
        cap = int(value)
    except ValueError:
        cap = 0
    if cap < 1:
        raise InvalidParameterError(f"The environment variable {EXAMPLE_SCALE_VARIABLE} must be a positive integer "
                                    f"(a number of documents) or unset. Got {value!r}.")
    return cap if n_docs is None else min(n_docs, cap)
