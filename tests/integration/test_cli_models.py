"""``harmonium fit --model NAME`` for every model of the estimator registry, and the library functions under the CLI
(issue 19 item 4): the CLI only parses; corpus loading, the Dask client, the split + fit + score are library calls."""

from __future__ import annotations

import ast
import json
import pathlib

import numpy as np
import pytest

from harmonium.cli.main import fit as fit_command
from harmonium.cli.main import main
from harmonium.corpus.formats import write_corpus
from harmonium.estimators.registry import ESTIMATORS

AIS = ("--ais-runs", 4, "--ais-temperatures", 30)


@pytest.fixture(scope="module")
def tsv(tmp_path_factory):
    from harmonium.corpus import Corpus
    from tests.conftest import lda_corpus

    corpus, _, _ = lda_corpus(seed=3, n_topics=3, n_words=25, n_docs=80, doc_length=10)
    rng = np.random.default_rng(0)
    corpus = Corpus(corpus.counts, corpus.vocabulary, doc_ids=corpus.doc_ids,
                    features=rng.normal(size=(corpus.n_docs, 2)), feature_names=["f1", "f2"])
    path = tmp_path_factory.mktemp("models") / "docs.tsv"
    write_corpus(corpus, path)
    return path


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_rsm_end_to_end(tsv, tmp_path, capsys):
    from harmonium import load

    model = tmp_path / "rsm.hmn"
    code, out, err = run(capsys, "fit", tsv, "--model", "rsm", "--n-hidden", 4, "--n-iter", 3, "--seed", 0,
                         "--param", "n_gibbs=2", "--test-size", 0.25, *AIS, "-o", model, "--json")
    assert code == 0, err
    summary = json.loads(out)
    assert summary["class"] == "ReplicatedSoftmax" and summary["n_hidden"] == 4 and summary["n_iter"] == 3
    held = summary["heldout"]
    assert held["measure"] == "whole" and held["estimator"] == "ReplicatedSoftmax" and held["method"].endswith(".ais")
    assert summary["test_docs"] == 20 and summary["heldout_perplexity"] > 1
    rsm = load(model)
    assert type(rsm).__name__ == "ReplicatedSoftmax" and rsm.n_gibbs == 2 and rsm.n_hidden == 4

    code, out, err = run(capsys, "topics", model, "-n", 3, "--json")
    assert code == 0, err
    top = json.loads(out)
    assert len(top) == 4 and all(len(t["words"]) == 3 for t in top)

    code, out, err = run(capsys, "transform", model, tsv, "--json")
    assert code == 0, err
    theta = np.array(json.loads(out)["theta"])
    np.testing.assert_allclose(theta, rsm.transform(load_tsv(tsv)), rtol=1e-6)

    code, out, err = run(capsys, "evaluate", model, tsv, *AIS, "--json")
    assert code == 0, err
    res = json.loads(out)
    # the number rsm.perplexity gives with the same AIS settings
    ref = rsm.perplexity(load_tsv(tsv), n_runs=4, n_temperatures=30, random_state=0)
    assert res["perplexity"] == pytest.approx(ref.perplexity, rel=1e-12) and res["n_tokens"] == ref.n_tokens

    code, out, err = run(capsys, "info", model, "--json")
    info = json.loads(out)
    assert code == 0 and info["class"] == "ReplicatedSoftmax" and info["iterations"] == 3


def load_tsv(path):
    from harmonium.corpus import load_corpus

    return load_corpus(path)


@pytest.mark.parametrize("model, extra", [
    ("hdp", ("-k", 3, "--n-iter", 5)),
    ("efh", ("-k", 3, "--n-iter", 2)),
    ("gbefh", ("-k", 3, "--n-iter", 2)),
    ("dwh", ("-k", 3, "--n-iter", 2, "--feature-columns", "f1,f2")),
    ("rap", ("-k", 3, "--n-iter", 2)),
])
def test_every_model_fits_and_is_used(tsv, tmp_path, capsys, model, extra):
    path = tmp_path / f"{model}.hmn"
    code, out, err = run(capsys, "fit", tsv, "--model", model, *extra, "--seed", 1, "--test-size", 0.2,
                         "--particles", 3, *AIS, "-o", path, "-q")
    assert code == 0, err
    assert f"Fitted {ESTIMATORS[model].cls}" in out and "Held-out perplexity (whole documents" in out
    reader = ("--feature-columns", "f1,f2") if model == "dwh" else ()
    for args in (("topics", path), ("transform", path, tsv, *reader), ("evaluate", path, tsv, *reader, *AIS,
                                                                        "--particles", 3), ("info", path)):
        code, out, err = run(capsys, *args)
        assert code == 0, (args, err)


def test_the_model_choices_are_the_registry(capsys):
    choices = next(p for p in fit_command.params if p.name == "model").type.choices
    assert list(choices) == [name for name, spec in ESTIMATORS.items() if spec.cli]
    assert {"lda", "hdp", "rsm", "efh", "dwh"} <= set(choices)


def test_lda_whole_and_completion_are_labelled(tsv, tmp_path, capsys):
    from harmonium import load

    path = tmp_path / "lda.hmn"
    code, out, err = run(capsys, "fit", tsv, "-k", 3, "--n-iter", 10, "--seed", 0, "--test-size", 0.2,
                         "--particles", 4, "-o", path)
    assert code == 0, err
    assert "Held-out perplexity (whole documents, left-to-right with 4 particles; 16 documents" in out
    code, out, err = run(capsys, "evaluate", path, tsv, "--particles", 4, "--json")
    whole = json.loads(out)
    lda = load(path)
    assert whole["perplexity"] == lda.perplexity(load_tsv(tsv), n_particles=4, random_state=0).perplexity
    code, out, err = run(capsys, "evaluate", path, tsv, "--measure", "completion", "--json")
    comp = json.loads(out)
    assert comp["measure"] == "completion"
    assert comp["perplexity"] == lda.completion_perplexity(load_tsv(tsv), random_state=0).perplexity
    code, out, _ = run(capsys, "evaluate", path, tsv, "--measure", "completion")
    assert "(document completion" in out


@pytest.mark.parametrize("args, match", [
    (("--model", "rsm", "--alpha", 0.1), "--alpha applies to --model lda, not to --model rsm"),
    (("--model", "rsm", "--param", "no_such=1"), "--param no_such: ReplicatedSoftmax (--model rsm) has no parameter"),
    (("--model", "rsm", "--param", "oops"), "expected NAME=VALUE"),
    (("--model", "rsm", "--test-size", 0.2, "--measure", "completion"), "--measure completion"),
    (("--model", "nope",), "Invalid value for '-m' / '--model'"),
])
def test_options_a_model_does_not_take_are_usage_errors(tsv, tmp_path, capsys, args, match):
    code, _, err = run(capsys, "fit", tsv, *args, "-o", tmp_path / "m.hmn", "-q")
    assert code == 2 and match in err, err
    assert not (tmp_path / "m.hmn").exists()


def test_a_bad_value_is_the_estimators_message_in_the_clis_words(tsv, tmp_path, capsys):
    code, _, err = run(capsys, "fit", tsv, "--model", "rsm", "--param", "n_gibbs=0", "-o", tmp_path / "m.hmn", "-q")
    assert code == 1 and "The 'n_gibbs' parameter of ReplicatedSoftmax must be an int >= 1" in err, err


def test_the_cli_modules_import_no_cycle():
    import harmonium.cli

    root = pathlib.Path(harmonium.cli.__file__).parent
    graph = {}
    for path in root.glob("*.py"):
        mods = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("harmonium.cli."):
                mods.add(node.module.split(".")[2])
        graph[path.stem] = mods
    assert graph["_options"] == set() and graph["compare"] <= {"_options"} and graph["report"] <= {"_options"}

    def visit(node, stack):
        assert node not in stack, f"import cycle: {' -> '.join([*stack, node])}"
        for nxt in graph.get(node, ()):
            visit(nxt, [*stack, node])

    for node in graph:
        visit(node, [])


# -- the library functions under the CLI ---------------------------------------------------------------
def test_load_corpus_reads_files_bundled_and_ondisk(tsv, tmp_path):
    from harmonium.corpus import build_ondisk_corpus, load_corpus
    from harmonium.errors import InvalidParameterError

    c = load_corpus(tsv, feature_columns="f1,f2", n_docs=30)
    assert c.n_docs == 30 and c.features.shape == (30, 2)
    with pytest.raises(InvalidParameterError, match=r"vocab_path='v.txt' applies to uci/ldac/mm/npz corpora"):
        load_corpus(tsv, vocab_path="v.txt")
    with pytest.raises(InvalidParameterError, match="a bundled corpus, which takes no reader options"):
        load_corpus("debian", encoding="latin-1")
    assert load_corpus("debian", n_docs=40).n_docs <= 40
    build_ondisk_corpus([c], tmp_path / "od", c.vocabulary)
    od = load_corpus(tmp_path / "od")
    assert isinstance(od.counts.data, np.memmap) and od.n_tokens == c.n_tokens
    with pytest.raises(InvalidParameterError, match="an on-disk corpus, which takes no reader options"):
        load_corpus(tmp_path / "od", format="tsv")


def test_dask_client_without_a_cluster_is_none_and_both_is_an_error():
    from harmonium.errors import InvalidParameterError
    from harmonium.parallel import dask_client

    with dask_client() as client:
        assert client is None
    with pytest.raises(InvalidParameterError, match="not both"), dask_client("tcp://x:1", n_workers=2):
        pass
    with pytest.raises(InvalidParameterError, match="n_workers"), dask_client(n_workers=0):
        pass


def test_fit_and_score_is_the_cli_fit(tsv):
    from harmonium.corpus import load_corpus, train_test_split
    from harmonium.estimators import LDA
    from harmonium.estimators.workflow import fit_and_score

    corpus = load_corpus(tsv)
    rep = fit_and_score(LDA(3, n_iter=10, random_state=0), corpus, test_size=0.2, split_seed=0, n_particles=4)
    train, test = train_test_split(corpus, 0.2, random_state=0)
    ref = LDA(3, n_iter=10, random_state=0).fit(train.drop_empty())
    np.testing.assert_array_equal(rep.model.topic_word_, ref.topic_word_)
    assert rep.heldout.perplexity == ref.perplexity(test, n_particles=4).perplexity and rep.measure == "whole"
    assert rep.n_docs == train.drop_empty().n_docs and rep.last["iteration"] == ref.trace_["iteration"][-1]
