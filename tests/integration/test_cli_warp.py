"""``harmonium fit --sampler warp|auto`` end to end, and a bad sampler name."""

from __future__ import annotations

import json

import pytest

from harmonium.cli.main import main
from harmonium.corpus.formats import write_corpus


@pytest.fixture(scope="module")
def tsv(tmp_path_factory):
    from tests.conftest import lda_corpus

    corpus, _, _ = lda_corpus(seed=3, n_docs=150)
    path = tmp_path_factory.mktemp("cli_warp") / "docs.tsv"
    write_corpus(corpus, path)
    return path


@pytest.mark.parametrize("sampler", ["warp", "auto"])
def test_fit_with_warp_and_auto(tsv, tmp_path, capsys, sampler):
    # parallel_gibbs with hyperparameter optimisation: two worker blocks and an asymmetric alpha
    code = main([str(a) for a in ("fit", tsv, "-k", 4, "--n-iter", 12, "--seed", 1, "--test-size", 0.2, "-j", 2,
                                  "--inference", "parallel_gibbs", "--optimize-interval", 4, "--sampler", sampler,
                                  "-o", tmp_path / "m.hmn", "--json")])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads(out)["heldout_perplexity"] > 1


def test_bad_sampler_lists_the_choices(tsv, tmp_path, capsys):
    code = main(["fit", str(tsv), "--sampler", "wrap", "-o", str(tmp_path / "m.hmn")])
    out, err = capsys.readouterr()
    assert code != 0
    assert "--sampler" in err and "'wrap'" in err and "'warp'" in err and "'auto'" in err, err
