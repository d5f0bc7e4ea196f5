"""Conversions between :class:`~harmonium.corpus.Corpus` and scikit-learn / gensim data.

Neither library is imported: their objects are recognised by duck typing.

* scikit-learn: a document-term matrix ``X`` (what ``CountVectorizer.fit_transform``
  returns) plus the vectorizer (``get_feature_names_out()``), its
  ``vocabulary_`` dict or a list of terms.
* gensim: a bag-of-words corpus, an iterable of documents, each a list of
  ``(word_id, count)`` pairs (what ``Dictionary.doc2bow`` returns), plus an
  id -> term mapping (a dict or a ``gensim.corpora.Dictionary``).

Examples
--------
>>> import scipy.sparse as sp
>>> X = sp.csr_matrix([[2, 0, 1], [0, 3, 0]])
>>> corpus = from_sklearn(X, ["apple", "pear", "plum"])
>>> corpus.document(0)
[('apple', 2), ('plum', 1)]
>>> docs, id2word = to_gensim(corpus)
>>> docs[1], id2word[1]
([(1, 3)], 'pear')
>>> from_gensim(docs, id2word).document(1)
[('pear', 3)]
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Sequence

import numpy as np
import scipy.sparse as sp

from harmonium.corpus.corpus import Corpus, _as_csr_counts, index_dtype
from harmonium.corpus.vocabulary import Vocabulary
from harmonium.errors import CorpusError, InvalidParameterError

__all__ = ["from_gensim", "from_sklearn", "to_gensim", "to_sklearn"]

_METADATA = ("doc_ids", "labels", "features", "feature_names", "tags", "tag_names")


def _check_metadata(metadata: dict, where: str) -> None:
    for key in metadata:
        if key not in _METADATA:
            raise InvalidParameterError(
                f"{where} got an unexpected keyword argument {key!r}; document metadata "
                f"may be {', '.join(_METADATA)}."
            )


def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _terms_from_mapping(mapping, where: str, what: str) -> Vocabulary:
    """A vocabulary from ``{term: id}`` or ``{id: term}``; the ids must be exactly 0..n-1."""
    items = list(mapping.items())
    if items and isinstance(items[0][0], str):
        items = [(i, t) for t, i in items]
    n = len(items)
    terms: list[str | None] = [None] * n
    for i, t in items:
        if not _is_int(i) or not 0 <= i < n or terms[int(i)] is not None:
            raise CorpusError(
                f"{what} must number its {n} terms 0..{n - 1}, each once; got id {i!r} "
                f"for term {t!r} ({where}). A gensim Dictionary with gaps needs compactify()."
            )
        if not isinstance(t, str):
            raise CorpusError(f"{what} maps id {i!r} to {t!r}, which is not a str ({where}).")
        terms[int(i)] = str(t)
    return Vocabulary(terms)


def _vocabulary_from(obj, where: str, what: str) -> Vocabulary:
    """Terms from a Vocabulary, a fitted vectorizer, a mapping or a sequence of str."""
    if isinstance(obj, Vocabulary):
        return obj
    if hasattr(obj, "get_feature_names_out"):  # fitted scikit-learn vectorizer
        terms = obj.get_feature_names_out()
    elif hasattr(obj, "items"):  # dict, vocabulary_, gensim Dictionary
        return _terms_from_mapping(obj, where, what)
    elif isinstance(obj, (str, bytes)) or not isinstance(obj, (Sequence, np.ndarray)):
        raise InvalidParameterError(
            f"The vocabulary argument of {where} must be a fitted vectorizer, a mapping or a "
            f"sequence of terms. Got {type(obj).__name__}."
        )
    else:
        terms = obj
    return Vocabulary(str(t) if isinstance(t, str) else t for t in terms)


# ---------------------------------------------------------------------------
# scikit-learn
# ---------------------------------------------------------------------------
def from_sklearn(X, vectorizer_or_vocabulary, **metadata) -> Corpus:
    """A corpus from a scikit-learn document-term matrix.

    Parameters
    ----------
    X : scipy.sparse matrix or array, shape (n_docs, n_words)
        Non-negative integer counts, e.g. ``CountVectorizer().fit_transform(texts)``.
    vectorizer_or_vocabulary : fitted vectorizer, mapping or sequence of str
        An object with ``get_feature_names_out()`` (a fitted ``CountVectorizer``),
        a ``{term: column}`` mapping (its ``vocabulary_``), or the terms in
        column order.
    **metadata
        ``doc_ids``, ``labels``, ``features``, ``feature_names``, ``tags``,
        ``tag_names``, passed to :class:`Corpus`.

    Returns
    -------
    Corpus

    Raises
    ------
    CorpusError
        If ``X`` has a number of columns other than the number of terms, or a
        negative or non-integer value (e.g. TF-IDF weights); the message names
        the document.
    """
    _check_metadata(metadata, "from_sklearn")
    vocabulary = _vocabulary_from(vectorizer_or_vocabulary, "from_sklearn", "the vocabulary")
    if sp.issparse(X):
        X = sp.csr_matrix(X)  # a new object: the caller's matrix is never modified
    counts = _as_csr_counts(X, "from_sklearn")
    if counts.shape[1] != len(vocabulary):
        raise CorpusError(
            f"X has {counts.shape[1]} columns but the vocabulary has {len(vocabulary)} "
            "terms (from_sklearn)."
        )
    return Corpus(counts, vocabulary, _validated=True, **metadata)


def to_sklearn(corpus: Corpus, *, copy: bool = True) -> tuple[sp.csr_matrix, list[str]]:
    """The document-term matrix and the terms, as scikit-learn estimators take them.

    Parameters
    ----------
    corpus : Corpus
    copy : bool, default True
        Copy the arrays. With ``False`` the matrix may share memory with the
        corpus (which must then not be modified).

    Returns
    -------
    X : scipy.sparse.csr_matrix, shape (n_docs, n_words)
        Integer counts, with index arrays of one dtype (as scipy expects).
    terms : list of str
        The term of each column.
    """
    if not isinstance(corpus, Corpus):
        raise InvalidParameterError(
            f"The 'corpus' parameter of to_sklearn must be a Corpus. Got {type(corpus).__name__}."
        )
    m = corpus.counts  # indices and indptr already share one dtype, as scipy expects
    X = m.copy() if copy else sp.csr_matrix(m)  # a new object either way
    return X, corpus.vocabulary.terms


# ---------------------------------------------------------------------------
# gensim
# ---------------------------------------------------------------------------
def _pair_error(flat: list, k: int, ends: np.ndarray, n_words: int | None) -> None:
    """Raise for the first bad entry at or after ``flat[k]`` (slow, exact messages)."""
    for j in range(k, len(flat)):
        d = int(np.searchsorted(ends, j, side="right"))
        where = f"in document {d} (from_gensim)"
        pair = flat[j]
        try:
            w, c = pair
        except (TypeError, ValueError):
            raise CorpusError(
                f"entry {pair!r} {where} is not a (word id, count) pair."
            ) from None
        w_ok = _is_int(w) or (isinstance(w, numbers.Real) and float(w).is_integer())
        if not w_ok:
            raise CorpusError(f"word id {w!r} {where} is not an integer.")
        if w < 0:
            raise CorpusError(f"negative word id {w} {where}.")
        if n_words is not None and w >= n_words:
            raise CorpusError(f"word id {w} >= vocabulary size {n_words} {where}.")
        if not (_is_int(c) or (isinstance(c, numbers.Real) and float(c).is_integer())):
            raise CorpusError(f"non-integer count {c!r} for word id {w} {where}.")
        if c < 0:
            raise CorpusError(f"negative count {c} for word id {w} {where}.")
        if c > np.iinfo(np.int32).max or w > np.iinfo(np.int32).max:
            raise CorpusError(f"word id {w} or its count {c} exceeds 2**31-1 {where}.")


def from_gensim(bow_docs: Iterable, id2word=None, **metadata) -> Corpus:
    """A corpus from a gensim bag-of-words corpus.

    Parameters
    ----------
    bow_docs : iterable of iterables of (int, int)
        One list of ``(word_id, count)`` pairs per document, as
        ``Dictionary.doc2bow`` returns them (or ``MmCorpus`` yields them, with
        integral float counts). Read once.
    id2word : mapping or sequence of str, optional
        The terms: a ``{id: term}`` dict, a ``gensim.corpora.Dictionary``
        (anything with ``.items()``; ids must be 0..n-1), or the terms in id
        order. Default: placeholders "0".."max_id".
    **metadata
        ``doc_ids``, ``labels``, ``features``, ``feature_names``, ``tags``,
        ``tag_names``, passed to :class:`Corpus`.

    Returns
    -------
    Corpus
        Repeated ids within a document are summed; zero counts are dropped.

    Raises
    ------
    CorpusError
        Naming the document: an entry that is not a pair, a non-integer or
        negative id or count, an id >= the vocabulary size ("word id 7 >=
        vocabulary size 5 in document 2 (from_gensim)").
    """
    _check_metadata(metadata, "from_gensim")
    vocabulary = None
    if id2word is not None:
        vocabulary = _vocabulary_from(id2word, "from_gensim", "id2word")
    n_words = None if vocabulary is None else len(vocabulary)

    flat: list = []
    lengths: list[int] = []
    for doc in bow_docs:
        before = len(flat)
        flat.extend(doc)
        lengths.append(len(flat) - before)
    ends = np.cumsum(np.asarray(lengths, dtype=np.int64))

    try:
        arr = np.array(flat) if flat else np.zeros((0, 2), dtype=np.int64)
    except (ValueError, TypeError):  # ragged entries
        arr = None
    if arr is None or arr.ndim != 2 or arr.shape[1] != 2 or arr.dtype.kind not in "iuf":
        _pair_error(flat, 0, ends, n_words)
        raise CorpusError("from_gensim could not read the documents as (id, count) pairs.")
    w, c = arr[:, 0], arr[:, 1]
    limit = np.iinfo(np.int32).max
    bad = (w < 0) | (c < 0) | (w > limit) | (c > limit)
    if n_words is not None:
        bad |= w >= n_words
    if arr.dtype.kind == "f":
        bad |= ~np.isfinite(arr).all(axis=1) | (w != np.floor(w)) | (c != np.floor(c))
    if bad.any():
        _pair_error(flat, int(np.flatnonzero(bad)[0]), ends, n_words)
        raise CorpusError("from_gensim found an invalid (id, count) pair.")  # not reached
    del flat
    if n_words is None:
        n_words = int(w.max()) + 1 if w.size else 0
        vocabulary = Vocabulary.range(n_words)
    idx = index_dtype(len(w), n_words)
    indptr = np.zeros(len(lengths) + 1, dtype=idx)
    indptr[1:] = ends
    m = sp.csr_matrix((c.astype(np.int64), w.astype(idx), indptr),
                      shape=(len(lengths), n_words))
    counts = _as_csr_counts(m, "from_gensim")
    return Corpus(counts, vocabulary, _validated=True, **metadata)


def to_gensim(corpus: Corpus) -> tuple[list[list[tuple[int, int]]], dict[int, str]]:
    """The corpus as gensim takes it: bag-of-words documents and an id -> term dict.

    Parameters
    ----------
    corpus : Corpus

    Returns
    -------
    docs : list of list of (int, int)
        Per document, ``(word_id, count)`` pairs sorted by word id (empty
        documents are empty lists).
    id2word : dict of int to str
        Usable as ``id2word`` of gensim models, or to build a ``Dictionary``
        with ``Dictionary.from_corpus(docs, id2word)``.
    """
    if not isinstance(corpus, Corpus):
        raise InvalidParameterError(
            f"The 'corpus' parameter of to_gensim must be a Corpus. Got {type(corpus).__name__}."
        )
    m = corpus.counts
    pairs = list(zip(m.indices.tolist(), m.data.tolist(), strict=True))
    ptr = m.indptr.tolist()
    docs = [pairs[a:b] for a, b in zip(ptr[:-1], ptr[1:], strict=True)]
    return docs, dict(enumerate(corpus.vocabulary))
