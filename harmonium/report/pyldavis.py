"""Export to pyLDAvis's data format: the JSON of ``pyLDAvis.PreparedData.to_json()``.

The dictionary has pyLDAvis's seven keys (Sievert & Shirley 2014's LDAvis):

* ``mdsDat``: columns ``x``, ``y`` (classical MDS of the Jensen-Shannon distances between topics,
  as pyLDAvis's default ``js_PCoA``), ``topics`` (1-based, in the new order), ``cluster`` (all 1),
  ``Freq`` (the topic's share of the corpus tokens, in percent);
* ``tinfo``: columns ``Term``, ``Freq``, ``Total``, ``Category``, ``logprob``, ``loglift``. Rows of
  category ``"Default"``: the ``R`` most salient terms (Chuang et al. 2012: p(w) times the
  Kullback-Leibler divergence of p(k | w) from p(k)) with their corpus frequencies; rows of category
  ``"Topic<n>"``: every term in the topic's top ``R`` by relevance at some lambda of the grid of step
  ``lambda_step``, ``Freq`` its estimated count in the topic (p(k | w) times its corpus count),
  ``logprob`` log phi_kw and ``loglift`` log(phi_kw / p_w);
* ``token.table``: columns ``Topic``, ``Freq`` (p(k | w)), ``Term`` for the terms of ``tinfo``;
* ``R``, ``lambda.step``, ``plot.opts`` ({"xlab": "PC1", "ylab": "PC2"}), ``topic.order``
  (the 1-based original topic of each displayed topic; topics sorted by decreasing share).

Load it into pyLDAvis (which needs pandas) with::

    d = json.load(open("model.ldavis.json"))
    vis = pyLDAvis.PreparedData(pd.DataFrame(d["mdsDat"]), pd.DataFrame(d["tinfo"]),
                                pd.DataFrame(d["token.table"]), d["R"], d["lambda.step"],
                                d["plot.opts"], d["topic.order"])
    pyLDAvis.save_html(vis, "model.ldavis.html")

Token counts come from the corpus when one is given; otherwise from the model's expected word
distribution times the number of training tokens read off its trace (LDA), or ``n_tokens``.
Harmoniums are exported with their hidden units as topics (see :mod:`harmonium.report.data`).
"""

from __future__ import annotations

import json

import numpy as np

from harmonium.errors import InvalidParameterError
from harmonium.estimators._base import as_corpus
from harmonium.io import atomic_write_bytes
from harmonium.report.data import (
    check_view_args,
    classical_mds,
    js_distances,
    model_topics,
    relevance_candidates,
)

__all__ = ["pyldavis_data", "write_pyldavis"]


def _training_tokens(model) -> float | None:
    tr = getattr(model, "trace_", None) or {}
    for total in ("log_joint", "elbo"):
        a, b = tr.get(total), tr.get("log_likelihood_per_token")
        if a and b and a[-1] is not None and b[-1] not in (None, 0):
            n = a[-1] / b[-1]
            if np.isfinite(n) and n > 0:
                return float(round(n))
    return None


def pyldavis_data(model, corpus=None, *, R: int = 30, lambda_step: float = 0.01, n_tokens: int | None = None,
                  sort_topics: bool = True) -> dict:
    """The pyLDAvis ``PreparedData`` of ``model`` as a JSON-ready dict (module docstring)."""
    check_view_args("pyldavis_data", lambda_step, R=(R, 1))
    phi, kind, vocab, terms = model_topics(model)
    K, V = phi.shape
    if corpus is not None:
        docs = as_corpus(corpus, "pyldavis_data", vocab).drop_empty()
        theta = np.asarray(model.transform(docs), dtype=np.float64)
        lengths = np.asarray(docs.doc_lengths, dtype=np.float64)
        topic_mass = (lengths[:, None] * theta).sum(axis=0) if kind == "topics" else theta.sum(axis=0)
        term_freq = np.asarray(docs.counts.sum(axis=0)).ravel().astype(np.float64)
    else:
        dt = getattr(model, "doc_topic_", None)
        topic_mass = np.asarray(dt, dtype=np.float64).mean(axis=0) if dt is not None else np.ones(K)
        total = n_tokens or _training_tokens(model)
        if total is None:
            raise InvalidParameterError(
                "pyldavis_data needs token counts: pass the corpus the model was fitted on, or n_tokens=...")
        p = (topic_mass / topic_mass.sum()) @ phi
        term_freq = total * p / p.sum()
    p_k = topic_mass / topic_mass.sum()
    keep = term_freq > 0
    p_w = np.where(keep, term_freq, 0.0) / term_freq.sum()
    # p(k | w) proportional to p(k) phi_kw
    joint = p_k[:, None] * phi
    p_k_w = joint / np.maximum(joint.sum(axis=0, keepdims=True), 1e-300)

    order = np.argsort(-p_k, kind="stable") if sort_topics else np.arange(K)
    D = js_distances(phi) if K > 1 else np.zeros((1, 1))
    xy = classical_mds(D, 2) if K > 2 else np.column_stack([classical_mds(D, 1)[:, 0] if K > 1 else [0.0],
                                                             np.zeros(K)])
    mds = {"x": [float(xy[k, 0]) for k in order], "y": [float(xy[k, 1]) for k in order],
           "topics": list(range(1, K + 1)), "cluster": [1] * K, "Freq": [float(100 * p_k[k]) for k in order]}

    with np.errstate(divide="ignore", invalid="ignore"):
        dist = np.where(p_k_w > 0, p_k_w * np.log(p_k_w / p_k[:, None]), 0.0).sum(axis=0)
    saliency = p_w * dist
    n = min(R, V)
    default = np.argsort(-saliency, kind="stable")[:n]
    tinfo = {"Term": [], "Freq": [], "Total": [], "Category": [], "logprob": [], "loglift": []}
    for i, w in enumerate(default):
        tinfo["Term"].append(terms[int(w)])
        tinfo["Freq"].append(float(term_freq[w]))
        tinfo["Total"].append(float(term_freq[w]))
        tinfo["Category"].append("Default")
        tinfo["logprob"].append(float(n - i))
        tinfo["loglift"].append(float(n - i))
    cand = relevance_candidates(phi, p_w, n, lambda_step)
    used = set(int(w) for w in default)
    for new, k in enumerate(order, start=1):
        for w in cand[k]:
            w = int(w)
            if term_freq[w] <= 0:
                continue
            used.add(w)
            lp = float(np.log(max(phi[k, w], 1e-300)))
            tinfo["Term"].append(terms[w])
            tinfo["Freq"].append(float(p_k_w[k, w] * term_freq[w]))
            tinfo["Total"].append(float(term_freq[w]))
            tinfo["Category"].append(f"Topic{new}")
            tinfo["logprob"].append(round(lp, 4))
            tinfo["loglift"].append(round(lp - float(np.log(p_w[w])), 4))
    token = {"Topic": [], "Freq": [], "Term": []}
    for w in sorted(used, key=lambda w: terms[w]):
        for new, k in enumerate(order, start=1):
            if p_k_w[k, w] >= 1e-3:
                token["Topic"].append(new)
                token["Freq"].append(round(float(p_k_w[k, w]), 6))
                token["Term"].append(terms[w])
    return {"mdsDat": mds, "tinfo": tinfo, "token.table": token, "R": int(n), "lambda.step": float(lambda_step),
            "plot.opts": {"xlab": "PC1", "ylab": "PC2"}, "topic.order": [int(k) + 1 for k in order]}


def write_pyldavis(model, path, corpus=None, **kwargs):
    """Write :func:`pyldavis_data` as JSON to ``path`` (atomically); returns the path."""
    data = pyldavis_data(model, corpus, **kwargs)
    atomic_write_bytes(path, json.dumps(data, allow_nan=False).encode())
    return path
