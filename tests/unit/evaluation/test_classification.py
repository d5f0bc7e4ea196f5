"""Latent-projection classification: our 1-NN, logistic regression and LSI against scikit-learn; the experiment
on a corpus whose labels are its dominant topics, and a label-shuffled negative control."""

from __future__ import annotations

import numpy as np
import pytest

from harmonium.corpus import Corpus
from harmonium.errors import CorpusError, InvalidParameterError
from harmonium.evaluation import (
    LSI,
    LogisticRegression,
    accuracy_table,
    latent_classification,
    nearest_neighbour_predict,
)
from tests.conftest import lda_corpus

sklearn = pytest.importorskip("sklearn")
Z_CRIT = 3.89  # two-sided alpha = 1e-4 per assertion


def _blobs(seed, n=240, F=6, n_classes=4):
    rng = np.random.default_rng(seed)
    centres = rng.normal(0, 1.5, size=(n_classes, F))
    y = rng.integers(0, n_classes, size=n)
    return centres[y] + rng.normal(size=(n, F)), np.array([f"c{v}" for v in y])


@pytest.mark.parametrize("metric", ["cosine", "euclidean"])
def test_nearest_neighbour_matches_sklearn(metric):
    from sklearn.neighbors import KNeighborsClassifier

    X, y = _blobs(0)
    ref = KNeighborsClassifier(n_neighbors=1, metric=metric, algorithm="brute").fit(X[:150], y[:150]).predict(X[150:])
    got = nearest_neighbour_predict(X[:150], y[:150], X[150:], metric=metric, chunk_elements=1000)
    np.testing.assert_array_equal(got, ref)


def test_nearest_neighbour_of_a_training_point_is_itself():
    X, y = _blobs(1)
    np.testing.assert_array_equal(nearest_neighbour_predict(X, y, X, metric="euclidean"), y)


def test_logistic_regression_matches_sklearn_multinomial():
    from sklearn.linear_model import LogisticRegression as SkLR

    X, y = _blobs(2)
    for C in (0.1, 1.0, 10.0):
        ours = LogisticRegression(C=C, tol=1e-10).fit(X, y)
        ref = SkLR(C=C, tol=1e-12, max_iter=10_000).fit(X, y)
        np.testing.assert_array_equal(ours.classes_, ref.classes_)
        np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-5 * max(1, np.abs(ref.coef_).max()))
        np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-6)
        np.testing.assert_array_equal(ours.predict(X), ref.predict(X))


def test_binary_softmax_equals_sklearn_logistic_at_twice_c():
    from sklearn.linear_model import LogisticRegression as SkLR

    X, y = _blobs(3, n_classes=2)
    ours = LogisticRegression(C=0.5, tol=1e-10).fit(X, y)
    ref = SkLR(C=1.0, tol=1e-12, max_iter=10_000).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X)[:, 1], ref.predict_proba(X)[:, 1], atol=1e-6)
    np.testing.assert_allclose(ours.coef_[1] - ours.coef_[0], ref.coef_[0], atol=1e-5)


@pytest.mark.parametrize("weighting", ["tfidf", "count", "binary"])
def test_lsi_matches_a_dense_svd_and_sklearn(weighting):
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import TfidfTransformer

    corpus, _, _ = lda_corpus(seed=1, n_docs=80, n_words=40)
    lsi = LSI(5, weighting=weighting, random_state=0).fit(corpus)
    X = corpus.counts.toarray().astype(float)
    if weighting == "tfidf":
        X = TfidfTransformer().fit_transform(X).toarray()
    elif weighting == "binary":
        X = (X > 0).astype(float)
    s = np.linalg.svd(X, compute_uv=False)[:5]
    np.testing.assert_allclose(lsi.singular_values_, s, rtol=1e-8)
    Z = lsi.transform(corpus)
    ref = TruncatedSVD(5, algorithm="arpack").fit_transform(X)
    np.testing.assert_allclose(np.abs(Z), np.abs(ref), atol=1e-7)  # columns agree up to sign


def test_lsi_errors():
    corpus, _, _ = lda_corpus(seed=1, n_docs=10, n_words=40)
    with pytest.raises(CorpusError, match="must be below min"):
        LSI(10).fit(corpus)
    with pytest.raises(InvalidParameterError, match="'weighting' parameter of LSI"):
        LSI(2, weighting="log").fit(corpus)


# -- the experiment --------------------------------------------------------------------------------------------
class TrueTheta:
    """Projects onto the generating topic proportions (labels are their argmax): an oracle."""

    def __init__(self, theta):
        self.theta = theta

    def fit_transform(self, corpus):
        return self.theta


@pytest.fixture(scope="module")
def labelled():
    corpus, _, theta = lda_corpus(seed=4, n_docs=400, n_topics=4)
    labels = np.array([f"topic{k}" for k in theta.argmax(1)])
    return Corpus(corpus.counts, corpus.vocabulary, labels=labels), theta


def test_labels_determined_by_topics_are_recovered(labelled):
    corpus, theta = labelled
    recs = latent_classification(corpus, {"oracle": lambda k: TrueTheta(theta), "LSI": lambda k: LSI(k)},
                                 n_topics=(4, 8), random_state=0)
    assert len(recs) == 2 * 2 * 2
    acc = {(r["model"], r["n_topics"], r["classifier"]): r["accuracy"] for r in recs}
    majority = recs[0]["majority"]
    assert all(r["n_train"] == 200 and r["n_test"] == 200 for r in recs)
    assert acc["oracle", 4, "1nn"] > 0.9 and acc["oracle", 4, "logreg"] > 0.9
    assert acc["LSI", 8, "1nn"] > 0.75 and acc["LSI", 8, "logreg"] > 0.75
    assert min(acc.values()) > majority + 0.3
    table = accuracy_table(recs)
    assert table.splitlines()[0] == "| model | classifier | K=4 | K=8 |"
    assert "| LSI | logreg |" in table


@pytest.mark.parametrize("classifier", ["1nn", "logreg"])
def test_negative_control_shuffled_labels_give_chance_accuracy(labelled, classifier):
    """With labels permuted at random no projection can predict them.

    A classifier that ignores x is right with probability between sum_c p_c^2
    (guessing with the class frequencies, which is what 1-NN does here) and
    max_c p_c (always the majority class); the accuracy must fall in that band
    widened by Z_CRIT binomial standard errors. The true labels fail the same test.
    """
    corpus, theta = labelled
    shuffled = np.random.default_rng(7).permutation(corpus.labels)
    _, counts = np.unique(shuffled, return_counts=True)
    p = counts / counts.sum()
    lo, hi = float(np.sum(p**2)), float(p.max())

    def in_band(labels):
        rec = latent_classification(corpus, {"oracle": lambda k: TrueTheta(theta)}, n_topics=(4,), labels=labels,
                                    classifiers=(classifier,), random_state=1)[0]
        se = np.sqrt(hi * (1 - lo) / rec["n_test"])
        return lo - Z_CRIT * se < rec["accuracy"] < hi + Z_CRIT * se

    assert in_band(shuffled)
    assert not in_band(corpus.labels)


def test_fit_on_train_projects_the_test_half_with_transform(labelled):
    corpus, _ = labelled
    recs = latent_classification(corpus, {"LSI": lambda k: LSI(k)}, n_topics=(6,), fit_on="train",
                                 random_state=0, callback=(seen := []).append)
    assert len(seen) == 2 and recs == seen
    assert all(r["accuracy"] > 0.7 for r in recs)


def test_lda_projection_runs(labelled):
    from harmonium.estimators import LDA

    corpus, _ = labelled
    recs = latent_classification(corpus, {"LDA": lambda k: LDA(k, n_iter=30, random_state=0)}, n_topics=(4,),
                                 random_state=0)
    assert all(r["accuracy"] > 0.7 for r in recs)


def test_experiment_errors(labelled):
    corpus, theta = labelled
    models = {"oracle": lambda k: TrueTheta(theta)}
    with pytest.raises(CorpusError, match="needs labels"):
        latent_classification(Corpus(corpus.counts), models)
    with pytest.raises(InvalidParameterError, match="'classifiers' parameter"):
        latent_classification(corpus, models, classifiers=("svm",))
    with pytest.raises(InvalidParameterError, match="'n_topics' parameter"):
        latent_classification(corpus, models, n_topics=(0,))
    with pytest.raises(InvalidParameterError, match="projected 400 documents to shape"):
        latent_classification(corpus, {"bad": lambda k: TrueTheta(theta[:10])}, n_topics=(4,))
