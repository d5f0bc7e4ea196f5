"""Tokenizer: raw text documents -> :class:`~harmonium.corpus.Corpus` of word counts.

The tokenizer follows the estimator contract: parameters are stored by
``__init__`` and validated by ``fit``; the learned vocabulary is the fitted
attribute ``vocabulary_``. Counting is done in one pass over the texts with
``re.findall`` and a dict that hands out provisional word ids; all further work
(stop words, document-frequency filters, alphabetical re-numbering, dropping
short documents) is vectorised numpy on the resulting flat id array, so no
per-document sparse matrix is ever built.
"""

from __future__ import annotations

import functools
import importlib.resources
import math
import numbers
import re
from array import array
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

import numpy as np
import scipy.sparse as sp

from harmonium._validation import (
    NONE,
    InstanceOf,
    Interval,
    Options,
    check_is_fitted,
    validate_params,
)
from harmonium.corpus.corpus import Corpus
from harmonium.corpus.vocabulary import Vocabulary
from harmonium.errors import CorpusError, InvalidParameterError

__all__ = ["Tokenizer", "english_stop_words"]


@functools.lru_cache(maxsize=1)
def english_stop_words() -> frozenset[str]:
    """The bundled English stop-word list (lower case, one word a line).

    It holds common function words (articles, pronouns, prepositions,
    conjunctions, auxiliary verbs, small number words) and the fragments that
    the default token pattern leaves of contractions (``don``, ``isn``,
    ``ll``, ``ve`` ...).
    """
    res = importlib.resources.files("harmonium.corpus").joinpath("data/english_stop_words.txt")
    text = res.read_text(encoding="utf-8")
    return frozenset(w.strip() for w in text.splitlines() if w.strip())


class _IterableOfStr:
    """Constraint: an iterable (not a str or bytes) of str, checked element by element."""

    def __init__(self, name: str):
        self.name = name

    def accepts(self, value: Any) -> bool:
        if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
            return False
        if isinstance(value, Vocabulary):
            return True
        # Iterators would be consumed by the check; accept only re-iterable collections.
        if iter(value) is value:
            return False
        return all(isinstance(t, str) for t in value)

    def describe(self) -> str:
        return self.name


class Tokenizer:
    r"""Turn raw text documents into a bag-of-words :class:`~harmonium.corpus.Corpus`.

    A document is processed in this order: decoded (``bytes`` must be UTF-8),
    lower-cased (``lowercase``), split into tokens (every match of
    ``token_pattern``), stop words removed (``stop_words``). ``fit`` then keeps
    the terms whose document frequency lies within ``[min_df, max_df]``,
    optionally only the ``max_features`` most frequent ones, and numbers them in
    alphabetical order. ``transform`` counts every document's tokens into that
    vocabulary (other tokens are ignored) and drops documents left with fewer
    than ``min_doc_length`` tokens.

    Parameters
    ----------
    lowercase : bool, default True
        Convert text to lower case before matching ``token_pattern``.
    token_pattern : str, default ``r"(?u)\b\w\w+\b"``
        Regular expression; every non-overlapping match is a token (the
        default: runs of two or more word characters). If the pattern has one
        capturing group the group is the token; more than one group is an error.
    stop_words : None, "english" or iterable of str, default None
        Tokens to discard. ``"english"`` is the bundled list
        (:func:`~harmonium.corpus.tokenizer.english_stop_words`). Stop words are compared with the tokens
        after lower-casing, so with ``lowercase=False`` they match case-sensitively.
    min_df : int >= 1 or float in (0, 1], default 1
        Keep only terms that occur in at least this many documents (int) or
        this fraction of the documents (float). Ignored when ``vocabulary`` is given.
    max_df : int >= 1 or float in (0, 1], default 1.0
        Keep only terms that occur in at most this many documents (int) or
        this fraction of the documents (float); removes corpus-specific stop
        words. Ignored when ``vocabulary`` is given.
    max_features : int >= 1 or None, default None
        After the document-frequency filters, keep only the ``max_features``
        terms with the most occurrences in the whole corpus (ties broken
        alphabetically). Ignored when ``vocabulary`` is given.
    min_doc_length : int >= 0, default 0
        ``transform`` and ``fit_transform`` drop documents with fewer than this
        many in-vocabulary tokens. The positions (in the input) of the dropped
        documents are stored in ``dropped_``, of the kept ones in ``kept_``;
        unless ``doc_ids`` are given, each kept document's id is its input
        position as a string, so ids still refer to the input after dropping.
        Dropping does not change the vocabulary, which ``fit`` learns from all
        documents.
    vocabulary : iterable of str or Vocabulary, optional
        A fixed vocabulary (its order gives the word ids). ``fit`` learns
        nothing and tokens outside it are ignored; ``min_df``, ``max_df`` and
        ``max_features`` do not apply. Stop words still never count.

    Attributes
    ----------
    vocabulary_ : Vocabulary
        The terms of the corpus columns (alphabetical unless ``vocabulary`` was given).
    document_frequency_ : int64 array, shape (n_words,)
        In how many of the ``fit`` documents each term of ``vocabulary_`` occurs.
    n_fit_documents_ : int
        Number of documents seen by ``fit``.
    dropped_ : int64 array
        Input positions of the documents dropped by the last ``transform`` /
        ``fit_transform`` (``min_doc_length``).
    kept_ : int64 array
        Input positions of the documents kept by the last ``transform`` /
        ``fit_transform``; row ``d`` of the corpus is input document ``kept_[d]``.

    Examples
    --------
    >>> tok = Tokenizer(stop_words="english")
    >>> corpus = tok.fit_transform(["The cat sat.", "The cat and the dog."])
    >>> list(corpus.vocabulary), corpus.counts.toarray().tolist()
    (['cat', 'dog', 'sat'], [[1, 0, 1], [1, 1, 0]])
    """

    _parameter_constraints: dict[str, list] = {
        "lowercase": [InstanceOf((bool,), "a bool")],
        "token_pattern": [InstanceOf((str,), "a str (regular expression)")],
        "stop_words": [NONE, Options(("english",)), _IterableOfStr("an iterable of str")],
        "min_df": [Interval("int", 1, None), Interval("real", 0, 1, "right")],
        "max_df": [Interval("int", 1, None), Interval("real", 0, 1, "right")],
        "max_features": [NONE, Interval("int", 1, None)],
        "min_doc_length": [Interval("int", 0, None)],
        "vocabulary": [NONE, _IterableOfStr("an iterable of str")],
    }

    def __init__(
        self,
        *,
        lowercase: bool = True,
        token_pattern: str = r"(?u)\b\w\w+\b",
        stop_words: str | Iterable[str] | None = None,
        min_df: int | float = 1,
        max_df: int | float = 1.0,
        max_features: int | None = None,
        min_doc_length: int = 0,
        vocabulary: Iterable[str] | None = None,
    ):
        self.lowercase = lowercase
        self.token_pattern = token_pattern
        self.stop_words = stop_words
        self.min_df = min_df
        self.max_df = max_df
        self.max_features = max_features
        self.min_doc_length = min_doc_length
        self.vocabulary = vocabulary

    def __repr__(self) -> str:
        defaults = Tokenizer()
        args = [
            f"{k}={getattr(self, k)!r}"
            for k in self._parameter_constraints
            if k != "vocabulary" and getattr(self, k) != getattr(defaults, k)
        ]
        if self.vocabulary is not None:
            args.append("vocabulary=<fixed>")
        return f"Tokenizer({', '.join(args)})"

    # -- parameters -----------------------------------------------------------
    def _check_params(self) -> tuple[Any, frozenset[str]]:
        """Validate the parameters; return the compiled findall and the stop-word set."""
        params = {k: getattr(self, k) for k in self._parameter_constraints}
        validate_params("Tokenizer", params, self._parameter_constraints)
        try:
            regex = re.compile(self.token_pattern)
        except re.error as exc:
            raise InvalidParameterError(
                f"The 'token_pattern' parameter of Tokenizer must be a valid regular "
                f"expression. Got {self.token_pattern!r} ({exc})."
            ) from None
        if regex.groups > 1:
            raise InvalidParameterError(
                f"The 'token_pattern' parameter of Tokenizer must have at most one capturing "
                f"group. Got {self.token_pattern!r} with {regex.groups}; use (?:...) for "
                "non-capturing groups."
            )
        if self.stop_words is None:
            stop = frozenset()
        elif isinstance(self.stop_words, str):
            stop = english_stop_words()
        else:
            stop = frozenset(self.stop_words)
        both_int = isinstance(self.min_df, numbers.Integral) and isinstance(
            self.max_df, numbers.Integral
        )
        if both_int and self.max_df < self.min_df:
            raise InvalidParameterError(
                f"The 'max_df' parameter of Tokenizer must be >= min_df={self.min_df}. "
                f"Got {self.max_df!r}."
            )
        return regex.findall, stop

    def _fixed_vocabulary(self) -> Vocabulary | None:
        if self.vocabulary is None:
            return None
        try:
            vocab = (
                self.vocabulary
                if isinstance(self.vocabulary, Vocabulary)
                else Vocabulary(self.vocabulary)
            )
        except CorpusError as exc:
            raise InvalidParameterError(
                f"The 'vocabulary' parameter of Tokenizer must hold unique str terms: {exc}"
            ) from None
        if len(vocab) == 0:
            raise InvalidParameterError(
                "The 'vocabulary' parameter of Tokenizer must hold at least one term. Got []."
            )
        return vocab

    # -- tokenizing -----------------------------------------------------------
    def tokenize(self, text: str | bytes) -> list[str]:
        """The tokens of one document: decoded, lower-cased, matched, stop words removed.

        The vocabulary (fixed or fitted) is not applied; see :meth:`transform`.
        """
        findall, stop = self._check_params()
        text = _as_text(text, "the text") if not isinstance(text, str) else text
        if self.lowercase:
            text = text.lower()
        tokens = findall(text)
        if stop:
            tokens = [t for t in tokens if t not in stop]
        return tokens

    def _count(self, texts, findall, initial: Vocabulary | None):
        """One pass over ``texts``: CSR counts over provisional ids, and the id->term list.

        Ids ``0..len(initial)-1`` are the terms of ``initial``; every other term
        gets the next free id when first seen.
        """
        if isinstance(texts, (str, bytes)):
            raise CorpusError(
                "texts must be an iterable of documents (str), not a single "
                f"{type(texts).__name__}; wrap one document in a list."
            )
        if not isinstance(texts, Iterable):
            raise CorpusError(
                f"texts must be an iterable of documents (str); got {type(texts).__name__}."
            )
        vocab: defaultdict[str, int] = defaultdict(None)
        if initial is not None:
            vocab.update((t, i) for i, t in enumerate(initial))
        vocab.default_factory = vocab.__len__  # a new term gets the next id
        lookup = vocab.__getitem__
        ids = array("q")
        lengths = array("q")
        lowercase = self.lowercase
        for i, text in enumerate(texts):
            if type(text) is not str:
                text = _as_text(text, f"document {i}")
            if lowercase:
                text = text.lower()
            tokens = findall(text)
            ids.extend(map(lookup, tokens))
            lengths.append(len(tokens))
        n_docs = len(lengths)
        n_terms = len(vocab)
        col = np.frombuffer(ids, dtype=np.int64) if len(ids) else np.zeros(0, np.int64)
        doc_len = np.frombuffer(lengths, dtype=np.int64) if n_docs else np.zeros(0, np.int64)
        row = np.repeat(np.arange(n_docs, dtype=np.int64), doc_len)
        counts = sp.csr_matrix(
            (np.ones(col.size, dtype=np.int32), (row, col)), shape=(n_docs, n_terms)
        )
        counts.sum_duplicates()
        terms = list(vocab)  # dicts keep insertion order, i.e. id order
        return counts, terms

    # -- fitting --------------------------------------------------------------
    def fit(self, texts: Iterable[str | bytes]) -> Tokenizer:
        """Learn the vocabulary from ``texts`` (an iterable of str or UTF-8 bytes).

        Returns
        -------
        self : Tokenizer

        Raises
        ------
        CorpusError
            If a text is neither str nor bytes, bytes are not UTF-8, there are no
            documents, or no term survives the filters (the message names the filter).
        """
        self._fit_counts(texts)
        return self

    def _fit_counts(self, texts):
        """Fit; return the counts restricted to the learned vocabulary (rows = all texts)."""
        findall, stop = self._check_params()
        fixed = self._fixed_vocabulary()
        counts, terms = self._count(texts, findall, fixed)
        n_docs, n_prov = counts.shape
        if n_docs == 0:
            raise CorpusError("Tokenizer.fit got no documents; texts is empty.")
        is_stop = np.fromiter((t in stop for t in terms), dtype=bool, count=n_prov)
        if fixed is not None:
            keep = np.arange(n_prov) < len(fixed)
            columns = np.flatnonzero(keep)
            counts = _select_columns(counts, columns, is_stop)
            vocab = fixed
        else:
            columns = self._learn_columns(counts, terms, is_stop)
            counts = _select_columns(counts, columns, is_stop)
            vocab = Vocabulary(terms[c] for c in columns)
        self.vocabulary_ = vocab
        self.document_frequency_ = np.bincount(counts.indices, minlength=len(vocab)).astype(
            np.int64
        )
        self.n_fit_documents_ = int(n_docs)
        return counts

    def _learn_columns(self, counts, terms, is_stop) -> np.ndarray:
        """Provisional ids of the kept terms, in alphabetical order of the terms."""
        n_docs, n_prov = counts.shape
        if n_prov == 0:
            raise CorpusError(
                f"Empty vocabulary: no token in the {n_docs} documents matches "
                f"token_pattern={self.token_pattern!r}; check the texts or the pattern."
            )
        candidates = ~is_stop
        if not candidates.any():
            raise CorpusError(
                f"Empty vocabulary: all {n_prov} distinct tokens of the {n_docs} documents are "
                "stop words; relax stop_words."
            )
        df = np.bincount(counts.indices, minlength=n_prov)
        min_count = _as_count(self.min_df, n_docs)
        max_count = _as_count(self.max_df, n_docs)
        ok_min = df >= min_count
        ok_max = df <= max_count
        keep = candidates & ok_min & ok_max
        if not keep.any():
            df_c = df[candidates]
            where = f"of the {int(candidates.sum())} terms left after stop words"
            if not (candidates & ok_min).any():
                raise CorpusError(
                    f"Empty vocabulary: min_df={self.min_df!r} (at least {min_count:g} of "
                    f"{n_docs} documents) removes all {where}; the most widespread term occurs "
                    f"in {int(df_c.max())} documents. Lower min_df."
                )
            if not (candidates & ok_max).any():
                raise CorpusError(
                    f"Empty vocabulary: max_df={self.max_df!r} (at most {max_count:g} of "
                    f"{n_docs} documents) removes all {where}; the rarest term occurs in "
                    f"{int(df_c.min())} documents. Raise max_df (or relax stop_words)."
                )
            raise CorpusError(
                f"Empty vocabulary: min_df={self.min_df!r} and max_df={self.max_df!r} together "
                f"remove all {where} ({n_docs} documents); relax min_df or max_df."
            )
        columns = np.flatnonzero(keep)
        order = np.argsort(np.array([terms[c] for c in columns], dtype=object), kind="stable")
        columns = columns[order]
        if self.max_features is not None and columns.size > self.max_features:
            total = np.bincount(counts.indices, weights=counts.data, minlength=n_prov)[columns]
            top = np.argsort(-total, kind="stable")[: self.max_features]
            columns = columns[np.sort(top)]
        return columns

    # -- transforming ---------------------------------------------------------
    def transform(
        self,
        texts: Iterable[str | bytes],
        *,
        doc_ids=None,
        labels=None,
        features=None,
        feature_names=None,
        tags=None,
        tag_names=None,
    ) -> Corpus:
        """Count ``texts`` into the fitted (or the fixed) vocabulary and return a :class:`Corpus`.

        Documents with fewer than ``min_doc_length`` in-vocabulary tokens are
        dropped (see ``dropped_`` / ``kept_``); the metadata, one entry per
        input text, is subset the same way.

        Parameters
        ----------
        texts : iterable of str or UTF-8 bytes
        doc_ids, labels : sequence, optional
            One entry per text. Without ``doc_ids`` a document's id is its
            position in ``texts`` (as str).
        features : array, shape (n_texts, n_features), optional
        feature_names : sequence of str, optional
        tags : sparse matrix or array, shape (n_texts, n_tags), optional
        tag_names : sequence of str, optional
        """
        findall, stop = self._check_params()
        fixed = self._fixed_vocabulary()
        if fixed is not None and getattr(self, "vocabulary_", None) is None:
            # a fixed vocabulary needs no fitting (as scikit-learn's CountVectorizer(vocabulary=...))
            self.vocabulary_ = fixed
        check_is_fitted(self, "vocabulary_")
        vocab = self.vocabulary_
        counts, terms = self._count(texts, findall, vocab)
        if counts.shape[0] == 0:
            raise CorpusError("Tokenizer.transform got no documents; texts is empty.")
        is_stop = np.fromiter((t in stop for t in terms), dtype=bool, count=len(terms))
        counts = _select_columns(counts, np.arange(len(vocab)), is_stop)
        return self._build(counts, doc_ids, labels, features, feature_names, tags, tag_names)

    def fit_transform(
        self,
        texts: Iterable[str | bytes],
        *,
        doc_ids=None,
        labels=None,
        features=None,
        feature_names=None,
        tags=None,
        tag_names=None,
    ) -> Corpus:
        """Learn the vocabulary from ``texts`` and return their :class:`Corpus`.

        Equivalent to ``fit(texts).transform(texts, ...)`` but tokenizes once
        (``texts`` may be a one-shot iterator). Parameters as in :meth:`transform`.
        """
        counts = self._fit_counts(texts)
        return self._build(counts, doc_ids, labels, features, feature_names, tags, tag_names)

    def _build(self, counts, doc_ids, labels, features, feature_names, tags, tag_names) -> Corpus:
        n_docs = counts.shape[0]
        lengths = np.diff(
            np.concatenate(([0], np.cumsum(counts.data, dtype=np.int64)))[counts.indptr]
        )
        short = lengths < self.min_doc_length
        self.dropped_ = np.flatnonzero(short).astype(np.int64)
        self.kept_ = np.flatnonzero(~short).astype(np.int64)
        if self.kept_.size == 0:
            raise CorpusError(
                f"Empty corpus: all {n_docs} documents have fewer than "
                f"min_doc_length={self.min_doc_length} in-vocabulary tokens (the longest has "
                f"{int(lengths.max())}); lower min_doc_length or relax min_df/max_df/stop_words."
            )
        kept = self.kept_
        subset = self.dropped_.size > 0

        def take(values, name):
            if values is None:
                return None
            arr = values if sp.issparse(values) else np.asarray(values)
            if arr.shape[0] != n_docs:
                raise CorpusError(
                    f"{name} has {arr.shape[0]} entries for {n_docs} documents; "
                    "give one per text."
                )
            if sp.issparse(arr):
                arr = sp.csr_matrix(arr)
            return arr[kept] if subset else arr

        if doc_ids is None:
            ids = kept.astype(str)
        else:
            # object array: subsetting long str ids is cheap; Corpus converts once
            ids = take(
                doc_ids if isinstance(doc_ids, np.ndarray) else np.asarray(doc_ids, dtype=object),
                "doc_ids",
            )
        counts = counts[kept] if subset else counts
        return Corpus(
            counts,
            self.vocabulary_,
            doc_ids=ids,
            labels=take(labels, "labels"),
            features=take(features, "features"),
            feature_names=feature_names,
            tags=take(tags, "tags"),
            tag_names=tag_names,
        )


def _as_count(df: int | float, n_docs: int) -> float:
    """A document-frequency bound as a count: ints are counts, floats fractions of n_docs."""
    return df if isinstance(df, numbers.Integral) else df * n_docs


def _select_columns(counts: sp.csr_matrix, columns: np.ndarray, is_stop: np.ndarray):
    """CSR with column j = provisional column ``columns[j]``; stop-word entries removed."""
    n_docs, n_prov = counts.shape
    new_id = np.full(n_prov, -1, dtype=np.int64)
    new_id[columns] = np.arange(columns.size)
    new_id[is_stop] = -1
    mapped = new_id[counts.indices]
    valid = mapped >= 0
    csum = np.zeros(valid.size + 1, dtype=np.int64)
    np.cumsum(valid, out=csum[1:])
    indptr = csum[counts.indptr].astype(np.int64)
    out = sp.csr_matrix(
        (counts.data[valid].astype(np.int32), mapped[valid].astype(np.int32), indptr),
        shape=(n_docs, columns.size),
    )
    if not np.all(np.diff(columns) > 0):
        out.has_sorted_indices = False
        out.sort_indices()
    return out


def _as_text(value, where: str) -> str:
    """``value`` as str: str subclasses as they are, bytes decoded as UTF-8.

    ``where`` names the document in messages ("document 3").
    """
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CorpusError(
                f"{where} is not valid UTF-8: byte 0x{raw[exc.start]:02x} at position "
                f"{exc.start}; decode it yourself (e.g. with errors='replace') and pass str."
            ) from None
    shown = repr(value)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    missing = value is None or (isinstance(value, float) and math.isnan(value))
    hint = " (a missing value?)" if missing else ""
    raise CorpusError(
        f"{where} is a {type(value).__name__} ({shown}){hint}, not str; every text must be "
        "a str (or UTF-8 bytes)."
    )
