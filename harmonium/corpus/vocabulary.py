"""Vocabulary: the bijection between word ids 0..V-1 and terms."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import numpy as np

from harmonium.errors import CorpusError


class Vocabulary(Sequence):
    """An ordered set of unique terms; word id ``w`` is ``terms[w]``.

    Parameters
    ----------
    terms : iterable of str
        The terms, in id order. Duplicates and non-strings are rejected.

    Examples
    --------
    >>> v = Vocabulary(["apple", "pear"])
    >>> v.index("pear"), v[0], len(v)
    (1, 'apple', 2)
    """

    __slots__ = ("_terms", "_index")

    def __init__(self, terms: Iterable[str]):
        self._terms = list(terms)
        self._index: dict[str, int] = {}
        for i, t in enumerate(self._terms):
            if not isinstance(t, str):
                raise CorpusError(f"Vocabulary terms must be str; term {i} is {t!r}.")
            if t in self._index:
                raise CorpusError(
                    f"Vocabulary term {t!r} appears twice (ids {self._index[t]} and {i}); "
                    "terms must be unique."
                )
            self._index[t] = i

    @classmethod
    def range(cls, n: int) -> Vocabulary:
        """Placeholder terms "0".."n-1" for data that comes without a vocabulary."""
        return cls(str(i) for i in range(n))

    def __len__(self) -> int:
        return len(self._terms)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return Vocabulary(self._terms[i])
        if isinstance(i, (list, np.ndarray)):
            return Vocabulary(self._terms[int(j)] for j in i)
        return self._terms[i]

    def __iter__(self) -> Iterator[str]:
        return iter(self._terms)

    def __contains__(self, term) -> bool:
        return term in self._index

    def __eq__(self, other) -> bool:
        return isinstance(other, Vocabulary) and self._terms == other._terms

    def __hash__(self):
        return hash(tuple(self._terms))

    def __repr__(self) -> str:
        head = ", ".join(repr(t) for t in self._terms[:5])
        more = ", ..." if len(self) > 5 else ""
        return f"Vocabulary([{head}{more}], size={len(self)})"

    def index(self, term: str) -> int:  # noqa: D401 - Sequence API
        """The id of ``term``; ``KeyError`` naming the term if absent."""
        try:
            return self._index[term]
        except KeyError:
            raise KeyError(f"term {term!r} is not in the vocabulary") from None

    def get(self, term: str, default: int | None = None) -> int | None:
        """The id of ``term`` or ``default``."""
        return self._index.get(term, default)

    def encode(self, tokens: Iterable[str]) -> np.ndarray:
        """Word ids of the in-vocabulary tokens, out-of-vocabulary ones dropped."""
        idx = self._index
        return np.fromiter((idx[t] for t in tokens if t in idx), dtype=np.int32)

    @property
    def is_range(self) -> bool:
        """True for the placeholder terms "0".."V-1" of data that came without a vocabulary (bare word ids)."""
        return all(t == str(i) for i, t in enumerate(self._terms))

    @property
    def terms(self) -> list[str]:
        """The terms as a new list."""
        return list(self._terms)

    def to_array(self) -> np.ndarray:
        """The terms as a numpy unicode array (storable without pickle)."""
        if not self._terms:
            return np.array([], dtype="<U1")
        return np.array(self._terms, dtype=str)
