"""The command line on a newcomer's path (issue 20): vocabulary safety, early output checks, honest resume,
the readers' options as flags, and messages in the CLI's words."""

from __future__ import annotations

import pytest

from harmonium.cli._options import cli_message
from harmonium.cli.main import main

TRAIN = ["apple banana apple cherry", "banana cherry date", "apple date date egg", "egg fig apple",
         "fig banana grape", "grape apple egg", "cherry fig fig", "date egg banana"]


def _tsv(path, texts):
    path.write_text("text\tlabel\n" + "".join(f"{t}\t{'ab'[i % 2]}\n" for i, t in enumerate(texts)))
    return path


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    d = tmp_path_factory.mktemp("newcomer")
    train = _tsv(d / "train.tsv", TRAIN)
    assert main(["fit", str(train), "-k", "2", "--n-iter", "5", "--seed", "1", "-o", str(d / "m.hmn"), "-q"]) == 0
    return d / "m.hmn"


# -- vocabulary safety ------------------------------------------------------------------------------------
@pytest.mark.parametrize("command", ["transform", "evaluate", "report"])
def test_a_corpus_without_a_known_word_is_one_error_line(fitted, tmp_path, capsys, command):
    other = _tsv(tmp_path / "other.tsv", ["zebra yak xenon", "yak wolf zebra"])
    out_file = tmp_path / "out.csv"
    args = {"transform": ("transform", fitted, other, "-o", out_file),
            "evaluate": ("evaluate", fitted, other),
            "report": ("report", fitted, "-o", tmp_path / "r.html", "-c", other)}[command]
    code, _, err = run(capsys, *args)
    assert code == 1 and len(err.strip().splitlines()) == 1, err
    assert "none of the 6 tokens of the corpus is a word of the model's vocabulary" in err
    assert "no tokens" not in err  # evaluate used to say "the held-out corpus has no tokens"
    assert not out_file.exists() and not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("command", ["transform", "evaluate", "report"])
def test_unknown_words_are_one_warning_line(fitted, tmp_path, capsys, command):
    half = _tsv(tmp_path / "half.tsv", ["apple zebra banana", "yak cherry date apple"])  # 2 of 7 unknown
    args = {"transform": ("transform", fitted, half),
            "evaluate": ("evaluate", fitted, half, "--measure", "completion", "--observed-fraction", 0.5),
            "report": ("report", fitted, "-o", tmp_path / "r.html", "-c", half)}[command]
    code, out, err = run(capsys, *args)
    assert code == 0, err
    lines = err.strip().splitlines()
    assert lines == ["harmonium: warning: " + str(half) + ": 28.6% of the corpus's tokens (2 of 7) are words outside "
                     "the model's vocabulary and are dropped (most frequent: 'yak', 'zebra')."]


def test_bare_word_ids_beyond_the_vocabulary_are_an_error(fitted, tmp_path, capsys):
    import numpy as np

    from harmonium.corpus import Corpus
    from harmonium.corpus.formats import write_corpus

    wide = tmp_path / "wide.ldac"
    write_corpus(Corpus(np.ones((2, 9), dtype=int)), wide, vocab_path=False)  # the model has 7 words
    code, _, err = run(capsys, "transform", fitted, wide)
    assert code == 1 and "word id 7 in document 0 is beyond the model's vocabulary of 7 words" in err
    assert "--vocab-file" in err and "vocab_path" not in err


# -- fail before the work ------------------------------------------------------------------------------------
def test_fit_checks_the_output_path_before_fitting(tmp_path, capsys, monkeypatch):
    from harmonium.estimators import LDA

    def never(*a, **k):
        raise AssertionError("fitted before the output path was checked")

    monkeypatch.setattr(LDA, "fit", never)
    train = _tsv(tmp_path / "train.tsv", TRAIN)
    target = tmp_path / "missing_dir" / "m.hmn"
    code, _, err = run(capsys, "fit", train, "-k", 2, "--n-iter", 3, "-o", target, "-q")
    assert code == 1 and err.strip() == (f"harmonium: error: Cannot write '{target}': the folder "
                                         f"'{target.parent}' does not exist; create it first.")
    code, _, err = run(capsys, "fit", train, "-o", tmp_path / "m.hmn", "--checkpoint", target, "-q")
    assert code == 1 and f"Cannot write '{target}'" in err and ".tmp" not in err


@pytest.mark.parametrize("command", ["transform", "report", "compare"])
def test_other_outputs_are_checked_first(fitted, tmp_path, capsys, command):
    train = _tsv(tmp_path / "train.tsv", TRAIN)
    (tmp_path / "afile").write_text("x")
    missing = tmp_path / "missing_dir" / "out.csv"
    args = {"transform": ("transform", fitted, train, "-o", missing),
            "report": ("report", fitted, "-o", missing),
            "compare": ("compare", train, "-o", tmp_path / "afile" / "grid", "-m", "lsi", "-k", 2, "-q")}[command]
    code, _, err = run(capsys, *args)
    assert code == 1 and len(err.strip().splitlines()) == 1 and ".tmp" not in err, err
    assert ("missing_dir" in err) if command != "compare" else ("afile' is a file, not a folder" in err)


# -- resume -----------------------------------------------------------------------------------------------
def test_resume_refuses_another_seed_and_says_where_it_resumed(tmp_path, capsys):
    train = _tsv(tmp_path / "train.tsv", TRAIN)
    ckpt = tmp_path / "run.ckpt"
    code, _, err = run(capsys, "fit", train, "-k", 2, "--n-iter", 4, "--seed", 7, "--checkpoint", ckpt,
                       "--checkpoint-every", 2, "-o", tmp_path / "a.hmn", "-q")
    assert code == 0, err
    code, out, err = run(capsys, "fit", train, "-k", 2, "--n-iter", 6, "--seed", 8, "--checkpoint", ckpt, "--resume",
                         "-o", tmp_path / "b.hmn", "-q")
    assert code == 1 and not (tmp_path / "b.hmn").exists()
    assert "written by a run with --seed 7, but this LDA has --seed 8" in err and "random_state" not in err
    code, _, err = run(capsys, "fit", train, "-k", 3, "--n-iter", 6, "--checkpoint", ckpt, "--resume",
                       "-o", tmp_path / "b.hmn", "-q")
    assert code == 1 and "written with --n-topics 2, but this LDA has --n-topics 3" in err
    code, out, err = run(capsys, "fit", train, "-k", 2, "--n-iter", 6, "--seed", 7, "--checkpoint", ckpt, "--resume",
                         "-o", tmp_path / "b.hmn", "-q")
    assert code == 0, err
    assert f"harmonium: resumed from checkpoint {ckpt} at iteration 4 (seed 7)" in err
    assert "resumed at iteration 4" in out
    fresh = tmp_path / "fresh.ckpt"
    code, out, err = run(capsys, "fit", train, "-k", 2, "--n-iter", 2, "--checkpoint", fresh, "--resume",
                         "-o", tmp_path / "c.hmn", "-q")
    assert code == 0 and f"no checkpoint at {fresh} yet; started a new run" in err


def test_resume_without_checkpoint_names_the_flags(tmp_path, capsys):
    train = _tsv(tmp_path / "train.tsv", TRAIN)
    code, _, err = run(capsys, "fit", train, "--resume", "-o", tmp_path / "m.hmn", "-q")
    assert code == 2 and "--resume needs --checkpoint FILE" in err and "checkpoint_path" not in err


# -- the readers' options ---------------------------------------------------------------------------------
def test_encoding_and_columns_are_flags(tmp_path, capsys):
    latin = tmp_path / "latin.tsv"
    latin.write_bytes("id\tbody\tsection\nd1\tcaf\xe9 apple apple\tx\nd2\tbanana caf\xe9\ty\n".encode("latin-1"))
    code, _, err = run(capsys, "fit", latin, "-k", 2, "--n-iter", 2, "-o", tmp_path / "m.hmn", "-q",
                       "--text-column", "body")
    assert code == 1 and "pass the file's encoding (e.g. --encoding latin-1)" in err and "encoding=" not in err
    code, out, err = run(capsys, "fit", latin, "-k", 2, "--n-iter", 2, "-o", tmp_path / "m.hmn", "-q",
                         "--encoding", "latin-1", "--text-column", "body", "--label-column", "section",
                         "--id-column", "id")
    assert code == 0, err
    code, out, err = run(capsys, "transform", tmp_path / "m.hmn", latin, "--encoding", "latin-1",
                         "--text-column", "body", "--id-column", "id")
    assert code == 0 and out.splitlines()[1].startswith("d1,"), err
    code, out, err = run(capsys, "info", latin, "--encoding", "latin-1", "--text-column", "body",
                         "--label-column", "section")
    assert code == 0 and "has_labels: True" in out and "n_tokens: 5" in out, err
    code, _, err = run(capsys, "fit", latin, "-o", tmp_path / "m.hmn", "--text-column", "text", "-q",
                       "--encoding", "latin-1")
    assert code == 1 and "(--text-column) is not in the header" in err and "text_column" not in err


def test_an_option_the_format_does_not_take_is_refused(tmp_path, capsys):
    train = _tsv(tmp_path / "train.tsv", TRAIN)
    code, _, err = run(capsys, "fit", train, "--vocab-file", "v.txt", "-o", tmp_path / "m.hmn", "-q")
    assert code == 2 and "--vocab-file applies to uci/ldac/mm/npz corpora" in err
    code, _, err = run(capsys, "fit", tmp_path / "corpus.xyz", "-o", tmp_path / "m.hmn", "-q")
    assert code == 1 and "pass --format one of" in err and "format=" not in err


def test_cli_message_translation_table():
    assert cli_message("LDA.fit(resume=True) needs checkpoint_path to be set.") == "--resume needs --checkpoint FILE."
    assert cli_message("The 'text_column' parameter of table.read must be a str. Got 3.") == \
        "The --text-column option must be a str. Got 3."
    assert cli_message("checkpoint 'x' was written with topic_word_prior=0.01, but this LDA has "
                       "topic_word_prior=0.1; use the same settings or another checkpoint_path.") == \
        ("checkpoint 'x' was written with --beta 0.01, but this LDA has --beta 0.1; use the same settings or "
         "another --checkpoint.")
    # paths, file names and fitted attributes are left alone
    assert cli_message("wrote /tmp/test_size/a and test_size.hmn; see model.vocabulary_") == \
        "wrote /tmp/test_size/a and test_size.hmn; see model.vocabulary_"
