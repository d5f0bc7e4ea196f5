"""The parallel sampler's held-out perplexity matches the serial exact sampler's.

Debian subset, K = 20, 100 sweeps, two seeds each; the seed-to-seed spread of
either sampler is about 2%, so the means must agree within 3%, with the default sampler ("auto": here the
word-partitioned SparseLDA sweep) and with the word-partitioned F+LDA sweep. A parallel
sampler whose workers' counts are not merged (negative control) must miss: with the default sparse
sampler (word-partitioned) those are the workers' n_k changes; AD-LDA's unmerged n_wk moves are the
negative control of tests/unit/inference/test_parallel_gibbs.py.
"""

from __future__ import annotations

import numpy as np
import pytest

import harmonium
from harmonium.corpus import train_test_split
from harmonium.datasets import load_debian
from harmonium.inference.mcmc.lda import parallel_gibbs


@pytest.fixture(scope="module")
def split():
    corpus = load_debian(n_docs=8000)
    train, test = train_test_split(corpus, 0.2, random_state=0)
    return train.drop_empty(), test


def _mean_perplexity(split, **kw):
    train, test = split
    fits = [harmonium.LDA(20, n_iter=100, random_state=s, **kw).fit(train) for s in (0, 1)]
    return np.mean([lda.completion_perplexity(test).perplexity for lda in fits])


@pytest.fixture(scope="module")
def serial(split):
    return _mean_perplexity(split)


@pytest.mark.parametrize("sampler", ["auto", "fplus"])
def test_parallel_matches_serial(split, serial, sampler):
    # "fplus": the word-partitioned F+LDA sweep, which "auto" runs on 2 threads where its rule picks F+LDA
    parallel = _mean_perplexity(split, inference="parallel_gibbs", n_jobs=2, sampler=sampler)
    assert abs(parallel - serial) / serial < 0.03, (parallel, serial)


def test_negative_control_unmerged_parallel_is_worse(split, serial, monkeypatch):
    monkeypatch.setattr(parallel_gibbs, "merge_topic_totals", lambda *args: None)
    broken = _mean_perplexity(split, inference="parallel_gibbs", n_jobs=2)
    assert abs(broken - serial) / serial > 0.03, (broken, serial)
