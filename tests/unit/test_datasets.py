"""Bundled datasets: the Debian package descriptions."""

from __future__ import annotations

import numpy as np
import pytest

from harmonium.corpus import Corpus
from harmonium.corpus.tokenizer import Tokenizer
from harmonium.datasets import load_debian
from harmonium.errors import InvalidParameterError

N = 2000


@pytest.fixture(scope="module")
def debian() -> Corpus:
    return load_debian(n_docs=N)


def test_shapes_and_types(debian):
    assert isinstance(debian, Corpus)
    # the default tokenizer drops packages without tokens, so at most N remain
    assert 0.95 * N <= debian.n_docs <= N
    assert 1000 < debian.n_words < 10_000
    assert debian.doc_lengths.min() >= 1
    assert debian.counts.shape == (debian.n_docs, debian.n_words)
    assert debian.doc_ids.shape == (debian.n_docs,)
    assert len(set(debian.doc_ids)) == debian.n_docs


def test_first_package_and_labels(debian):
    assert debian.doc_ids[0] == "0ad"
    assert debian.labels[0] == "games"
    assert {"libs", "devel", "doc"} <= set(debian.labels)
    words = dict(debian.document(0))
    assert words.get("strategy", 0) >= 2


def test_features(debian):
    assert debian.feature_names == ["installed_size_kb", "size_bytes", "n_depends"]
    assert debian.features.shape == (debian.n_docs, 3)
    assert debian.features.dtype == np.float64
    assert debian.features[0].tolist() == [28591.0, 7891488.0, 26.0]
    assert (debian.features >= 0).all()


def test_tags(debian):
    assert debian.tags.shape == (debian.n_docs, len(debian.tag_names))
    names = list(debian.tag_names)
    assert names == sorted(names)
    first = {names[j] for j in debian.tags[0].indices}
    assert {"game::strategy", "role::program", "use::gameplaying"} <= first
    # roughly half the packages carry debtags
    has_tags = np.diff(debian.tags.indptr) > 0
    assert 0.2 < has_tags.mean() < 0.9


def test_default_tokenizer_filters(debian):
    assert "the" not in debian.vocabulary and "and" not in debian.vocabulary
    assert list(debian.vocabulary) == sorted(debian.vocabulary)
    df = np.bincount(debian.counts.indices, minlength=debian.n_words)
    assert df.min() >= 5 and df.max() <= 0.5 * N


def test_custom_tokenizer_and_n_docs():
    corpus = load_debian(tokenizer=Tokenizer(min_df=2), n_docs=100)
    assert corpus.n_docs == 100
    assert "the" in corpus.vocabulary


def test_bad_n_docs():
    with pytest.raises(InvalidParameterError, match="The 'n_docs' parameter of load_debian"):
        load_debian(n_docs=0)


def test_example_scale_variable_caps_the_documents(monkeypatch):
    monkeypatch.setenv("HARMONIUM_EXAMPLE_SCALE", "40")
    assert load_debian().n_docs <= 40
    assert load_debian(n_docs=20).n_docs <= 20
    monkeypatch.setenv("HARMONIUM_EXAMPLE_SCALE", "all")
    with pytest.raises(InvalidParameterError, match="HARMONIUM_EXAMPLE_SCALE"):
        load_debian(n_docs=5)
