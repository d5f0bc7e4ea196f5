"""Corpus layer: Vocabulary, Corpus (CSR counts + token stream), tokenizer, splits, readers/writers."""

from harmonium.corpus.corpus import Corpus, TokenStream
from harmonium.corpus.formats import read_corpus, write_corpus
from harmonium.corpus.interop import from_gensim, from_sklearn, to_gensim, to_sklearn
from harmonium.corpus.load import load_corpus
from harmonium.corpus.ondisk import build_ondisk_corpus, open_ondisk_corpus
from harmonium.corpus.splits import completion_split, split_long_documents, train_test_split
from harmonium.corpus.tokenizer import Tokenizer
from harmonium.corpus.vocabulary import Vocabulary

__all__ = [
    "Corpus",
    "TokenStream",
    "Tokenizer",
    "Vocabulary",
    "build_ondisk_corpus",
    "completion_split",
    "from_gensim",
    "from_sklearn",
    "load_corpus",
    "open_ondisk_corpus",
    "read_corpus",
    "split_long_documents",
    "to_gensim",
    "to_sklearn",
    "train_test_split",
    "write_corpus",
]
