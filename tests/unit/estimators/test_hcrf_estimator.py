"""The HCRF estimator: scikit-learn contract, prediction, validation, model files (harmonium.estimators.hcrf)."""

from __future__ import annotations

import numpy as np
import pytest

import harmonium
from harmonium.errors import CorpusError, InvalidParameterError, ModelFileError, NotFittedError
from harmonium.estimators.hcrf import HCRF


def toy(n=60, seed=0):
    """Two classes of variable-length sequences: class 1 moves from feature 0 to feature 1 along the sequence."""
    rng = np.random.default_rng(seed)
    X, y = [], []
    for i in range(n):
        T = int(rng.integers(3, 8))
        c = i % 2
        x = rng.normal(0, 0.7, size=(T, 2))
        if c == 1:
            x[: T // 2, 0] += 1.5
            x[T // 2:, 1] += 1.5
        else:
            x[: T // 2, 1] += 1.5
            x[T // 2:, 0] += 1.5
        X.append(x)
        y.append(c)
    return X, np.array(y)


@pytest.fixture(scope="module")
def fitted():
    X, y = toy()
    return HCRF(n_hidden_states=3, l2=0.1, max_iter=200, random_state=0).fit(X, y), X, y


def test_fit_predict_probabilities(fitted):
    clf, X, y = fitted
    assert clf.score(X, y) >= 0.9
    proba = clf.predict_proba(X)
    assert proba.shape == (len(X), 2)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(np.exp(clf.predict_log_proba(X)), proba, rtol=1e-12)
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[proba.argmax(axis=1)])
    assert clf.n_features_in_ == 2 and clf.n_iter_ >= 1 and np.isfinite(clf.objective_)
    assert clf.trace_["iteration"][-1] == clf.n_iter_ and len(clf.trace_["objective"]) == clf.n_iter_
    # left-to-right is the default: forbidden moves are -inf
    A = clf.transition_weights_
    assert np.isneginf(A[:, 0, 2]).all() and np.isneginf(A[:, 1, 0]).all() and np.isfinite(A[:, 1, 2]).all()


def test_string_labels_and_posterior():
    X, y = toy(40, seed=1)
    labels = np.where(y == 1, "up", "down")
    clf = HCRF(n_hidden_states=2, transitions="full", max_iter=100, random_state=1).fit(X, labels)
    assert list(clf.classes_) == ["down", "up"]
    assert set(clf.predict(X)) <= {"down", "up"}
    post = clf.posterior(X[0])
    np.testing.assert_allclose(post.class_proba, clf.predict_proba(X[:1])[0], rtol=1e-12)
    np.testing.assert_allclose(post.node.sum(axis=2), 1.0, rtol=1e-12)


def test_same_seed_same_weights_and_none_seed_recorded():
    X, y = toy(30)
    a = HCRF(2, max_iter=20, random_state=3).fit(X, y)
    b = HCRF(2, max_iter=20, random_state=3).fit(X, y)
    np.testing.assert_array_equal(a.state_weights_, b.state_weights_)
    c = HCRF(2, max_iter=20, random_state=None).fit(X, y)
    assert isinstance(c.seed_, int)
    d = HCRF(2, max_iter=20, random_state=c.seed_).fit(X, y)
    np.testing.assert_array_equal(c.state_weights_, d.state_weights_)


def test_threads_match_one_thread():
    X, y = toy(30)
    a = HCRF(2, max_iter=15, random_state=0, n_jobs=1).fit(X, y)
    b = HCRF(2, max_iter=15, random_state=0, n_jobs=2).fit(X, y)
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X), rtol=1e-8)


def test_trees_through_parents():
    rng = np.random.default_rng(0)
    X, y, parents = [], [], []
    for i in range(30):
        x = rng.normal(size=(5, 2)) + (i % 2)
        X.append(x)
        y.append(i % 2)
        parents.append(np.array([-1, 0, 0, 1, 1]))
    clf = HCRF(2, max_iter=50, random_state=0).fit(X, y, parents=parents)
    assert clf.score(X, y, parents=parents) >= 0.9
    with pytest.raises(CorpusError, match="one parent array per sequence"):
        clf.predict(X, parents=parents[:3])


def test_sklearn_clone_and_cross_validation():
    sklearn = pytest.importorskip("sklearn")
    from sklearn.base import clone
    from sklearn.model_selection import cross_val_score

    X, y = toy(40)
    clf = HCRF(2, l2=0.5, max_iter=30, random_state=0)
    twin = clone(clf)
    assert twin.get_params() == clf.get_params()
    X_arr = np.empty(len(X), dtype=object)
    X_arr[:] = X
    scores = cross_val_score(clf, X_arr, y, cv=2)
    assert scores.shape == (2,) and (scores >= 0.7).all()
    assert sklearn.__version__


def test_get_set_params_and_repr():
    clf = HCRF(4, l2=0.2)
    assert clf.get_params()["n_hidden_states"] == 4
    clf.set_params(l2=0.5, transitions="full")
    assert clf.l2 == 0.5 and "l2=0.5" in repr(clf)
    with pytest.raises(ValueError, match="Invalid parameter 'foo'"):
        clf.set_params(foo=1)


def test_save_load_round_trip(fitted, tmp_path):
    clf, X, y = fitted
    path = tmp_path / "hcrf.hmn"
    clf.save(path)
    back = harmonium.load(path)
    assert isinstance(back, HCRF) and back.get_params() == {**clf.get_params(), "random_state": 0}
    np.testing.assert_array_equal(back.predict_proba(X), clf.predict_proba(X))
    np.testing.assert_array_equal(back.transition_weights_, clf.transition_weights_)
    np.testing.assert_array_equal(back.classes_, clf.classes_)
    assert back.n_iter_ == clf.n_iter_ and back.seed_ == clf.seed_


def test_load_rejects_inconsistent_arrays(fitted, tmp_path):
    clf, _, _ = fitted
    broken = HCRF(n_hidden_states=3)
    broken.classes_ = clf.classes_[:1]
    for name in ("state_weights_", "state_bias_", "start_weights_", "end_weights_", "transition_weights_",
                 "label_bias_"):
        setattr(broken, name, getattr(clf, name))
    broken.n_features_in_, broken.n_iter_, broken.converged_, broken.objective_, broken.seed_ = 2, 1, True, 0.0, 0
    bad = tmp_path / "bad.hmn"
    broken.save(bad)
    with pytest.raises(ModelFileError, match="inconsistent"):
        harmonium.load(bad)


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"n_hidden_states": 0}, "'n_hidden_states' parameter of HCRF must be an int >= 1. Got 0."),
        ({"l2": -1.0}, "'l2' parameter of HCRF must be a finite float >= 0"),
        ({"transitions": "ergodic"}, "'transitions' parameter of HCRF must be one of 'full', 'left_to_right'"),
        ({"max_iter": 0}, "'max_iter'"),
        ({"n_jobs": 0}, "'n_jobs'"),
        ({"random_state": "x"}, "'random_state'"),
    ],
)
def test_bad_parameters(params, match):
    X, y = toy(10)
    with pytest.raises(InvalidParameterError, match=match):
        HCRF(**params).fit(X, y)


def test_bad_data():
    X, y = toy(10)
    with pytest.raises(CorpusError, match="one class only"):
        HCRF().fit(X, np.zeros(10, dtype=int))
    with pytest.raises(CorpusError, match="one label per sequence: 10 sequences"):
        HCRF().fit(X, y[:5])
    with pytest.raises(CorpusError, match="NaN or infinity"):
        HCRF().fit(X, np.where(y == 1, np.nan, 0.0))
    with pytest.raises(CorpusError, match="labels must be"):
        HCRF().fit(X, np.array([object()] * 10))
    bad = [x.copy() for x in X]
    bad[3][1, 0] = np.inf
    with pytest.raises(CorpusError, match="sequence 3 holds NaN or infinity at position 1"):
        HCRF().fit(bad, y)
    clf = HCRF(2, max_iter=5, random_state=0).fit(X, y)
    with pytest.raises(CorpusError, match="has 3 features but the fitted model's has 2"):
        clf.predict([np.ones((4, 3))])


def test_not_fitted():
    with pytest.raises(NotFittedError):
        HCRF().predict([np.ones((2, 2))])
