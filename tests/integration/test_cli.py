"""The ``harmonium`` command line end to end: fit, save, load, topics, transform, evaluate, info."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest

from harmonium.cli.main import main
from harmonium.corpus.formats import write_corpus


@pytest.fixture(scope="module")
def tsv(tmp_path_factory):
    from tests.conftest import lda_corpus

    corpus, _, _ = lda_corpus(seed=2, n_docs=200)
    path = tmp_path_factory.mktemp("cli") / "docs.tsv"
    write_corpus(corpus, path)
    return path


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_fit_topics_info_transform_evaluate(tsv, tmp_path, capsys):
    model = tmp_path / "m.hmn"
    code, out, err = run(capsys, "fit", tsv, "-k", 4, "--n-iter", 20, "--seed", 1, "--test-size", 0.2, "-j", 2,
                         "--inference", "parallel_gibbs", "--optimize-interval", 5,
                         "-o", model, "--json")
    assert code == 0, err
    summary = json.loads(out)
    assert summary["n_topics"] == 4 and summary["seed"] == 1 and summary["heldout_perplexity"] > 1
    assert model.exists()

    code, out, _ = run(capsys, "topics", model, "-n", 3, "--json")
    topics = json.loads(out)
    assert code == 0 and len(topics) == 4 and all(len(t["words"]) == 3 for t in topics)

    code, out, _ = run(capsys, "info", model, "--json")
    info = json.loads(out)
    assert info["class"] == "LDA" and info["params"]["n_topics"] == 4 and info["iterations"] == 20

    theta_csv = tmp_path / "theta.csv"
    code, out, _ = run(capsys, "transform", model, tsv, "-o", theta_csv)
    assert code == 0
    rows = theta_csv.read_text().splitlines()
    assert rows[0].startswith("doc_id,topic_0") and len(rows) == 201
    theta_npy = tmp_path / "theta.npy"
    code, _, _ = run(capsys, "transform", model, tsv, "-o", theta_npy)
    theta = np.load(theta_npy, allow_pickle=False)
    assert theta.shape == (200, 4)
    np.testing.assert_allclose(theta.sum(axis=1), 1.0)

    code, out, _ = run(capsys, "evaluate", model, tsv, "--json")
    res = json.loads(out)
    assert code == 0 and res["perplexity"] > 1 and res["n_tokens"] > 0


def test_fit_on_bundled_debian_subset(tmp_path, capsys):
    model = tmp_path / "d.hmn"
    code, out, err = run(capsys, "fit", "debian", "--n-docs", 800, "-k", 5, "--n-iter", 10, "--seed", 0,
                         "-o", model, "-q")
    assert code == 0, err
    assert "Fitted LDA K=5 on 800 documents" in out
    code, out, _ = run(capsys, "evaluate", model, "debian", "--n-docs", 300)
    assert code == 0 and "Held-out perplexity" in out


def test_checkpoint_and_resume(tsv, tmp_path, capsys):
    ckpt = tmp_path / "run.ckpt"
    a, b = tmp_path / "a.hmn", tmp_path / "b.hmn"
    assert run(capsys, "fit", tsv, "-k", 3, "--n-iter", 8, "--seed", 4, "-o", a, "-q")[0] == 0
    assert run(capsys, "fit", tsv, "-k", 3, "--n-iter", 8, "--seed", 4, "-o", b, "-q",
               "--checkpoint", ckpt, "--checkpoint-every", 3, "--resume")[0] == 0
    # resuming a finished checkpoint does no more work and gives the same model
    assert run(capsys, "fit", tsv, "-k", 3, "--n-iter", 8, "--seed", 4, "-o", b, "-q",
               "--checkpoint", ckpt, "--resume")[0] == 0
    from harmonium import load

    np.testing.assert_array_equal(load(a).topic_word_, load(b).topic_word_)


def test_errors_are_one_line_with_nonzero_exit(tmp_path, capsys):
    code, out, err = run(capsys, "fit", tmp_path / "missing.tsv", "-o", tmp_path / "m.hmn")
    assert code == 1 and err.startswith("harmonium: error:") and "missing.tsv" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1

    pkl = tmp_path / "model.hmn"
    pkl.write_bytes(pickle.dumps({"a": 1}))
    code, _, err = run(capsys, "topics", pkl)
    assert code == 1 and "pickle" in err and len(err.strip().splitlines()) == 1

    code, _, err = run(capsys, "fit", "debian", "-k", 0, "--n-docs", 50, "-o", tmp_path / "x.hmn", "-q")
    # the library's message in the CLI's words: the flag the user typed, not the Python argument
    assert code == 1 and "The --n-topics option must be an int >= 1. Got 0." in err and "n_topics" not in err

    code, _, err = run(capsys, "fit")
    assert code == 2 and "Missing argument" in err


def test_debug_shows_the_traceback(tmp_path):
    from harmonium.errors import CorpusError

    with pytest.raises(CorpusError, match="no such file"):
        main(["--debug", "fit", str(tmp_path / "missing.tsv"), "-o", str(tmp_path / "m.hmn")])


@pytest.mark.parametrize("inference", ["vb", "online_vb", "cvb0"])
def test_fit_by_variational_inference(tsv, tmp_path, capsys, inference):
    model = tmp_path / f"{inference}.hmn"
    code, out, err = run(capsys, "fit", tsv, "-k", 3, "--n-iter", 5, "--seed", 2, "--inference", inference,
                         "--batch-size", 7, "--test-size", 0.2, "-o", model)
    assert code == 0, err
    assert "Training " in out and "per token" in out and "Held-out perplexity" in out
    code, out, _ = run(capsys, "transform", model, tsv, "--json")
    assert code == 0


def test_fit_with_seed_words(tsv, tmp_path, capsys):
    from harmonium import load

    seeds = tmp_path / "seeds.json"
    seeds.write_text(json.dumps({"2": ["w000", "w001"]}))
    model = tmp_path / "seeded.hmn"
    code, _, err = run(capsys, "fit", tsv, "-k", 3, "--n-iter", 10, "--seed", 0, "-q", "--seed-words", seeds,
                       "--seed-weight", 40, "-o", model)
    assert code == 0, err
    m = load(model)
    assert m.seed_words == {"2": ["w000", "w001"]} and m.seed_weight == 40
    plain = tmp_path / "plain.hmn"
    assert run(capsys, "fit", tsv, "-k", 3, "--n-iter", 10, "--seed", 0, "-q", "-o", plain)[0] == 0
    # the seeded topic holds more of its seed words than the unseeded fit's topic 2
    assert m.topic_word_[2, [0, 1]].sum() > load(plain).topic_word_[2, [0, 1]].sum()


@pytest.mark.parametrize("content, match", [
    ('{"0": ["w000"', "is not valid JSON"),
    ('[["w000"]]', "holds a JSON list, not an object"),
    ('{"7": ["w000"]}', "topic 7, outside 0..2"),
    ('{"0": ["no-such-word"]}', "'no-such-word' for topic 0, which is not in the corpus vocabulary"),
    ('{"0": []}', "topic 0 an empty list"),
])
def test_fit_with_bad_seed_words(tsv, tmp_path, capsys, content, match):
    seeds = tmp_path / "seeds.json"
    seeds.write_text(content)
    code, _, err = run(capsys, "fit", tsv, "-k", 3, "--n-iter", 2, "-q", "--seed-words", seeds,
                       "-o", tmp_path / "m.hmn")
    assert code != 0 and match in err and "Traceback" not in err
    if "JSON" in match:
        assert "--seed-words" in err
