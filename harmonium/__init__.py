"""harmonium: probabilistic topic models and the approximate inference that fits them."""

from harmonium._version import __version__
from harmonium.corpus import Corpus, Vocabulary

__all__ = ["Corpus", "Vocabulary", "__version__"]
