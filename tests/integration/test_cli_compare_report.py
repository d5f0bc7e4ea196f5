"""``harmonium compare`` and ``harmonium report`` end to end on a small labelled TSV corpus."""

from __future__ import annotations

import json

import numpy as np
import pytest

from harmonium.cli.main import main
from harmonium.corpus import Corpus
from harmonium.corpus.formats import write_corpus
from tests.conftest import lda_corpus


@pytest.fixture(scope="module")
def tsv(tmp_path_factory):
    corpus, _, theta = lda_corpus(seed=11, n_topics=3, n_words=40, n_docs=120, doc_length=30)
    labelled = Corpus(corpus.counts, corpus.vocabulary, doc_ids=corpus.doc_ids,
                      labels=np.array([f"t{k}" for k in theta.argmax(axis=1)]))
    path = tmp_path_factory.mktemp("cli2") / "docs.tsv"
    write_corpus(labelled, path)
    return path


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_compare_tables_files_and_resume(tsv, tmp_path, capsys):
    out_dir = tmp_path / "cmp"
    args = ["compare", tsv, "--label-column", "label", "-o", out_dir, "-m", "lsi,lda-vb", "-k", "2,3",
            "--set", "lda-vb:n_iter=10", "--no-plots", "-q"]
    code, out, err = run(capsys, *args)
    assert code == 0, err
    assert "4 cells (4 computed, 0 resumed)" in out
    assert "| LSI | " in out and "| LDA (VB) | " in out and "Held-out perplexity" in out
    assert (out_dir / "results.csv").exists() and (out_dir / "results.json").exists()
    code, out, err = run(capsys, *args[:-2], "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert len(doc["records"]) == 4 and doc["config"]["corpus"]["n_docs"] == 120
    code, out, err = run(capsys, *args)
    assert code == 0 and "(0 computed, 4 resumed)" in out


def test_compare_errors_are_one_line(tsv, tmp_path, capsys):
    code, out, err = run(capsys, "compare", tsv, "-o", tmp_path, "-m", "lsi,nope", "-q")
    assert code == 1 and "unknown model 'nope'" in err and "Traceback" not in err
    code, out, err = run(capsys, "compare", tsv, "-o", tmp_path, "-m", "lsi", "-q")  # no --label-column
    assert code == 1 and "needs labels" in err
    code, out, err = run(capsys, "compare", tsv, "-o", tmp_path, "--set", "lda-vb-n_iter", "-q")
    assert code == 2 and "MODEL:PARAM=VALUE" in err
    code, out, err = run(capsys, "compare", tsv, "-o", tmp_path, "-k", "4,x", "-q")
    assert code == 2 and "--n-topics" in err


def test_compare_subsets_and_plots_through_the_library(tsv, tmp_path, capsys, monkeypatch):
    common = ("compare", tsv, "--label-column", "label", "-m", "lsi", "-k", "2", "--n-docs", "60")
    code, out, err = run(capsys, *common, "-o", tmp_path / "a", "--no-plots", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["config"]["corpus"]["n_docs"] == 60 and not any(f.endswith(".png") for f in doc["files"])
    monkeypatch.setitem(__import__("sys").modules, "matplotlib", None)
    code, out, err = run(capsys, *common, "-o", tmp_path / "b", "-q")
    assert code == 1 and "pass --no-plots" in err and "plots=False" not in err, err
    assert not (tmp_path / "b" / "cells").exists()  # refused before the grid, not after it


def test_report_command(tsv, tmp_path, capsys):
    model = tmp_path / "m.hmn"
    code, _, err = run(capsys, "fit", tsv, "-k", 3, "--n-iter", 20, "--seed", 0, "-o", model, "-q")
    assert code == 0, err
    html_path, vis = tmp_path / "r.html", tmp_path / "r.json"
    code, out, err = run(capsys, "report", model, "-o", html_path, "--corpus", tsv, "-n", 8, "--pyldavis", vis)
    assert code == 0, err
    text = html_path.read_text()
    assert 'id="topic-map"' in text and 'id="example-docs"' in text and "http://" not in text
    assert json.loads(vis.read_text())["R"] == 8
    code, out, err = run(capsys, "report", tmp_path / "missing.hmn", "-o", html_path)
    assert code == 1 and "missing.hmn" in err
