"""harmonium: probabilistic topic models and the approximate inference that fits them.

>>> import harmonium
>>> from harmonium.datasets import load_debian
>>> corpus = load_debian(n_docs=500)
>>> model = harmonium.LDA(n_topics=5, n_iter=20, random_state=0).fit(corpus)
>>> len(model.top_words(3))
5
"""

from harmonium import estimators as _estimators
from harmonium._version import __version__
from harmonium.corpus import Corpus, Tokenizer, Vocabulary
from harmonium.estimators import LDA, load

__all__ = ["LDA", "Corpus", "Tokenizer", "Vocabulary", "__version__", "load", *sorted(_estimators._LAZY)]


def __getattr__(name):
    # EFH, GBEFH, DualWingHarmonium, ReplicatedSoftmax, RatePoisson, HCRF, sample: imported on first use.
    if name in _estimators._LAZY:
        return getattr(_estimators, name)
    raise AttributeError(f"module 'harmonium' has no attribute {name!r}")
