"""What the HTML report shows, computed in Python: topics, relevance, prevalence, distances, traces.

* **Topics.** Directed models: phi_k = ``topic_word_[k]``. Harmoniums: the distribution of one
  word draw when hidden unit k alone is on, phi_k = softmax(b + W_{:k}) (b the visible biases,
  W the word wing's weights) -- exact for the Replicated Softmax (seed 001 eq. 5), a display
  convention for other word units; their raw weights W are shown as well.
* **Relevance** (Sievert & Shirley 2014, eq. 1), r = lambda log phi_kw + (1 - lambda) log(phi_kw / p_w),
  :func:`harmonium.evaluation.relevance`. The report keeps, per topic, the union of the top ``n_words``
  words at every lambda of a grid of step ``lambda_step``, so that the slider ranks exactly on the grid.
* **Prevalence.** With a corpus: the share of its tokens, sum_d N_d theta_dk / sum_d N_d (harmoniums:
  the share of sum_d E[h_k | x_d]). Without one: the mean of ``doc_topic_`` of the training run
  (unweighted), for harmoniums uniform (marked as unknown).
* **Intertopic distances.** Jensen-Shannon distance sqrt(JS(phi_j || phi_k)) (base-2 logarithms, in
  [0, 1]) and classical (Torgerson) multidimensional scaling to two dimensions, as LDAvis's PCoA.
* **Traces and diagnostics** from the model's ``trace_``; rank-normalised split R-hat and bulk ESS
  (:mod:`harmonium.evaluation.diagnostics`) of the second half of each monitored series, one chain
  split in two.
"""

from __future__ import annotations

import math

import numpy as np

from harmonium.corpus.corpus import Corpus
from harmonium.errors import InvalidParameterError
from harmonium.estimators._base import as_corpus
from harmonium.evaluation.diagnostics import ess_bulk, rhat

__all__ = ["check_view_args", "classical_mds", "js_distances", "model_topics", "relevance_candidates", "report_data",
           "top_words", "topic_distributions"]


def _softmax_columns(b: np.ndarray, W: np.ndarray) -> np.ndarray:
    z = b[:, None] + W
    z = z - z.max(axis=0, keepdims=True)
    e = np.exp(z)
    return (e / e.sum(axis=0, keepdims=True)).T


def topic_distributions(model) -> tuple[np.ndarray, str]:
    """(K, V) word distributions of the model's topics or hidden units, and the kind ("topics" or "harmonium")."""
    if getattr(model, "topic_word_", None) is not None:
        phi = np.asarray(model.topic_word_, dtype=np.float64)
        return phi / phi.sum(axis=1, keepdims=True), "topics"
    inner = getattr(model, "model_", None)
    if inner is not None and hasattr(inner, "W"):
        W = np.asarray(inner.W(0), dtype=np.float64)
        b = np.asarray(inner.params.get("v:0:bias", np.zeros(W.shape[0])), dtype=np.float64).reshape(-1)
        if b.shape[0] != W.shape[0]:
            b = np.zeros(W.shape[0])
        return _softmax_columns(b, W), "harmonium"
    raise InvalidParameterError(f"The report needs a fitted topic model (topic_word_) or harmonium (model_); got "
                                f"{type(model).__name__}.")


def model_topics(model) -> tuple[np.ndarray, str, object, list[str]]:
    """:func:`topic_distributions` of ``model`` with its ``vocabulary_`` (or None) and the V terms in word-id order.

    A model fitted on a bare matrix has no vocabulary; its terms are ``"w<id>"``.
    """
    phi, kind = topic_distributions(model)
    vocab = getattr(model, "vocabulary_", None)
    V = phi.shape[1]
    terms = [vocab[i] for i in range(V)] if vocab is not None else [f"w{i}" for i in range(V)]
    return phi, kind, vocab, terms


def check_view_args(owner: str, lambda_step, **ints: tuple[int, int]) -> None:
    """Check the relevance slider step ``lambda_step`` (in (0, 1]) and each ``name=(value, least)`` int of ``owner``."""
    for arg, (v, lo) in ints.items():
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
            raise InvalidParameterError(f"The '{arg}' parameter of {owner} must be an int >= {lo}. Got {v!r}.")
    if isinstance(lambda_step, bool) or not isinstance(lambda_step, (int, float)) or not 0 < lambda_step <= 1:
        raise InvalidParameterError(f"The 'lambda_step' parameter of {owner} must be in (0, 1]. Got {lambda_step!r}.")


def top_words(model, n: int = 10) -> list[list[tuple[str, float]]]:
    """The ``n`` most probable words of every topic or hidden unit, as (term, probability) pairs.

    Topic models: phi_k (``topic_word_``). Harmoniums: the word distribution
    softmax(b + W_:j) of the first wing with only unit j on (:func:`topic_distributions`).
    Words are ``vocabulary_`` terms, or ``"w<id>"`` for a model fitted on a bare matrix.
    """
    phi, _ = topic_distributions(model)
    vocab = getattr(model, "vocabulary_", None)
    order = np.argsort(-phi, axis=1, kind="stable")[:, :n]
    term = (lambda w: vocab[w]) if vocab is not None else (lambda w: f"w{w}")
    return [[(term(int(w)), float(phi[k, w])) for w in row] for k, row in enumerate(order)]


def js_distances(phi: np.ndarray) -> np.ndarray:
    """(K, K) Jensen-Shannon distances sqrt(JS) between the rows of ``phi``, base-2 logarithms (in [0, 1])."""
    p = np.asarray(phi, dtype=np.float64)
    K = p.shape[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        logp = np.where(p > 0, np.log2(p), 0.0)
    D = np.zeros((K, K))
    for j in range(K):
        m = 0.5 * (p[j][None, :] + p)
        with np.errstate(divide="ignore", invalid="ignore"):
            logm = np.where(m > 0, np.log2(m), 0.0)
        kl_j = np.sum(p[j] * (logp[j] - logm), axis=1)
        kl_k = np.sum(p * (logp - logm), axis=1)
        D[j] = np.sqrt(np.clip(0.5 * (kl_j + kl_k), 0.0, 1.0))
    D = 0.5 * (D + D.T)
    np.fill_diagonal(D, 0.0)
    return D


def classical_mds(D: np.ndarray, n_components: int = 2) -> np.ndarray:
    """Classical (Torgerson) MDS: the top eigenvectors of B = -J D^2 J / 2, scaled by sqrt(eigenvalue).

    Returns (K, n_components); components with non-positive eigenvalues are zero. Each column's sign is
    fixed so that its largest-magnitude entry is positive (deterministic output).
    """
    D = np.asarray(D, dtype=np.float64)
    K = D.shape[0]
    J = np.eye(K) - 1.0 / K
    B = -0.5 * J @ (D ** 2) @ J
    vals, vecs = np.linalg.eigh(B)
    order = np.argsort(vals)[::-1][:n_components]
    X = np.zeros((K, n_components))
    for c, i in enumerate(order):
        if vals[i] > 1e-12:
            v = vecs[:, i] * math.sqrt(vals[i])
            X[:, c] = v if v[np.argmax(np.abs(v))] >= 0 else -v
    return X


def relevance_candidates(phi: np.ndarray, p_w: np.ndarray, n_words: int = 30, lambda_step: float = 0.01) -> list:
    """Per topic, the ids of every word in the top ``n_words`` by relevance at some lambda of the grid.

    Words with p_w = 0 (absent from the corpus: no lift) are never candidates.
    """
    p_w = np.asarray(p_w, dtype=np.float64)
    valid = p_w > 0
    with np.errstate(divide="ignore"):
        logphi = np.log(phi)
        logp = np.log(np.where(valid, p_w, 1.0))
    lams = np.linspace(0.0, 1.0, int(round(1.0 / lambda_step)) + 1)
    n = min(n_words, int(valid.sum()))
    out = []
    for k in range(phi.shape[0]):
        lift = logphi[k] - logp
        keep = set()
        for lam in lams:
            with np.errstate(invalid="ignore"):
                r = lam * logphi[k] + (1.0 - lam) * lift
            r = np.where(np.isfinite(r) & valid, r, -np.inf)
            if n > 0:
                keep.update(np.argpartition(-r, n - 1)[:n].tolist())
        out.append(np.array(sorted(keep), dtype=np.int64))
    return out


def _trace(trace) -> dict:
    """{"x": name, "xs": [...], "series": {name: [...]}} of the numeric, finite-somewhere series."""
    if not isinstance(trace, dict) or not trace:
        return {"x": None, "xs": [], "series": {}}
    xname = next((k for k in ("iteration", "epoch") if k in trace), None)
    xs = list(trace[xname]) if xname else []
    series = {}
    for k, v in trace.items():
        if k == xname or not isinstance(v, list) or (xs and len(v) != len(xs)) or not v:
            continue
        try:
            arr = np.asarray(v, dtype=np.float64)
        except (TypeError, ValueError):
            continue
        if arr.ndim == 1 and np.any(np.isfinite(arr)) and not (k == "seconds"):
            series[k] = [None if not math.isfinite(x) else float(x) for x in arr]
    if not xs and series:
        xs = list(range(1, len(next(iter(series.values()))) + 1))
    return {"x": xname or "evaluation", "xs": [float(x) for x in xs], "series": series,
            "seconds": float(trace["seconds"][-1]) if trace.get("seconds") else None}


def _diagnostics(tr: dict) -> list[dict]:
    rows = []
    for name, vals in tr["series"].items():
        v = np.array([np.nan if x is None else x for x in vals], dtype=np.float64)
        half = v[v.shape[0] // 2:]
        half = half[np.isfinite(half)]
        row = {"series": name, "n": int(v.shape[0]), "last": None if not np.isfinite(v[-1]) else float(v[-1]),
               "mean_second_half": float(half.mean()) if half.size else None, "rhat": None, "ess_bulk": None}
        if half.size >= 8 and np.ptp(half) > 0:
            draws = half[None, :]
            r = float(rhat(draws))
            e = float(ess_bulk(draws))
            row["rhat"] = r if math.isfinite(r) else None
            row["ess_bulk"] = e if math.isfinite(e) else None
        rows.append(row)
    return rows


def _describe(model) -> dict:
    params = {}
    get = getattr(model, "get_params", None)
    if get is not None:
        for k, v in get().items():
            if v is None or isinstance(v, (bool, int, float, str)):
                params[k] = v
    return params


def report_data(model, corpus: Corpus | None = None, *, n_words: int = 30, lambda_step: float = 0.01,
                n_examples: int = 5, max_example_docs: int = 20000) -> dict:
    """Everything the report shows, as JSON-ready Python objects (see the module docstring).

    Parameters
    ----------
    model : fitted LDA or harmonium estimator
    corpus : Corpus, optional
        Documents for prevalence, word frequencies and example documents (over the model's
        vocabulary; other vocabularies are matched by term). At most ``max_example_docs`` of them
        (the first) are projected.
    n_words : int, default 30
        Words listed per topic.
    lambda_step : float, default 0.01
        Grid of the relevance slider.
    n_examples : int, default 5
        Example documents per topic.
    """
    check_view_args("report_data", lambda_step, n_words=(n_words, 1), n_examples=(n_examples, 0),
                    max_example_docs=(max_example_docs, 1))
    phi, kind, vocab, terms = model_topics(model)
    K, V = phi.shape
    name = type(model).__name__

    theta = None
    docs = None
    if corpus is not None:
        docs = as_corpus(corpus, f"{name} report", vocab)
        if docs.n_words != V:
            raise InvalidParameterError(f"the corpus has {docs.n_words} words but the model {V}; pass the corpus the "
                                        "model was fitted on (or one over its vocabulary).")
        if docs.n_docs > max_example_docs:
            docs = docs[:max_example_docs]
        docs = docs.drop_empty() if docs.n_docs else docs
        if docs.n_docs:
            theta = np.asarray(model.transform(docs), dtype=np.float64)  # LDA: theta; harmonium: E[h | x]

    prevalence_source = "corpus"
    if theta is not None:
        lengths = np.asarray(docs.doc_lengths, dtype=np.float64)
        if kind == "topics":
            prev = (lengths[:, None] * theta).sum(axis=0)
        else:
            prev = theta.sum(axis=0)
        word_counts = np.asarray(docs.counts.sum(axis=0)).ravel().astype(np.float64)
    else:
        dt = getattr(model, "doc_topic_", None)
        if dt is not None:
            prev = np.asarray(dt, dtype=np.float64).mean(axis=0)
            prevalence_source = "training doc_topic_ (mean over documents)"
        else:
            prev = np.ones(K)
            prevalence_source = "unknown (no corpus given): uniform"
        word_counts = None
    prev = prev / prev.sum() if prev.sum() > 0 else np.full(K, 1.0 / K)
    if word_counts is not None and word_counts.sum() > 0:
        p_w = word_counts / word_counts.sum()
        word_freq_source = "corpus"
    else:
        p_w = prev @ phi
        word_freq_source = "model (sum_k prevalence_k phi_k)"
    cand = relevance_candidates(phi, p_w, n_words, lambda_step)
    used = np.unique(np.concatenate(cand)) if cand else np.zeros(0, dtype=np.int64)
    pos = {int(w): i for i, w in enumerate(used)}
    with np.errstate(divide="ignore"):
        topics = []
        for k in range(K):
            ids = cand[k]
            lp = np.log(np.maximum(phi[k, ids], 1e-300))
            topics.append({
                "id": k, "prevalence": float(prev[k]),
                "words": [[pos[int(w)], round(float(a), 5), round(float(a - math.log(p_w[int(w)])), 5)]
                          for w, a in zip(ids, lp, strict=True)],
                "top": [terms[int(w)] for w in np.argsort(-phi[k], kind="stable")[:5]],
            })
    D = js_distances(phi) if K > 1 else np.zeros((1, 1))
    xy = classical_mds(D, 2) if K > 1 else np.zeros((1, 2))

    examples = []
    if theta is not None and n_examples:
        ids = docs.doc_ids if docs.doc_ids is not None else np.arange(docs.n_docs).astype(str)
        labels = docs.labels
        m = docs.counts
        for k in range(K):
            order = np.argsort(-theta[:, k], kind="stable")[:n_examples]
            ex = []
            for d in order:
                row = m.getrow(int(d))
                top = row.indices[np.argsort(-row.data, kind="stable")][:15]
                ex.append({"doc": str(ids[int(d)]), "weight": float(theta[int(d), k]),
                           "label": None if labels is None else str(labels[int(d)]),
                           "n_tokens": int(row.data.sum()), "words": [terms[int(w)] for w in top]})
            examples.append(ex)

    hidden = None
    if kind == "harmonium":
        W = np.asarray(model.model_.W(0), dtype=np.float64)
        hidden = []
        for k in range(K):
            o = np.argsort(-W[:, k], kind="stable")
            hidden.append({"id": k, "positive": [[terms[int(w)], float(W[w, k])] for w in o[:10]],
                           "negative": [[terms[int(w)], float(W[w, k])] for w in o[::-1][:10]],
                           "norm": float(np.linalg.norm(W[:, k]))})

    tr = _trace(getattr(model, "trace_", None))
    return {
        "model": name, "kind": kind, "n_topics": K, "n_words": V, "params": _describe(model),
        "n_iter": getattr(model, "n_iter_", None),
        "vocabulary": [terms[int(w)] for w in used],
        "p_w": [float(p_w[int(w)]) for w in used],
        "topics": topics, "prevalence_source": prevalence_source, "word_freq_source": word_freq_source,
        "coords": [[float(a), float(b)] for a, b in xy], "distances": [[round(float(x), 5) for x in r] for r in D],
        "examples": examples, "n_example_docs": 0 if theta is None else int(docs.n_docs),
        "hidden": hidden, "trace": tr, "diagnostics": _diagnostics(tr),
        "lambda_step": float(lambda_step), "n_list": int(n_words),
    }
