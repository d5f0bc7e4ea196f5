"""Declarative parameter validation shared by every public entry point.

An estimator lists its constraints once (``_parameter_constraints``) and calls
:func:`validate_params` at the top of ``fit``. Messages follow one template:
"The 'n_topics' parameter of LDA must be an int >= 1. Got 0."
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np

from harmonium.errors import InvalidParameterError, NotFittedError


@dataclass(frozen=True)
class Interval:
    """A numeric range; ``kind`` is "int" or "real"; bounds may be None."""

    kind: str
    low: float | None = None
    high: float | None = None
    closed: str = "both"  # "both", "left", "right", "neither"

    def accepts(self, value: Any) -> bool:
        if isinstance(value, bool):
            return False
        if self.kind == "int":
            if not isinstance(value, numbers.Integral):
                return False
        elif not isinstance(value, numbers.Real):
            return False
        if isinstance(value, numbers.Real) and not np.isfinite(float(value)):
            return False
        lo_ok = self.low is None or (
            value >= self.low if self.closed in ("both", "left") else value > self.low
        )
        hi_ok = self.high is None or (
            value <= self.high if self.closed in ("both", "right") else value < self.high
        )
        return lo_ok and hi_ok

    def describe(self) -> str:
        noun = "an int" if self.kind == "int" else "a finite float"
        parts = []
        if self.low is not None:
            parts.append((">= " if self.closed in ("both", "left") else "> ") + f"{self.low:g}")
        if self.high is not None:
            parts.append(("<= " if self.closed in ("both", "right") else "< ") + f"{self.high:g}")
        return noun + (" " + " and ".join(parts) if parts else "")


@dataclass(frozen=True)
class Options:
    """One of a fixed set of values (compared with ==)."""

    values: tuple

    def accepts(self, value: Any) -> bool:
        return any(value == v and type(value) is type(v) for v in self.values)

    def describe(self) -> str:
        return "one of " + ", ".join(repr(v) for v in self.values)


class LazyOptions:
    """One of the keys of a registry that is imported on first validation (so that ``import harmonium``
    imports no kernels): ``source()`` returns the registry."""

    def __init__(self, source):
        self._source = source

    @property
    def values(self) -> tuple:
        return tuple(self._source())

    def accepts(self, value: Any) -> bool:
        return Options(self.values).accepts(value)

    def describe(self) -> str:
        return Options(self.values).describe()


@dataclass(frozen=True)
class InstanceOf:
    """An instance of the given type(s); ``name`` is what the message calls it."""

    types: tuple
    name: str

    def accepts(self, value: Any) -> bool:
        return isinstance(value, self.types)

    def describe(self) -> str:
        return self.name


NONE = Options((None,))
RANDOM_STATE = InstanceOf(
    (numbers.Integral, np.random.Generator, type(None)), "an int, a numpy Generator or None"
)


def _describe(constraint) -> str:
    if constraint is NONE:
        return "None"
    return constraint.describe()


def validate_params(owner: str, params: dict[str, Any], constraints: dict[str, list]) -> None:
    """Check every entry of ``params`` against its list of allowed constraints.

    Raises
    ------
    InvalidParameterError
        Naming ``owner`` (the estimator or function), the parameter, the
        allowed values and the value given.
    """
    for name, allowed in constraints.items():
        value = params[name]
        if any(c.accepts(value) for c in allowed):
            continue
        desc = [_describe(c) for c in allowed]
        text = desc[0] if len(desc) == 1 else ", ".join(desc[:-1]) + " or " + desc[-1]
        raise InvalidParameterError(
            f"The {name!r} parameter of {owner} must be {text}. Got {value!r}."
        )


def check_is_fitted(estimator, attribute: str) -> None:
    """Raise :class:`NotFittedError` unless ``estimator`` has ``attribute``."""
    if getattr(estimator, attribute, None) is None:
        raise NotFittedError(
            f"This {type(estimator).__name__} instance is not fitted yet. "
            f"Call 'fit' with a corpus before using this method."
        )
