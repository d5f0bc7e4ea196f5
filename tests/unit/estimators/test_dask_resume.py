"""``fit(..., n_shards=P, resume=True)`` of the distributed fits (run in this process, client=None) is the
uninterrupted run: AD-LDA, batch and online VB with a distributed E-step, data-parallel CD. Each first run
stops early through its callback (writing a checkpoint there), the second resumes from that file; a resume
with another n_shards or seed is refused."""

from __future__ import annotations

import numpy as np
import pytest

from harmonium.corpus.ondisk import build_ondisk_corpus
from harmonium.datasets import load_debian
from harmonium.errors import InvalidParameterError, ModelFileError
from harmonium.estimators.lda import LDA


@pytest.fixture(scope="module")
def corpus_dir(tmp_path_factory):
    corpus = load_debian(n_docs=300).drop_empty()
    path = tmp_path_factory.mktemp("ondisk")
    build_ondisk_corpus([corpus], path, corpus.vocabulary)
    return str(path)


def _stop_at(n):
    return lambda it, n_iter, info: it >= n


def _same_trace(a, b):
    assert a.keys() == b.keys()
    for k in a:
        if k != "seconds":
            np.testing.assert_array_equal(a[k], b[k], err_msg=k)


@pytest.mark.parametrize("kw, stop", [
    (dict(inference="parallel_gibbs", n_iter=8, evaluate_every=2), 4),
    (dict(inference="vb", n_iter=6, evaluate_every=2), 4),
    (dict(inference="online_vb", n_iter=2, batch_size=64, evaluate_every=2), 2),
])
def test_lda_resume_is_the_uninterrupted_run(corpus_dir, tmp_path, kw, stop):
    kw = dict(n_topics=5, random_state=4, **kw)
    full = LDA(**kw).fit(corpus_dir, n_shards=2)
    ckpt = str(tmp_path / "lda.hmn")
    first = LDA(**kw, checkpoint_path=ckpt, checkpoint_every=100).fit(corpus_dir, n_shards=2, callback=_stop_at(stop))
    assert first.n_iter_ < full.n_iter_
    resumed = LDA(**kw, checkpoint_path=ckpt).fit(corpus_dir, n_shards=2, resume=True)
    assert resumed.resumed_from_ == first.n_iter_ and resumed.n_iter_ == full.n_iter_
    np.testing.assert_array_equal(resumed.topic_word_, full.topic_word_)
    _same_trace(resumed.trace_, full.trace_)
    assert resumed.rng_state_ == full.rng_state_
    with pytest.raises((InvalidParameterError, ModelFileError)):  # other shards
        LDA(**kw, checkpoint_path=ckpt).fit(corpus_dir, n_shards=3, resume=True)
    with pytest.raises(InvalidParameterError, match="random_state"):
        LDA(**{**kw, "random_state": 5}, checkpoint_path=ckpt).fit(corpus_dir, n_shards=2, resume=True)


def test_harmonium_resume_is_the_uninterrupted_run(corpus_dir, tmp_path):
    from harmonium.estimators.efh import ReplicatedSoftmax

    kw = dict(n_hidden=4, n_iter=4, learning="pcd", momentum=0.5, batch_size=50, random_state=2)
    full = ReplicatedSoftmax(**kw).fit(corpus_dir, n_shards=2)
    ckpt = str(tmp_path / "rsm.hmn")
    ReplicatedSoftmax(**kw, checkpoint_path=ckpt).fit(corpus_dir, n_shards=2, callback=_stop_at(2))
    resumed = ReplicatedSoftmax(**kw, checkpoint_path=ckpt).fit(corpus_dir, n_shards=2, resume=True)
    assert resumed.resumed_from_ == 2 and resumed.n_iter_ == 4
    for k, v in full.model_.params.items():
        np.testing.assert_array_equal(resumed.model_.params[k], v, err_msg=k)
    _same_trace(resumed.trace_, full.trace_)
    with pytest.raises(InvalidParameterError, match="n_hidden"):
        ReplicatedSoftmax(**{**kw, "n_hidden": 5}, checkpoint_path=ckpt).fit(corpus_dir, n_shards=2, resume=True)
