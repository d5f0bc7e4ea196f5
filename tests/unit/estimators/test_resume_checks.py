"""fit(resume=True) refuses a checkpoint of another run (seed, settings, data), naming the difference,
and says that it resumed and from which iteration (``resumed_from_`` and the ``harmonium`` logger)."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from harmonium.corpus import Corpus
from harmonium.errors import CorpusError, InvalidParameterError


@pytest.fixture(scope="module")
def corpus():
    rng = np.random.default_rng(0)
    return Corpus(rng.poisson(0.8, size=(30, 10)) + np.eye(30, 10, dtype=int), [f"w{i}" for i in range(10)])


def _lda(**kw):
    from harmonium.estimators import LDA

    return LDA(3, **kw)


def _hdp(**kw):
    from harmonium.estimators import HDP

    return HDP(**kw)


def _rsm(**kw):
    from harmonium.estimators import ReplicatedSoftmax

    return ReplicatedSoftmax(3, batch_size=10, **kw)


MAKERS = {"LDA": _lda, "HDP": _hdp, "ReplicatedSoftmax": _rsm}


@pytest.mark.parametrize("name", list(MAKERS))
def test_resume_refuses_another_seed(corpus, tmp_path, name):
    make = MAKERS[name]
    ckpt = tmp_path / "run.ckpt"
    make(n_iter=2, random_state=7, checkpoint_path=ckpt, checkpoint_every=1).fit(corpus)
    with pytest.raises(InvalidParameterError, match=r"written by a run with random_state=7, but this "
                       rf"{name} has random_state=8"):
        make(n_iter=4, random_state=8, checkpoint_path=ckpt).fit(corpus, resume=True)


@pytest.mark.parametrize("name", list(MAKERS))
def test_resume_says_where_it_resumed(corpus, tmp_path, name, caplog):
    make = MAKERS[name]
    ckpt = tmp_path / "run.ckpt"
    first = make(n_iter=2, random_state=7, checkpoint_path=ckpt, checkpoint_every=1).fit(corpus)
    assert first.resumed_from_ is None
    with caplog.at_level(logging.INFO, logger="harmonium"):
        again = make(n_iter=3, random_state=7, checkpoint_path=ckpt).fit(corpus, resume=True)
    assert again.resumed_from_ == 2 and again.n_iter_ == 3
    assert any("resumed from checkpoint" in r.getMessage() and "at iteration 2" in r.getMessage()
               for r in caplog.records)
    # random_state=None continues the checkpoint's stream (and its seed)
    free = make(n_iter=3, checkpoint_path=ckpt).fit(corpus, resume=True)
    assert free.resumed_from_ == 3 and free.seed_ == 7
    # a fresh fit on the same object forgets the resume
    again.set_params(checkpoint_path=None).fit(corpus)
    assert again.resumed_from_ is None


def test_resume_names_the_data_difference(corpus, tmp_path):
    ckpt = tmp_path / "run.ckpt"
    _lda(n_iter=2, random_state=1, checkpoint_path=ckpt).fit(corpus)
    with pytest.raises(CorpusError, match=r"different corpus \(n_docs 30 in the checkpoint, 20 now; n_tokens"):
        _lda(n_iter=2, random_state=1, checkpoint_path=ckpt).fit(corpus[:20], resume=True)
    other = corpus.with_counts(corpus.counts[:, ::-1])
    with pytest.raises(CorpusError, match=r"different corpus \(the same sizes but other tokens\)"):
        _lda(n_iter=2, random_state=1, checkpoint_path=ckpt).fit(other, resume=True)


def test_resume_names_the_setting_that_differs(corpus, tmp_path):
    from harmonium.estimators import HDP

    ckpt = tmp_path / "run.ckpt"
    HDP(n_iter=2, random_state=1, checkpoint_path=ckpt, doc_concentration_prior=(1.0, 1.0)).fit(corpus)
    with pytest.raises(InvalidParameterError, match=r"doc_concentration_prior=\[1.0, 1.0\], but this HDP has "
                       r"doc_concentration_prior=\(2.0, 1.0\)"):
        HDP(n_iter=2, checkpoint_path=ckpt, doc_concentration_prior=(2.0, 1.0)).fit(corpus, resume=True)
    # a tuple equal to the checkpoint's list is the same setting
    HDP(n_iter=3, checkpoint_path=ckpt, doc_concentration_prior=(1.0, 1.0)).fit(corpus, resume=True)


def test_adlda_resume_uses_the_same_checks(corpus, tmp_path):
    pytest.importorskip("dask")
    from harmonium.corpus.ondisk import build_ondisk_corpus
    from harmonium.estimators import LDA

    path = str(tmp_path / "ondisk")
    build_ondisk_corpus([corpus], path, corpus.vocabulary)
    ckpt = str(tmp_path / "run.hmn")

    def adlda(**kw):
        return LDA(3, inference="parallel_gibbs", checkpoint_path=ckpt, checkpoint_every=2, **kw)

    adlda(n_iter=2, random_state=7).fit(path, n_shards=2)
    with pytest.raises(InvalidParameterError, match="random_state=7, but this LDA has random_state=8"):
        adlda(n_iter=4, random_state=8).fit(path, n_shards=2, resume=True)
    resumed = adlda(n_iter=4, random_state=7).fit(path, n_shards=2, resume=True)
    assert resumed.resumed_from_ == 2 and resumed.n_iter_ == 4
