"""Bundled real corpora and their loaders (read from the package each call, never cached), and
synthetic data generators."""

from harmonium.datasets.debian import load_debian
from harmonium.datasets.market_basket import MarketBasket, QuestPatterns, make_market_basket

__all__ = ["load_debian", "make_market_basket", "MarketBasket", "QuestPatterns"]
