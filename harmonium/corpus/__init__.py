"""Corpus layer: Vocabulary, Corpus (CSR counts + token stream), tokenizer, splits, readers/writers."""

from harmonium.corpus.corpus import Corpus, TokenStream
from harmonium.corpus.formats import read_corpus, write_corpus
from harmonium.corpus.splits import completion_split, train_test_split
from harmonium.corpus.tokenizer import Tokenizer
from harmonium.corpus.vocabulary import Vocabulary

__all__ = [
    "Corpus",
    "TokenStream",
    "Tokenizer",
    "Vocabulary",
    "completion_split",
    "read_corpus",
    "train_test_split",
    "write_corpus",
]
