"""Argument checks shared by the distributions of :mod:`harmonium.expfam`.

Every failure raises one :class:`~harmonium.errors.InvalidParameterError` whose
message names the class (or method), the argument, the allowed range, the
offending value and, for arrays, its index::

    Beta: 'a' must be finite and > 0 everywhere; got -1.0 at index 3.

The checks are vectorised and cheap (one pass over the array), so
``from_natural`` can call them on every CAVI update.
"""

from __future__ import annotations

import numpy as np

from harmonium.errors import InvalidParameterError

__all__ = [
    "as_float",
    "check",
    "counts",
    "finite",
    "labels",
    "nonneg_int",
    "positive",
    "positive_definite",
    "probability",
    "required",
    "simplex",
]


def _fmt(value) -> str:
    value = np.asarray(value)
    if value.ndim == 0:
        v = value.item()
        return repr(float(v)) if isinstance(v, float) else repr(v)
    return np.array2string(value, precision=6, threshold=8)


def as_float(owner: str, name: str, value, min_ndim: int = 0) -> np.ndarray:
    """``value`` as a float64 array with at least ``min_ndim`` axes."""
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidParameterError(
            f"{owner}: {name!r} must be a real number or an array of real numbers; got {value!r}."
        ) from None
    if arr.ndim < min_ndim:
        what = "a vector" if min_ndim == 1 else f"an array with at least {min_ndim} axes"
        raise InvalidParameterError(f"{owner}: {name!r} must be {what}; got shape {arr.shape}.")
    return arr


def check(owner: str, name: str, shown, ok, requirement: str) -> None:
    """Raise unless ``ok`` holds everywhere; the message shows ``shown`` at the first failure."""
    ok = np.asarray(ok, dtype=bool)
    if ok.all():
        return
    idx = tuple(int(i) for i in np.argwhere(~ok)[0])
    shown = np.asarray(shown)
    val = shown[idx] if shown.shape == ok.shape else shown
    if not idx:
        raise InvalidParameterError(f"{owner}: {name!r} must be {requirement}; got {_fmt(val)}.")
    where = idx[0] if len(idx) == 1 else idx
    raise InvalidParameterError(
        f"{owner}: {name!r} must be {requirement} everywhere; got {_fmt(val)} at index {where}."
    )


def finite(owner: str, name: str, value, min_ndim: int = 0) -> np.ndarray:
    arr = as_float(owner, name, value, min_ndim)
    check(owner, name, arr, np.isfinite(arr), "finite")
    return arr


def positive(owner: str, name: str, value, min_ndim: int = 0) -> np.ndarray:
    arr = as_float(owner, name, value, min_ndim)
    check(owner, name, arr, np.isfinite(arr) & (arr > 0), "finite and > 0")
    return arr


def probability(owner: str, name: str, value) -> np.ndarray:
    arr = as_float(owner, name, value)
    check(owner, name, arr, (arr >= 0) & (arr <= 1), "in [0, 1]")
    return arr


def required(owner: str, name: str, value):
    """``value`` itself; an error naming the fixed parameter when it is None (not given on a class call)."""
    if value is None:
        raise InvalidParameterError(
            f"{owner}: pass the fixed {name!r} as a keyword ({name}=...); it is not a natural parameter."
        )
    return value


def nonneg_int(owner: str, name: str, value) -> np.ndarray:
    """An integer-valued array >= 0 (integers stored as floats are accepted), returned as int64."""
    arr = as_float(owner, name, value)
    check(owner, name, np.asarray(value), np.isfinite(arr) & (arr >= 0) & (arr == np.round(arr)), "an integer >= 0")
    return arr.astype(np.int64)


def counts(owner: str, name: str, value, min_ndim: int = 0) -> np.ndarray:
    """Count data: a float array whose entries are integers >= 0 (kept as float64, unlike :func:`nonneg_int`)."""
    arr = as_float(owner, name, value, min_ndim=min_ndim)
    check(owner, name, arr, (arr >= 0) & (arr == np.round(arr)), "a non-negative integer count")
    return arr


def labels(owner: str, name: str, value, n_categories: int) -> np.ndarray:
    """Category labels in ``{0, ..., n_categories - 1}``, returned as int64."""
    arr = as_float(owner, name, value)
    check(owner, name, np.asarray(value), (arr >= 0) & (arr < n_categories) & (arr == np.round(arr)),
          f"an integer label in [0, {n_categories - 1}]")
    return arr.astype(np.int64)


def simplex(owner: str, name: str, value, atol: float = 1e-6) -> np.ndarray:
    """Probability vectors along the last axis: >= 0 and summing to 1 (within ``atol``), renormalised exactly."""
    arr = as_float(owner, name, value, min_ndim=1)
    if arr.shape[-1] < 1:
        raise InvalidParameterError(f"{owner}: {name!r} must have at least one category; got shape {arr.shape}.")
    check(owner, name, arr, np.isfinite(arr) & (arr >= 0), "finite and >= 0")
    total = arr.sum(axis=-1)
    check(owner, f"{name}.sum(axis=-1)", total, np.abs(total - 1.0) <= atol, "1 (probabilities along the last axis)")
    return arr / total[..., None]


def positive_definite(owner: str, name: str, value) -> np.ndarray:
    """A (batch of) symmetric positive-definite matrices, returned exactly symmetrised."""
    arr = as_float(owner, name, value, min_ndim=2)
    if arr.shape[-1] != arr.shape[-2] or arr.shape[-1] < 1:
        raise InvalidParameterError(f"{owner}: {name!r} must be a (batch of) square matrices; got shape {arr.shape}.")
    check(owner, name, arr.sum(axis=(-2, -1)), np.isfinite(arr).all(axis=(-2, -1)), "finite")
    asym = np.abs(arr - np.swapaxes(arr, -1, -2)).max(axis=(-2, -1))
    scale = np.abs(arr).max(axis=(-2, -1))
    check(owner, f"{name} (largest |M - M^T|)", asym, asym <= 1e-8 * (1.0 + scale), "0 (a symmetric matrix)")
    arr = 0.5 * (arr + np.swapaxes(arr, -1, -2))
    low = np.linalg.eigvalsh(arr)[..., 0]
    check(owner, f"{name} (smallest eigenvalue)", low, low > 0, "> 0 (a positive-definite matrix)")
    return arr
