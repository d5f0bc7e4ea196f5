"""The one driver loop shared by every iterative algorithm.

``run`` applies ``kernel(rng, state, data, model) -> (state, info)`` for
iterations ``start+1 .. n_iter`` and hands each result to ``callback``, which
records traces, writes checkpoints and reports progress. A callback that
returns ``True`` stops the run early (the state so far is returned).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def run(
    rng,
    kernel: Callable,
    state: Any,
    data: Any,
    model: Any,
    n_iter: int,
    *,
    start: int = 0,
    callback: Callable[[int, Any, Any], bool | None] | None = None,
):
    """Iterate ``kernel`` from iteration ``start`` to ``n_iter``; return ``(state, last_iteration)``."""
    it = start
    for it in range(start + 1, n_iter + 1):
        state, info = kernel(rng, state, data, model)
        if callback is not None and callback(it, state, info):
            break
    return state, it
