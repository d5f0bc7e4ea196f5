"""Child streams are a function of the parent's state, also for a Generator restored from a stored state."""

import numpy as np

from harmonium.parallel.seeds import check_random_state, generator_from_state, get_state, spawn


def _first_draws(children):
    return [c.integers(0, 2**62) for c in children]


def test_spawn_from_a_restored_generator_repeats():
    rng, _ = check_random_state(7)
    rng.random(3)
    state = get_state(rng)
    a = _first_draws(spawn(generator_from_state(state), 4))
    b = _first_draws(spawn(generator_from_state(state), 4))
    assert a == b
    c = _first_draws(spawn(rng, 4))  # the live generator in the same state gives the same children
    assert a == c


def test_children_are_distinct_and_the_parent_moves_on():
    rng, _ = check_random_state(0)
    first = _first_draws(spawn(rng, 3))
    assert len(set(first)) == 3
    assert _first_draws(spawn(rng, 3)) != first
    assert isinstance(spawn(np.random.default_rng(1), 1)[0].bit_generator, np.random.PCG64)
