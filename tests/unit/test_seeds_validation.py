"""Random streams and declarative parameter validation."""

from __future__ import annotations

import numpy as np
import pytest

from harmonium._validation import NONE, Interval, Options, check_is_fitted, validate_params
from harmonium.errors import InvalidParameterError, NotFittedError
from harmonium.parallel.seeds import check_random_state, generator_from_state, get_state, spawn


def test_check_random_state_int_none_generator():
    r1, s1 = check_random_state(5)
    r2, _ = check_random_state(5)
    assert s1 == 5 and r1.random() == r2.random()
    g = np.random.default_rng(1)
    assert check_random_state(g) == (g, None)
    r3, s3 = check_random_state(None)
    r4, _ = check_random_state(s3)
    assert isinstance(s3, int) and r3.random() == r4.random()
    for bad in (-1, "x", 1.5, True):
        with pytest.raises(InvalidParameterError, match="random_state"):
            check_random_state(bad, "LDA")


def test_spawn_gives_independent_reproducible_children():
    a = [c.random() for c in spawn(np.random.default_rng(3), 3)]
    b = [c.random() for c in spawn(np.random.default_rng(3), 3)]
    assert a == b and len(set(a)) == 3


def test_state_round_trip():
    rng = np.random.default_rng(9)
    rng.random(5)
    clone = generator_from_state(get_state(rng))
    assert clone.random() == rng.random()
    with pytest.raises(InvalidParameterError, match="bit generator"):
        generator_from_state({"bit_generator": "Nope"})


@pytest.mark.parametrize(
    ("value", "ok"),
    [(1, True), (0, False), (2.0, False), (True, False), (np.int64(3), True), (None, True), ("a", False)],
)
def test_validate_params_int_or_none(value, ok):
    constraints = {"k": [Interval("int", 1, None), NONE]}
    if ok:
        validate_params("Est", {"k": value}, constraints)
    else:
        with pytest.raises(InvalidParameterError, match=r"The 'k' parameter of Est must be an int >= 1 or None. Got"):
            validate_params("Est", {"k": value}, constraints)


def test_validate_params_messages():
    with pytest.raises(InvalidParameterError, match=r"must be a finite float > 0 and < 1. Got 1.0"):
        validate_params("f", {"x": 1.0}, {"x": [Interval("real", 0, 1, "neither")]})
    with pytest.raises(InvalidParameterError, match=r"must be one of 'a', 'b'. Got 'c'"):
        validate_params("f", {"x": "c"}, {"x": [Options(("a", "b"))]})
    with pytest.raises(InvalidParameterError, match="Got inf"):
        validate_params("f", {"x": float("inf")}, {"x": [Interval("real", 0, None)]})


def test_check_is_fitted():
    class E:
        n_iter_ = None

    with pytest.raises(NotFittedError, match="This E instance is not fitted yet"):
        check_is_fitted(E(), "n_iter_")
