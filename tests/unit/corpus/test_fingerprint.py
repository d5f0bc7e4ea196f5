"""Corpus.fingerprint: each form against its definition (CRC-32 of the named arrays, computed here with
zlib), and checkpoints written in an older form (LDA Gibbs and HDP stored the token-stream form) still
resume, bit-identically, while the same form of another corpus is refused."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from harmonium.corpus import Corpus
from harmonium.corpus.corpus import fingerprint_arrays
from harmonium.errors import CorpusError
from harmonium.io import load_checkpoint, save_checkpoint


def _corpus(seed=0, n_docs=25):
    rng = np.random.default_rng(seed)
    counts = rng.poisson(0.7, size=(n_docs, 12)) + np.eye(n_docs, 12, dtype=int)
    return Corpus(counts, [f"w{i}" for i in range(12)], labels=[f"c{d % 3}" for d in range(n_docs)])


def _crc(*arrays):
    crc = 0
    for a in arrays:
        crc = zlib.crc32(np.ascontiguousarray(a).tobytes(), crc)
    return crc


def _token_form(corpus):
    """The token-stream form, from the counts alone (words of each document in word-id order)."""
    m = corpus.counts.toarray()
    words = np.concatenate([np.repeat(np.arange(m.shape[1]), row) for row in m]).astype(np.int32)
    doc_ptr = np.concatenate([[0], np.cumsum(m.sum(axis=1))]).astype(np.int64)
    return {"n_docs": m.shape[0], "n_words": m.shape[1], "n_tokens": int(m.sum()), "crc32": _crc(doc_ptr, words)}


def test_each_form_is_its_definition():
    c = _corpus()
    m = c.counts
    indptr = m.indptr.astype(np.int64)
    counts = {"n_docs": 25, "n_words": 12, "n_tokens": int(m.sum()), "nnz": m.nnz,
              "crc32": _crc(indptr, m.indices, m.data)}
    assert c.fingerprint() == counts
    assert c.fingerprint("tokens") == _token_form(c)
    assert c.fingerprint("lengths") == {"n_docs": 25, "n_words": 12, "nnz": m.nnz, "indptr_crc32": _crc(indptr)}
    labels = "\x00".join(f"c{d % 3}" for d in range(25)).encode()
    assert c.fingerprint(labels=True)["crc32"] == zlib.crc32(labels, counts["crc32"])
    dense = np.arange(6.0).reshape(3, 2)
    assert fingerprint_arrays([m, dense]) == {"n_rows": 25, "shapes": [[25, 12], [3, 2]],
                                              "crc32": _crc(m.indptr, m.indices, m.data, dense)}


def test_fingerprints_tell_corpora_apart():
    a, b = _corpus(0), _corpus(1)
    for of in ("counts", "tokens", "lengths"):
        assert a.fingerprint(of) == _corpus(0).fingerprint(of)
        assert a.fingerprint(of) != b.fingerprint(of)
    with pytest.raises(ValueError, match="'of' must be"):
        a.fingerprint("rows")


def test_fingerprint_like_answers_in_the_saved_form():
    c = _corpus()
    for of in ("counts", "tokens", "lengths"):
        assert c.fingerprint_like(c.fingerprint(of)) == c.fingerprint(of)
    assert c.fingerprint_like(None) == c.fingerprint()


def _make(name, path):
    from harmonium.estimators import HDP, LDA

    if name == "LDA":
        return LDA(3, n_iter=6, burn_in=2, thin=1, evaluate_every=1, checkpoint_path=path, checkpoint_every=2,
                   random_state=4)
    return HDP(n_iter=6, evaluate_every=1, checkpoint_path=path, checkpoint_every=2, random_state=4)


def _with_corpus_form(path, form):
    """Rewrite the checkpoint at ``path`` as an older version wrote it: ``form`` as its corpus fingerprint."""
    ck = load_checkpoint(path)
    save_checkpoint(path, cls=ck.cls, params=ck.params, state_arrays=ck.arrays, rng=ck.rng,
                    iteration=ck.iteration, trace=ck.trace, extra={**ck.extra, "corpus": form})


@pytest.mark.parametrize("name", ["LDA", "HDP"])
def test_checkpoint_in_the_token_form_resumes_bit_identically(name, tmp_path):
    corpus = _corpus()
    full = _make(name, tmp_path / "full.hmn").fit(corpus)
    path = tmp_path / "run.hmn"
    _make(name, path).fit(corpus, callback=lambda it, n, info: it == 3)
    assert "nnz" in load_checkpoint(path).extra["corpus"]  # written in the counts form
    _with_corpus_form(path, _token_form(corpus))
    resumed = _make(name, path).fit(corpus, resume=True)
    assert resumed.resumed_from_ == 3
    np.testing.assert_array_equal(resumed.topic_word_, full.topic_word_)
    assert resumed.rng_state_ == full.rng_state_
    keys = [k for k in full.trace_ if k != "seconds"]
    assert {k: resumed.trace_[k] for k in keys} == {k: full.trace_[k] for k in keys}


@pytest.mark.parametrize("name", ["LDA", "HDP"])
def test_checkpoint_in_the_token_form_of_another_corpus_is_refused(name, tmp_path):
    corpus = _corpus()
    path = tmp_path / "run.hmn"
    _make(name, path).fit(corpus, callback=lambda it, n, info: it == 3)
    other = _token_form(corpus)
    other["crc32"] ^= 1  # same sizes, other tokens
    _with_corpus_form(path, other)
    with pytest.raises(CorpusError, match="different corpus"):
        _make(name, path).fit(corpus, resume=True)
