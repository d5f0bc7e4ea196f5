"""sampler="fplus" and sampler="auto"'s per-sweep choice through the LDA estimator: fitting, determinism,
resume, the default."""

from __future__ import annotations

import numpy as np
import pytest

from harmonium.estimators import LDA
from harmonium.inference.mcmc.lda import fplus


@pytest.mark.parametrize("inference", ["collapsed_gibbs", "parallel_gibbs"])
def test_fplus_fits_and_same_seed_gives_same_result(synthetic, inference):
    corpus, _, _ = synthetic
    kw = dict(sampler="fplus", inference=inference, n_jobs=2, n_iter=30)
    a = LDA(5, random_state=3, **kw).fit(corpus)
    b = LDA(5, random_state=3, **kw).fit(corpus)
    c = LDA(5, random_state=4, **kw).fit(corpus)
    assert a.trace_["log_joint"][-1] > a.trace_["log_joint"][0]
    np.testing.assert_array_equal(a.topic_word_, b.topic_word_)
    assert not np.array_equal(a.topic_word_, c.topic_word_)


@pytest.mark.parametrize("inference", ["collapsed_gibbs", "parallel_gibbs"])
def test_fplus_checkpoint_resume_is_bit_identical(synthetic, tmp_path, inference):
    corpus, _, _ = synthetic
    kw = dict(sampler="fplus", inference=inference, n_jobs=2, n_iter=12, burn_in=4, thin=2, random_state=5)
    straight = LDA(5, **kw).fit(corpus)
    ckpt = tmp_path / "fplus.ckpt"
    LDA(5, checkpoint_path=ckpt, checkpoint_every=3, **kw).fit(corpus, callback=lambda it, n, info: it == 7)
    resumed = LDA(5, checkpoint_path=ckpt, checkpoint_every=3, **kw).fit(corpus, resume=True)
    np.testing.assert_array_equal(resumed.topic_word_, straight.topic_word_)
    np.testing.assert_array_equal(resumed.doc_topic_, straight.doc_topic_)


def test_auto_is_the_default_and_its_choices_resume_with_the_run(synthetic, tmp_path, monkeypatch):
    # a rule that switches from F+LDA to SparseLDA mid-run on this corpus: the threshold lies between the
    # word-list lengths of the first and the last sweep of a straight run
    corpus, _, _ = synthetic
    assert LDA(5).get_params()["sampler"] == "auto"
    seen = []
    real = fplus.fplus_is_cheaper
    monkeypatch.setattr(fplus, "fplus_is_cheaper", lambda kw, kd: seen.append(kw) or real(kw, kd))
    kw = dict(n_iter=12, burn_in=4, thin=2, random_state=5)
    LDA(5, **kw).fit(corpus)
    assert seen[0] > seen[-1]
    threshold = (seen[0] + seen[-1]) / 2
    made = []
    original = fplus.AutoSweep.__init__

    def record(self, *a, **k):
        original(self, *a, **k)
        made.append(self)

    monkeypatch.setattr(fplus.AutoSweep, "__init__", record)
    monkeypatch.setattr(fplus, "fplus_is_cheaper", lambda kw, kd: kw > threshold)
    straight = LDA(5, **kw).fit(corpus)
    assert {"fplus", "sparse"} <= set(made[-1].choices)
    ckpt = tmp_path / "auto.ckpt"
    LDA(5, checkpoint_path=ckpt, checkpoint_every=3, **kw).fit(corpus, callback=lambda it, n, info: it == 7)
    resumed = LDA(5, checkpoint_path=ckpt, checkpoint_every=3, **kw).fit(corpus, resume=True)
    np.testing.assert_array_equal(resumed.topic_word_, straight.topic_word_)
    np.testing.assert_array_equal(resumed.doc_topic_, straight.doc_topic_)
