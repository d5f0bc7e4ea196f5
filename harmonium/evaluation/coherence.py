"""Topic quality: coherence against a reference corpus, topic diversity, and top words by relevance.

Coherence of a topic's top words v_1 .. v_N (by decreasing phi_kw), from
co-occurrence probabilities in a reference corpus. A *context* is a document
(the default for UMass, UCI and NPMI) or a boolean sliding window of
``window_size`` tokens over each text (the default of C_V, 110). With D
contexts, P(w) = D(w) / D and P(w_i, w_j) = D(w_i, w_j) / D, where D(.)
counts the contexts that contain the words. ``eps`` is added to the joint
probability.

``"u_mass"`` (Mimno et al. 2011, eq. 1)
    mean over i > j of log( (P(v_i, v_j) + eps) / P(v_j) ). Mimno et al. sum
    the N (N - 1) / 2 terms and add 1 to the count: eps = 1 / D, our default;
    the sum is ``aggregate="sum"``.
``"c_uci"`` (Newman et al. 2010)
    mean over i < j of PMI(v_i, v_j) = log( (P(v_i, v_j) + eps) / (P(v_i) P(v_j)) ).
``"c_npmi"`` (Bouma 2009; Aletras & Stevenson 2013)
    mean over i < j of NPMI = PMI / ( -log(P(v_i, v_j) + eps) ), in [-1, 1].
``"c_v"`` (Röder, Both & Hinneburg 2015)
    For each i the context vector u_i = (NPMI(v_i, v_j))_{j=1..N} (NPMI(v, v) = 1),
    and u_* = sum_i u_i; the topic's value is the mean over i of cos(u_i, u_*).
    Boolean sliding windows of 110 tokens by default.

Co-occurrences are counted for the union of the topics' top words only: a
sparse (contexts x U) incidence matrix B and the U x U product B^T B. Window
contexts follow gensim (``gensim.topic_coherence``): a text of L tokens gives
max(1, L - window_size + 1) windows, a shorter text one window. eps defaults to
1e-12 for the PMI-based measures, as in gensim and Palmetto; gensim's UMass also
uses 1e-12 (not Mimno's 1 / D) and averages. Words absent from the reference
make the pairs they are in, and so the topic, NaN.

Agreement with gensim 4.4 (``CoherenceModel``, tested): UMass on a bag-of-words
corpus agrees to 1e-15 with ``eps=1e-12``; C_UCI, C_NPMI and C_V agree to 1e-15
on texts in which no token repeats within a window. Where tokens repeat,
gensim's windows undercount: its ``WordOccurrenceAccumulator`` slides each
window by clearing the token that left at the left edge even when another copy
of it is still inside (text [a, a, b], window 2: gensim finds a in one window
and (a, b) in none; both windows contain a and the second contains b). Our
counts are checked against brute-force enumeration of the windows.

``topic_diversity`` (Dieng, Ruiz & Blei 2020): the fraction of unique words
among the top-N words of all topics. ``relevance`` (Sievert & Shirley 2014,
LDAvis): lambda log phi_kw + (1 - lambda) log(phi_kw / p_w).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from harmonium._validation import NONE, Interval, Options, validate_params
from harmonium.corpus.corpus import Corpus, TokenStream
from harmonium.errors import CorpusError, InvalidParameterError

MEASURES = ("u_mass", "c_uci", "c_npmi", "c_v")
_DEFAULT_WINDOW = {"u_mass": None, "c_uci": None, "c_npmi": None, "c_v": 110}


class CoherenceResult(NamedTuple):
    """Coherence per topic.

    Attributes
    ----------
    per_topic : (K,) float64
    mean : float
        Mean over topics (NaN topics ignored).
    measure : str
    top_words : list of lists
        The words scored per topic (terms, or word ids when there is no vocabulary).
    window_size : int or None
        None: documents are the contexts.
    n_contexts : int
        Documents or windows in the reference.
    """

    per_topic: np.ndarray
    mean: float
    measure: str
    top_words: list
    window_size: int | None
    n_contexts: int


class CoOccurrence(NamedTuple):
    """Context counts of the relevant words: ``counts[i, j]`` = D(w_i, w_j), diagonal D(w_i)."""

    counts: np.ndarray
    n_contexts: int
    index: dict


def top_word_ids(topic_word: np.ndarray, top_n: int) -> np.ndarray:
    """(K, top_n) word ids by decreasing phi_kw (ties by word id)."""
    phi = np.asarray(topic_word)
    return np.argsort(-phi, axis=1, kind="stable")[:, :top_n]


def _topic_keys(topics, top_n, where) -> list[list]:
    """The top words of each topic as terms (str) when a vocabulary is known, else word ids."""
    vocabulary = getattr(topics, "vocabulary_", None)
    if hasattr(topics, "topic_word_"):
        topics = topics.topic_word_
    if isinstance(topics, np.ndarray) and topics.dtype.kind in "iu":
        topics = topics.tolist()  # (K, N) word ids, e.g. from top_word_ids
    if isinstance(topics, np.ndarray) or (isinstance(topics, Sequence) and topics and
                                          isinstance(topics[0], np.ndarray) and topics[0].dtype.kind == "f"):
        phi = np.asarray(topics, dtype=np.float64)
        if phi.ndim != 2:
            raise InvalidParameterError(f"The topics given to {where} must be a (K, V) array; got shape {phi.shape}.")
        ids = top_word_ids(phi, top_n)
        if vocabulary is not None:
            return [[vocabulary[int(w)] for w in row] for row in ids]
        return [[int(w) for w in row] for row in ids]
    if not isinstance(topics, Sequence) or not topics:
        raise InvalidParameterError(
            f"{where} needs a model with topic_word_, a (K, V) array or lists of top words; "
            f"got {type(topics).__name__}."
        )
    keys = []
    for k, t in enumerate(topics):
        row = list(t)[:top_n]
        if len(row) < 2:
            raise InvalidParameterError(f"topic {k} has {len(row)} top words; coherence needs at least 2 ({where}).")
        keys.append([_term_or_id(w, k, where) for w in row])
    return keys


def _term_or_id(w, k: int, where: str):
    """A term, a word id, or the term of a ``(term, weight)`` pair as ``top_words()`` returns."""
    if isinstance(w, tuple) and len(w) == 2 and isinstance(w[0], str):
        return w[0]
    if isinstance(w, str):
        return w
    if isinstance(w, (int, np.integer)):
        return int(w)
    raise InvalidParameterError(
        f"topic {k} holds {w!r}; {where} takes terms, word ids or (term, weight) pairs as from top_words()."
    )


def _relevant(keys: list[list]) -> dict:
    index: dict = {}
    for row in keys:
        for w in row:
            index.setdefault(w, len(index))
    return index


def _window_incidence(seqs, U: int, window_size: int) -> tuple[sp.csr_matrix, int]:
    """Boolean (windows x U) incidence of the relevant words; ``seqs`` are arrays of relevant ids (-1 elsewhere)."""
    lengths = np.array([len(s) for s in seqs], dtype=np.int64)
    n_win = np.maximum(1, lengths - window_size + 1)
    win_start = np.concatenate([[0], np.cumsum(n_win)])
    flat = np.concatenate(seqs).astype(np.int64) if seqs else np.zeros(0, dtype=np.int64)
    doc = np.repeat(np.arange(len(seqs)), lengths)
    pos = np.arange(flat.shape[0]) - np.repeat(np.concatenate([[0], np.cumsum(lengths)])[:-1], lengths)
    keep = flat >= 0
    flat, doc, pos = flat[keep], doc[keep], pos[keep]
    # the token at position i lies in windows max(0, i - s + 1) .. min(i, n_win - 1) of its text
    lo = np.maximum(0, pos - window_size + 1)
    span = np.minimum(pos, n_win[doc] - 1) - lo + 1
    first = np.repeat(win_start[doc] + lo, span)
    rows = first + np.arange(int(span.sum())) - np.repeat(np.concatenate([[0], np.cumsum(span)])[:-1], span)
    B = sp.csr_matrix((np.ones(rows.shape[0], dtype=np.int8), (rows, np.repeat(flat, span))),
                      shape=(int(win_start[-1]), U))
    B.sum_duplicates()
    B.data[:] = 1
    return B, int(win_start[-1])


def _window_counts(seqs, U: int, window_size: int, chunk_entries: int = 1 << 22) -> tuple[np.ndarray, int]:
    """B^T B and the number of windows, over chunks of texts (B has up to window_size entries a token)."""
    counts = np.zeros((U, U))
    n_contexts = 0
    start = 0
    while start < len(seqs):
        stop, entries = start, 0
        while stop < len(seqs) and (stop == start or entries < chunk_entries):
            entries += int(np.count_nonzero(seqs[stop] >= 0)) * window_size
            stop += 1
        B, n = _window_incidence(seqs[start:stop], U, window_size)
        B = B.astype(np.float64)
        counts += (B.T @ B).toarray()
        n_contexts += n
        start = stop
    return counts, n_contexts


def _sequences(reference, index: dict, where: str) -> list[np.ndarray]:
    """Texts as arrays of relevant ids (-1 for other tokens)."""
    if isinstance(reference, TokenStream):
        lut = _id_lookup(index, int(reference.words.max()) + 1 if reference.words.size else 0, where)
        mapped = lut[reference.words] if reference.words.size else reference.words.astype(np.int64)
        return [mapped[reference.doc_ptr[d]:reference.doc_ptr[d + 1]] for d in range(len(reference.doc_ptr) - 1)]
    out = []
    get = index.get
    for text in reference:
        if isinstance(text, str):
            raise CorpusError(f"{where}: a reference text must be a sequence of tokens, not a string; tokenize it.")
        if isinstance(text, np.ndarray) and text.dtype.kind in "iu":
            lut = _id_lookup(index, int(text.max()) + 1 if text.size else 0, where)
            out.append(lut[text] if text.size else text.astype(np.int64))
        else:
            out.append(np.fromiter((get(t, -1) for t in text), dtype=np.int64))
    return out


def _id_lookup(index: dict, size: int, where: str) -> np.ndarray:
    ids = [k for k in index if not isinstance(k, str)]
    if len(ids) != len(index):
        raise CorpusError(f"{where}: the topics are given as terms but the reference texts as word ids; "
                          "pass texts of terms, or topics as word ids.")
    lut = np.full(max(size, max(ids) + 1 if ids else 0), -1, dtype=np.int64)
    for k in ids:
        lut[k] = index[k]
    return lut


def cooccurrence(reference, words: list, *, window_size: int | None = None, where: str = "cooccurrence"
                 ) -> CoOccurrence:
    """Document (or window) co-occurrence counts of ``words`` in ``reference``.

    Parameters
    ----------
    reference : Corpus, TokenStream, or sequence of token sequences
        A Corpus gives document contexts only (its tokens are stored in word-id
        order, so windows over it would be meaningless). Texts (lists of terms,
        or int arrays of word ids in reading order) give documents or windows.
    words : list of str or int
        Terms are matched through the Corpus vocabulary (or the texts' tokens);
        ints are column / word ids.
    window_size : int or None
        None: each document is one context.
    """
    index = {w: i for i, w in enumerate(words)}
    U = len(index)
    if isinstance(reference, Corpus):
        if window_size is not None:
            raise CorpusError(
                f"{where}: sliding windows need the tokens in reading order, which a Corpus does not keep; pass the "
                "texts (lists of tokens, e.g. [tokenizer.tokenize(t) for t in raw_texts]) or window_size=None."
            )
        cols = np.array([reference.vocabulary.get(w, -1) if isinstance(w, str) else w for w in words],
                        dtype=np.int64)
        if np.any(cols >= reference.n_words):
            raise CorpusError(f"{where}: word id {int(cols.max())} >= vocabulary size {reference.n_words} of the "
                              "reference corpus.")
        present = cols >= 0
        B = sp.csr_matrix((reference.n_docs, U), dtype=np.int8)
        if present.any():
            sub = reference.counts[:, cols[present]]
            sub.data[:] = 1
            place = sp.csr_matrix((np.ones(int(present.sum())), (np.arange(int(present.sum())),
                                   np.flatnonzero(present))), shape=(int(present.sum()), U))
            B = (sub.astype(np.float64) @ place).tocsr()
        n_contexts = reference.n_docs
    else:
        seqs = _sequences(reference, index, where)
        if window_size is None:
            lengths = np.array([len(s) for s in seqs], dtype=np.int64)
            flat = np.concatenate(seqs) if seqs else np.zeros(0, dtype=np.int64)
            doc = np.repeat(np.arange(len(seqs)), lengths)
            keep = flat >= 0
            B = sp.csr_matrix((np.ones(int(keep.sum()), dtype=np.int8), (doc[keep], flat[keep])),
                              shape=(len(seqs), U))
            B.sum_duplicates()
            B.data[:] = 1
            n_contexts = len(seqs)
        else:
            counts, n_contexts = _window_counts(seqs, U, int(window_size))
            return CoOccurrence(counts, int(n_contexts), index)
    B = B.astype(np.float64)
    counts = (B.T @ B).toarray()
    return CoOccurrence(counts, int(n_contexts), index)


def _pair_measures(co: np.ndarray, n: int, eps: float):
    """(PMI, NPMI) matrices among the relevant words, NaN where a word never occurs."""
    p = np.diag(co) / n
    joint = co / n + eps
    with np.errstate(divide="ignore", invalid="ignore"):
        pmi = np.log(joint) - np.log(p[:, None] * p[None, :])
        npmi = pmi / -np.log(joint)
    absent = p == 0
    pmi[absent, :] = pmi[:, absent] = np.nan
    npmi[absent, :] = npmi[:, absent] = np.nan
    return pmi, npmi


def coherence(
    topics,
    reference,
    *,
    measure: str = "c_npmi",
    top_n: int = 10,
    window_size: int | None | str = "default",
    eps: float | None = None,
    aggregate: str = "mean",
) -> CoherenceResult:
    """Coherence of each topic's top words in a reference corpus.

    Parameters
    ----------
    topics : model with ``topic_word_`` (and ``vocabulary_``), (K, V) array, or lists of top words
        Lists hold terms, word ids or ``(term, weight)`` pairs (``model.top_words(n)``), most
        probable first.
    reference : Corpus, TokenStream, or sequence of token sequences
        See :func:`~harmonium.evaluation.coherence.cooccurrence`. Sliding windows need texts in reading order.
    measure : {"u_mass", "c_uci", "c_npmi", "c_v"}, default "c_npmi"
    top_n : int, default 10
        N, top words per topic.
    window_size : int, None or "default"
        Boolean sliding window over the texts; None makes each document one
        context. "default": 110 for ``c_v``, documents otherwise.
    eps : float, optional
        Added to the joint probability. Default 1 / D for ``u_mass`` (Mimno's
        +1 count), 1e-12 otherwise.
    aggregate : {"mean", "sum"}, default "mean"
        How a topic's pair terms are combined (``u_mass``, ``c_uci``,
        ``c_npmi``); Mimno et al. sum.

    Returns
    -------
    CoherenceResult

    Examples
    --------
    >>> res = coherence(lda, corpus, measure="u_mass", top_n=10)  # doctest: +SKIP
    >>> res.per_topic, res.mean  # doctest: +SKIP
    """
    validate_params(
        "coherence",
        {"measure": measure, "top_n": top_n, "window_size": window_size, "eps": eps, "aggregate": aggregate},
        {"measure": [Options(MEASURES)], "top_n": [Interval("int", 2, None)],
         "window_size": [NONE, Options(("default",)), Interval("int", 1, None)],
         "eps": [NONE, Interval("real", 0, None)], "aggregate": [Options(("mean", "sum"))]},
    )
    if window_size == "default":
        window_size = _DEFAULT_WINDOW[measure]
    keys = _topic_keys(topics, top_n, "coherence")
    index = _relevant(keys)
    co = cooccurrence(reference, list(index), window_size=window_size, where="coherence")
    n = co.n_contexts
    if n == 0:
        raise CorpusError("coherence: the reference corpus is empty.")
    if eps is None:
        eps = 1.0 / n if measure == "u_mass" else 1e-12
    pmi, npmi = _pair_measures(co.counts, n, eps)
    occ = np.diag(co.counts)
    values = np.empty(len(keys))
    for t, row in enumerate(keys):
        ids = np.array([index[w] for w in row])
        m = len(ids)
        if measure == "c_v":
            M = npmi[np.ix_(ids, ids)]
            total = M.sum(axis=0)
            with np.errstate(invalid="ignore", divide="ignore"):
                cos = (M @ total) / (np.linalg.norm(M, axis=1) * np.linalg.norm(total))
            values[t] = cos.mean()
            continue
        i, j = np.tril_indices(m, -1)  # i > j: v_i after v_j in the ranking
        if measure == "u_mass":
            with np.errstate(divide="ignore", invalid="ignore"):
                terms = np.log(co.counts[ids[i], ids[j]] / n + eps) - np.log(occ[ids[j]] / n)
            terms[occ[ids[j]] == 0] = np.nan
        elif measure == "c_uci":
            terms = pmi[ids[i], ids[j]]
        else:
            terms = npmi[ids[i], ids[j]]
        values[t] = terms.mean() if aggregate == "mean" else terms.sum()
    finite = values[np.isfinite(values)]
    mean = float(finite.mean()) if finite.size else float("nan")
    return CoherenceResult(values, mean, measure, keys, window_size, n)


def topic_diversity(topic_word, top_n: int = 25) -> float:
    """Fraction of unique words among the top-``top_n`` words of all topics (Dieng et al. 2020).

    1 means no two topics share a top word; 1 / K means all topics have the same top words.
    """
    validate_params("topic_diversity", {"top_n": top_n}, {"top_n": [Interval("int", 1, None)]})
    phi = np.asarray(getattr(topic_word, "topic_word_", topic_word), dtype=np.float64)
    if phi.ndim != 2:
        raise InvalidParameterError(f"The topics given to topic_diversity must be a (K, V) array; got {phi.shape}.")
    ids = top_word_ids(phi, top_n)
    return float(np.unique(ids).size / ids.size)


def _word_probabilities(word_freq, V: int, where: str) -> np.ndarray:
    if isinstance(word_freq, Corpus):
        word_freq = np.asarray(word_freq.counts.sum(axis=0)).ravel()
    p = np.asarray(word_freq, dtype=np.float64).ravel()
    if p.shape != (V,) or np.any(p < 0) or not np.all(np.isfinite(p)) or p.sum() <= 0:
        raise InvalidParameterError(
            f"The 'word_freq' parameter of {where} must be {V} non-negative word frequencies (or a Corpus over the "
            f"topics' vocabulary); got shape {p.shape}."
        )
    return p / p.sum()


def relevance(topic_word, word_freq, lambda_: float = 0.6) -> np.ndarray:
    """Relevance of every word to every topic, (K, V) (Sievert & Shirley 2014, eq. 1).

    r(w, k | lambda) = lambda log phi_kw + (1 - lambda) log(phi_kw / p_w),
    with p_w the word's share of the corpus tokens. lambda = 1 ranks by
    phi_kw; lambda = 0 by lift; LDAvis's user study found 0.6 best.

    Parameters
    ----------
    topic_word : (K, V) array or model with ``topic_word_``
    word_freq : (V,) counts or probabilities, or a Corpus
    lambda_ : float in [0, 1], default 0.6
    """
    validate_params("relevance", {"lambda_": lambda_}, {"lambda_": [Interval("real", 0, 1)]})
    phi = np.asarray(getattr(topic_word, "topic_word_", topic_word), dtype=np.float64)
    if phi.ndim != 2:
        raise InvalidParameterError(f"The topics given to relevance must be a (K, V) array; got {phi.shape}.")
    p = _word_probabilities(word_freq, phi.shape[1], "relevance")
    with np.errstate(divide="ignore", invalid="ignore"):
        log_phi = np.log(phi)
        return lambda_ * log_phi + (1.0 - lambda_) * (log_phi - np.log(p)[None, :])


def top_relevant_words(topic_word, word_freq, lambda_: float = 0.6, top_n: int = 10) -> np.ndarray:
    """(K, top_n) word ids by decreasing relevance (ties by word id); see :func:`relevance`."""
    validate_params("top_relevant_words", {"top_n": top_n}, {"top_n": [Interval("int", 1, None)]})
    r = relevance(topic_word, word_freq, lambda_)
    r = np.where(np.isnan(r), -np.inf, r)
    return np.argsort(-r, axis=1, kind="stable")[:, :top_n]
