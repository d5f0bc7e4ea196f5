"""The pieces together on real data: Debian text -> on-disk corpus -> LDA -> saved model -> evaluation."""

from __future__ import annotations

import numpy as np

import harmonium
from harmonium.corpus import Tokenizer, build_ondisk_corpus, open_ondisk_corpus, train_test_split
from harmonium.datasets import load_debian


def test_lda_fits_an_ondisk_corpus_identically(tmp_path):
    corpus = load_debian(n_docs=1500)
    chunks = (corpus[lo:lo + 400] for lo in range(0, corpus.n_docs, 400))
    build_ondisk_corpus(chunks, tmp_path / "debian", corpus.vocabulary)
    ondisk = open_ondisk_corpus(tmp_path / "debian")
    assert isinstance(ondisk.counts.data, np.memmap)
    a = harmonium.LDA(8, n_iter=15, random_state=0).fit(corpus)
    b = harmonium.LDA(8, n_iter=15, random_state=0).fit(ondisk)
    np.testing.assert_array_equal(a.topic_word_, b.topic_word_)


def test_debian_end_to_end(tmp_path):
    corpus = load_debian(n_docs=3000)
    assert corpus.labels is not None and corpus.features.shape == (corpus.n_docs, 3)
    train, test = train_test_split(corpus, 0.2, random_state=0)
    lda = harmonium.LDA(10, n_iter=60, random_state=0).fit(train)
    path = tmp_path / "lda.hmn"
    lda.save(path)
    loaded = harmonium.load(path)
    ppl = loaded.perplexity(test).perplexity
    # far better than the unigram-free uniform baseline, and the same when recomputed
    assert ppl < 0.5 * corpus.n_words
    assert ppl == lda.perplexity(test).perplexity
    # new raw text through the model's vocabulary
    tok = Tokenizer(vocabulary=loaded.vocabulary_)
    theta = loaded.transform(tok.transform(["python library for parsing xml documents", "a strategy game"]))
    assert theta.shape == (2, 10) and np.allclose(theta.sum(axis=1), 1.0)
