"""Seeded (guided) topics in the LDA estimator: planted topics, every inference, errors, files, resume.

The exactness of the seeded samplers is tested in tests/statistical/test_lda_seeded_exact.py and the
VB/CVB0 updates in tests/unit/inference/test_lda_vb_seeded.py; here the estimator's wiring.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import harmonium
from harmonium.corpus import Corpus
from harmonium.errors import InvalidParameterError
from harmonium.estimators import LDA
from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs
from harmonium.inference.mcmc.lda import parallel_gibbs as pgs
from harmonium.models.directed.lda import make_model, make_seed_prior

K, BLOCK = 4, 10
SETTINGS = {
    "plain": dict(inference="collapsed_gibbs", sampler="plain"),
    "sparse": dict(inference="collapsed_gibbs", sampler="sparse"),
    "alias_mh": dict(inference="collapsed_gibbs", sampler="alias_mh"),
    "naive_gibbs": dict(inference="naive_gibbs", n_iter=200),  # mixes slowly (seed 003)
    "parallel_gibbs": dict(inference="parallel_gibbs", n_jobs=2),
    "vb": dict(inference="vb"),
    "online_vb": dict(inference="online_vb", batch_size=50),
    "cvb0": dict(inference="cvb0"),
    "cvb0_uint8": dict(inference="cvb0", cvb0_dtype="uint8"),
}


@pytest.fixture(scope="module")
def planted():
    """200 documents over K planted topics, topic b uniform on the words of block b (10 words each)."""
    rng = np.random.default_rng(0)
    theta = rng.dirichlet(np.full(K, 0.2), size=200)
    X = np.zeros((200, K * BLOCK), dtype=np.int64)
    for d in range(200):
        for b in rng.choice(K, size=40, p=theta[d]):
            X[d, b * BLOCK + rng.integers(BLOCK)] += 1
    return Corpus(sp.csr_matrix(X), [f"w{i:02d}" for i in range(K * BLOCK)])


def _blocks(phi, exclude=()):
    """The planted block each topic covers (by mass off the seed words) and its purity."""
    phi = phi.copy()
    phi[:, list(exclude)] = 0.0
    mass = phi.reshape(K, K, BLOCK).sum(axis=2)
    mass /= mass.sum(axis=1, keepdims=True)
    return mass.argmax(axis=1), mass.max(axis=1)


def _words(block, n=3):
    return [f"w{block * BLOCK + j:02d}" for j in range(n)]


@pytest.mark.filterwarnings("ignore::FutureWarning")  # sampler="alias_mh" is deprecated (still tested here)
@pytest.mark.parametrize("name", list(SETTINGS))
def test_seeded_topics_land_on_their_seeds_and_unseeded_topics_stay(planted, name):
    kw = dict(n_iter=60, random_state=1) | SETTINGS[name]
    plain = LDA(K, **kw).fit(planted)
    base, purity = _blocks(plain.topic_word_)
    assert sorted(base) == list(range(K)) and purity.min() > 0.9
    # seed topics 0 and 1 with the blocks the unseeded fit put at 1 and 0: unseeded, they are elsewhere
    seeds = {0: _words(base[1]), 1: _words(base[0])}
    m = LDA(K, seed_words=seeds, seed_weight=50, **kw).fit(planted)  # each word occurs ~200 times
    seed_ids = [int(w[1:]) for ws in seeds.values() for w in ws]
    got, purity = _blocks(m.topic_word_, exclude=seed_ids)
    assert (got[0], got[1]) == (base[1], base[0])
    # the unseeded topics keep the blocks they had without seeds, and carry no seed word
    assert list(got[2:]) == list(base[2:])
    assert purity.min() > 0.8
    assert m.topic_word_[2:][:, seed_ids].max() < 0.01  # a word of a planted topic has 0.1 there
    np.testing.assert_allclose(m.topic_word_.sum(axis=1), 1.0)
    theta = m.transform(planted[:20])
    assert theta.shape == (20, K) and np.allclose(theta.sum(axis=1), 1.0)


def test_seed_weight_is_the_prior_pseudo_count(planted):
    # a collapsed fit whose chain average is one sample: phi = (n_wk + beta + delta) / (n_k + V beta + Delta)
    m = LDA(K, n_iter=1, burn_in=0, thin=1, seed_words={2: ["w05"]}, seed_weight=7, random_state=0).fit(planted)
    u = LDA(K, n_iter=1, burn_in=0, thin=1, random_state=0).fit(planted)
    # same seed: the first sweep starts from the same z, so it is only the prior that differs at w05 in topic 2
    assert m.topic_word_[2, 5] > u.topic_word_[2, 5]
    assert m.trace_["log_joint"][0] != u.trace_["log_joint"][0]


def test_a_word_may_seed_several_topics_and_list_form(planted):
    # list form: entry k seeds topic k, an empty entry leaves it unseeded; w00 seeds topics 0 and 2
    m = LDA(K, n_iter=30, seed_words=[["w00", "w01"], [], ["w00", "w02"]], seed_weight=50, random_state=0)
    phi = m.fit(planted).topic_word_
    assert min(phi[0, 0], phi[2, 0]) > 10 * max(phi[1, 0], phi[3, 0])


def test_parallel_sweep_does_not_count_delta_twice(planted):
    tokens = planted.tokens()
    seeds = make_seed_prior([(0, 0), (11, 1), (11, 3)], 25)
    model = make_model(K, planted.n_words, 0.1, 0.01, seeds)
    state = cgs.init(np.random.default_rng(0), tokens, model)
    kernel = pgs.build_kernel(sampler="sparse", n_threads=3, compute_log_joint=True)
    for _ in range(3):
        state, info = kernel(np.random.default_rng(1), state, tokens, model)
        fresh = cgs.state_from_assignments(tokens, model, state.z)
        for a, b in zip(state[1:], fresh[1:], strict=True):
            np.testing.assert_array_equal(a, b)  # the tables are the counts of z: no delta left, none doubled
        assert np.isfinite(info.log_joint)


def test_save_load_round_trip_and_refit(planted, tmp_path):
    m = LDA(K, n_iter=20, seed_words={1: ["w03", "w04"]}, seed_weight=30, random_state=0).fit(planted)
    m.save(tmp_path / "m.hmn")
    same = harmonium.load(tmp_path / "m.hmn")
    np.testing.assert_array_equal(same.topic_word_, m.topic_word_)
    np.testing.assert_array_equal(same.transform(planted[:10]), m.transform(planted[:10]))
    # the params survive as JSON (keys become strings) and still fit the same model
    again = LDA(**same.get_params()).fit(planted)
    np.testing.assert_array_equal(again.topic_word_, m.topic_word_)


@pytest.mark.parametrize("inference", ["collapsed_gibbs", "naive_gibbs", "vb", "cvb0", "online_vb"])
def test_checkpoint_resume_is_bit_identical(planted, tmp_path, inference):
    kw = dict(n_iter=12, inference=inference, seed_words={0: ["w12"]}, seed_weight=40, random_state=3,
              checkpoint_every=4, batch_size=50, evaluate_every=2)
    if inference == "online_vb":
        kw["n_iter"] = 3
    straight = LDA(K, **kw).fit(planted)
    path = tmp_path / "ck.hmn"
    stop = 2 if inference == "online_vb" else 7  # online VB counts mini-batches, 4 per pass
    LDA(K, **kw, checkpoint_path=path).fit(planted, callback=lambda it, n, info: it == stop)
    resumed = LDA(K, **kw, checkpoint_path=path).fit(planted, resume=True)
    np.testing.assert_array_equal(resumed.topic_word_, straight.topic_word_)
    # the checkpoint records the seeds: other seeds are refused
    with pytest.raises(InvalidParameterError, match="seed_words"):
        LDA(K, **{**kw, "seed_words": {0: ["w13"]}}, checkpoint_path=path).fit(planted, resume=True)


@pytest.mark.parametrize("params, match", [
    (dict(seed_words={0: ["nope"]}), r"'seed_words' .*'nope' for topic 0, which is not in the corpus vocabulary"),
    (dict(seed_words={1: []}), r"'seed_words' .*topic 1 an empty list"),
    (dict(seed_words={4: ["w00"]}), r"'seed_words' .*topic 4, outside 0\.\.3"),
    (dict(seed_words={-1: ["w00"]}), r"'seed_words' .*topic -1, outside 0\.\.3"),
    (dict(seed_words={"x": ["w00"]}), r"'seed_words' .*key 'x'"),
    (dict(seed_words={0: "w00"}), r"'seed_words' .*give a list of words"),
    (dict(seed_words={0: ["w00", "w00"]}), r"'seed_words' .*'w00' more than once for topic 0"),
    (dict(seed_words={0: ["w00"], "0": ["w01"]}), r"'seed_words' .*topic 0 twice"),
    (dict(seed_words={0: [3]}), r"'seed_words' .*lists 3 for topic 0"),
    (dict(seed_words="w00"), r"'seed_words' parameter of LDA must be None or a dict"),
    (dict(seed_words={0: ["w00"]}, seed_weight=0), r"'seed_weight' parameter of LDA must be an int >= 1"),
    (dict(seed_words={0: ["w00"]}, seed_weight=-2), r"'seed_weight' parameter of LDA must be an int >= 1"),
    (dict(seed_words={0: ["w00"]}, seed_weight=2.5), r"'seed_weight' parameter of LDA must be an int >= 1"),
    (dict(seed_words={0: ["w00"]}, optimize_interval=5), r"seed_words cannot use optimize_interval=5"),
])
def test_bad_seed_parameters(planted, params, match):
    with pytest.raises(InvalidParameterError, match=match):
        LDA(K, n_iter=2, **params).fit(planted)


def test_dask_refuses_seed_words(planted):
    with pytest.raises(InvalidParameterError, match="does not support seed_words"):
        LDA(K, n_iter=2, inference="parallel_gibbs", seed_words={0: ["w00"]}).fit(planted, n_shards=2)


def test_partial_fit_with_seeds(planted):
    m = LDA(K, inference="online_vb", total_docs=200, batch_size=50, seed_words={3: ["w30", "w31"]},
            seed_weight=100, random_state=0)
    m.partial_fit(planted[:100]).partial_fit(planted[100:])
    assert m.topic_word_[3, 30] > 0.1
    with pytest.raises(InvalidParameterError, match="'zzz' for topic 0"):
        LDA(K, inference="online_vb", total_docs=200, seed_words={0: ["zzz"]}).partial_fit(planted)
