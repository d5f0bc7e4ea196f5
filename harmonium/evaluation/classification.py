"""Classification on latent projections: the experiment of seed 000 §5.2 and Fig. 7.

Every model is fitted to all documents without their labels, every document
is projected into the latent space (LDA's theta, LSI's U_k S_k, a harmonium's
E[h | x]), the documents are split at random into equal training and test
halves, and a classifier trained on the training projections predicts the
test labels. Accuracy is reported against the latent dimension K. The
classifiers are our own (numpy / scipy; scikit-learn is not needed):

* :func:`nearest_neighbour_predict`: 1-nearest neighbour, cosine distance by
  default (Euclidean on request); ties go to the training document that comes first;
* :class:`LogisticRegression`: multinomial (softmax) logistic regression with
  an L2 penalty, minimising C sum_i -log p(y_i | x_i) + ||W||^2 / 2 (intercepts
  unpenalised) by L-BFGS, the objective of scikit-learn's
  ``LogisticRegression(solver="lbfgs")`` for three or more classes. For two
  classes scikit-learn fits one weight vector; the softmax with two penalised
  vectors equals it at 2 C.

In :func:`latent_classification` the logistic regression sees features
standardised with the training half's mean and standard deviation.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence

import numpy as np
from scipy.special import logsumexp

from harmonium._validation import RANDOM_STATE, Interval, Options, validate_params
from harmonium.corpus.corpus import Corpus
from harmonium.errors import CorpusError, InvalidParameterError, NotFittedError
from harmonium.parallel.seeds import check_random_state

CLASSIFIERS = ("1nn", "logreg")


def nearest_neighbour_predict(X_train, y_train, X_test, *, metric: str = "cosine",
                              chunk_elements: int = 1 << 23) -> np.ndarray:
    """Labels of the nearest training point of every test point (1-NN).

    Parameters
    ----------
    X_train : (n, F) array
    y_train : (n,) array
    X_test : (m, F) array
    metric : {"cosine", "euclidean"}
        Cosine distance ``1 - x.y / (|x| |y|)`` (a zero vector is at distance 1
        from everything) or Euclidean distance.
    chunk_elements : int
        Test rows are processed in blocks of about this many distances.
    """
    validate_params("nearest_neighbour_predict", {"metric": metric},
                    {"metric": [Options(("cosine", "euclidean"))]})
    A = np.asarray(X_train, dtype=np.float64)
    B = np.asarray(X_test, dtype=np.float64)
    y = np.asarray(y_train)
    if A.ndim != 2 or B.ndim != 2 or A.shape[1] != B.shape[1] or y.shape != (A.shape[0],) or A.shape[0] == 0:
        raise InvalidParameterError(
            f"nearest_neighbour_predict needs X_train (n, F), y_train (n,) and X_test (m, F) with n >= 1; got "
            f"{A.shape}, {y.shape} and {B.shape}."
        )
    if metric == "cosine":
        A = A / np.maximum(np.linalg.norm(A, axis=1, keepdims=True), np.finfo(float).tiny)
        B = B / np.maximum(np.linalg.norm(B, axis=1, keepdims=True), np.finfo(float).tiny)
    else:
        a2 = np.einsum("ij,ij->i", A, A)
    out = np.empty(B.shape[0], dtype=np.int64)
    step = max(1, chunk_elements // A.shape[0])
    for lo in range(0, B.shape[0], step):
        S = B[lo:lo + step] @ A.T
        # argmax of similarity == argmin of distance; for Euclidean, |b|^2 is constant per row
        out[lo:lo + step] = np.argmax(S, axis=1) if metric == "cosine" else np.argmin(a2[None, :] - 2 * S, axis=1)
    return y[out]


class LogisticRegression:
    """Multinomial logistic regression with an L2 penalty, fitted by L-BFGS (scipy).

    Minimises C sum_i -log softmax(x_i W + b)_{y_i} + ||W||^2 / 2.

    Parameters
    ----------
    C : float, default 1.0
        Inverse penalty strength.
    max_iter : int, default 1000
    tol : float, default 1e-4
        L-BFGS gradient tolerance (``gtol``) on the objective divided by C n
        (scikit-learn's scaling and default).

    Attributes
    ----------
    classes_ : (n_classes,) array
    coef_ : (n_classes, F) array
    intercept_ : (n_classes,) array
    n_iter_ : int
    """

    def __init__(self, C: float = 1.0, *, max_iter: int = 1000, tol: float = 1e-4):
        self.C = C
        self.max_iter = max_iter
        self.tol = tol

    def fit(self, X, y) -> LogisticRegression:
        validate_params(
            "LogisticRegression", {"C": self.C, "max_iter": self.max_iter, "tol": self.tol},
            {"C": [Interval("real", 0, None, "neither")], "max_iter": [Interval("int", 1, None)],
             "tol": [Interval("real", 0, None)]},
        )
        X = np.asarray(X, dtype=np.float64)
        classes, yi = np.unique(np.asarray(y), return_inverse=True)
        if X.ndim != 2 or yi.shape[0] != X.shape[0]:
            raise InvalidParameterError(f"LogisticRegression.fit needs X (n, F) and y (n,); got {X.shape} and "
                                        f"{np.shape(y)}.")
        n, F = X.shape
        C_n = classes.shape[0]
        Y = np.zeros((n, C_n))
        Y[np.arange(n), yi] = 1.0
        scale = 1.0 / (self.C * n)  # the objective is scaled by 1 / (C n) so that tol does not depend on n

        def objective(theta):
            W = theta[:F * C_n].reshape(F, C_n)
            b = theta[F * C_n:]
            Z = X @ W + b
            top = Z.max(axis=1, keepdims=True)
            P = np.exp(Z - top)
            s = P.sum(axis=1, keepdims=True)
            P /= s
            lse = (top + np.log(s)).ravel()
            f = self.C * (lse.sum() - np.sum(Z * Y)) + 0.5 * np.sum(W * W)
            G = self.C * (P - Y)
            gW = X.T @ G + W
            gb = G.sum(axis=0)
            return f * scale, np.concatenate([gW.ravel(), gb]) * scale

        from scipy.optimize import minimize  # imported here: scipy.optimize costs ~20 MiB at import

        res = minimize(objective, np.zeros(F * C_n + C_n), jac=True, method="L-BFGS-B",
                       options={"maxiter": self.max_iter, "gtol": self.tol, "ftol": 0.0})
        self.classes_ = classes
        self.coef_ = res.x[:F * C_n].reshape(F, C_n).T.copy()
        self.intercept_ = res.x[F * C_n:].copy()
        self.n_iter_ = int(res.nit)
        return self

    def decision_function(self, X) -> np.ndarray:
        if getattr(self, "coef_", None) is None:
            raise NotFittedError("This LogisticRegression instance is not fitted yet. Call 'fit' first.")
        return np.asarray(X, dtype=np.float64) @ self.coef_.T + self.intercept_

    def predict_proba(self, X) -> np.ndarray:
        Z = self.decision_function(X)
        return np.exp(Z - logsumexp(Z, axis=1, keepdims=True))

    def predict(self, X) -> np.ndarray:
        return self.classes_[np.argmax(self.decision_function(X), axis=1)]


def _project(model, corpus: Corpus) -> np.ndarray:
    if hasattr(model, "fit_transform"):
        Z = model.fit_transform(corpus)
    else:
        Z = model.fit(corpus).transform(corpus)
    Z = np.asarray(Z, dtype=np.float64)
    if Z.ndim != 2 or Z.shape[0] != corpus.n_docs:
        raise InvalidParameterError(f"{type(model).__name__} projected {corpus.n_docs} documents to shape {Z.shape}; "
                                    "expected (n_docs, n_dimensions).")
    return Z


def classify_projection(Z: np.ndarray, labels, train: np.ndarray, test: np.ndarray, *,
                        classifiers: Sequence[str] = CLASSIFIERS, metric: str = "cosine", C: float = 1.0
                        ) -> dict[str, float]:
    """Test accuracy of each classifier on projections ``Z`` with the given index split."""
    labels = np.asarray(labels)
    out = {}
    for name in classifiers:
        if name == "1nn":
            pred = nearest_neighbour_predict(Z[train], labels[train], Z[test], metric=metric)
        else:
            mu, sd = Z[train].mean(axis=0), Z[train].std(axis=0)
            sd = np.where(sd > 0, sd, 1.0)
            clf = LogisticRegression(C=C).fit((Z[train] - mu) / sd, labels[train])
            pred = clf.predict((Z[test] - mu) / sd)
        out[name] = float(np.mean(pred == labels[test]))
    return out


def latent_classification(
    corpus: Corpus,
    models: Mapping[str, Callable[[int], object]],
    n_topics: Sequence[int] = (4, 8, 16, 32),
    *,
    labels=None,
    classifiers: Sequence[str] = CLASSIFIERS,
    metric: str = "cosine",
    test_size: float = 0.5,
    fit_on: str = "all",
    C: float = 1.0,
    random_state=0,
    callback: Callable[[dict], None] | None = None,
) -> list[dict]:
    """Accuracy of classifiers on latent projections against the number of topics (seed 000 Fig. 7).

    Parameters
    ----------
    corpus : Corpus
        Documents with ``labels`` (e.g. ``load_debian()``, labelled by Debian section).
    models : dict name -> factory
        ``factory(K)`` returns an unfitted model with ``fit_transform`` (or
        ``fit`` and ``transform``) whose projection has K columns, e.g.
        ``{"LSI": lambda k: LSI(k), "LDA": lambda k: LDA(k, n_iter=200)}``.
    n_topics : sequence of int, default (4, 8, 16, 32)
    labels : sequence, optional
        Overrides ``corpus.labels``.
    classifiers : subset of {"1nn", "logreg"}
    metric : {"cosine", "euclidean"}, default "cosine"
        Distance of the 1-NN classifier.
    test_size : float, default 0.5
        Fraction of documents in the test half; one seeded split serves every model and K.
    fit_on : {"all", "train"}, default "all"
        "all": models are fitted to every document without labels (seed 000
        §5.2); "train": to the training half only, the test half projected
        by ``transform``.
    C : float, default 1.0
        Inverse L2 penalty of the logistic regression.
    random_state : int, Generator or None, default 0
        Seeds the split (models are seeded by their factories).
    callback : callable, optional
        Called with each record as it is produced (progress, incremental saving).

    Returns
    -------
    list of dict
        One record per (model, K, classifier): ``model``, ``n_topics``,
        ``classifier``, ``accuracy``, ``majority`` (the accuracy of always
        predicting the training half's most frequent label), ``n_train``,
        ``n_test``, ``fit_seconds``, ``metric``. See :func:`accuracy_table`.
    """
    validate_params(
        "latent_classification",
        {"test_size": test_size, "fit_on": fit_on, "metric": metric, "random_state": random_state},
        {"test_size": [Interval("real", 0, 1, "neither")], "fit_on": [Options(("all", "train"))],
         "metric": [Options(("cosine", "euclidean"))], "random_state": [RANDOM_STATE]},
    )
    if not isinstance(corpus, Corpus):
        raise CorpusError(f"latent_classification expects a harmonium Corpus; got {type(corpus).__name__}.")
    bad = [c for c in classifiers if c not in CLASSIFIERS]
    if bad or not classifiers:
        raise InvalidParameterError(
            f"The 'classifiers' parameter of latent_classification must be a non-empty subset of {CLASSIFIERS}. "
            f"Got {list(classifiers)!r}."
        )
    if any(isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1 for k in n_topics):
        raise InvalidParameterError(f"The 'n_topics' parameter of latent_classification must hold ints >= 1. "
                                    f"Got {list(n_topics)!r}.")
    y = np.asarray(corpus.labels if labels is None else labels)
    if corpus.labels is None and labels is None:
        raise CorpusError("latent_classification needs labels: the corpus has none; pass labels=...")
    if y.shape != (corpus.n_docs,):
        raise CorpusError(f"latent_classification needs one label per document ({corpus.n_docs}); got {y.shape}.")
    rng, seed = check_random_state(random_state, "latent_classification")
    perm = rng.permutation(corpus.n_docs)
    n_test = int(round(test_size * corpus.n_docs))
    if n_test == 0 or n_test == corpus.n_docs:
        raise CorpusError(f"latent_classification: {corpus.n_docs} documents with test_size={test_size} leave "
                          "one side empty.")
    test, train = np.sort(perm[:n_test]), np.sort(perm[n_test:])
    values, counts = np.unique(y[train], return_counts=True)
    majority = float(np.mean(y[test] == values[np.argmax(counts)]))
    records = []
    for name, factory in models.items():
        for k in n_topics:
            model = factory(int(k))
            t0 = time.perf_counter()
            if fit_on == "all":
                Z = _project(model, corpus)
                tr, te = train, test
            else:
                Z_train = _project(model, corpus[train])
                Z = np.vstack([Z_train, np.asarray(model.transform(corpus[test]), dtype=np.float64)])
                tr, te = np.arange(train.shape[0]), np.arange(train.shape[0], corpus.n_docs)
                y_split = np.concatenate([y[train], y[test]])
            seconds = time.perf_counter() - t0
            acc = classify_projection(Z, y if fit_on == "all" else y_split, tr, te, classifiers=classifiers,
                                      metric=metric, C=C)
            for clf in classifiers:
                rec = {"model": name, "n_topics": int(k), "classifier": clf, "accuracy": acc[clf],
                       "majority": majority, "n_train": int(train.shape[0]), "n_test": int(test.shape[0]),
                       "fit_seconds": seconds, "metric": metric if clf == "1nn" else None, "split_seed": seed}
                records.append(rec)
                if callback is not None:
                    callback(rec)
    return records


def accuracy_table(records: Sequence[Mapping], *, digits: int = 3) -> str:
    """A markdown table: one row per (model, classifier), one column per K."""
    ks = sorted({int(r["n_topics"]) for r in records})
    rows: dict[tuple, dict] = {}
    for r in records:
        rows.setdefault((r["model"], r["classifier"]), {})[int(r["n_topics"])] = r["accuracy"]
    head = "| model | classifier | " + " | ".join(f"K={k}" for k in ks) + " |"
    sep = "|---|---|" + "---:|" * len(ks)
    lines = [head, sep]
    for (model, clf), acc in rows.items():
        cells = [f"{acc[k]:.{digits}f}" if k in acc else "" for k in ks]
        lines.append(f"| {model} | {clf} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
