"""Corpus layer: Vocabulary, Corpus (CSR counts + token stream), tokenizer, splits, readers/writers."""

from harmonium.corpus.corpus import Corpus, TokenStream
from harmonium.corpus.splits import completion_split, train_test_split
from harmonium.corpus.vocabulary import Vocabulary

__all__ = ["Corpus", "TokenStream", "Vocabulary", "completion_split", "train_test_split"]
