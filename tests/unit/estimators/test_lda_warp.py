"""sampler="warp" (and "fplus", the other word-major sampler) and sampler="auto" through the LDA estimator:
fitting, determinism, resume, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from harmonium.corpus.corpus import TokenStream
from harmonium.errors import InvalidParameterError
from harmonium.estimators import LDA
from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs
from harmonium.inference.mcmc.lda import fplus
from harmonium.inference.mcmc.lda import warp as lda_warp
from harmonium.models.directed.lda import make_model


@pytest.mark.parametrize("sampler", ["warp", "fplus"])  # the word-major samplers
@pytest.mark.parametrize("inference", ["collapsed_gibbs", "parallel_gibbs"])
def test_warp_fits_and_same_seed_gives_same_result(synthetic, inference, sampler):
    corpus, _, _ = synthetic
    kw = dict(sampler=sampler, inference=inference, n_jobs=2, n_iter=30)
    a = LDA(5, random_state=3, **kw).fit(corpus)
    b = LDA(5, random_state=3, **kw).fit(corpus)
    c = LDA(5, random_state=4, **kw).fit(corpus)
    assert a.trace_["log_joint"][-1] > a.trace_["log_joint"][0]
    np.testing.assert_array_equal(a.topic_word_, b.topic_word_)
    assert not np.array_equal(a.topic_word_, c.topic_word_)


@pytest.mark.parametrize("sampler", ["warp", "fplus"])
@pytest.mark.parametrize("inference", ["collapsed_gibbs", "parallel_gibbs"])
def test_warp_checkpoint_resume_is_bit_identical(synthetic, tmp_path, inference, sampler):
    corpus, _, _ = synthetic
    kw = dict(sampler=sampler, inference=inference, n_jobs=2, n_iter=12, burn_in=4, thin=2, random_state=5)
    straight = LDA(5, **kw).fit(corpus)
    ckpt = tmp_path / "warp.ckpt"
    LDA(5, checkpoint_path=ckpt, checkpoint_every=3, **kw).fit(corpus, callback=lambda it, n, info: it == 7)
    resumed = LDA(5, checkpoint_path=ckpt, checkpoint_every=3, **kw).fit(corpus, resume=True)
    np.testing.assert_array_equal(resumed.topic_word_, straight.topic_word_)
    np.testing.assert_array_equal(resumed.doc_topic_, straight.doc_topic_)
    assert resumed.rng_state_ == straight.rng_state_


def test_auto_never_runs_warp(synthetic, monkeypatch):
    # warp reached no measured cell's target first against F+LDA and SparseLDA, not even many topics on short
    # documents (benchmarks/lda/warp_crossover.md): auto is SparseLDA's family whatever K and document length
    short = TokenStream(np.arange(8, dtype=np.int64), np.arange(7, dtype=np.int32) % 5)  # 1 token a document
    for K in (5, 3000):
        assert not cgs.needs_doc_counts("auto", make_model(K, 5, 0.1, 0.01), short)  # warp would need n_dk
        assert isinstance(cgs.auto_sweep(make_model(K, 5, 0.1, 0.01), short), fplus.AutoSweep)
    corpus, _, _ = synthetic
    # few topics: auto is SparseLDA's family (no warp), each sweep SparseLDA's or F+LDA's by fplus_is_cheaper;
    # with a rule that never picks F+LDA it is the sparse chain itself
    monkeypatch.setattr(fplus, "fplus_is_cheaper", lambda *stats: False)
    a = LDA(5, sampler="auto", n_iter=5, random_state=1).fit(corpus)
    b = LDA(5, sampler="sparse", n_iter=5, random_state=1).fit(corpus)
    np.testing.assert_array_equal(a.topic_word_, b.topic_word_)


def test_bad_sampler_name_lists_the_choices(synthetic):
    corpus, _, _ = synthetic
    with pytest.raises(InvalidParameterError, match=r"'sampler' parameter of LDA must be one of .*'warp'.*Got 'wrap'"):
        LDA(5, sampler="wrap").fit(corpus)
    with pytest.raises(InvalidParameterError, match=r"'sampler' parameter must be one of \['alias_mh', 'auto'"):
        cgs.build_kernel(sampler="wrap")


def test_warp_refuses_bad_mh_steps_and_pseudo_counts(synthetic):
    corpus, _, _ = synthetic
    tokens = corpus.tokens()
    model = make_model(4, corpus.n_words, 0.1, 0.01)
    with pytest.raises(InvalidParameterError, match="'mh_steps' parameter of the warp sampler must be an int >= 1"):
        lda_warp.make_sweep(model, tokens, mh_steps=0)
    rng = np.random.default_rng(0)
    state = cgs.init(rng, tokens, model)
    state.n_wk[0, 0] += 3  # pseudo-counts in the tables: the proposals would not match them
    state.n_k[0] += 3
    with pytest.raises(InvalidParameterError, match="sampler='warp' .* counts of z"):
        lda_warp.make_sweep(model, tokens)(rng, state, 0, tokens.doc_ptr.shape[0] - 1)
