"""Document retrieval by latent representation: precision at fixed recall levels.

The document-retrieval experiment of Salakhutdinov & Hinton (2009), "Replicated
Softmax: an Undirected Topic Model" (NIPS 22), and its precision-recall figure:
every test document is a query, the training documents are the database, the
database is ranked by the cosine of the angle between the query's and each
document's latent representation (RSM: p(h | v); LDA: the topic proportions
theta), a retrieved document is relevant when it carries the query's class label,
and precision is plotted against recall, averaged over all queries. The same
protocol is used by Hinton & Salakhutdinov (2006, Science 313, "Reducing the
dimensionality of data with neural networks"). Paper text:
https://www.readkong.com/page/replicated-softmax-an-undirected-topic-model-3260829 ;
the protocol in Hinton's NIPS 2007 tutorial:
https://www.cs.toronto.edu/~hinton/nipstutorial/nipstut3_files/slide0335.htm .

Definitions used here, for one query q with R_q relevant database documents
(same label) and a recall level r in (0, 1]:

* n_r = ceil(r R_q) relevant documents must be retrieved (at least one);
* rank_r = the position (1-based) in the ranking at which the n_r-th relevant
  document appears;
* precision at recall r = n_r / rank_r (not interpolated: the precision at the
  first point of the ranking where recall reaches r).

The curve reported is the mean over queries of the per-query precision at each
r; queries whose label no database document carries (R_q = 0) have no recall
and are left out (their number is reported). The ranking sorts by decreasing
cosine similarity; a representation of zero length has similarity 0 with
everything; tied similarities are ranked in database order (a stable sort), so
the result is deterministic. numpy only: scikit-learn is not a dependency of
the library (its ``precision_recall_curve`` gives the same numbers on tie-free
data; tests/unit/test_retrieval.py checks this).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harmonium.errors import InvalidParameterError

__all__ = ["RECALL_LEVELS", "RetrievalResult", "precision_at_recall", "retrieval_precision"]

#: Recall levels of the precision-recall curves (log-spaced as in the RSM paper's figure, 0.1% to 100%).
RECALL_LEVELS = (0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.1, 0.128, 0.256, 0.512, 1.0)


@dataclass(frozen=True)
class RetrievalResult:
    """Precision at fixed recall levels, averaged over queries.

    Attributes
    ----------
    recall_levels : (L,) array
    precision : (L,) array
        Mean over the scored queries of the precision at each recall level.
    precision_se : (L,) array
        Standard error of that mean (standard deviation over queries / sqrt(n)).
    per_query : (n_scored, L) array
        Each scored query's precision (for paired comparisons between representations).
    precision_at_10 : float
        Mean precision at 10% recall (the summary figure of issue 17).
    precision_at_10_se : float
    n_queries : int
        Queries scored (those with at least one relevant database document).
    n_skipped : int
        Queries left out because no database document carries their label.
    scored : (n_scored,) array of int
        Indices of the scored queries in the ``queries`` passed.
    """

    recall_levels: np.ndarray
    precision: np.ndarray
    precision_se: np.ndarray
    per_query: np.ndarray
    precision_at_10: float
    precision_at_10_se: float
    n_queries: int
    n_skipped: int
    scored: np.ndarray

    def at(self, recall: float) -> float:
        """Mean precision at one of the ``recall_levels``."""
        hit = np.flatnonzero(np.isclose(self.recall_levels, recall))
        if hit.size == 0:
            raise InvalidParameterError(f"RetrievalResult.at: recall {recall!r} is not one of the recall levels "
                                        f"{self.recall_levels.tolist()}; compute it by passing it in recall_levels.")
        return float(self.precision[hit[0]])


def _matrix(x, name: str) -> np.ndarray:
    try:
        a = np.asarray(x.toarray() if hasattr(x, "toarray") else x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError(f"The '{name}' parameter of retrieval_precision must be a numeric (n, F) "
                                    f"array; it could not be read as one ({exc}).") from None
    if a.ndim != 2 or a.shape[0] == 0 or a.shape[1] == 0:
        raise InvalidParameterError(f"The '{name}' parameter of retrieval_precision must be a 2-D array with at "
                                    f"least one row and one column (one representation a row). Got shape {a.shape}.")
    if not np.all(np.isfinite(a)):
        bad = int(np.argwhere(~np.isfinite(a))[0, 0])
        raise InvalidParameterError(f"The '{name}' parameter of retrieval_precision must be finite; row {bad} holds "
                                    "NaN or inf (a diverged model?).")
    return a


def _labels(y, n: int, name: str, rows: str) -> np.ndarray:
    a = np.asarray(y)
    if a.ndim != 1 or a.shape[0] != n:
        raise InvalidParameterError(f"The '{name}' parameter of retrieval_precision must hold one label per row "
                                    f"of '{rows}' ({n}). Got shape {a.shape}.")
    return a


def _levels(levels) -> np.ndarray:
    try:
        r = np.asarray(levels, dtype=np.float64)
    except (TypeError, ValueError):
        r = np.empty(0)
    if (r.ndim != 1 or r.size == 0 or not np.all(np.isfinite(r)) or np.any(r <= 0) or np.any(r > 1)
            or np.any(np.diff(r) <= 0)):
        raise InvalidParameterError("The 'recall_levels' parameter of retrieval_precision must be a non-empty, "
                                    f"strictly increasing sequence of floats in (0, 1]. Got {levels!r}.")
    return r


def _unit_rows(a: np.ndarray) -> np.ndarray:
    norm = np.linalg.norm(a, axis=1, keepdims=True)
    return a / np.where(norm > 0, norm, 1.0)  # a zero row stays zero: similarity 0 with everything


def precision_at_recall(similarity: np.ndarray, relevant: np.ndarray, recall_levels: np.ndarray) -> np.ndarray:
    """Per-query precision at each recall level from a similarity matrix (the ranking step).

    Parameters
    ----------
    similarity : (m, n) array
        Similarity of each query to each database document (larger ranks first;
        ties in database order).
    relevant : (m, n) bool array
        Whether each database document is relevant to each query. Every row must
        hold at least one True.
    recall_levels : (L,) array of floats in (0, 1]

    Returns
    -------
    (m, L) array
        n_r / rank_r as defined in the module docstring.
    """
    similarity, relevant = np.asarray(similarity, dtype=np.float64), np.asarray(relevant, dtype=bool)
    if similarity.ndim != 2 or relevant.shape != similarity.shape:
        raise InvalidParameterError(f"precision_at_recall needs 'similarity' and 'relevant' of one (m, n) shape; got "
                                    f"{similarity.shape} and {relevant.shape}.")
    if not np.all(relevant.any(axis=1)):
        row = int(np.flatnonzero(~relevant.any(axis=1))[0])
        raise InvalidParameterError(f"precision_at_recall: row {row} of 'relevant' holds no relevant document, so "
                                    "recall is undefined there; leave such queries out.")
    order = np.argsort(-similarity, axis=1, kind="stable")
    hits = np.take_along_axis(relevant, order, axis=1)
    cum = np.cumsum(hits, axis=1, dtype=np.int64)
    n_rel = cum[:, -1]
    # ceil(r R) with r R rounded first: 0.28 * 25 is 7.000000000000001 in floating point, which must give 7, not 8
    need = np.maximum(1, np.ceil(np.round(recall_levels[None, :] * n_rel[:, None], 9))).astype(np.int64)
    out = np.empty(need.shape, dtype=np.float64)
    for j in range(need.shape[1]):
        # each row of cum is nondecreasing: the positions before the first cum >= need are those with cum < need
        rank = np.sum(cum < need[:, j:j + 1], axis=1) + 1
        out[:, j] = need[:, j] / rank
    return out


def retrieval_precision(queries, database, query_labels, database_labels, *, recall_levels=RECALL_LEVELS,
                        chunk_elements: int = 1 << 22) -> RetrievalResult:
    """Precision at fixed recall levels for retrieval by cosine similarity (Salakhutdinov & Hinton 2009).

    Each query row is compared with every database row by the cosine of the
    angle between them, the database is ranked by decreasing similarity, a
    database document is relevant when its label equals the query's, and the
    precision at each recall level (module docstring) is averaged over queries.

    Parameters
    ----------
    queries : (m, F) array or sparse matrix
        Latent representations of the query documents (e.g. the test set).
    database : (n, F) array or sparse matrix
        Representations of the documents retrieved from (e.g. the training set).
    query_labels : (m,) array
    database_labels : (n,) array
        Class labels (e.g. Debian sections); relevance is equality.
    recall_levels : sequence of float in (0, 1], strictly increasing, default ``RECALL_LEVELS``
    chunk_elements : int, default 2**22
        Queries are ranked in blocks of about this many similarities (memory).

    Returns
    -------
    RetrievalResult

    Examples
    --------
    >>> import numpy as np
    >>> q = np.array([[1.0, 0.0]])
    >>> db = np.array([[0.5, 0.1], [3.0, 1.0], [1.0, 0.6], [10.0, 10.0]])
    >>> res = retrieval_precision(q, db, ["a"], ["a", "a", "b", "b"], recall_levels=[0.5, 1.0])
    >>> res.precision.tolist()
    [1.0, 1.0]
    """
    Q = _matrix(queries, "queries")
    D = _matrix(database, "database")
    if Q.shape[1] != D.shape[1]:
        raise InvalidParameterError(f"The 'queries' and 'database' parameters of retrieval_precision must have the "
                                    f"same number of columns (one latent space). Got {Q.shape[1]} and {D.shape[1]}.")
    yq = _labels(query_labels, Q.shape[0], "query_labels", "queries")
    yd = _labels(database_labels, D.shape[0], "database_labels", "database")
    levels = _levels(recall_levels)
    if isinstance(chunk_elements, bool) or not isinstance(chunk_elements, (int, np.integer)) or chunk_elements < 1:
        raise InvalidParameterError(f"The 'chunk_elements' parameter of retrieval_precision must be an int >= 1. "
                                    f"Got {chunk_elements!r}.")
    _, yq_i, yd_i = _codes(yq, yd)
    has_rel = np.isin(yq_i, yd_i)
    scored = np.flatnonzero(has_rel)
    if scored.size == 0:
        raise InvalidParameterError("retrieval_precision: no query label occurs among 'database_labels', so no "
                                    "query has a relevant document; pass labels from the same label set.")
    all_levels = np.union1d(levels, [0.1])
    Qn, Dn = _unit_rows(Q[scored]), _unit_rows(D)
    step = max(1, int(chunk_elements) // D.shape[0])
    per = np.empty((scored.size, all_levels.size))
    for lo in range(0, scored.size, step):
        S = Qn[lo:lo + step] @ Dn.T
        rel = yq_i[scored[lo:lo + step], None] == yd_i[None, :]
        per[lo:lo + step] = precision_at_recall(S, rel, all_levels)
    keep = np.isin(all_levels, levels)
    j10 = int(np.flatnonzero(all_levels == 0.1)[0])
    n = scored.size
    se = per.std(axis=0, ddof=1) / np.sqrt(n) if n > 1 else np.full(all_levels.size, np.nan)
    mean = per.mean(axis=0)
    return RetrievalResult(recall_levels=levels, precision=mean[keep], precision_se=se[keep], per_query=per[:, keep],
                           precision_at_10=float(mean[j10]), precision_at_10_se=float(se[j10]), n_queries=int(n),
                           n_skipped=int(Q.shape[0] - n), scored=scored)


def _codes(yq: np.ndarray, yd: np.ndarray):
    """Integer codes of both label arrays over their union (labels of any comparable type)."""
    try:
        values, inv = np.unique(np.concatenate([yq.astype(object), yd.astype(object)]), return_inverse=True)
    except TypeError as exc:
        raise InvalidParameterError(f"The 'query_labels' and 'database_labels' parameters of retrieval_precision "
                                    f"must hold labels of one comparable type (str or int). Got an error: {exc}."
                                    ) from None
    return values, inv[:yq.shape[0]], inv[yq.shape[0]:]
