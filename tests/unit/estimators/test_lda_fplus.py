"""sampler="auto"'s per-sweep choice through the LDA estimator: the default, and its choices on resume.

sampler="fplus" alone (fit, same seed, resume; serial and AD-LDA) is tested beside "warp" in test_lda_warp.py."""

from __future__ import annotations

import numpy as np
import pytest

from harmonium.estimators import LDA
from harmonium.inference.mcmc.lda import fplus


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_auto_is_the_default_and_its_choices_resume_with_the_run(synthetic, tmp_path, monkeypatch, n_jobs):
    # a rule that switches from F+LDA to SparseLDA mid-run on this corpus: the threshold lies between the
    # word-list lengths of the first and the last sweep of a straight run. n_jobs=2: the word-partitioned
    # F+LDA and SparseLDA sweeps (parallel_gibbs.PartitionedAuto)
    corpus, _, _ = synthetic
    assert LDA(5).get_params()["sampler"] == "auto"
    seen = []
    real = fplus.fplus_is_cheaper
    monkeypatch.setattr(fplus, "fplus_is_cheaper", lambda kw, kd, *rest: seen.append(kw) or real(kw, kd, *rest))
    kw = dict(n_iter=12, burn_in=4, thin=2, random_state=5)
    if n_jobs > 1:
        kw.update(inference="parallel_gibbs", n_jobs=n_jobs)
    LDA(5, **kw).fit(corpus)
    assert seen[0] > seen[-1]
    threshold = (seen[0] + seen[-1]) / 2
    made = []
    original = fplus.AutoSweep.__init__

    def record(self, *a, **k):
        original(self, *a, **k)
        made.append(self)

    monkeypatch.setattr(fplus.AutoSweep, "__init__", record)
    monkeypatch.setattr(fplus, "fplus_is_cheaper", lambda kw, kd, *rest: kw > threshold)
    straight = LDA(5, **kw).fit(corpus)
    assert {"fplus", "sparse"} <= set(made[-1].choices)
    ckpt = tmp_path / "auto.ckpt"
    LDA(5, checkpoint_path=ckpt, checkpoint_every=3, **kw).fit(corpus, callback=lambda it, n, info: it == 7)
    resumed = LDA(5, checkpoint_path=ckpt, checkpoint_every=3, **kw).fit(corpus, resume=True)
    np.testing.assert_array_equal(resumed.topic_word_, straight.topic_word_)
    np.testing.assert_array_equal(resumed.doc_topic_, straight.doc_topic_)
