"""Corpus: document-term counts (CSR) with a token-stream view and per-document metadata.

Notation (docs/notation.md): D documents, V words, ``counts[d, w] = n_dw``.
Samplers work on the *token stream*: for document d its tokens are
``words[doc_ptr[d]:doc_ptr[d+1]]`` (int32 word ids, each occurrence once).
"""

from __future__ import annotations

import warnings
import zlib
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from harmonium.corpus.vocabulary import Vocabulary
from harmonium.errors import CorpusError, VocabularyMismatchError, VocabularyMismatchWarning


class TokenStream(NamedTuple):
    """Tokens of a corpus in document order.

    Attributes
    ----------
    doc_ptr : int64 array, shape (D + 1,)
        Tokens of document d are ``words[doc_ptr[d]:doc_ptr[d + 1]]``.
    words : int32 array, shape (N,)
        Word id of every token.
    """

    doc_ptr: np.ndarray
    words: np.ndarray


def _as_csr_counts(counts, where: str) -> sp.csr_matrix:
    """Coerce to canonical CSR (int32 data; int32 indices and indptr, int64 beyond 2**31), checking values."""
    if isinstance(counts, np.ndarray) or (hasattr(counts, "__array__") and not sp.issparse(counts)):
        arr = np.asarray(counts)
        if arr.ndim != 2:
            raise CorpusError(
                f"counts must be a 2-D (documents x words) matrix; got {arr.ndim}-D ({where}). "
                "Reshape your data: x.reshape(1, -1) for a single document."
            )
        if arr.dtype.kind not in "biufc":
            # object arrays (of numbers, from pandas or lists); scipy.sparse refuses the dtype itself
            try:
                arr = arr.astype(np.float64)
            except (TypeError, ValueError) as exc:
                raise CorpusError(f"counts must be numbers; got an array of dtype {arr.dtype} that "
                                  f"does not convert ({exc}) ({where}).") from exc
        counts = sp.csr_matrix(arr)
    elif not sp.issparse(counts):
        raise CorpusError(
            f"counts must be a scipy.sparse matrix or a 2-D array; got {type(counts).__name__} ({where})."
        )
    m = counts.tocsr() if counts.format != "csr" else counts
    data = m.data
    if data.dtype.kind == "f":
        bad = ~np.isfinite(data) | (data != np.round(data))
        if bad.any():
            pos = int(np.flatnonzero(bad)[0])
            d = int(np.searchsorted(m.indptr, pos, side="right") - 1)
            what = "" if np.isfinite(data[pos]) else ", not NaN or inf"
            raise CorpusError(
                f"counts must be non-negative integers{what}; document {d} has count {data[pos].item()!r} "
                f"for word id {int(m.indices[pos])} ({where})."
            )
    elif data.dtype.kind == "c":
        raise CorpusError(f"Complex data not supported: counts must be integers; got dtype {data.dtype} ({where}).")
    elif data.dtype.kind not in "iub":
        raise CorpusError(f"counts must be integers; got dtype {data.dtype} ({where}).")
    if data.size and data.min() < 0:
        pos = int(np.flatnonzero(data < 0)[0])
        d = int(np.searchsorted(m.indptr, pos, side="right") - 1)
        raise CorpusError(
            f"Negative values in data: counts must be non-negative integers; document {d} has count "
            f"{data[pos].item()!r} for word id {int(m.indices[pos])} ({where})."
        )
    if data.size and data.max() > np.iinfo(np.int32).max:
        raise CorpusError(f"a single count exceeds 2**31-1 ({where}).")
    if not m.has_canonical_format:
        m = m.copy()
        m.sum_duplicates()
    if m.nnz and (m.data == 0).any():
        m = m.copy()
        m.eliminate_zeros()
    return _canonical_csr(m.data, m.indices, m.indptr, m.shape)


def _crc32(arrays, crc: int = 0) -> int:
    """CRC-32 of the bytes of ``arrays`` in turn."""
    for a in arrays:
        crc = zlib.crc32(np.ascontiguousarray(a).view(np.uint8), crc)
    return crc


def fingerprint_arrays(xs) -> dict:
    """Row count, shapes and CRC-32 of per-wing arrays (dense or scipy CSR): a harmonium checkpoint's ``data``."""
    crc = 0
    for x in xs:
        crc = _crc32((x.indptr, x.indices, x.data) if sp.issparse(x) else (x,), crc)
    return {"n_rows": int(xs[0].shape[0]), "shapes": [list(x.shape) for x in xs], "crc32": crc}


def index_dtype(nnz: int, n_cols: int):
    """int32 while every index fits, else int64 (indices and indptr always share it, as scipy expects)."""
    return np.int32 if max(nnz, n_cols) < np.iinfo(np.int32).max else np.int64


def _first_word_beyond(m: sp.csr_matrix, n_words: int) -> tuple[int, int] | None:
    """(word id, document) of the first entry of ``m`` with a word id >= ``n_words``; None when there is none."""
    bad = m.indices >= n_words
    if not bad.any():
        return None
    pos = int(np.flatnonzero(bad)[0])
    return int(m.indices[pos]), int(np.searchsorted(m.indptr, pos, side="right") - 1)


def _canonical_csr(data, indices, indptr, shape) -> sp.csr_matrix:
    """A new CSR over (data, indices, indptr) without copying arrays already of the right dtype.

    The caller's matrix is never modified. Arrays must be sorted, duplicate-free
    and validated; memory-mapped arrays stay memory-mapped.
    """
    idx = index_dtype(len(data), shape[1])
    out = sp.csr_matrix(shape, dtype=np.int32)
    out.data = np.asarray(data).astype(np.int32, copy=False)
    out.indices = np.asarray(indices).astype(idx, copy=False)
    out.indptr = np.asarray(indptr).astype(idx, copy=False)
    out.has_canonical_format = True
    return out


class Corpus:
    """A collection of bag-of-words documents over a :class:`Vocabulary`.

    Parameters
    ----------
    counts : scipy.sparse matrix or 2-D array, shape (n_docs, n_words)
        Non-negative integer counts ``n_dw``. Stored as CSR with int32 data
        and int32 indices/indptr (both int64 once nnz >= 2**31); arrays of
        those dtypes, memory-mapped ones included, are used without a copy.
    vocabulary : Vocabulary or sequence of str, optional
        Terms of the columns; defaults to "0".."V-1".
    doc_ids : sequence of str, optional
        One id per document; defaults to "0".."D-1".
    labels : sequence, optional
        One class label per document (e.g. the Debian section).
    features : array, shape (n_docs, n_features), optional
        Numeric per-document features (float64).
    feature_names : sequence of str, optional
    tags : scipy.sparse matrix, shape (n_docs, n_tags), optional
        Binary document-tag incidence (e.g. debtags), with ``tag_names``.
    tag_names : Vocabulary or sequence of str, optional

    Notes
    -----
    A corpus is immutable by convention: methods return new corpora.
    """

    def __init__(
        self,
        counts,
        vocabulary: Vocabulary | Sequence[str] | None = None,
        *,
        doc_ids: Sequence[str] | None = None,
        labels: Sequence | None = None,
        features=None,
        feature_names: Sequence[str] | None = None,
        tags=None,
        tag_names: Vocabulary | Sequence[str] | None = None,
        _validated: bool = False,
    ):
        m = counts if _validated else _as_csr_counts(counts, "Corpus")
        n_docs, n_cols = m.shape
        if vocabulary is None:
            vocabulary = Vocabulary.range(n_cols)
        elif not isinstance(vocabulary, Vocabulary):
            vocabulary = Vocabulary(vocabulary)
        if n_cols != len(vocabulary):
            if n_cols > len(vocabulary):
                Corpus.check_word_ids_of(m, len(vocabulary), "Corpus")
            m = _canonical_csr(m.data, m.indices, m.indptr, (n_docs, len(vocabulary)))
        self._counts = m
        self.vocabulary = vocabulary
        self.doc_ids = self._check_1d(doc_ids, "doc_ids", str) if doc_ids is not None else None
        self.labels = self._check_1d(labels, "labels", None) if labels is not None else None
        if features is not None:
            f = np.asarray(features, dtype=np.float64)
            if f.ndim == 1:
                f = f[:, None]
            if f.ndim != 2 or f.shape[0] != n_docs:
                raise CorpusError(
                    f"features must have shape (n_docs={n_docs}, n_features); got {f.shape}."
                )
            self.features = f
            names = list(feature_names) if feature_names is not None else [f"f{i}" for i in range(f.shape[1])]
            if len(names) != f.shape[1]:
                raise CorpusError(f"feature_names has {len(names)} names for {f.shape[1]} feature columns.")
            self.feature_names = names
        else:
            if feature_names is not None:
                raise CorpusError("feature_names was given without features.")
            self.features = None
            self.feature_names = None
        if tags is not None:
            t = sp.csr_matrix(tags)
            if t.shape[0] != n_docs:
                raise CorpusError(f"tags must have one row per document ({n_docs}); got {t.shape[0]}.")
            t.data = (t.data != 0).astype(np.int8)
            t.eliminate_zeros()
            if tag_names is None:
                tag_names = Vocabulary.range(t.shape[1])
            elif not isinstance(tag_names, Vocabulary):
                tag_names = Vocabulary(tag_names)
            if len(tag_names) != t.shape[1]:
                raise CorpusError(f"tag_names has {len(tag_names)} names for {t.shape[1]} tag columns.")
            self.tags, self.tag_names = t, tag_names
        else:
            self.tags, self.tag_names = None, None
        self._tokens: TokenStream | None = None

    def _check_1d(self, values, name, kind):
        if kind is str:
            # object array of str: fixed-width unicode would cost 4 bytes x longest id per document
            arr = np.empty(len(values), dtype=object)
            arr[:] = [str(v) for v in values]
        else:
            arr = np.asarray(values)
            if arr.dtype == object:
                arr = arr.astype(str)
        if arr.ndim != 1 or arr.shape[0] != self._counts.shape[0]:
            raise CorpusError(
                f"{name} must have one entry per document ({self._counts.shape[0]}); "
                f"got shape {arr.shape}."
            )
        return arr

    # -- basic properties -------------------------------------------------
    @property
    def counts(self) -> sp.csr_matrix:
        """Document-term counts n_dw, CSR, shape (n_docs, n_words)."""
        return self._counts

    @property
    def n_docs(self) -> int:
        return self._counts.shape[0]

    @property
    def n_words(self) -> int:
        """Vocabulary size V."""
        return self._counts.shape[1]

    @property
    def doc_lengths(self) -> np.ndarray:
        """Tokens per document N_d (int64)."""
        m = self._counts
        csum = np.zeros(m.nnz + 1, dtype=np.int64)
        np.cumsum(m.data, dtype=np.int64, out=csum[1:])
        return csum[m.indptr[1:]] - csum[m.indptr[:-1]]

    @property
    def n_tokens(self) -> int:
        return int(self._counts.data.sum(dtype=np.int64))

    def __len__(self) -> int:
        return self.n_docs

    def __repr__(self) -> str:
        return f"Corpus(n_docs={self.n_docs}, n_words={self.n_words}, n_tokens={self.n_tokens})"

    # -- views --------------------------------------------------------------
    def tokens(self) -> TokenStream:
        """The int32 token stream (cached). Tokens within a document are in word-id order."""
        if self._tokens is None:
            m = self._counts
            words = np.repeat(m.indices, m.data).astype(np.int32, copy=False)
            row_tokens = np.zeros(self.n_docs + 1, dtype=np.int64)
            np.cumsum(self.doc_lengths, out=row_tokens[1:])
            self._tokens = TokenStream(row_tokens, words)
        return self._tokens

    # -- identity -----------------------------------------------------------
    def fingerprint(self, of: str = "counts", *, labels: bool = False) -> dict:
        """Sizes and a CRC-32 that tell this corpus from another: what a checkpoint stores to refuse other data.

        Parameters
        ----------
        of : {"counts", "tokens", "lengths"}, default "counts"
            What the CRC covers. ``"counts"``: the CSR arrays (indptr as
            int64, indices, data), read block by block so that an on-disk
            corpus is never loaded whole; keys ``n_docs``, ``n_words``,
            ``n_tokens``, ``nnz``, ``crc32``. This is what every estimator's
            checkpoint stores. ``"tokens"``: the token stream (doc_ptr, words);
            keys ``n_docs``, ``n_words``, ``n_tokens``, ``crc32``: the form in
            LDA's Gibbs and HDP checkpoints written before the counts form, still
            read on resume (:meth:`fingerprint_like`). ``"lengths"``: indptr
            only, the cheap check of a distributed run over an on-disk corpus
            of any size; keys ``n_docs``, ``n_words``, ``nnz``, ``indptr_crc32``.
        labels : bool, default False
            Also fold the document labels (as text) into the CRC (``"counts"`` only).

        Returns
        -------
        dict
            JSON values only; two corpora with equal counts give equal dicts.
        """
        m = self._counts
        indptr = np.ascontiguousarray(m.indptr, dtype=np.int64)
        if of == "lengths":
            return {"n_docs": self.n_docs, "n_words": self.n_words, "nnz": int(indptr[-1]),
                    "indptr_crc32": zlib.crc32(indptr.view(np.uint8))}
        if of == "tokens":
            ts = self.tokens()
            crc = _crc32((ts.doc_ptr, ts.words))
            return {"n_docs": self.n_docs, "n_words": self.n_words, "n_tokens": int(ts.words.shape[0]), "crc32": crc}
        if of != "counts":
            raise ValueError(f"Corpus.fingerprint: 'of' must be 'counts', 'tokens' or 'lengths'; got {of!r}.")
        from harmonium.corpus.ondisk import release_pages  # ondisk imports this module

        crc = _crc32((indptr,))
        block = 1 << 22
        for arr in (m.indices, m.data):
            for lo in range(0, arr.shape[0], block):
                crc = zlib.crc32(np.ascontiguousarray(arr[lo:lo + block]).view(np.uint8), crc)
            release_pages(arr)
        if labels and self.labels is not None:
            crc = zlib.crc32("\x00".join(map(str, self.labels)).encode(), crc)
        return {"n_docs": self.n_docs, "n_words": self.n_words, "n_tokens": int(self.n_tokens),
                "nnz": int(indptr[-1]), "crc32": crc}

    def fingerprint_like(self, saved) -> dict:
        """This corpus's :meth:`fingerprint` in the form of ``saved`` (one read from a checkpoint).

        A checkpoint written before the counts form holds the tokens form (no
        ``nnz``) or the lengths form (``indptr_crc32``); comparing like with like
        lets such checkpoints resume.
        """
        if isinstance(saved, dict) and "indptr_crc32" in saved:
            return self.fingerprint("lengths")
        if isinstance(saved, dict) and "crc32" in saved and "nnz" not in saved:
            return self.fingerprint("tokens")
        return self.fingerprint("counts")

    def document(self, d: int) -> list[tuple[str, int]]:
        """Document d as (term, count) pairs."""
        m = self._counts
        lo, hi = m.indptr[d], m.indptr[d + 1]
        return [(self.vocabulary[int(w)], int(c)) for w, c in zip(m.indices[lo:hi], m.data[lo:hi], strict=True)]

    def __getitem__(self, index) -> Corpus:
        """A new corpus with the selected documents (int array, bool mask or slice)."""
        if isinstance(index, (int, np.integer)):
            index = [int(index)]
        idx = np.arange(self.n_docs)[index]
        return Corpus(
            self._counts[idx],
            self.vocabulary,
            doc_ids=None if self.doc_ids is None else self.doc_ids[idx],
            labels=None if self.labels is None else self.labels[idx],
            features=None if self.features is None else self.features[idx],
            feature_names=self.feature_names,
            tags=None if self.tags is None else self.tags[idx],
            tag_names=self.tag_names,
            _validated=True,
        )

    def with_counts(self, counts) -> Corpus:
        """The same documents and metadata with other counts (same shape)."""
        m = _as_csr_counts(counts, "Corpus.with_counts")
        if m.shape != self._counts.shape:
            raise CorpusError(f"with_counts needs shape {self._counts.shape}; got {m.shape}.")
        return Corpus(
            m, self.vocabulary, doc_ids=self.doc_ids, labels=self.labels, features=self.features,
            feature_names=self.feature_names, tags=self.tags, tag_names=self.tag_names, _validated=True,
        )

    def drop_empty(self) -> Corpus:
        """The corpus without its zero-length documents."""
        return self[self.doc_lengths > 0]

    def empty_documents(self) -> np.ndarray:
        """Indices of documents with no tokens."""
        return np.flatnonzero(self.doc_lengths == 0)

    def check_word_ids(self, vocabulary_size: int, where: str) -> None:
        """Raise naming the first document with a word id >= ``vocabulary_size``."""
        Corpus.check_word_ids_of(self._counts, vocabulary_size, where)

    @staticmethod
    def check_word_ids_of(m: sp.csr_matrix, vocabulary_size: int, where: str) -> None:
        bad = _first_word_beyond(m, vocabulary_size)
        if bad is not None:
            raise CorpusError(f"word id {bad[0]} >= vocabulary size {vocabulary_size} in document {bad[1]} ({where}).")

    def reindex(self, vocabulary: Vocabulary) -> Corpus:
        """The same documents counted over another vocabulary (terms not in it are dropped, silently).

        The primitive under :meth:`match_vocabulary`, which is what a fitted
        model uses on new documents (it warns about dropped tokens); call
        ``reindex`` directly to subset or reorder a vocabulary on purpose.
        """
        if vocabulary == self.vocabulary:
            return self
        return self._reindexed(self._term_mapping(vocabulary), vocabulary)

    def _term_mapping(self, vocabulary: Vocabulary) -> np.ndarray:
        """For each word id of this corpus, its id in ``vocabulary`` or -1."""
        return np.fromiter((vocabulary.get(t, -1) for t in self.vocabulary), dtype=np.int64,
                           count=len(self.vocabulary))

    def _reindexed(self, mapping: np.ndarray, vocabulary: Vocabulary) -> Corpus:
        m = self._counts
        new_cols = mapping[m.indices]
        keep = new_cols >= 0
        rows = np.repeat(np.arange(self.n_docs), np.diff(m.indptr))[keep]
        out = sp.csr_matrix((m.data[keep], (rows, new_cols[keep])), shape=(self.n_docs, len(vocabulary)))
        out.sum_duplicates()
        return self._over(out, vocabulary)

    def _over(self, counts, vocabulary: Vocabulary) -> Corpus:
        """The same documents and metadata with ``counts`` over ``vocabulary``."""
        return Corpus(
            counts, vocabulary, doc_ids=self.doc_ids, labels=self.labels, features=self.features,
            feature_names=self.feature_names, tags=self.tags, tag_names=self.tag_names,
        )

    def match_vocabulary(self, vocabulary: Vocabulary, where: str) -> Corpus:
        """The corpus over a fitted model's ``vocabulary``, matched word by word.

        Every estimator method that scores new documents (``transform``,
        ``perplexity``, document completion, reports, the evaluation
        functions) goes through here, so a corpus built over another
        vocabulary is never read id for id.

        - Same vocabulary: the corpus itself.
        - A corpus without a vocabulary (bare word ids, placeholder terms
          "0".."V-1", see :attr:`Vocabulary.is_range`): its ids are taken to be
          the model's ids; an id beyond the model's vocabulary raises.
        - Otherwise columns are matched by term. Tokens of words the model
          does not know are dropped with a
          :class:`~harmonium.errors.VocabularyMismatchWarning` that gives their
          share; if no token is left, :class:`~harmonium.errors.VocabularyMismatchError`.

        Parameters
        ----------
        vocabulary : Vocabulary
            The model's vocabulary (``model.vocabulary_``).
        where : str
            The caller, named in messages (e.g. ``"LDA.transform"``).

        Raises
        ------
        VocabularyMismatchError
            When no token of a non-empty corpus is in ``vocabulary``, or a
            bare word id is >= ``len(vocabulary)``.
        """
        if vocabulary == self.vocabulary:
            return self
        V = len(vocabulary)
        m = self._counts
        if self.vocabulary.is_range:
            bad = _first_word_beyond(m, V)
            if bad is not None:
                raise VocabularyMismatchError(
                    f"{where}: word id {bad[0]} in document {bad[1]} is beyond the model's vocabulary of "
                    f"{V} words (ids 0..{V - 1}). The corpus has no vocabulary (bare word ids), so its ids are read "
                    "as the model's ids: build it over the model's vocabulary (model.vocabulary_), or give it its "
                    "vocabulary (e.g. the vocabulary file, vocab_path=) so that words are matched by term."
                )
            return self._over(_canonical_csr(m.data, m.indices, m.indptr, (self.n_docs, V)), vocabulary)
        mapping = self._term_mapping(vocabulary)
        unknown_cols = mapping < 0
        if unknown_cols.any():
            col_totals = np.bincount(m.indices, weights=m.data, minlength=self.n_words)
            total = int(col_totals.sum())
            dropped = int(col_totals[unknown_cols].sum())
            if dropped:
                lost = np.flatnonzero(unknown_cols & (col_totals > 0))
                top = lost[np.argsort(-col_totals[lost], kind="stable")[:3]]
                examples = ", ".join(repr(self.vocabulary[int(w)]) for w in top)
                if dropped == total:
                    if vocabulary.is_range:
                        fix = (f"The model was fitted on bare word ids 0..{V - 1} (no vocabulary): pass the documents "
                               "as those word ids (a count matrix, or a corpus read without a vocabulary file).")
                    else:
                        known = ", ".join(repr(t) for t in vocabulary.terms[:3])
                        fix = ("Score documents from the same source as the training corpus (the model's words "
                               f"include {known}); documents in a numeric format (uci, ldac, mm, npz) need the "
                               "vocabulary file the model was trained with (vocab_path=).")
                    raise VocabularyMismatchError(
                        f"{where}: none of the {total} tokens of the corpus is a word of the model's vocabulary "
                        f"({V} words); the corpus was built over another vocabulary (its most frequent words: "
                        f"{examples}). {fix}"
                    )
                share = f"{dropped / total:.1%}" if dropped / total >= 0.001 else "<0.1%"
                warnings.warn(
                    f"{where}: {share} of the corpus's tokens ({dropped} of {total}) are words outside "
                    f"the model's vocabulary and are dropped (most frequent: {examples}).",
                    VocabularyMismatchWarning, stacklevel=4,  # the user's call of transform, perplexity ...
                )
        return self._reindexed(mapping, vocabulary)
