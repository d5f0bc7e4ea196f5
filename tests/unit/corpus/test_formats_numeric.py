"""Numeric corpus formats: UCI bag-of-words, LDA-C, Matrix Market, scipy .npz."""

from __future__ import annotations

import gzip
import os
import re

import numpy as np
import pytest
import scipy.sparse as sp

from harmonium.corpus import Corpus, Vocabulary
from harmonium.corpus.formats import (
    _common,
    infer_format,
    ldac,
    mmarket,
    read_corpus,
    scipy_npz,
    uci,
    write_corpus,
)
from harmonium.errors import CorpusError, InvalidParameterError

TERMS = ["apple", "café", "pear", "plum", "日本", "unused"]
COUNTS = np.array(
    [
        [2, 0, 1, 0, 0, 0],
        [0, 0, 0, 0, 0, 0],  # empty document in the middle
        [0, 3, 0, 1, 7, 0],
        [1, 1, 1, 1, 1, 0],
        [0, 0, 0, 0, 0, 0],  # empty last document
    ]
)


@pytest.fixture
def corpus() -> Corpus:
    return Corpus(sp.csr_matrix(COUNTS), TERMS)


def same(a: Corpus, b: Corpus) -> None:
    assert a.counts.shape == b.counts.shape
    np.testing.assert_array_equal(a.counts.toarray(), b.counts.toarray())
    assert a.vocabulary == b.vocabulary
    assert a.counts.data.dtype == np.int32
    # the Corpus layout: indices and indptr share one dtype, int32 for small corpora
    assert a.counts.indices.dtype == np.int32
    assert a.counts.indptr.dtype == np.int32
    a.counts.tocoo()  # scipy's own routines accept it


def write_text(path, text: str) -> str:
    path = os.fspath(path)
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "wt", encoding="utf-8", newline="") as f:
        f.write(text)
    return path


def no_temporaries(directory) -> None:
    assert not [n for n in os.listdir(directory) if n.endswith(".tmp")]


# ---------------------------------------------------------------------------
# round trips
# ---------------------------------------------------------------------------
ROUND_TRIPS = [
    (uci, "docword.toy.txt", "vocab.toy.txt"),
    (uci, "docword.toy.txt.gz", "vocab.toy.txt"),
    (ldac, "toy.ldac", "toy.vocab"),
    (ldac, "toy.ldac.gz", "toy.vocab"),
    (mmarket, "toy.mtx", "toy.mtx.vocab"),
    (mmarket, "toy.mtx.gz", "toy.mtx.vocab"),
    (scipy_npz, "toy.npz", "toy.vocab.txt"),
]


@pytest.mark.parametrize(("module", "name", "vocab_name"), ROUND_TRIPS)
def test_round_trip(tmp_path, corpus, module, name, vocab_name):
    path = tmp_path / name
    module.write(corpus, path)
    assert (tmp_path / vocab_name).exists()
    assert module.default_vocab_path(path) == str(tmp_path / vocab_name)
    same(module.read(path), corpus)
    no_temporaries(tmp_path)


@pytest.mark.parametrize(("module", "name", "vocab_name"), ROUND_TRIPS)
def test_round_trip_explicit_vocab_path(tmp_path, corpus, module, name, vocab_name):
    path, vocab = tmp_path / name, tmp_path / "terms.txt"
    module.write(corpus, path, vocab_path=vocab)
    assert vocab.exists() and not (tmp_path / vocab_name).exists()
    same(module.read(path, vocab_path=vocab), corpus)


@pytest.mark.parametrize(("module", "name", "vocab_name"), ROUND_TRIPS)
def test_without_vocab_file_gives_placeholder_terms(tmp_path, corpus, module, name, vocab_name):
    path = tmp_path / name
    module.write(corpus, path, vocab_path=False)
    assert not (tmp_path / vocab_name).exists()
    got = module.read(path, vocab_path=False)
    n_words = 5 if module is ldac else 6  # LDA-C cannot tell an unused last word
    assert got.vocabulary == Vocabulary.range(n_words)
    np.testing.assert_array_equal(got.counts.toarray(), COUNTS[:, :n_words])


@pytest.mark.parametrize(
    ("name", "fmt"),
    [("docword.toy.txt", "uci"), ("docword.toy.txt.gz", "uci"), ("toy.ldac", "ldac"),
     ("toy.mtx", "mm"), ("toy.npz", "npz")],
)
def test_dispatcher_infers_format(tmp_path, corpus, name, fmt):
    path = tmp_path / name
    assert infer_format(path) == fmt
    write_corpus(corpus, path)
    same(read_corpus(path), corpus)
    same(read_corpus(path, format=fmt), corpus)


def test_empty_corpus_round_trips(tmp_path):
    empty = Corpus(sp.csr_matrix((0, 3), dtype=np.int64), ["a", "b", "c"])
    for module, name in [(uci, "docword.e.txt"), (ldac, "e.ldac"), (mmarket, "e.mtx"),
                         (scipy_npz, "e.npz")]:
        got = module.read(module.write(empty, tmp_path / name) or tmp_path / name)
        assert got.n_docs == 0 and got.vocabulary == empty.vocabulary


def test_writers_reject_non_corpus(tmp_path):
    for module in (uci, ldac, mmarket, scipy_npz):
        with pytest.raises(InvalidParameterError, match="must be a Corpus"):
            module.write(COUNTS, tmp_path / "docword.x.txt")


def test_unwritable_term_leaves_no_files(tmp_path):
    bad = Corpus(sp.csr_matrix(np.ones((1, 2), dtype=int)), ["ok", "two\nlines"])
    with pytest.raises(CorpusError, match="line breaks"):
        uci.write(bad, tmp_path / "docword.bad.txt")
    assert os.listdir(tmp_path) == []


def test_write_replaces_existing_file_atomically(tmp_path, corpus):
    path = tmp_path / "docword.toy.txt"
    path.write_text("old content")
    uci.write(corpus, path)
    same(uci.read(path), corpus)
    no_temporaries(tmp_path)


# ---------------------------------------------------------------------------
# UCI
# ---------------------------------------------------------------------------
def uci_file(tmp_path, body: str, header="3\n5\n{nnz}\n", vocab=5, name="docword.bad.txt"):
    nnz = sum(1 for line in body.splitlines() if line.strip())
    path = write_text(tmp_path / name, header.format(nnz=nnz) + body)
    if vocab is not None:
        (tmp_path / uci.default_vocab_path(name)).write_text(
            "".join(f"w{i}\n" for i in range(vocab)), encoding="utf-8")
    return path


def test_uci_reads_a_known_file(tmp_path):
    path = uci_file(tmp_path, "1 1 2\n1 3 1\n3 5 4\n")
    c = uci.read(path)
    assert c.vocabulary.terms == ["w0", "w1", "w2", "w3", "w4"]
    np.testing.assert_array_equal(
        c.counts.toarray(), [[2, 0, 1, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 4]])


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("1 1 2\n2 6 1\n", "word id 6 > W=5 on line 5 of docword.bad.txt"),
        ("1 0 2\n", "word id 0 < 1 on line 4 of docword.bad.txt"),
        ("1 1 2\n4 2 1\n", "document id 4 > D=3 on line 5 of docword.bad.txt"),
        ("0 1 2\n", "document id 0 < 1 on line 4"),
        ("1 1 2\n1 2 -3\n", "count -3 on line 5 of docword.bad.txt: counts must be positive"),
        ("1 1 0\n", "count 0 on line 4"),
        ("1 1 2\n1 2 1.5\n", "count '1.5' on line 5 of docword.bad.txt is not an integer"),
        ("1 x 2\n", "word id 'x' on line 4 of docword.bad.txt is not an integer"),
        ("1 1 2\n1 2\n", "line 5 of docword.bad.txt has 2 fields; expected 'docID wordID count'"),
        ("1 1 2 3\n", "line 4 of docword.bad.txt has 4 fields"),
        ("1 1 99999999999999999999999\n", "count 99999999999999999999999 on line 4 .* out of"),
        ("1 1 3000000000\n", "count 3000000000 on line 4 of docword.bad.txt exceeds 2\\*\\*31-1"),
    ],
)
def test_uci_bad_entries_name_the_line(tmp_path, body, message):
    with pytest.raises(CorpusError, match=message):
        uci.read(uci_file(tmp_path, body))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "docword.bad.txt ends after 0 header line"),
        ("3\n5\n", "ends after 2 header line"),
        ("3\nfive\n2\n1 1 1\n", "line 2 of docword.bad.txt should hold W, the vocabulary size"),
        ("3 5 2\n1 1 1\n", "line 1 of docword.bad.txt should hold D"),
        ("3\n5\n4\n1 1 1\n2 2 2\n", re.escape("header says NNZ=4 but the file has 2 entries")),
        ("3\n5\n1\n1 1 1\n2 2 2\n", "more than its header's NNZ=1|more entries than its header's"),
    ],
)
def test_uci_bad_header(tmp_path, text, message):
    path = write_text(tmp_path / "docword.bad.txt", text)
    (tmp_path / "vocab.bad.txt").write_text("a\nb\nc\nd\ne\n")
    with pytest.raises(CorpusError, match=message):
        uci.read(path)


def test_uci_missing_or_wrong_vocab_file(tmp_path):
    path = uci_file(tmp_path, "1 1 1\n", vocab=None)
    with pytest.raises(CorpusError, match="vocabulary file .*vocab.bad.txt.* not found"):
        uci.read(path)
    (tmp_path / "vocab.bad.txt").write_text("a\nb\nc\nd\n")
    with pytest.raises(CorpusError, match="has 4 terms but the data have 5 words"):
        uci.read(path)
    (tmp_path / "vocab.bad.txt").write_text("a\nb\na\nd\ne\n")
    with pytest.raises(CorpusError, match="'a' appears twice.*vocab.bad.txt"):
        uci.read(path)
    (tmp_path / "vocab.bad.txt").write_text("a\n\nc\nd\ne\n")
    with pytest.raises(CorpusError, match="line 2 of vocabulary file vocab.bad.txt is empty"):
        uci.read(path)
    (tmp_path / "vocab.bad.txt").write_bytes(b"a\nb\n\xff\nd\ne\n")
    with pytest.raises(CorpusError, match="not UTF-8 \\(line 3\\)"):
        uci.read(path)
    (tmp_path / "vocab.bad.txt").write_text("a\r\nb\r\nc\r\nd\r\ne\r\n\r\n\n")  # CRLF, trailing
    assert uci.read(path).vocabulary.terms == ["a", "b", "c", "d", "e"]


def test_uci_vocab_path_cannot_be_derived(tmp_path):
    path = write_text(tmp_path / "counts.txt", "1\n1\n1\n1 1 1\n")
    with pytest.raises(InvalidParameterError, match="no 'docword.'"):
        uci.read(path)
    assert uci.read(path, vocab_path=False).n_words == 1


def test_uci_default_vocab_path():
    assert uci.default_vocab_path("data/docword.kos.txt") == os.path.join("data", "vocab.kos.txt")
    assert uci.default_vocab_path("docword.nytimes.txt.gz") == "vocab.nytimes.txt"


def test_uci_irregular_whitespace_unsorted_and_duplicates(tmp_path):
    body = "3 5 4\r\n\n1\t1  2 \n  1 3 1\r\n\n1 1 1\n"  # CRLF, tabs, blank lines, no final \n
    path = uci_file(tmp_path, body.rstrip("\n"))
    c = uci.read(path)
    np.testing.assert_array_equal(
        c.counts.toarray(), [[3, 0, 1, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 4]])


@pytest.mark.parametrize("block", [7, 16, 64])
def test_uci_small_blocks(tmp_path, corpus, monkeypatch, block):
    path = tmp_path / "docword.toy.txt"
    uci.write(corpus, path)
    monkeypatch.setattr(_common, "BLOCK_BYTES", block)
    same(uci.read(path), corpus)
    bad = uci_file(tmp_path, "1 1 1\n1 2 1\n2 3 1\n2 4 1\n3 1 1\n3 9 1\n", name="docword.b.txt")
    with pytest.raises(CorpusError, match="word id 9 > W=5 on line 9 of docword.b.txt"):
        uci.read(bad)


def test_uci_bigger_random_corpus(tmp_path):
    rng = np.random.default_rng(0)
    m = sp.random(300, 400, density=0.05, format="csr", random_state=rng)
    m.data = rng.integers(1, 50, m.nnz)
    c = Corpus(m, [f"t{i}" for i in range(400)])
    uci.write(c, tmp_path / "docword.big.txt.gz")
    same(uci.read(tmp_path / "docword.big.txt.gz"), c)


# ---------------------------------------------------------------------------
# LDA-C
# ---------------------------------------------------------------------------
def ldac_file(tmp_path, text: str, vocab: int | None = None, name="bad.ldac"):
    path = write_text(tmp_path / name, text)
    if vocab is not None:
        (tmp_path / ldac.default_vocab_path(name)).write_text(
            "".join(f"w{i}\n" for i in range(vocab)))
    return path


def test_ldac_reads_a_known_file(tmp_path):
    c = ldac.read(ldac_file(tmp_path, "2 0:2 3:1\n0\n1 1:5\n"))
    assert c.vocabulary == Vocabulary.range(4)
    np.testing.assert_array_equal(c.counts.toarray(), [[2, 0, 0, 1], [0, 0, 0, 0], [0, 5, 0, 0]])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("2 0:2 3:1\n3 1:1 2:2\n", "line 2 of bad.ldac says N=3 but has 2 word:count pairs"),
        ("1 0:2\n1 7:1\n", "word id 7 >= vocabulary size 5 on line 2 of bad.ldac"),
        ("1 0:2\n1 -1:1\n", "negative word id -1 on line 2 of bad.ldac"),
        ("1 0:2\n1 1:-4\n", "count -4 on line 2 of bad.ldac: counts must be positive"),
        ("1 0:2\n1 1:0\n", "count 0 on line 2"),
        ("1 0:2\n1 1:1.5\n", "count '1.5' on line 2 of bad.ldac is not an integer"),
        ("1 a:2\n", "word id 'a' on line 1 of bad.ldac is not an integer"),
        ("1 0:2\n1 1:2:3\n", "'1:2:3' on line 2 of bad.ldac is not a word:count pair"),
        ("1 0:2\n1 1: 2\n", "line 2 of bad.ldac says N=1 but has 2"),
        ("1:2 3:4\n", "line 1 of bad.ldac should start with the number of pairs N"),
        ("1 0:2\n\n1 1:2\n", "line 2 of bad.ldac is empty; an empty document is written '0'"),
        ("x 0:2\n", "number of pairs 'x' on line 1"),
    ],
)
def test_ldac_bad_lines(tmp_path, text, message):
    with pytest.raises(CorpusError, match=message):
        ldac.read(ldac_file(tmp_path, text, vocab=5))


def test_ldac_trailing_blank_lines_and_crlf(tmp_path):
    c = ldac.read(ldac_file(tmp_path, "1 0:2\r\n0\r\n2 1:1  2:3\n\n\n"))
    np.testing.assert_array_equal(c.counts.toarray(), [[2, 0, 0], [0, 0, 0], [0, 1, 3]])


def test_ldac_vocab_files(tmp_path):
    path = ldac_file(tmp_path, "1 0:2\n1 2:1\n", vocab=5)
    assert ldac.read(path).vocabulary.terms == ["w0", "w1", "w2", "w3", "w4"]
    assert ldac.read(path, vocab_path=False).vocabulary == Vocabulary.range(3)
    with pytest.raises(CorpusError, match="vocabulary file .*nope.vocab.* not found"):
        ldac.read(path, vocab_path=tmp_path / "nope.vocab")
    assert ldac.default_vocab_path("d/ap.ldac.gz") == os.path.join("d", "ap.vocab")
    assert ldac.default_vocab_path("ap") == "ap.vocab"


@pytest.mark.parametrize("block", [5, 13])
def test_ldac_small_blocks(tmp_path, corpus, monkeypatch, block):
    ldac.write(corpus, tmp_path / "toy.ldac")
    monkeypatch.setattr(_common, "BLOCK_BYTES", block)
    same(ldac.read(tmp_path / "toy.ldac"), corpus)
    bad = ldac_file(tmp_path, "1 0:1\n1 1:1\n1 2:1\n1 3:1\n1 9:1\n", vocab=5)
    with pytest.raises(CorpusError, match="word id 9 >= vocabulary size 5 on line 5"):
        ldac.read(bad)


# ---------------------------------------------------------------------------
# Matrix Market
# ---------------------------------------------------------------------------
MM = "%%MatrixMarket matrix coordinate {field} general\n3 4 2\n1 1 2{extra}\n3 4 {value}\n"


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("integer", "-2", "non-negative integers; document 2 has count .*-2.* for word id 3"),
        ("real", "2.5", "non-negative integers; document 2 has count .*2.5.* \\(bad.mtx\\)"),
        ("complex", "1 1", "bad.mtx holds complex values"),
        ("integer", "x", "bad.mtx is not a valid Matrix Market file"),
    ],
)
def test_mmarket_bad_values(tmp_path, field, value, message):
    extra = " 0" if field == "complex" else ""
    path = write_text(tmp_path / "bad.mtx", MM.format(field=field, value=value, extra=extra))
    with pytest.raises(CorpusError, match=message):
        mmarket.read(path)


def test_mmarket_accepts_integral_real_and_pattern(tmp_path):
    got = mmarket.read(write_text(tmp_path / "r.mtx", MM.format(field="real", value="3.0", extra="")))
    np.testing.assert_array_equal(got.counts.toarray()[2], [0, 0, 0, 3])
    text = "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n2 1\n"
    got = mmarket.read(write_text(tmp_path / "p.mtx", text))
    np.testing.assert_array_equal(got.counts.toarray(), [[0, 0], [1, 0]])


def test_mmarket_bad_header_and_vocab(tmp_path):
    path = write_text(tmp_path / "h.mtx", "3 4 1\n1 1 1\n")
    with pytest.raises(CorpusError, match="h.mtx is not a valid Matrix Market file"):
        mmarket.read(path)
    path = write_text(tmp_path / "t.mtx", "%%MatrixMarket matrix coordinate integer general\n"
                                          "3 4 3\n1 1 1\n")
    with pytest.raises(CorpusError, match="t.mtx is not a valid Matrix Market file.*runcated"):
        mmarket.read(path)
    path = write_text(tmp_path / "v.mtx", MM.format(field="integer", value="1", extra=""))
    (tmp_path / "v.mtx.vocab").write_text("a\nb\nc\n")
    with pytest.raises(CorpusError, match="has 3 terms but the data have 4 words"):
        mmarket.read(path)
    with pytest.raises(CorpusError, match="not found"):
        mmarket.read(path, vocab_path=tmp_path / "missing.vocab")


# ---------------------------------------------------------------------------
# scipy .npz
# ---------------------------------------------------------------------------
def test_npz_bad_values(tmp_path):
    sp.save_npz(tmp_path / "neg.npz", sp.csr_matrix(np.array([[1, 0], [0, -2]])))
    with pytest.raises(CorpusError, match="document 1 has count .*-2.* for word id 1 \\(neg.npz"):
        scipy_npz.read(tmp_path / "neg.npz")
    sp.save_npz(tmp_path / "flt.npz", sp.csc_matrix(np.array([[1, 0], [0, 0.5]])))
    with pytest.raises(CorpusError, match="document 1 has count .*0.5"):
        scipy_npz.read(tmp_path / "flt.npz")


def test_npz_refuses_pickles_and_foreign_files(tmp_path):
    np.savez(tmp_path / "obj.npz", format=np.array(["csr"], dtype=object), data=np.ones(1))
    with pytest.raises(CorpusError, match="allow_pickle=False"):
        scipy_npz.read(tmp_path / "obj.npz")
    np.savez(tmp_path / "plain.npz", data=np.ones(1))
    with pytest.raises(CorpusError, match="not a scipy sparse .npz file"):
        scipy_npz.read(tmp_path / "plain.npz")
    (tmp_path / "text.npz").write_text("hello")
    with pytest.raises(CorpusError, match="not a .npz \\(zip\\) archive"):
        scipy_npz.read(tmp_path / "text.npz")
    with pytest.raises(FileNotFoundError):
        scipy_npz.read(tmp_path / "missing.npz")


def test_npz_sparse_array_and_other_layouts(tmp_path):
    sp.save_npz(tmp_path / "a.npz", sp.coo_array(np.array([[1, 0, 2], [0, 3, 0]])))
    got = scipy_npz.read(tmp_path / "a.npz")
    assert isinstance(got.counts, sp.csr_matrix)
    np.testing.assert_array_equal(got.counts.toarray(), [[1, 0, 2], [0, 3, 0]])
    (tmp_path / "a.vocab.txt").write_text("x\ny\n")
    with pytest.raises(CorpusError, match="has 2 terms but the data have 3 words"):
        scipy_npz.read(tmp_path / "a.npz")
    assert scipy_npz.default_vocab_path("d/c.npz") == os.path.join("d", "c.vocab.txt")


# ---------------------------------------------------------------------------
# the vectorised fast paths agree with the line-by-line reference
# ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("module", "text", "message"),
    [
        (uci, "1\n8\n2\n1 6 \n3\n", "line 4 of f has 2 fields"),  # a row split over two lines
        (uci, "1\n8\n1\n1 +\n", "line 4 of f has 2 fields"),
        (uci, "1\n8\n1\n1 1 -\n", "count '-' on line 4 of f is not an integer"),
        (ldac, "1 0:2\n+\n", "number of pairs '\\+' on line 2 of f"),
        (ldac, "1 4:-\n", "count '-' on line 1 of f is not an integer"),
        (ldac, "1 0:2\n3:1\n", "line 2 of f should start with the number of pairs"),
    ],
)
def test_fast_path_regressions(tmp_path, module, text, message):
    path = write_text(tmp_path / "f", text)
    with pytest.raises(CorpusError, match=message):
        module.read(path, vocab_path=False)


def _outcome(read, path):
    try:
        c = read(path, vocab_path=False)
    except CorpusError as e:
        return str(e)
    return c.counts.toarray().tolist()


def test_fast_and_slow_paths_agree_on_mutated_files(tmp_path, monkeypatch):
    rng = np.random.default_rng(7)
    alphabet = [*"0123456789 :\n\r\t-+.x", "\n\n", "  ", "\r\n", "é"]
    bases = {uci: "4\n8\n5\n1 1 2\n1 6 1\n3 2 1\n3 6 3\n4 5 1\n",
             ldac: "3 0:2 5:1 7:4\n0\n2 1:1 5:3\n1 4:1\n"}

    def slow_triples(block, first_line, name):
        rows, lines = uci._slow_triples(block, first_line, name)
        return rows, lambda i: lines[i]

    fast_uci, fast_ldac = uci._block_triples, ldac._fast_block
    for trial in range(300):
        module = uci if trial % 2 else ldac
        chars = list(bases[module])
        for _ in range(int(rng.integers(1, 4))):
            i = int(rng.integers(len(chars)))
            chars[i:i + int(rng.integers(0, 2))] = [alphabet[int(rng.integers(len(alphabet)))]]
        path = write_text(tmp_path / "f", "".join(chars))
        monkeypatch.setattr(_common, "BLOCK_BYTES", int(rng.choice([4, 16, 1 << 18])))
        fast = _outcome(module.read, path)
        monkeypatch.setattr(uci, "_block_triples", slow_triples)
        monkeypatch.setattr(ldac, "_fast_block", lambda block: None)
        slow = _outcome(module.read, path)
        monkeypatch.setattr(uci, "_block_triples", fast_uci)
        monkeypatch.setattr(ldac, "_fast_block", fast_ldac)
        assert fast == slow, "".join(chars)


def test_gzip_output_is_deterministic_and_recognised_by_content(tmp_path, corpus):
    a, b = tmp_path / "a" / "docword.toy.txt.gz", tmp_path / "b" / "docword.toy.txt.gz"
    for path in (a, b):
        path.parent.mkdir()
        uci.write(corpus, path)
    assert a.read_bytes() == b.read_bytes()  # mtime 0 and no temporary name in the header
    plain_name = tmp_path / "a" / "docword.renamed.txt"
    plain_name.write_bytes(a.read_bytes())
    same(uci.read(plain_name, vocab_path=tmp_path / "a" / "vocab.toy.txt"), corpus)


def test_shared_docstring_parts_are_filled_in():
    # mmarket.read and scipy_npz.read take their vocab_path text from _common.DOC_PARTS
    for module in (mmarket, scipy_npz):
        doc = module.read.__doc__
        assert "{vocab_path_read}" not in doc
        assert "\n    vocab_path : str, path-like or False, optional\n        The vocabulary file;" in doc
