"""The harmonium estimators: fit / transform / score, model files, checkpoints, errors, the evaluation hook."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import harmonium
from harmonium.corpus import Corpus, train_test_split
from harmonium.errors import CorpusError, InvalidParameterError, NotFittedError
from harmonium.estimators.efh import EFH, GBEFH, DualWingHarmonium, RatePoisson, ReplicatedSoftmax
from harmonium.evaluation import log_likelihood, perplexity
from harmonium.evaluation.partition import exact_log_partition

FAST = {"n_iter": 3, "n_ais_runs": 20, "n_temperatures": 200, "random_state": 0}


@pytest.fixture(scope="module")
def corpus(synthetic):
    c, _, _ = synthetic
    feats = np.random.default_rng(0).normal(size=(c.n_docs, 2)) + c.counts[:, :2].toarray()
    return Corpus(c.counts, c.vocabulary, features=feats, feature_names=["a", "b"])


ESTIMATORS = [
    lambda: EFH(6, **FAST),
    lambda: EFH(4, wings=[("words", {"type": "binomial", "n_trials": 50})], hidden="bernoulli", learning="cd",
                learning_rate=0.01, **FAST),
    lambda: GBEFH(4, **FAST),
    lambda: DualWingHarmonium(3, **FAST),
    lambda: ReplicatedSoftmax(6, **FAST),
    lambda: RatePoisson(6, **FAST),
    lambda: EFH(4, wings=[("words", "poisson")], learning="cd", learning_rate=0.001, **FAST),
]
IDS = ["rbm", "binomial", "gbefh", "dual", "rsm", "rap", "poisson"]


@pytest.mark.parametrize("make", ESTIMATORS, ids=IDS)
def test_fit_transform_score_save_load(make, corpus, tmp_path):
    est = make().fit(corpus)
    z = est.transform(corpus[:7])
    assert z.shape == (7, est.n_hidden) and np.isfinite(z).all()
    assert est.n_iter_ == 3 and len(est.trace_["epoch"]) == 3
    assert np.isfinite(est.trace_["reconstruction_error"]).all()
    assert est.components_.shape == (est.n_hidden, corpus.n_words)
    ll = est.log_likelihood_documents(corpus[:20])
    assert ll.log_likelihood.shape == (20,) and np.all(ll.log_likelihood < 0) and np.all(ll.std_error >= 0)
    path = tmp_path / "model.hmn"
    est.save(path)
    back = harmonium.load(path)
    assert type(back) is type(est) and back._json_params() == est._json_params()
    np.testing.assert_array_equal(back.transform(corpus[:7]), z)
    np.testing.assert_array_equal(back.free_energy(corpus[:7]), est.free_energy(corpus[:7]))
    np.testing.assert_allclose(back.log_likelihood_documents(corpus[:20]).log_likelihood, ll.log_likelihood)


def test_rbm_uses_binary_occurrences_and_sparse_input(corpus):
    a = EFH(5, **FAST).fit(corpus)
    b = EFH(5, **FAST).fit((corpus.counts > 0).astype(np.int64))
    c = EFH(5, **FAST).fit(sp.csr_matrix(corpus.counts.toarray()))
    np.testing.assert_array_equal(a.components_, b.components_)
    np.testing.assert_array_equal(a.components_, c.components_)
    assert a.intercept_visible_.shape == (corpus.n_words,) and a.intercept_hidden_.shape == (5,)


def test_ais_score_agrees_with_exact_enumeration(corpus):
    est = EFH(8, n_iter=5, learning_rate=0.05, n_ais_runs=100, n_temperatures=1500, random_state=1).fit(corpus)
    exact = est.log_partition(method="exact").log_z
    ais = est.log_partition()
    assert abs(ais.log_z - exact) < 0.05
    res = log_likelihood(est, corpus[:50])  # dispatched to log_likelihood_documents
    manual = est.free_energy(corpus[:50])
    np.testing.assert_allclose(res.log_likelihood, -manual - ais.log_z, rtol=1e-5)
    assert est.score(corpus[:50]) == pytest.approx(res.log_likelihood.mean(), rel=1e-9)


def test_replicated_softmax_perplexity_on_a_split(corpus):
    train, test = train_test_split(corpus, 0.2, random_state=0)
    rsm = ReplicatedSoftmax(8, n_iter=5, learning_rate=0.01, n_ais_runs=50, n_temperatures=1000,
                            random_state=0).fit(train)
    res = rsm.perplexity(test)
    assert res.n_docs == test.n_docs and res.n_tokens == test.n_tokens
    # the same number through the evaluation layer
    assert perplexity(rsm, test).perplexity == pytest.approx(res.perplexity)
    # exact log Z per length: AIS within 0.05 nats at every length of the test set
    lengths = np.unique(test.doc_lengths)
    exact = exact_log_partition(rsm.model_.with_params(rsm.model_.params, dtype=np.float64), lengths).log_z
    ais = rsm.log_partition(lengths=lengths)
    assert np.abs(ais.log_z - exact).max() < 0.05
    # the uniform unigram model has perplexity V; a fitted RSM is far below it
    assert res.perplexity < corpus.n_words


def test_checkpoint_resume_is_bit_identical(corpus, tmp_path):
    path = tmp_path / "ckpt.hmn"
    full = EFH(5, n_iter=4, random_state=3).fit(corpus)
    stopped = EFH(5, n_iter=4, random_state=3, checkpoint_path=path, checkpoint_every=1)
    stopped.fit(corpus, callback=lambda it, n, info: it == 2)
    assert stopped.n_iter_ == 2
    resumed = EFH(5, n_iter=4, random_state=3, checkpoint_path=path, checkpoint_every=1).fit(corpus, resume=True)
    assert resumed.n_iter_ == 4
    for k, v in full.model_.params.items():
        np.testing.assert_array_equal(resumed.model_.params[k], v)
    with pytest.raises(InvalidParameterError, match="n_hidden"):
        EFH(6, n_iter=4, checkpoint_path=path).fit(corpus, resume=True)
    with pytest.raises(CorpusError, match="different data"):
        EFH(5, n_iter=4, random_state=3, checkpoint_path=path).fit(corpus[:100], resume=True)


def test_pcd_and_cd_with_schedules_momentum_weight_decay(corpus):
    for kw in ({"learning": "cd", "n_gibbs": 2}, {"mean_field": True}, {"lr_schedule": "exponential"},
               {"lr_schedule": "inverse", "momentum": 0.9, "weight_decay": 0.001}, {"dtype": "float64"}):
        est = EFH(4, **FAST, **kw).fit(corpus)
        assert np.isfinite(est.components_).all(), kw


def test_partial_fit_continues(corpus):
    est = EFH(4, random_state=0)
    est.partial_fit(corpus[:150])
    w1 = est.components_.copy()
    est.partial_fit(corpus[150:])
    assert est.n_iter_ == 2 and not np.array_equal(est.components_, w1)


def test_dual_wing_feature_inputs(corpus):
    a = DualWingHarmonium(3, **FAST).fit(corpus)
    b = DualWingHarmonium(3, **FAST).fit(Corpus(corpus.counts, corpus.vocabulary), features=corpus.features)
    np.testing.assert_array_equal(a.model_.W(1), b.model_.W(1))
    np.testing.assert_array_equal(a.transform(corpus[:4]), b.transform(corpus[:4].counts, features=corpus.features[:4]))
    with pytest.raises(CorpusError, match="features"):
        DualWingHarmonium(3, **FAST).fit(Corpus(corpus.counts))
    with pytest.raises(CorpusError, match="rows"):
        DualWingHarmonium(3, **FAST).fit(corpus.counts, features=corpus.features[:10])


def test_clear_errors(corpus):
    with pytest.raises(InvalidParameterError, match="The 'n_hidden' parameter of EFH must be an int >= 1. Got 0."):
        EFH(0).fit(corpus)
    with pytest.raises(InvalidParameterError, match="learning"):
        ReplicatedSoftmax(learning="sgd").fit(corpus)
    with pytest.raises(InvalidParameterError, match="unit type"):
        EFH(wings=[("w", "gamma")]).fit(corpus)
    with pytest.raises(NotFittedError):
        EFH().transform(corpus)
    with pytest.raises(CorpusError, match="document"):
        EFH(wings=[("w", {"type": "binomial", "n_trials": 1})], **FAST).fit(corpus)
    with pytest.raises(CorpusError):
        EFH(**FAST).fit(-corpus.counts.toarray())
    est = EFH(3, **FAST).fit(corpus)
    with pytest.raises(CorpusError):
        est.transform(np.ones((2, corpus.n_words + 5)))
    with pytest.raises(CorpusError, match="empty"):
        ReplicatedSoftmax(3, **FAST).fit(np.vstack([np.zeros((1, 5)), np.ones((3, 5))]))
