"""Public façades: hyperparameters in, fitted attributes (ending in ``_``) out.

LDA is imported eagerly; the harmonium and HCRF estimators and ``sample`` are imported on first
attribute access (PEP 562), so that ``import harmonium`` does not pay for kernels it may never use.
"""

import importlib

from harmonium.estimators._base import LAZY_ESTIMATORS, load
from harmonium.estimators.lda import LDA

_SAMPLING = "harmonium.estimators.sampling"
_LAZY = {**LAZY_ESTIMATORS, "sample": _SAMPLING, "SamplingResult": _SAMPLING}

__all__ = ["LDA", "load", *sorted(_LAZY)]


def __getattr__(name):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
