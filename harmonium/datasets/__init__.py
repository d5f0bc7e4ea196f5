"""Bundled real corpora and their loaders (read from the package each call, never cached), and
synthetic data generators."""

import importlib

from harmonium.datasets.debian import load_debian

__all__ = ["load_debian", "make_market_basket", "MarketBasket", "QuestPatterns"]

_MARKET_BASKET = ("make_market_basket", "MarketBasket", "QuestPatterns")


def __getattr__(name):
    # the market-basket generator compiles a numba kernel: imported on first use, so that loading the
    # Debian corpus does not load numba (about 125 MB resident)
    if name in _MARKET_BASKET:
        return getattr(importlib.import_module("harmonium.datasets.market_basket"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_MARKET_BASKET))
