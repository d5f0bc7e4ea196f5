"""The HTML report and the pyLDAvis export: the numbers, the page's structure, and self-containment."""

from __future__ import annotations

import json
from html.parser import HTMLParser

import numpy as np
import pytest

from harmonium.errors import InvalidParameterError
from harmonium.estimators import LDA
from harmonium.estimators.efh import ReplicatedSoftmax
from harmonium.evaluation import top_relevant_words
from harmonium.report.data import classical_mds, js_distances, relevance_candidates, report_data, topic_distributions
from harmonium.report.html import render_report, write_report
from harmonium.report.pyldavis import pyldavis_data
from tests.conftest import lda_corpus


@pytest.fixture(scope="module")
def corpus():
    c, _, _ = lda_corpus(seed=5, n_topics=4, n_words=50, n_docs=150, doc_length=30)
    return c


@pytest.fixture(scope="module")
def lda(corpus):
    return LDA(4, n_iter=40, evaluate_every=2, random_state=0).fit(corpus)


@pytest.fixture(scope="module")
def rsm(corpus):
    return ReplicatedSoftmax(3, n_iter=4, random_state=0).fit(corpus)


# -- the numbers -------------------------------------------------------------------------------------
def test_js_distances_exact_values():
    p = np.array([[0.5, 0.5, 0.0, 0.0], [0.0, 0.0, 0.5, 0.5], [0.5, 0.5, 0.0, 0.0], [0.5, 0.0, 0.5, 0.0]])
    D = js_distances(p)
    assert np.allclose(D, D.T) and np.all(np.diag(D) == 0)
    assert D[0, 1] == pytest.approx(1.0)  # disjoint supports: JS = 1 bit
    assert D[0, 2] == pytest.approx(0.0)
    # half the mass shared: JS = 1/2 (log2 of 4/2 ... by hand: 0.5 bits), distance sqrt(0.5)
    assert D[0, 3] == pytest.approx(np.sqrt(0.5))


def test_classical_mds_recovers_planar_configurations():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(7, 2))
    D = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    Y = classical_mds(D, 2)
    DY = np.sqrt(((Y[:, None] - Y[None]) ** 2).sum(-1))
    np.testing.assert_allclose(DY, D, atol=1e-10)
    # negative control: one dimension cannot hold a genuinely planar configuration
    Y1 = classical_mds(D, 1)
    assert np.abs(np.abs(Y1 - Y1.T) - D).max() > 0.1


def test_relevance_candidates_hold_the_top_words_at_every_grid_lambda(lda, corpus):
    phi, kind = topic_distributions(lda)
    assert kind == "topics"
    freq = np.asarray(corpus.counts.sum(axis=0)).ravel() + 1.0
    cand = relevance_candidates(phi, freq / freq.sum(), n_words=8, lambda_step=0.1)
    for lam in np.linspace(0, 1, 11):
        top = top_relevant_words(phi, freq, lam, top_n=8)
        for k in range(phi.shape[0]):
            assert set(top[k]) <= set(cand[k])
    assert max(len(c) for c in cand) > 8  # the ranking does change with lambda
    # words absent from the corpus have no lift and are never listed
    freq[:10] = 0.0
    cand0 = relevance_candidates(phi, freq / freq.sum(), n_words=8, lambda_step=0.1)
    assert all(c.min() >= 10 for c in cand0)


def test_report_data_lda(lda, corpus):
    d = report_data(lda, corpus, n_words=10, n_examples=3)
    assert d["kind"] == "topics" and d["n_topics"] == 4 and d["n_words"] == 50
    prev = np.array([t["prevalence"] for t in d["topics"]])
    theta = lda.transform(corpus)
    n_d = corpus.doc_lengths
    np.testing.assert_allclose(prev, (n_d[:, None] * theta).sum(0) / n_d.sum(), rtol=1e-12)
    assert np.array(d["coords"]).shape == (4, 2) and np.array(d["distances"]).shape == (4, 4)
    assert [len(e) for e in d["examples"]] == [3] * 4
    for k, ex in enumerate(d["examples"]):  # the documents with the largest theta_dk, in order
        w = [e["weight"] for e in ex]
        assert w == sorted(w, reverse=True) and w[0] == pytest.approx(theta[:, k].max())
    assert "log_likelihood_per_token" in d["trace"]["series"] and d["trace"]["x"] == "iteration"
    diag = {r["series"]: r for r in d["diagnostics"]}
    assert diag["log_likelihood_per_token"]["n"] == 20 and diag["log_likelihood_per_token"]["rhat"] is not None
    assert d["hidden"] is None and d["word_freq_source"] == "corpus"
    # without a corpus: prevalence from the training doc_topic_, word frequencies from the model, no examples
    d0 = report_data(lda)
    assert d0["examples"] == [] and d0["prevalence_source"].startswith("training doc_topic_")
    with pytest.raises(InvalidParameterError, match="'n_words' parameter of report_data"):
        report_data(lda, n_words=0)


def test_report_data_harmonium(rsm, corpus):
    d = report_data(rsm, corpus, n_words=5)
    W = rsm.model_.W(0)
    b = rsm.model_.params["v:0:bias"]
    z = b[:, None] + W
    phi = (np.exp(z - z.max(0)) / np.exp(z - z.max(0)).sum(0)).T
    np.testing.assert_allclose(topic_distributions(rsm)[0], phi, rtol=1e-6)
    assert d["kind"] == "harmonium" and len(d["hidden"]) == 3
    top = d["hidden"][0]["positive"][0]
    assert top[1] == pytest.approx(float(W[:, 0].max()))
    with pytest.raises(InvalidParameterError, match="needs a fitted topic model"):
        report_data(object())


# -- the page ------------------------------------------------------------------------------------------
class _Collect(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def _parse(text):
    p = _Collect()
    p.feed(text)
    return p.tags


def _external(tags):
    bad = []
    for tag, attrs in tags:
        for key in ("src", "href", "xlink:href", "data", "action"):
            v = (attrs.get(key) or "").strip().lower()
            if v.startswith(("http:", "https:", "//", "ftp:")):
                bad.append((tag, key, v))
        if tag == "link" or (tag == "script" and "src" in attrs):
            bad.append((tag, attrs))
    return bad


@pytest.mark.parametrize("which", ["lda", "rsm"])
def test_page_structure_and_self_containment(which, request, corpus, tmp_path):
    model = request.getfixturevalue(which)
    path = write_report(model, tmp_path / "r.html", corpus, n_words=12)
    text = path and (tmp_path / "r.html").read_text()
    tags = _parse(text)
    ids = {a.get("id") for _, a in tags}
    for needed in ("topic-map", "topic-select", "lambda", "topic-words", "prevalence-chart", "example-docs",
                   "diagnostics", "report-data"):
        assert needed in ids, needed
    assert ("hidden-weights" in ids) == (which == "rsm")
    K = 4 if which == "lda" else 3
    assert sum(1 for t, a in tags if "topic-circle" in a.get("class", "")) == K
    assert sum(1 for t, a in tags if t == "svg" and "trace-chart" in a.get("class", "")) >= 1
    assert _external(tags) == [] and "https://" not in text and "http://" not in text
    payload = text.split('<script type="application/json" id="report-data">')[1].split("</script>")[0]
    assert json.loads(payload)["n_topics"] == K


def test_self_containment_check_catches_external_resources():
    # negative control for _external: a CDN stylesheet and script are caught
    tags = _parse('<link rel="stylesheet" href="https://cdn.example/x.css"><script src="https://cdn.example/d3.js">'
                  '</script><img src="//cdn.example/a.png"><a href="#ok">x</a>')
    assert {b[0] for b in _external(tags)} == {"link", "script", "img"}


def test_terms_cannot_break_out_of_the_data_script(lda):
    d = report_data(lda, n_words=5)
    d["vocabulary"][0] = "</script><script>alert(1)</script>"
    d["topics"][0]["top"][0] = "<b>&"
    text = render_report(d)
    assert text.count("</script>") == 2  # the data block's and the code block's
    payload = text.split('id="report-data">')[1].split("</script>")[0]
    assert json.loads(payload)["vocabulary"][0] == "</script><script>alert(1)</script>"
    assert "<b>&" not in text.split('<script type="application/json"')[0]


# -- pyLDAvis ---------------------------------------------------------------------------------------------
def test_pyldavis_data(lda, corpus):
    d = pyldavis_data(lda, corpus, R=8)
    assert list(d) == ["mdsDat", "tinfo", "token.table", "R", "lambda.step", "plot.opts", "topic.order"]
    mds = d["mdsDat"]
    assert list(mds) == ["x", "y", "topics", "cluster", "Freq"] and mds["topics"] == [1, 2, 3, 4]
    assert sum(mds["Freq"]) == pytest.approx(100.0) and mds["Freq"] == sorted(mds["Freq"], reverse=True)
    assert sorted(d["topic.order"]) == [1, 2, 3, 4]
    ti = d["tinfo"]
    assert list(ti) == ["Term", "Freq", "Total", "Category", "logprob", "loglift"]
    assert len({len(v) for v in ti.values()}) == 1
    assert ti["Category"][:8] == ["Default"] * 8 and {f"Topic{k}" for k in range(1, 5)} <= set(ti["Category"])
    counts = dict(zip(corpus.vocabulary.terms, np.asarray(corpus.counts.sum(axis=0)).ravel(), strict=True))
    phi = lda.topic_word_
    for term, freq, total, cat, lp in zip(ti["Term"], ti["Freq"], ti["Total"], ti["Category"], ti["logprob"],
                                          strict=True):
        assert total == counts[term] and 0 < freq <= total + 1e-9
        if cat != "Default":  # logprob is log phi of the original topic shown as number cat
            k = d["topic.order"][int(cat[5:]) - 1] - 1
            assert lp == pytest.approx(np.log(phi[k, lda.vocabulary_.index(term)]), abs=1e-4)
    tt = d["token.table"]
    per_term = {}
    for t, f in zip(tt["Term"], tt["Freq"], strict=True):
        per_term[t] = per_term.get(t, 0.0) + f
    assert all(0.99 < s <= 1.0 + 1e-5 for s in per_term.values())
    json.dumps(d, allow_nan=False)
    # without a corpus, the token count is read off the Gibbs trace: log p(w, z) / (log p(w, z) per token)
    from harmonium.report.pyldavis import _training_tokens

    assert _training_tokens(lda) == corpus.n_tokens
    d0 = pyldavis_data(lda, R=8)
    assert d0["R"] == 8 and d0["tinfo"]["Category"][:8] == ["Default"] * 8
    with pytest.raises(InvalidParameterError, match="'R' parameter"):
        pyldavis_data(lda, R=0)
