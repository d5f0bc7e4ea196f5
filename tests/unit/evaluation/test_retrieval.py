"""harmonium.evaluation.retrieval: precision at recall levels by cosine similarity (RSM paper's retrieval protocol)."""

import numpy as np
import pytest

from harmonium.errors import InvalidParameterError
from harmonium.evaluation.retrieval import RECALL_LEVELS, precision_at_recall, retrieval_precision

# Hand example. Query 0 = (1, 0), label A; query 1 = (1, 0.2), label B. Database (label): d0 (10, 10) B,
# d1 (0.5, 0.1) A, d2 (3, 1) A, d3 (1, 0.6) B.
# Cosines of query 0: d1 0.981, d2 0.949, d3 0.857, d0 0.707 -> ranking A A B B: 2 relevant, precision 1 at
#   recall 1/2 (1 of 1 retrieved) and at recall 1 (2 of 2).
# Cosines of query 1: d1 1.000 (same direction), d2 0.992, d3 0.942, d0 0.832 -> ranking A A B B, 2 relevant (B):
#   recall 1/2 at rank 3 (precision 1/3), recall 1 at rank 4 (precision 2/4).
# Mean: 2/3 at recall 0.5, 3/4 at recall 1; 10% recall needs ceil(0.2) = 1 relevant document: 2/3.
# Ranking by raw dot product instead (no normalisation) gives query 0: d0 d2 d3 d1 -> 1/2, 2/4; by Euclidean
# distance: d1 d3 d2 d0 -> 1, 2/3. Both differ from the target.
Q = np.array([[1.0, 0.0], [1.0, 0.2]])
DB = np.array([[10.0, 10.0], [0.5, 0.1], [3.0, 1.0], [1.0, 0.6]])
YQ = np.array(["A", "B"])
YD = np.array(["B", "A", "A", "B"])
LEVELS = np.array([0.5, 1.0])
TARGET_PER_QUERY = np.array([[1.0, 1.0], [1 / 3, 0.5]])
TARGET = np.array([2 / 3, 0.75])


def _cosine_ranker(q, db):
    return retrieval_precision(q, db, YQ, YD, recall_levels=LEVELS).per_query


def _dot_ranker(q, db):  # broken twin: does not normalise
    return precision_at_recall(q @ db.T, YQ[:, None] == YD[None, :], LEVELS)


def _euclid_ranker(q, db):  # broken twin: nearest by Euclidean distance
    dist = np.linalg.norm(q[:, None, :] - db[None, :, :], axis=2)
    return precision_at_recall(-dist, YQ[:, None] == YD[None, :], LEVELS)


def _hand_example_holds(ranker) -> bool:
    return bool(np.allclose(ranker(Q, DB), TARGET_PER_QUERY, rtol=0, atol=1e-12))


def test_hand_example():
    res = retrieval_precision(Q, DB, YQ, YD, recall_levels=LEVELS)
    np.testing.assert_allclose(res.per_query, TARGET_PER_QUERY, rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.precision, TARGET, rtol=0, atol=1e-12)
    assert res.precision_at_10 == pytest.approx(2 / 3, abs=1e-12)
    assert res.at(1.0) == pytest.approx(0.75, abs=1e-12)
    assert (res.n_queries, res.n_skipped) == (2, 0)
    np.testing.assert_allclose(res.precision_se, np.std(TARGET_PER_QUERY, axis=0, ddof=1) / np.sqrt(2))


@pytest.mark.parametrize("twin", [_dot_ranker, _euclid_ranker], ids=["dot-product", "euclidean"])
def test_broken_twins_fail_the_hand_example(twin):
    assert _hand_example_holds(_cosine_ranker)
    assert not _hand_example_holds(twin)


def test_cosine_ignores_the_length_of_representations():
    scale = np.array([[10.0], [0.1], [1.0], [1.0]])  # d0 far longer: first by dot product for query 0
    res = retrieval_precision(Q, DB * scale, YQ, YD, recall_levels=LEVELS)
    np.testing.assert_allclose(res.per_query, TARGET_PER_QUERY, rtol=0, atol=1e-12)
    assert not np.allclose(_dot_ranker(Q, DB * scale), TARGET_PER_QUERY)


def test_recall_level_times_relevant_count_rounds_exactly():
    # 25 relevant documents; recall 0.28 needs 7 of them (0.28 * 25 is 7.000000000000001 in floating point).
    # Ranking: relevant at positions 1-6 and 8-26 (an irrelevant one at 7): precision 7 / 8, not 8 / 9.
    assert 0.28 * 25 > 7
    sim = -np.arange(40.0)[None, :]
    rel = np.zeros((1, 40), dtype=bool)
    rel[0, :6] = True
    rel[0, 7:26] = True
    assert rel.sum() == 25
    assert precision_at_recall(sim, rel, np.array([0.28]))[0, 0] == pytest.approx(7 / 8)


def test_ties_rank_in_database_order():
    q = np.ones((1, 2))
    db = np.ones((200, 2))  # all similarities equal; the one relevant document comes last
    res = retrieval_precision(q, db, [1], [0] * 199 + [1], recall_levels=[1.0])
    assert res.precision[0] == pytest.approx(1 / 200)


def test_zero_representation_has_similarity_zero():
    q = np.array([[1.0, 0.0]])
    db = np.array([[0.0, 0.0], [-1.0, 0.0], [0.0, 1.0]])  # similarities 0, -1, 0 -> order d0, d2, d1
    res = retrieval_precision(q, db, ["x"], ["n", "x", "n"], recall_levels=[1.0])
    assert res.precision[0] == pytest.approx(1 / 3)


def test_queries_without_relevant_documents_are_skipped():
    q = np.vstack([Q, [[0.3, 0.7]]])
    res = retrieval_precision(q, DB, ["A", "B", "C"], YD, recall_levels=LEVELS)
    assert (res.n_queries, res.n_skipped) == (2, 1)
    np.testing.assert_array_equal(res.scored, [0, 1])
    np.testing.assert_allclose(res.precision, TARGET, rtol=0, atol=1e-12)


def test_chunking_does_not_change_the_result():
    rng = np.random.default_rng(3)
    q, db = rng.standard_normal((17, 4)), rng.standard_normal((50, 4))
    yq, yd = rng.integers(0, 3, 17), rng.integers(0, 3, 50)
    a = retrieval_precision(q, db, yq, yd, chunk_elements=1)
    b = retrieval_precision(q, db, yq, yd)
    np.testing.assert_array_equal(a.per_query, b.per_query)
    assert a.recall_levels.tolist() == list(RECALL_LEVELS)


def test_matches_scikit_learn_precision_recall_curve():
    metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(7)
    q, db = rng.standard_normal((12, 5)), rng.standard_normal((80, 5))
    yq, yd = rng.integers(0, 4, 12), rng.integers(0, 4, 80)
    levels = np.array([0.05, 0.1, 0.3, 0.5, 0.9, 1.0])
    res = retrieval_precision(q, db, yq, yd, recall_levels=levels)
    sims = metrics.pairwise.cosine_similarity(q, db)
    for i in range(q.shape[0]):
        prec, rec, _ = metrics.precision_recall_curve(yd == yq[i], sims[i])
        prec, rec = prec[:-1], rec[:-1]  # the last point is scikit-learn's (recall 0, precision 1) sentinel
        # points run from the lowest threshold to the highest: the first point of the ranking reaching recall r
        # is the last one (highest threshold) with rec >= r
        want = [prec[np.flatnonzero(rec >= r - 1e-12)[-1]] for r in levels]
        np.testing.assert_allclose(res.per_query[i], want, rtol=0, atol=1e-12)


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"queries": np.array([[np.nan, 1.0]])}, "queries"),
        ({"queries": np.ones(3)}, "queries"),
        ({"database": np.ones((4, 3))}, "'queries' and 'database'"),
        ({"database": np.zeros((0, 2))}, "database"),
        ({"query_labels": ["A"]}, "query_labels"),
        ({"database_labels": ["A", "B"]}, "database_labels"),
        ({"recall_levels": [0.5, 0.2]}, "recall_levels"),
        ({"recall_levels": [0.0, 1.0]}, "recall_levels"),
        ({"recall_levels": [1.5]}, "recall_levels"),
        ({"recall_levels": []}, "recall_levels"),
        ({"chunk_elements": 0}, "chunk_elements"),
        ({"query_labels": ["X", "Y"]}, "database_labels"),
    ],
)
def test_bad_input_gets_one_error_naming_the_argument(kwargs, argument):
    args = {"queries": Q, "database": DB, "query_labels": YQ, "database_labels": YD, **kwargs}
    with pytest.raises(InvalidParameterError, match=argument):
        retrieval_precision(**args)


def test_result_at_unknown_level_says_how_to_get_it():
    res = retrieval_precision(Q, DB, YQ, YD, recall_levels=LEVELS)
    with pytest.raises(InvalidParameterError, match="recall_levels"):
        res.at(0.3)


def test_precision_at_recall_refuses_a_query_without_relevant_documents():
    with pytest.raises(InvalidParameterError, match="row 1 of 'relevant'"):
        precision_at_recall(np.zeros((2, 3)), np.array([[True, False, False], [False, False, False]]),
                            np.array([1.0]))
    with pytest.raises(InvalidParameterError, match="one \\(m, n\\) shape"):
        precision_at_recall(np.zeros((2, 3)), np.ones((2, 4), dtype=bool), np.array([1.0]))
