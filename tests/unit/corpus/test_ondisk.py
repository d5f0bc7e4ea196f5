"""Out-of-core corpora: build chunk by chunk, open memory-mapped, refuse bad directories."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
import scipy.sparse as sp

from harmonium.corpus import Corpus, Vocabulary, ondisk
from harmonium.corpus.ondisk import build_ondisk_corpus, open_ondisk_corpus
from harmonium.errors import CorpusError, InvalidParameterError

V = 13
TERMS = [f"t{i}" for i in range(V - 1)] + ["naïve"]


def make_chunks(n_chunks=20, seed=0):
    rng = np.random.default_rng(seed)
    return [sp.csr_matrix(rng.poisson(0.4, size=(int(rng.integers(0, 9)), V)))
            for _ in range(n_chunks)]


def check_layout(c: Corpus, directory) -> None:
    m = c.counts
    # indices and data stay memory-mapped (no copy); the small indptr is read into
    # memory as int32, the dtype of indices, as the Corpus layout wants
    for name in ("indices", "data"):
        arr = getattr(m, name)
        assert isinstance(arr, np.memmap), name
        assert arr.dtype == np.int32 and not arr.flags.writeable
        assert os.path.samefile(arr.filename, os.path.join(directory, f"{name}.npy"))
    assert not isinstance(m.indptr, np.memmap) and m.indptr.dtype == np.int32
    assert np.load(os.path.join(directory, "indptr.npy"), mmap_mode="r").dtype == np.int64
    m.tocoo()  # scipy's own routines accept the layout


def test_build_from_20_chunks_equals_concatenation(tmp_path):
    chunks = make_chunks()
    c = build_ondisk_corpus(iter(chunks), tmp_path, TERMS)
    full = sp.vstack(chunks).tocsr()
    assert c.counts.shape == full.shape and c.vocabulary == Vocabulary(TERMS)
    np.testing.assert_array_equal(c.counts.toarray(), full.toarray())
    check_layout(c, tmp_path)
    reopened = open_ondisk_corpus(tmp_path)
    check_layout(reopened, tmp_path)
    np.testing.assert_array_equal(reopened.counts.toarray(), full.toarray())
    # the usual corpus views work on memory-mapped arrays
    assert c.n_tokens == int(full.sum())
    np.testing.assert_array_equal(c.doc_lengths, np.asarray(full.sum(axis=1)).ravel())
    np.testing.assert_array_equal(c.tokens().words, np.repeat(full.indices, full.data))
    np.testing.assert_array_equal(c[5:9].counts.toarray(), full[5:9].toarray())


def test_arrays_are_plain_npy_files_and_manifest(tmp_path):
    chunks = make_chunks(3)
    build_ondisk_corpus(chunks, tmp_path, TERMS)
    full = sp.vstack(chunks).tocsr()
    for name in ("indptr", "indices", "data"):
        arr = np.load(tmp_path / f"{name}.npy", allow_pickle=False)
        np.testing.assert_array_equal(arr, getattr(full, name))
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["format"] == "harmonium-ondisk-corpus" and manifest["format_version"] == 1
    assert (manifest["n_docs"], manifest["n_words"], manifest["nnz"]) == (*full.shape, full.nnz)
    assert manifest["n_tokens"] == int(full.sum())
    assert manifest["arrays"]["indices"] == {"file": "indices.npy", "dtype": "<i4",
                                             "shape": [full.nnz]}
    assert json.loads((tmp_path / "vocabulary.json").read_text(encoding="utf-8")) == TERMS
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".partial")]


def test_corpus_chunks_carry_doc_ids_and_labels(tmp_path):
    chunks = make_chunks(4, seed=1)
    vocab = Vocabulary(TERMS)
    corpora, ids, labels = [], [], []
    for i, m in enumerate(chunks):
        d_ids = [f"c{i}-{j}\u2028\n" for j in range(m.shape[0])]  # awkward characters
        lab = [j % 2 for j in range(m.shape[0])]
        corpora.append(Corpus(m, vocab, doc_ids=d_ids, labels=lab))
        ids += d_ids
        labels += lab
    c = build_ondisk_corpus(corpora, tmp_path, vocab)
    assert list(c.doc_ids) == ids and list(c.labels) == labels
    # explicit metadata wins over the chunks'
    c = build_ondisk_corpus(corpora, tmp_path, vocab, overwrite=True,
                            labels=["x"] * len(ids))
    assert list(c.labels) == ["x"] * len(ids) and list(c.doc_ids) == ids
    # chunks without metadata: none stored, stale files removed
    c = build_ondisk_corpus(chunks, tmp_path, vocab, overwrite=True)
    assert c.doc_ids is None and c.labels is None
    assert not (tmp_path / "doc_ids.jsonl").exists()


def test_dense_and_narrow_chunks(tmp_path):
    chunks = [np.array([[1, 0, 2]]), sp.csc_matrix(np.array([[0, 3, 0, 0, 1]]))]
    c = build_ondisk_corpus(chunks, tmp_path, ["a", "b", "c", "d", "e"])
    np.testing.assert_array_equal(c.counts.toarray(), [[1, 0, 2, 0, 0], [0, 3, 0, 0, 1]])


def test_no_chunks_gives_an_empty_corpus(tmp_path):
    c = build_ondisk_corpus([], tmp_path, ["a", "b"])
    assert c.counts.shape == (0, 2) and c.n_tokens == 0
    assert open_ondisk_corpus(tmp_path).n_docs == 0


def test_failed_build_is_never_loadable(tmp_path):
    def chunks():
        yield from make_chunks(3)
        raise RuntimeError("the tokenizer died")

    with pytest.raises(RuntimeError, match="tokenizer died"):
        build_ondisk_corpus(chunks(), tmp_path, TERMS)
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".partial")]
    with pytest.raises(CorpusError, match="no manifest.json; this is not an on-disk corpus"):
        open_ondisk_corpus(tmp_path)


def test_failed_rebuild_leaves_the_old_corpus_unloadable(tmp_path):
    build_ondisk_corpus(make_chunks(2), tmp_path, TERMS)
    with pytest.raises(CorpusError, match="already holds on-disk corpus files"):
        build_ondisk_corpus(make_chunks(2), tmp_path, TERMS)
    assert open_ondisk_corpus(tmp_path).n_docs > 0  # refused before touching anything
    bad = [*make_chunks(2), sp.csr_matrix(-np.ones((1, V), dtype=int))]
    with pytest.raises(CorpusError, match="chunk 2, documents from"):
        build_ondisk_corpus(bad, tmp_path, TERMS, overwrite=True)
    with pytest.raises(CorpusError, match="no manifest.json"):
        open_ondisk_corpus(tmp_path)


@pytest.mark.parametrize(
    ("chunk", "error", "message"),
    [
        (sp.csr_matrix(np.array([[0.5] + [0] * (V - 1)])), CorpusError,
         "document 0 has count .*0.5.*chunk 1, documents from"),
        (sp.csr_matrix(([1], ([0], [V + 2])), shape=(1, V + 3)), CorpusError,
         f"word id {V + 2} >= vocabulary size {V} in document 0 \\(chunk 1"),
        (Corpus(sp.csr_matrix(np.ones((1, 2), dtype=int)), ["a", "b"]), CorpusError,
         "chunk 1 has a different vocabulary \\(2 terms\\)"),
        ([[1, 2]], InvalidParameterError, "chunk 1 is a list"),
    ],
)
def test_bad_chunks(tmp_path, chunk, error, message):
    with pytest.raises(error, match=message):
        build_ondisk_corpus([make_chunks(1)[0], chunk], tmp_path, TERMS)
    assert not (tmp_path / "manifest.json").exists()


def test_bad_metadata_and_parameters(tmp_path):
    with pytest.raises(CorpusError, match="doc_ids must have one entry per document"):
        build_ondisk_corpus([np.ones((2, 2), dtype=int)], tmp_path, ["a", "b"], doc_ids=["x"])
    with pytest.raises(InvalidParameterError, match="'overwrite' parameter"):
        build_ondisk_corpus([], tmp_path, ["a"], overwrite="yes")
    with pytest.raises(CorpusError, match="appears twice"):
        build_ondisk_corpus([], tmp_path, ["a", "a"])


@pytest.fixture
def built(tmp_path):
    build_ondisk_corpus(make_chunks(5), tmp_path, TERMS)
    return tmp_path


def edit_manifest(directory, **changes):
    path = directory / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest.update(changes)
    path.write_text(json.dumps(manifest))


def test_open_refuses_missing_foreign_and_newer(built):
    with pytest.raises(CorpusError, match="is not a directory"):
        open_ondisk_corpus(built / "nope")
    edit_manifest(built, format_version=2)
    with pytest.raises(CorpusError, match="format_version 2 is newer"):
        open_ondisk_corpus(built)
    edit_manifest(built, format_version=1, format="something-else")
    with pytest.raises(CorpusError, match="of format 'something-else'"):
        open_ondisk_corpus(built)
    (built / "manifest.json").write_text("{not json")
    with pytest.raises(CorpusError, match="manifest.json is not valid JSON"):
        open_ondisk_corpus(built)


def test_open_refuses_missing_or_inconsistent_arrays(built):
    os.replace(built / "data.npy", built / "data.bak")
    with pytest.raises(CorpusError, match="data.npy is missing"):
        open_ondisk_corpus(built)
    os.replace(built / "data.bak", built / "data.npy")
    manifest = json.loads((built / "manifest.json").read_text())
    edit_manifest(built, nnz=manifest["nnz"] + 1)
    with pytest.raises(CorpusError, match="indices.npy holds int32 .* expected int32"):
        open_ondisk_corpus(built)
    edit_manifest(built, nnz=manifest["nnz"], n_words=V + 1)
    with pytest.raises(CorpusError, match=f"does not list n_words={V + 1} terms"):
        open_ondisk_corpus(built)


def test_verify_catches_corrupted_arrays(built):
    indices = np.load(built / "indices.npy")
    indices[3] = V + 7
    np.save(built / "indices.npy", indices)
    assert open_ondisk_corpus(built, verify=False).n_docs > 0  # not checked
    with pytest.raises(CorpusError, match=f"word id {V + 7} .* must be < {V}"):
        open_ondisk_corpus(built)
    indptr = np.load(built / "indptr.npy")
    indptr[2], indptr[3] = indptr[3] + 1, indptr[2]
    np.save(built / "indptr.npy", indptr)
    with pytest.raises(CorpusError, match="indptr is not non-decreasing"):
        open_ondisk_corpus(built)


def test_verify_in_small_blocks(built, monkeypatch):
    monkeypatch.setattr(ondisk, "_VERIFY_BLOCK", 3)
    assert open_ondisk_corpus(built).n_docs > 0
    data = np.load(built / "data.npy")
    data[-1] = 0
    np.save(built / "data.npy", data)
    with pytest.raises(CorpusError, match="and count 0; word ids must be"):
        open_ondisk_corpus(built)


def test_npy_header_has_the_reserved_size():
    header = ondisk._npy_header("<i8", 10**18)
    assert len(header) == ondisk._NPY_HEADER_BYTES and header.endswith(b"\n")


def test_large_nnz_layout_stores_int64_indices(tmp_path, monkeypatch):
    """Where nnz needs int64 indices, they are written so and opened without a copy."""
    monkeypatch.setattr(ondisk, "index_dtype", lambda nnz, n_cols: np.int64)
    chunks = make_chunks(5, seed=3)
    c = build_ondisk_corpus(chunks, tmp_path, TERMS)
    full = sp.vstack(chunks).tocsr()
    m = c.counts
    for name in ("indptr", "indices"):
        arr = getattr(m, name)
        assert isinstance(arr, np.memmap) and arr.dtype == np.int64, name
    assert isinstance(m.data, np.memmap) and m.data.dtype == np.int32
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["arrays"]["indices"]["dtype"] == "<i8"
    np.testing.assert_array_equal(open_ondisk_corpus(tmp_path).counts.toarray(), full.toarray())
    assert not [n for n in os.listdir(tmp_path) if n.endswith((".partial", ".tmp"))]
    monkeypatch.undo()
    with pytest.raises(CorpusError, match="expected int32"):
        open_ondisk_corpus(tmp_path)  # int64 indices where int32 belong: refused


def test_release_pages_keeps_the_data(tmp_path):
    from harmonium.corpus.ondisk import release_pages

    rng = np.random.default_rng(3)
    dense = rng.poisson(0.5, size=(30, 9))
    build_ondisk_corpus([sp.csr_matrix(dense[:15]), sp.csr_matrix(dense[15:])], tmp_path, [f"w{i}" for i in range(9)])
    c = open_ondisk_corpus(tmp_path)
    assert release_pages(c.counts.data) and release_pages(c.counts.indices[5:])
    assert not release_pages(np.arange(4))
    np.testing.assert_array_equal(c.counts.toarray(), dense)  # pages are read again from the file
