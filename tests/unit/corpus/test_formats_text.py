"""Raw-text formats: ``lines`` (one document a line) and ``tsv`` / ``csv`` tables."""

from __future__ import annotations

import csv
import gzip

import numpy as np
import pytest
import scipy.sparse as sp

from harmonium.corpus import Corpus
from harmonium.corpus.formats import lines, read_corpus, table, write_corpus
from harmonium.corpus.tokenizer import Tokenizer
from harmonium.errors import CorpusError, InvalidParameterError


def exact() -> Tokenizer:
    """The tokenizer that reads back what the writers write."""
    return Tokenizer(token_pattern=r"\S+", lowercase=False)


def as_dicts(corpus: Corpus) -> list[dict[str, int]]:
    return [dict(corpus.document(d)) for d in range(corpus.n_docs)]


def assert_same_counts(a: Corpus, b: Corpus) -> None:
    assert a.vocabulary == b.vocabulary
    assert a.counts.shape == b.counts.shape
    assert (a.counts != b.counts).nnz == 0


@pytest.fixture
def rich_corpus() -> Corpus:
    """Sorted vocabulary (every term used), an empty document, all metadata kinds."""
    counts = np.array([[2, 0, 1, 0], [0, 3, 0, 1], [0, 0, 0, 0], [1, 1, 1, 1]])
    return Corpus(
        counts,
        ["C++", "naïve", "quote\"d", "x,y"],
        doc_ids=["pkg-a", "pkg b", "pkg,c", "pkg\"d"],
        labels=["games", "libs", "doc", "libs"],
        features=[[1.0, 0.1], [2.5, 1e300], [-3.0, 0.0], [4.0, 1 / 3]],
        feature_names=["size", "ratio"],
        tags=sp.csr_matrix(np.array([[1, 0, 1], [0, 0, 0], [0, 1, 0], [1, 1, 1]])),
        tag_names=["role::program", "use::gameplaying", "x11::application"],
    )


# -- lines ---------------------------------------------------------------------


def test_lines_read_one_document_per_line(tmp_path):
    path = tmp_path / "docs.txt"
    path.write_text("The cat sat\n\nA dog, a DOG!\r\nlast line without newline", encoding="utf-8")
    corpus = lines.read(path)
    assert corpus.n_docs == 4
    assert list(corpus.doc_ids) == ["0", "1", "2", "3"]
    assert as_dicts(corpus)[2] == {"dog": 2}
    assert corpus.doc_lengths.tolist() == [3, 0, 2, 4]


def test_lines_read_gzip_bom_and_max_rows(tmp_path):
    path = tmp_path / "docs.txt.gz"
    path.write_bytes(gzip.compress("\ufeffalpha beta\ngamma delta\nepsilon zeta\n".encode()))
    corpus = lines.read(path, max_rows=2)
    assert list(corpus.vocabulary) == ["alpha", "beta", "delta", "gamma"]
    assert corpus.n_docs == 2


def test_lines_read_ids_are_line_numbers_after_dropping(tmp_path):
    path = tmp_path / "docs.txt"
    path.write_text("one two\n\n!!!\nthree four\n", encoding="utf-8")
    tok = Tokenizer(min_doc_length=1)
    corpus = lines.read(path, tokenizer=tok)
    assert list(corpus.doc_ids) == ["0", "3"]
    assert tok.dropped_.tolist() == [1, 2]


def test_lines_read_other_encoding(tmp_path):
    path = tmp_path / "latin.txt"
    path.write_bytes("café crème\n".encode("latin-1"))
    assert list(lines.read(path, encoding="latin-1").vocabulary) == ["café", "crème"]


def test_lines_non_utf8_names_file_and_line(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"fine line\nanother fine\nbroken \xe9 byte\n")
    with pytest.raises(CorpusError, match=r"bad\.txt: line 3 is not valid utf-8: byte 0xe9"):
        lines.read(path)


def test_lines_empty_file_and_empty_vocabulary(tmp_path):
    path = tmp_path / "empty.txt"
    path.write_text("", encoding="utf-8")
    with pytest.raises(CorpusError, match="empty.txt: the file has no lines"):
        lines.read(path)
    path.write_text("!\n?\n", encoding="utf-8")
    with pytest.raises(CorpusError, match="empty.txt: Empty vocabulary: no token"):
        lines.read(path)


def test_lines_missing_file_and_bad_parameters(tmp_path):
    with pytest.raises(CorpusError, match="no such file"):
        lines.read(tmp_path / "nope.txt")
    (tmp_path / "a.txt").write_text("x y\n", encoding="utf-8")
    with pytest.raises(InvalidParameterError, match="'encoding' parameter must be a codec"):
        lines.read(tmp_path / "a.txt", encoding="no-such-codec")
    with pytest.raises(InvalidParameterError, match="'tokenizer' parameter of lines.read"):
        lines.read(tmp_path / "a.txt", tokenizer="words")


@pytest.mark.parametrize("name", ["docs.txt", "docs.txt.gz"])
def test_lines_round_trip(tmp_path, rich_corpus, name):
    path = tmp_path / name
    lines.write(rich_corpus, path)
    back = lines.read(path, tokenizer=exact())
    assert_same_counts(back, rich_corpus)
    assert list(back.doc_ids) == ["0", "1", "2", "3"]
    if name.endswith(".gz"):
        assert path.read_bytes()[:2] == b"\x1f\x8b"
    else:
        assert path.read_text(encoding="utf-8").splitlines()[0] == "C++ C++ quote\"d"


def test_lines_round_trip_unsorted_vocabulary(tmp_path):
    corpus = Corpus(np.array([[1, 2, 0], [0, 1, 3]]), ["zeta", "alpha", "mu"])
    lines.write(corpus, tmp_path / "d.txt")
    back = lines.read(tmp_path / "d.txt", tokenizer=exact())
    assert as_dicts(back) == as_dicts(corpus)
    assert list(back.vocabulary) == ["alpha", "mu", "zeta"]


def test_lines_write_rejects_whitespace_terms(tmp_path):
    corpus = Corpus(np.array([[1, 1]]), ["fine", "new york"])
    with pytest.raises(CorpusError, match="'new york' .* contains whitespace"):
        lines.write(corpus, tmp_path / "d.txt")
    assert list(tmp_path.iterdir()) == []  # nothing half-written left behind


# -- tables --------------------------------------------------------------------

TSV = (
    "package\tsection\tsize\tdeps\ttags\ttext\n"
    "alpha\tgames\t10\t2\tuse::gameplaying,role::program\tA fun game about alpha\n"
    "beta\tlibs\t2.5\t0\t\tA library for beta\n"
    "gamma\tgames\t7\t1\trole::program\tAnother game, gamma\n"
)


def read_tsv(path, **kw):
    return table.read(
        path,
        id_column="package",
        label_column="section",
        feature_columns=["size", "deps"],
        tag_column="tags",
        **kw,
    )


def test_table_read_all_columns(tmp_path):
    path = tmp_path / "t.tsv"
    path.write_text(TSV, encoding="utf-8")
    corpus = read_tsv(path)
    assert list(corpus.doc_ids) == ["alpha", "beta", "gamma"]
    assert list(corpus.labels) == ["games", "libs", "games"]
    assert corpus.feature_names == ["size", "deps"]
    assert corpus.features.tolist() == [[10.0, 2.0], [2.5, 0.0], [7.0, 1.0]]
    assert list(corpus.tag_names) == ["role::program", "use::gameplaying"]
    assert corpus.tags.toarray().tolist() == [[1, 1], [0, 0], [1, 0]]
    assert as_dicts(corpus)[1] == {"library": 1, "for": 1, "beta": 1}


def test_table_read_defaults_text_only(tmp_path):
    path = tmp_path / "t.tsv"
    path.write_text(TSV, encoding="utf-8")
    corpus = table.read(path)
    assert list(corpus.doc_ids) == ["0", "1", "2"]
    assert corpus.labels is None and corpus.features is None and corpus.tags is None


def test_table_read_quoted_csv_fields(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(
        'id,text\n1,"commas, ""quotes"" and\na newline"\n2,plain words\n', encoding="utf-8"
    )
    corpus = table.read(path, delimiter=",", id_column="id")
    assert as_dicts(corpus)[0] == {"commas": 1, "quotes": 1, "and": 1, "newline": 1}
    assert list(corpus.doc_ids) == ["1", "2"]


def test_table_read_huge_field_and_restores_csv_limit(tmp_path):
    path = tmp_path / "big.tsv"
    path.write_text("text\n" + "word " * 60_000 + "\nsmall doc\n", encoding="utf-8")
    before = csv.field_size_limit()
    corpus = table.read(path)
    assert corpus.doc_lengths.tolist() == [60_000, 2]
    assert csv.field_size_limit() == before


def test_table_read_gzip_and_max_rows(tmp_path):
    path = tmp_path / "t.tsv.gz"
    path.write_bytes(gzip.compress(TSV.encode()))
    corpus = read_tsv(path, max_rows=2)
    assert list(corpus.doc_ids) == ["alpha", "beta"]


def test_table_min_doc_length_subsets_metadata(tmp_path):
    path = tmp_path / "t.tsv"
    path.write_text(TSV, encoding="utf-8")
    tok = Tokenizer(vocabulary=["game"], min_doc_length=1)
    corpus = read_tsv(path, tokenizer=tok)
    assert list(corpus.doc_ids) == ["alpha", "gamma"]
    assert list(corpus.labels) == ["games", "games"]
    assert corpus.features[:, 0].tolist() == [10.0, 7.0]
    assert corpus.tags.toarray().tolist() == [[1, 1], [1, 0]]


def test_table_missing_column_lists_available(tmp_path):
    path = tmp_path / "t.tsv"
    path.write_text(TSV, encoding="utf-8")
    with pytest.raises(
        CorpusError,
        match=r"column 'labels' \(label_column\) is not in the header; available columns: "
        r"'package', 'section'",
    ):
        table.read(path, label_column="labels")


def test_table_non_numeric_feature_names_row_and_column(tmp_path):
    path = tmp_path / "t.tsv"
    path.write_text(TSV.replace("\t2.5\t", "\tbig\t"), encoding="utf-8")
    with pytest.raises(
        CorpusError, match=r"feature column 'size' must be numeric; row 1 \(line 3\) has 'big'"
    ):
        read_tsv(path)


def test_table_wrong_number_of_fields(tmp_path):
    path = tmp_path / "t.tsv"
    path.write_text("id\ttext\na\tsome text\nb\tmore\textra\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"row 1 \(line 3\) has 3 fields but the header has 2"):
        table.read(path)


def test_table_non_utf8_names_file_and_line(tmp_path):
    path = tmp_path / "t.tsv"
    path.write_bytes(TSV.encode().replace(b"library", b"libr\xffary"))
    with pytest.raises(CorpusError, match=r"t\.tsv: line 3 is not valid utf-8: byte 0xff"):
        read_tsv(path)


def test_table_empty_file_and_header_only(tmp_path):
    path = tmp_path / "t.tsv"
    path.write_text("", encoding="utf-8")
    with pytest.raises(CorpusError, match="the file is empty; expected a header row"):
        table.read(path)
    path.write_text("id\ttext\n", encoding="utf-8")
    with pytest.raises(CorpusError, match="header but no data rows"):
        table.read(path)


def test_table_bad_parameters(tmp_path):
    path = tmp_path / "t.tsv"
    path.write_text(TSV, encoding="utf-8")
    with pytest.raises(InvalidParameterError, match="'delimiter' parameter of table.read"):
        table.read(path, delimiter="::")
    with pytest.raises(InvalidParameterError, match="'max_rows' parameter of table.read"):
        table.read(path, max_rows=0)


@pytest.mark.parametrize(
    ("name", "delimiter"), [("c.tsv", "\t"), ("c.csv", ","), ("c.tsv.gz", "\t")]
)
def test_table_round_trip(tmp_path, rich_corpus, name, delimiter):
    path = tmp_path / name
    table.write(rich_corpus, path, delimiter=delimiter)
    back = table.read(
        path,
        delimiter=delimiter,
        id_column="id",
        label_column="label",
        feature_columns=rich_corpus.feature_names,
        tag_column="tags",
        tokenizer=exact(),
    )
    assert_same_counts(back, rich_corpus)
    assert list(back.doc_ids) == list(rich_corpus.doc_ids)
    assert list(back.labels) == list(rich_corpus.labels)
    assert back.feature_names == rich_corpus.feature_names
    np.testing.assert_array_equal(back.features, rich_corpus.features)  # exact, via repr
    assert back.tag_names == rich_corpus.tag_names
    assert (back.tags != rich_corpus.tags).nnz == 0


def test_table_round_trip_counts_only(tmp_path):
    corpus = Corpus(np.array([[1, 2, 0], [0, 1, 3]]), ["zeta", "alpha", "mu"])
    table.write(corpus, tmp_path / "c.tsv")
    header = (tmp_path / "c.tsv").read_text(encoding="utf-8").splitlines()[0]
    assert header == "id\ttext"
    back = table.read(tmp_path / "c.tsv", id_column="id", tokenizer=exact())
    assert as_dicts(back) == as_dicts(corpus)


def test_table_write_rejects_feature_name_clash(tmp_path):
    corpus = Corpus(np.array([[1]]), ["a"], features=[[1.0]], feature_names=["text"])
    with pytest.raises(CorpusError, match="clash"):
        table.write(corpus, tmp_path / "c.tsv")


# -- dispatch --------------------------------------------------------------------


def test_read_corpus_dispatches_on_extension(tmp_path):
    (tmp_path / "t.tsv").write_text(TSV, encoding="utf-8")
    assert read_corpus(tmp_path / "t.tsv", id_column="package").doc_ids.tolist() == [
        "alpha",
        "beta",
        "gamma",
    ]
    csv_text = 'package,tags,text\nalpha,"b,a",hello world\n'
    (tmp_path / "t.csv").write_text(csv_text, encoding="utf-8")
    corpus = read_corpus(tmp_path / "t.csv", id_column="package", tag_column="tags")
    assert as_dicts(corpus) == [{"hello": 1, "world": 1}]
    assert list(corpus.tag_names) == ["a", "b"]
    (tmp_path / "d.txt").write_text("hello world\nworld\n", encoding="utf-8")
    assert read_corpus(tmp_path / "d.txt").doc_lengths.tolist() == [2, 1]
    (tmp_path / "d.txt.gz").write_bytes(gzip.compress(b"hello world\n"))
    assert read_corpus(tmp_path / "d.txt.gz").n_docs == 1
    assert read_corpus(tmp_path / "d.txt", format="lines").n_docs == 2


def test_write_corpus_dispatches_on_extension(tmp_path, rich_corpus):
    write_corpus(rich_corpus, tmp_path / "c.csv")
    assert (tmp_path / "c.csv").read_text(encoding="utf-8").startswith("id,label,size,ratio,tags,")
    back = read_corpus(tmp_path / "c.csv", id_column="id", tokenizer=exact())
    assert_same_counts(back, rich_corpus)
    write_corpus(rich_corpus, tmp_path / "c.txt")
    assert_same_counts(read_corpus(tmp_path / "c.txt", tokenizer=exact()), rich_corpus)
