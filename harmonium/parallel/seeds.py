"""Random-number streams: one Generator per run, child streams per chain or thread.

The public argument ``random_state`` (int, Generator or None) is converted once
by :func:`check_random_state`. ``None`` draws fresh entropy, which is returned
so that the estimator can record it in ``seed_`` and the run can be repeated.
Chains, threads and workers get independent child streams from
:func:`spawn`, built on ``numpy.random.SeedSequence.spawn``.
"""

from __future__ import annotations

import numbers

import numpy as np

from harmonium.errors import InvalidParameterError


def check_random_state(random_state, owner: str = "harmonium") -> tuple[np.random.Generator, int | None]:
    """Return ``(rng, seed)`` for an int, a Generator or None.

    ``seed`` is the integer that reproduces the stream, or None when the caller
    passed an existing Generator (its state is recorded by checkpoints instead).
    """
    if isinstance(random_state, np.random.Generator):
        return random_state, None
    if random_state is None:
        seed = int(np.random.SeedSequence().entropy)
        return np.random.Generator(np.random.PCG64(seed)), seed
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        if random_state < 0:
            raise InvalidParameterError(
                f"The 'random_state' parameter of {owner} must be a non-negative int, "
                f"a numpy Generator or None. Got {random_state!r}."
            )
        return np.random.Generator(np.random.PCG64(int(random_state))), int(random_state)
    raise InvalidParameterError(
        f"The 'random_state' parameter of {owner} must be an int, a numpy Generator "
        f"or None. Got {random_state!r}."
    )


def spawn(rng: np.random.Generator, n: int) -> list[np.random.Generator]:
    """``n`` independent child Generators of ``rng`` (same bit-generator type).

    The children are ``SeedSequence(entropy).spawn(n)`` with 256 bits of entropy drawn from ``rng``,
    so they are a function of ``rng``'s current state alone, and ``rng`` moves on. ``rng.spawn``
    would use the seed sequence ``rng`` was built with, which a generator restored from a stored
    state (:func:`generator_from_state`) does not have: its children would differ on every run.
    """
    entropy = rng.integers(0, 2**32, size=8, dtype=np.uint32)
    bitgen = type(rng.bit_generator)
    return [np.random.Generator(bitgen(child)) for child in np.random.SeedSequence(entropy).spawn(n)]


def get_state(rng: np.random.Generator) -> dict:
    """The bit generator's state as a JSON-serialisable dict."""
    return rng.bit_generator.state


def set_state(rng: np.random.Generator, state: dict) -> None:
    """Restore a state produced by :func:`get_state` (same bit-generator type)."""
    rng.bit_generator.state = state


def generator_from_state(state: dict) -> np.random.Generator:
    """A new Generator whose bit generator is rebuilt from a stored state dict."""
    name = state.get("bit_generator")
    bitgen_cls = getattr(np.random, str(name), None)
    if bitgen_cls is None or not isinstance(bitgen_cls, type):
        raise InvalidParameterError(f"Unknown bit generator {name!r} in stored RNG state.")
    bg = bitgen_cls()
    bg.state = state
    return np.random.Generator(bg)
