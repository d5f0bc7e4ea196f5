"""Exception types raised by harmonium.

Every error a user can trigger is one of these (or a plain ``ValueError`` /
``TypeError`` subclass of them), carries one sentence that names the argument
or the place, and says how to fix it. Kernels never raise; Python code checks
inputs once before calling them.
"""

from __future__ import annotations


class HarmoniumError(Exception):
    """Base class of every error raised on purpose by harmonium."""


class InvalidParameterError(HarmoniumError, ValueError, TypeError):
    """A hyperparameter or argument is out of its allowed range or of the wrong type."""


class CorpusError(HarmoniumError, ValueError):
    """Input data cannot be turned into a valid corpus (bad ids, counts, encoding...)."""


class ModelFileError(HarmoniumError, ValueError):
    """A model or checkpoint file is truncated, corrupted, foreign or too new."""


class NotFittedError(HarmoniumError, ValueError, AttributeError):
    """A method that needs a fitted model was called before ``fit``.

    A ``ValueError`` and an ``AttributeError``, as scikit-learn's ``NotFittedError`` is, so that
    code written for scikit-learn estimators (``except ValueError``, ``hasattr``) treats
    harmonium's the same way.
    """


class VocabularyMismatchError(CorpusError):
    """Documents share no word with the model's vocabulary, or use word ids beyond it."""


class OutputPathError(HarmoniumError, OSError):
    """A file cannot be written where the user asked (missing folder, no permission, a folder in the way)."""


class HarmoniumWarning(UserWarning):
    """Base class of every warning issued by harmonium."""


class VocabularyMismatchWarning(HarmoniumWarning):
    """Some tokens of a corpus are words the model's vocabulary lacks; they are dropped (the share is given)."""
