"""Coherence, topic diversity and relevance against values worked out by hand, and against gensim."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from harmonium.corpus import Corpus
from harmonium.errors import CorpusError, InvalidParameterError
from harmonium.evaluation import coherence, relevance, top_relevant_words, topic_diversity
from harmonium.evaluation.coherence import cooccurrence

# Four documents. Document frequencies (D = 4): a 3, b 3, c 2, d 2.
# Co-occurrences: (a,b) 2, (a,c) 1, (a,d) 1, (b,c) 2, (b,d) 1, (c,d) 1.
TEXTS = [["a", "b", "c"], ["a", "b"], ["b", "c", "d"], ["a", "d"]]
VOCAB = ["a", "b", "c", "d"]
TOPIC = [["a", "b", "c"]]  # ranked a > b > c


def _corpus(texts=TEXTS):
    X = np.array([[t.count(w) for w in VOCAB] for t in texts])
    return Corpus(sp.csr_matrix(X), VOCAB)


def test_document_cooccurrence_counts():
    co = cooccurrence(_corpus(), VOCAB)
    expected = np.array([[3, 2, 1, 1], [2, 3, 2, 1], [1, 2, 2, 1], [1, 1, 1, 2]])
    np.testing.assert_array_equal(co.counts, expected)
    assert co.n_contexts == 4
    np.testing.assert_array_equal(cooccurrence(TEXTS, VOCAB).counts, expected)  # texts, one context each


def test_u_mass_by_hand():
    # Mimno et al.: pairs (b|a), (c|a), (c|b) with +1 on the count:
    # log((2+1)/3) + log((1+1)/3) + log((2+1)/3) = log(2/3)
    res = coherence(TOPIC, _corpus(), measure="u_mass", top_n=3, aggregate="sum")
    assert res.per_topic[0] == pytest.approx(np.log(2 / 3), rel=1e-12)
    res = coherence(TOPIC, _corpus(), measure="u_mass", top_n=3)
    assert res.per_topic[0] == pytest.approx(np.log(2 / 3) / 3, rel=1e-12)
    assert res.mean == res.per_topic[0] and res.n_contexts == 4 and res.window_size is None


def test_uci_and_npmi_by_hand():
    # P(a)=P(b)=3/4, P(c)=1/2; P(a,b)=1/2, P(a,c)=1/4, P(b,c)=1/2
    pmi = [np.log(0.5 / (0.75 * 0.75)), np.log(0.25 / (0.75 * 0.5)), np.log(0.5 / (0.75 * 0.5))]
    assert pmi == pytest.approx([np.log(8 / 9), np.log(2 / 3), np.log(4 / 3)])
    npmi = [pmi[0] / np.log(2), pmi[1] / np.log(4), pmi[2] / np.log(2)]
    uci = coherence(TOPIC, _corpus(), measure="c_uci", top_n=3).per_topic[0]
    assert uci == pytest.approx(np.log(64 / 81) / 3, rel=1e-9)
    assert coherence(TOPIC, _corpus(), measure="c_npmi", top_n=3).per_topic[0] == pytest.approx(np.mean(npmi), rel=1e-9)


def test_c_v_by_hand():
    n_ab, n_ac, n_bc = np.log(8 / 9) / np.log(2), np.log(2 / 3) / np.log(4), np.log(4 / 3) / np.log(2)
    u = np.array([[1, n_ab, n_ac], [n_ab, 1, n_bc], [n_ac, n_bc, 1]])  # NPMI context vectors, NPMI(w, w) = 1
    u_star = u.sum(0)
    expected = np.mean([v @ u_star / (np.linalg.norm(v) * np.linalg.norm(u_star)) for v in u])
    got = coherence(TOPIC, _corpus(), measure="c_v", top_n=3, window_size=None).per_topic[0]
    assert got == pytest.approx(expected, rel=1e-9)


def test_sliding_windows_by_hand():
    # window 2: [a,b] [b,c] [c,a] | [a,a] [a,b] | [d]  -> 6 windows
    # D(a)=4, D(b)=3, D(c)=2; D(a,b)=2, D(a,c)=1, D(b,c)=1
    texts = [["a", "b", "c", "a"], ["a", "a", "b"], ["d"]]
    co = cooccurrence(texts, ["a", "b", "c"], window_size=2)
    np.testing.assert_array_equal(co.counts, [[4, 2, 1], [2, 3, 1], [1, 1, 2]])
    assert co.n_contexts == 6
    # PMI(a,b) = log((2/6)/((4/6)(3/6))) = 0, PMI(a,c) = log((1/6)/((4/6)(2/6))) = log(3/4), PMI(b,c) = 0
    uci = coherence(TOPIC, texts, measure="c_uci", top_n=3, window_size=2).per_topic[0]
    assert uci == pytest.approx(np.log(3 / 4) / 3, abs=1e-9)


def test_window_counts_match_brute_force_enumeration():
    rng = np.random.default_rng(0)
    texts = [list(rng.choice(list("abcdefg"), size=rng.integers(0, 25))) for _ in range(60)]
    words = list("abcde")
    for s in (1, 3, 10, 40):
        co = cooccurrence(texts, words, window_size=s)
        brute, n = np.zeros((5, 5)), 0
        for t in texts:
            for j in range(max(1, len(t) - s + 1)):
                n += 1
                present = [i for i, w in enumerate(words) if w in set(t[j:j + s])]
                brute[np.ix_(present, present)] += 1
        np.testing.assert_array_equal(co.counts, brute)
        assert co.n_contexts == n
    # small chunks give the same counts
    from harmonium.evaluation.coherence import _sequences, _window_counts

    seqs = _sequences(texts, {w: i for i, w in enumerate(words)}, "test")
    np.testing.assert_array_equal(_window_counts(seqs, 5, 3, chunk_entries=7)[0], cooccurrence(texts, words,
                                                                                              window_size=3).counts)


def test_word_ids_and_token_streams():
    corpus = _corpus()
    ids = [[0, 1, 2]]
    a = coherence(ids, corpus, measure="c_npmi", top_n=3).per_topic
    b = coherence(TOPIC, corpus, measure="c_npmi", top_n=3).per_topic
    np.testing.assert_allclose(a, b)
    phi = np.array([[0.5, 0.3, 0.2, 0.0]])
    np.testing.assert_allclose(coherence(phi, corpus, measure="c_npmi", top_n=3).per_topic, b)
    np.testing.assert_allclose(coherence(np.array(ids), corpus, measure="c_npmi", top_n=3).per_topic, b)
    seqs = [np.array([VOCAB.index(w) for w in t]) for t in TEXTS]
    np.testing.assert_allclose(coherence(ids, seqs, measure="c_npmi", top_n=3).per_topic, b)
    pairs = [[(w, 1.0 / (i + 1)) for i, w in enumerate(t)] for t in TOPIC]  # as model.top_words(n) returns
    np.testing.assert_allclose(coherence(pairs, corpus, measure="c_npmi", top_n=3).per_topic, b)
    with pytest.raises(InvalidParameterError, match=r"\(term, weight\) pairs"):
        coherence([[0.5, 0.3, 0.2]], corpus, measure="c_npmi", top_n=3)


def test_model_topics_are_matched_by_term():
    class Model:
        topic_word_ = np.array([[0.1, 0.2, 0.3, 0.4]])
        vocabulary_ = ["d", "c", "b", "a"]  # top words a, b, c

    got = coherence(Model(), _corpus(), measure="u_mass", top_n=3)
    assert got.top_words == [["a", "b", "c"]]
    assert got.per_topic[0] == pytest.approx(np.log(2 / 3) / 3)


def test_absent_words_give_nan_and_errors_are_explained():
    res = coherence([["a", "zzz"], ["a", "b"]], _corpus(), measure="c_npmi", top_n=2)
    assert np.isnan(res.per_topic[0]) and np.isfinite(res.per_topic[1]) and res.mean == res.per_topic[1]
    with pytest.raises(CorpusError, match="reading order"):
        coherence(TOPIC, _corpus(), measure="c_v")
    with pytest.raises(InvalidParameterError, match="'measure' parameter of coherence"):
        coherence(TOPIC, _corpus(), measure="c_w2v")
    with pytest.raises(CorpusError, match="not a string"):
        coherence(TOPIC, ["a b c"], measure="u_mass")


def test_topic_diversity_by_hand():
    phi = np.array([[0.4, 0.3, 0.2, 0.1], [0.1, 0.5, 0.4, 0.0]])
    assert topic_diversity(phi, top_n=2) == pytest.approx(3 / 4)  # {0, 1} and {1, 2}
    assert topic_diversity(phi, top_n=1) == 1.0
    assert topic_diversity(np.tile(phi[:1], (5, 1)), top_n=3) == pytest.approx(1 / 5)


def test_relevance_by_hand():
    phi = np.array([[0.5, 0.3, 0.2], [0.1, 0.1, 0.8]])
    freq = np.array([5, 3, 2])  # p_w = 0.5, 0.3, 0.2
    r = relevance(phi, freq, lambda_=0.6)
    expected = np.array([
        [0.6 * np.log(0.5), 0.6 * np.log(0.3), 0.6 * np.log(0.2)],
        [0.6 * np.log(0.1) + 0.4 * np.log(0.2), 0.6 * np.log(0.1) + 0.4 * np.log(1 / 3),
         0.6 * np.log(0.8) + 0.4 * np.log(4.0)],
    ])
    np.testing.assert_allclose(r, expected, rtol=1e-12)
    np.testing.assert_array_equal(top_relevant_words(phi, freq, lambda_=0.0, top_n=3)[1], [2, 1, 0])  # by lift
    np.testing.assert_array_equal(top_relevant_words(phi, freq, lambda_=1.0, top_n=3)[1], [2, 0, 1])  # by phi
    X = Corpus(sp.csr_matrix(np.array([[5, 3, 2]])))
    np.testing.assert_allclose(relevance(phi, X, lambda_=0.6), expected)
    with pytest.raises(InvalidParameterError, match="'lambda_' parameter of relevance"):
        relevance(phi, freq, lambda_=1.5)
    with pytest.raises(InvalidParameterError, match="word_freq"):
        relevance(phi, freq[:2])


# -- gensim, configured identically --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def small():
    gensim = pytest.importorskip("gensim")
    from gensim.corpora import Dictionary

    rng = np.random.default_rng(0)
    V, K = 60, 4
    vocab = [f"w{i}" for i in range(V)]
    phi = rng.dirichlet(np.full(V, 0.1), size=K)
    texts, distinct = [], []
    for _ in range(300):
        p = rng.dirichlet(np.full(K, 0.3)) @ phi
        texts.append([vocab[w] for w in rng.choice(V, size=rng.integers(5, 150), p=p)])
        size = min(int(rng.integers(5, 40)), int((p > 0).sum()))
        distinct.append([vocab[w] for w in rng.choice(V, size=size, p=p, replace=False)])
    topics = [[vocab[w] for w in np.argsort(-phi[k])[:10]] for k in range(K)]
    return gensim, Dictionary, topics, texts, distinct


def _gensim(small, measure, texts, **kw):
    gensim, Dictionary, topics, _, _ = small
    from gensim.models.coherencemodel import CoherenceModel

    d = Dictionary(texts)
    if measure == "u_mass":
        kw["corpus"] = [d.doc2bow(t) for t in texts]
    else:
        kw["texts"] = texts
    return np.array(CoherenceModel(topics=topics, dictionary=d, coherence=measure, topn=10, **kw)
                    .get_coherence_per_topic())


def test_u_mass_agrees_with_gensim(small):
    _, _, topics, texts, _ = small
    ours = coherence(topics, texts, measure="u_mass", eps=1e-12).per_topic
    np.testing.assert_allclose(ours, _gensim(small, "u_mass", texts), rtol=1e-12)


@pytest.mark.parametrize(("measure", "window"), [("c_uci", 10), ("c_npmi", 10), ("c_v", 10), ("c_v", 110)])
def test_windowed_measures_agree_with_gensim_without_repeats_in_a_window(small, measure, window):
    _, _, topics, _, distinct = small
    ours = coherence(topics, distinct, measure=measure, window_size=window).per_topic
    np.testing.assert_allclose(ours, _gensim(small, measure, distinct, window_size=window), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("measure", ["c_npmi", "c_v"])
def test_document_contexts_agree_with_gensim_windows_longer_than_every_text(small, measure):
    _, _, topics, texts, _ = small
    ours = coherence(topics, texts, measure=measure, window_size=None).per_topic
    np.testing.assert_allclose(ours, _gensim(small, measure, texts, window_size=1000), rtol=1e-9, atol=1e-12)
