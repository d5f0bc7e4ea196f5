"""Public façades: hyperparameters in, fitted attributes (ending in ``_``) out."""

from harmonium.estimators._base import load
from harmonium.estimators.lda import LDA

__all__ = ["LDA", "load"]
