"""The experiment runner: the grid, the shared splits, the table files, resuming, and bad input."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from harmonium.corpus import Corpus
from harmonium.errors import CorpusError, InvalidParameterError
from harmonium.evaluation import LSI
from harmonium.experiments.compare import RESULT_COLUMNS, compare, restrict_vocabulary
from tests.conftest import lda_corpus

FAST = {"lda-vb": {"n_iter": 15}, "rsm": {"n_iter": 3, "n_ais_runs": 4, "n_temperatures": 100}}


@pytest.fixture(scope="module")
def labelled():
    corpus, _, theta = lda_corpus(seed=3, n_topics=3, n_words=40, n_docs=120, doc_length=30)
    return Corpus(corpus.counts, corpus.vocabulary, doc_ids=corpus.doc_ids,
                  labels=np.array([f"t{k}" for k in theta.argmax(axis=1)]))


@pytest.fixture(scope="module")
def grid(labelled, tmp_path_factory):
    out = tmp_path_factory.mktemp("compare")
    res = compare(labelled, ["lsi", "lda-vb", "rsm"], [2, 3], [0], out_dir=out, model_params=FAST)
    return res, out


def test_grid_records_and_files(grid, labelled):
    res, out = grid
    assert len(res.records) == 6 and res.n_computed == 6 and res.n_skipped == 0
    assert [(r["model"], r["n_topics"]) for r in res.records] == [
        ("LSI", 2), ("LSI", 3), ("LDA (VB)", 2), ("LDA (VB)", 3), ("Replicated Softmax", 2), ("Replicated Softmax", 3)]
    for r in res.records:
        assert 0.0 <= r["accuracy_1nn"] <= 1.0 and 0.0 <= r["accuracy_logreg"] <= 1.0
        assert r["n_class_train"] + r["n_class_test"] == labelled.n_docs and r["n_class_test"] == 60
        assert r["fit_seconds"] >= 0 and r["classification_fit_seconds"] >= 0
    lsi = [r for r in res.records if r["model"] == "LSI"]
    assert all(r["perplexity"] is None for r in lsi)  # not a probability model of counts
    scored = [r for r in res.records if r["model"] != "LSI"]
    # every scored model sees the same 12 test documents; a fitted model beats the uniform one (perplexity V = 40)
    assert {(r["n_test_docs"], r["n_test_tokens"]) for r in scored} == {(12, 360)}
    assert all(1.0 < r["perplexity"] < 40.0 for r in scored)
    assert {r["perplexity_method"] for r in scored} == {"left_to_right/cumulative", "ReplicatedSoftmax.ais"}
    # the dominant-topic labels are learnable: LDA's theta beats the majority class at the true K
    lda3 = next(r for r in res.records if r["model"] == "LDA (VB)" and r["n_topics"] == 3)
    assert lda3["accuracy_logreg"] > lda3["majority"] + 0.2

    with open(out / "results.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0]) == list(RESULT_COLUMNS) and len(rows) == 6
    assert rows[0]["perplexity"] == "" and float(rows[2]["perplexity"]) == pytest.approx(res.records[2]["perplexity"])
    doc = json.loads((out / "results.json").read_text())
    assert doc["records"] == res.records and doc["config"]["corpus"]["n_docs"] == labelled.n_docs
    assert len(list((out / "cells").glob("*.json"))) == 6


def test_tables(grid):
    res, _ = grid
    acc = res.accuracy_table("1nn").splitlines()
    assert acc[0] == "| model | K=2 | K=3 |" and len(acc) == 5
    ppl = res.perplexity_table().splitlines()
    assert len(ppl) == 4 and not any(line.startswith("| LSI") for line in ppl)  # LSI has no perplexity
    assert "±" in ppl[2]
    with pytest.raises(InvalidParameterError, match="'classifier'"):
        res.accuracy_table("svm")


def test_resume_skips_finished_cells_and_recomputes_missing_ones(grid, labelled):
    res, out = grid
    again = compare(labelled, ["lsi", "lda-vb", "rsm"], [2, 3], [0], out_dir=out, model_params=FAST)
    assert again.n_computed == 0 and again.n_skipped == 6 and again.records == res.records
    cell = out / "cells" / "LDA_VB___K3__seed0.json"
    cell.unlink()
    events = []
    third = compare(labelled, ["lsi", "lda-vb", "rsm"], [2, 3], [0], out_dir=out, model_params=FAST,
                    progress=events.append)
    assert third.n_computed == 1 and third.n_skipped == 5
    assert [e["event"] for e in events].count("start") == 1 and events[-1]["done"] == 6
    old = next(r for r in res.records if r["model"] == "LDA (VB)" and r["n_topics"] == 3)
    new = next(r for r in third.records if r["model"] == "LDA (VB)" and r["n_topics"] == 3)
    timing = ("fit_seconds", "eval_seconds", "classification_fit_seconds", "finished")
    assert {k: v for k, v in old.items() if k not in timing} == {k: v for k, v in new.items() if k not in timing}


def test_interrupted_run_resumes(labelled, tmp_path):
    calls, fail = [], [True]

    class Interrupted(Exception):
        pass

    class Flaky(LSI):
        def fit(self, corpus, y=None):
            calls.append(self.n_components)
            if self.n_components == 3 and fail[0]:
                raise Interrupted  # the run dies in the second cell (a crash, or the user's Ctrl-C)
            return super().fit(corpus)

    models = {"lsi": lambda k, s: Flaky(k, random_state=s)}
    with pytest.raises(Interrupted):
        compare(labelled, models, [2, 3], out_dir=tmp_path, tasks=("classification",))
    assert [p.name for p in (tmp_path / "cells").glob("*.json")] == ["lsi__K2__seed0.json"]
    assert not list(tmp_path.glob("results.*"))
    fail[0] = False
    res = compare(labelled, models, [2, 3], out_dir=tmp_path, tasks=("classification",))
    assert res.n_skipped == 1 and res.n_computed == 1 and calls == [2, 3, 3]


def test_rerun_with_other_settings_is_refused(grid, labelled):
    _, out = grid
    with pytest.raises(InvalidParameterError, match="n_particles.*another out_dir"):
        compare(labelled, ["lsi", "lda-vb", "rsm"], [2, 3], [0], out_dir=out, model_params=FAST, n_particles=7)
    with pytest.raises(InvalidParameterError, match="model parameters .*n_iter"):
        compare(labelled, ["lda-vb"], [2], [0], out_dir=out, model_params={"lda-vb": {"n_iter": 16}})


def test_restrict_vocabulary(labelled):
    small = restrict_vocabulary(labelled, 5)
    freq = np.asarray(labelled.counts.sum(axis=0)).ravel()
    top = sorted(labelled.vocabulary[int(i)] for i in np.argsort(-freq, kind="stable")[:5])
    assert sorted(small.vocabulary.terms) == top and small.empty_documents().size == 0


@pytest.mark.parametrize("kwargs, error, match", [
    ({"models": ["lda-gibs"]}, InvalidParameterError, "unknown model 'lda-gibs'; known: lsi, lda-gibbs"),
    ({"models": ["lsi", "lsi"]}, InvalidParameterError, "names 'lsi' twice"),
    ({"models": []}, InvalidParameterError, "at least one model"),
    ({"n_topics": [0, 4]}, InvalidParameterError, "'n_topics' parameter of compare must be a non-empty list"),
    ({"seeds": [1, 1]}, InvalidParameterError, "'seeds' parameter of compare has repeated"),
    ({"tasks": ("speed",)}, InvalidParameterError, "'tasks' parameter"),
    ({"classifiers": ("svm",)}, InvalidParameterError, "'classifiers' parameter"),
    ({"test_size": 1.5}, InvalidParameterError, "'test_size' parameter of compare must be a float in"),
    ({"max_words": 0}, InvalidParameterError, "'max_words'"),
    ({"n_particles": 0}, InvalidParameterError, "'n_particles'"),
    ({"model_params": {"lda-gibbs": {"n_iter": 5}}}, InvalidParameterError, "not in the grid"),
    ({"out_dir": None}, InvalidParameterError, "needs out_dir"),
])
def test_bad_input(labelled, tmp_path, kwargs, error, match):
    args = {"models": ["lsi"], "n_topics": [2], "out_dir": tmp_path, **kwargs}
    with pytest.raises(error, match=match):
        compare(labelled, **args)


def test_bad_corpus(labelled, tmp_path):
    with pytest.raises(CorpusError, match="expects a harmonium Corpus"):
        compare(labelled.counts, ["lsi"], [2], out_dir=tmp_path)
    unlabelled = Corpus(labelled.counts, labelled.vocabulary)
    with pytest.raises(CorpusError, match="needs labels .*tasks=\\('perplexity',\\)"):
        compare(unlabelled, ["lsi"], [2], out_dir=tmp_path)
    res = compare(unlabelled, ["lda-vb"], [2], out_dir=tmp_path, tasks=("perplexity",),
                  model_params={"lda-vb": {"n_iter": 5}})
    assert res.records[0]["accuracy_1nn"] is None and res.records[0]["perplexity"] > 1


def test_plots(grid, tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    from harmonium.report.plots import plot_compare

    res, out = grid
    paths = plot_compare(out, tmp_path)  # from the results.json folder
    assert sorted(paths) == ["accuracy_vs_k", "perplexity_vs_k", "time_vs_quality"]
    for p in paths.values():
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # several seeds with identical values (the mean may differ from them in the last bit) still plot
    many = [{**r, "seed": s, "accuracy_1nn": 0.4407, "accuracy_logreg": 0.8132702392002724} for r in res.records
            for s in range(3)]
    assert np.mean([0.4407] * 3) < 0.4407  # what made errorbar refuse "negative" bars
    assert (tmp_path / "many" / "accuracy_vs_k.png") == plot_compare(many, tmp_path / "many")["accuracy_vs_k"]
    monkeypatch.setitem(__import__("sys").modules, "matplotlib", None)
    with pytest.raises(ImportError, match=r"pip install 'harmonium\[plot\]'"):
        plot_compare(res, tmp_path)


def test_dual_wing_harmonium_is_classification_only(labelled, tmp_path):
    rng = np.random.default_rng(0)
    with_features = Corpus(labelled.counts, labelled.vocabulary, labels=labelled.labels,
                           features=rng.normal(size=(labelled.n_docs, 2)), feature_names=["a", "b"])
    res = compare(with_features, ["dwh"], [2], out_dir=tmp_path, model_params={"dwh": {"n_iter": 2}})
    r = res.records[0]
    assert r["model"] == "Dual-wing harmonium" and r["perplexity"] is None and r["n_test_docs"] is None
    assert 0 <= r["accuracy_1nn"] <= 1 and r["fit_seconds"] == r["classification_fit_seconds"]


def test_the_runner_draws_its_plots_on_a_seeded_subset(labelled, tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    res = compare(labelled, ["lsi"], [2], out_dir=tmp_path / "a", n_docs=50, plots=True)
    # LSI has accuracies and no perplexity: no perplexity figure
    assert sorted(res.plots) == ["accuracy_vs_k", "time_vs_quality"]
    for name, path in res.plots.items():
        assert path == tmp_path / "a" / f"{name}.png" and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the subset is split_seed's permutation, kept in corpus order (what the CLI's --n-docs always took)
    rec = res.records[0]
    assert res.config["corpus"]["n_docs"] == 50 and rec["n_class_train"] + rec["n_class_test"] == 50
    subset = labelled[np.sort(np.random.default_rng(0).permutation(labelled.n_docs)[:50])]
    same = compare(subset, ["lsi"], [2], out_dir=tmp_path / "b")
    assert same.config["corpus"] == res.config["corpus"] and same.plots == {}
    other = compare(labelled, ["lsi"], [2], out_dir=tmp_path / "c", n_docs=50, split_seed=1)
    assert other.config["corpus"] != res.config["corpus"]
    whole = compare(labelled, ["lsi"], [2], out_dir=tmp_path / "d", n_docs=10_000)
    assert whole.config["corpus"]["n_docs"] == labelled.n_docs
    # no matplotlib: one error before the grid runs, nothing written
    monkeypatch.setitem(__import__("sys").modules, "matplotlib", None)
    with pytest.raises(ImportError, match=r"pip install 'harmonium\[plot\]', or pass plots=False"):
        compare(labelled, ["lsi"], [2], out_dir=tmp_path / "e", plots=True)
    assert not (tmp_path / "e").exists()
    with pytest.raises(InvalidParameterError, match="'n_docs' parameter of compare must be None or an int >= 1"):
        compare(labelled, ["lsi"], [2], out_dir=tmp_path / "f", n_docs=0)
    with pytest.raises(InvalidParameterError, match="'plots' parameter of compare must be True or False"):
        compare(labelled, ["lsi"], [2], out_dir=tmp_path / "f", plots="yes")
