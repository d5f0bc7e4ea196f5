"""Gibbs sampling over user-given full conditionals, and Metropolis-within-Gibbs.

Seed 003 ("Gibbs Sampling (GS) (a special case of MH)"): drawing block w_m from p(w_m | w_-m)
while keeping w_-m is an MH move with acceptance probability exactly 1, so each block update
leaves p invariant and so does any fixed (systematic) or uniformly random (random-scan) order of
them. When a conditional cannot be drawn from, the block is updated by a Metropolis step on the
joint log density instead (Metropolis within Gibbs; Tierney 1994, section 2.4): that step also
leaves p(w_m | w_-m), hence p, invariant.

* A block is an index into the position (an int, a slice or an index array); ``blocks=None``
  means one block per coordinate.
* An update is either a plain callable ``draw(rng, position) -> new values of the block`` (an
  exact conditional draw) or a :class:`BlockUpdate` such as :class:`MetropolisUpdate`.
* :func:`build_mwg_kernel` / :func:`mwg_warmup`: componentwise random-walk Metropolis on every
  coordinate with per-coordinate scales adapted by Robbins-Monro toward 0.44 during warm-up only;
  the same random numbers as the compiled sweep in ``harmonium._kernels.mcmc_rwmh`` (per
  coordinate one normal, then one uniform).

State / init / build_kernel as in DESIGN.md: ``kernel(rng, state) -> (state, GibbsInfo)``; the
kernel never mutates the state it is given.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from harmonium._kernels import mcmc_adapt as adapt
from harmonium.errors import InvalidParameterError
from harmonium.inference.mcmc.rwmh import acceptance_probability


class GibbsState(NamedTuple):
    """Position (any dtype) and its joint log density (NaN when no update needs it)."""

    position: np.ndarray
    logdensity: float


class GibbsInfo(NamedTuple):
    """One sweep: the blocks in the order updated and each update's acceptance probability."""

    order: np.ndarray
    acceptance_prob: np.ndarray


def init(position, logdensity: Callable | None = None, data: tuple = ()) -> GibbsState:
    """The state at ``position`` (copied); its log density when ``logdensity`` is given."""
    x = np.array(position)
    lp = float(logdensity(x, *data)) if logdensity is not None else np.nan
    return GibbsState(x, lp)


class BlockUpdate:
    """An update of one block: ``update(rng, position, block, logdensity) -> (values, logdensity, accept_prob)``.

    ``position`` must not be modified; ``logdensity`` is that of ``position`` (NaN if unknown) and
    the returned one that of the updated position (NaN if unknown).
    """

    def update(self, rng, position, block, logdensity):  # pragma: no cover - interface
        raise NotImplementedError


class Conditional(BlockUpdate):
    """An exact draw from the full conditional, ``draw(rng, position) -> values`` (accepted with probability 1)."""

    def __init__(self, draw: Callable):
        self.draw = draw

    def update(self, rng, position, block, logdensity):
        return self.draw(rng, position), np.nan, 1.0


class MetropolisUpdate(BlockUpdate):
    """Random-walk Metropolis on one block of the joint ``logdensity(x, *data)``.

    Proposes x_block + scale * xi (one normal per coordinate of the block), then one uniform.
    """

    def __init__(self, logdensity: Callable, scale, data: tuple = ()):
        self.logdensity = logdensity
        self.scale = scale
        self.data = data

    def update(self, rng, position, block, logdensity):
        if not np.isfinite(logdensity):
            logdensity = float(self.logdensity(position, *self.data))
        current = np.asarray(position[block], dtype=np.float64)
        proposal = position.copy()
        proposal[block] = current + self.scale * rng.standard_normal(current.shape)
        lp1 = float(self.logdensity(proposal, *self.data))
        a = acceptance_probability(logdensity, lp1)
        if rng.random() < a:
            return proposal[block], lp1, a
        return position[block], logdensity, a


def build_kernel(updates: Sequence, blocks: Sequence | None = None, scan: str = "systematic") -> Callable:
    """Gibbs sweep over ``updates`` (callables or :class:`BlockUpdate`), block j written by update j.

    ``scan="systematic"`` updates the blocks in order; ``"random"`` makes len(updates) picks of a
    uniformly random block (one ``rng.integers`` each). ``kernel(rng, state) -> (state, GibbsInfo)``.
    """
    ups = [u if isinstance(u, BlockUpdate) else Conditional(u) for u in updates]
    for j, u in enumerate(updates):
        if not (isinstance(u, BlockUpdate) or callable(u)):
            raise InvalidParameterError(
                f"The 'updates' parameter of gibbs.build_kernel must hold callables draw(rng, position) or "
                f"BlockUpdate objects. Got {u!r} at position {j}."
            )
    if scan not in ("systematic", "random"):
        raise InvalidParameterError(
            f"The 'scan' parameter of gibbs.build_kernel must be one of 'systematic', 'random'. Got {scan!r}."
        )
    n = len(ups)

    def kernel(rng: np.random.Generator, state: GibbsState):
        x = state.position.copy()
        lp = state.logdensity
        bl = list(range(x.shape[0])) if blocks is None else blocks
        order = np.arange(n) if scan == "systematic" else np.array([rng.integers(n) for _ in range(n)])
        acc = np.empty(n)
        for k, j in enumerate(order):
            values, lp, acc[k] = ups[j].update(rng, x, bl[j], lp)
            x[bl[j]] = values
        return GibbsState(x, lp), GibbsInfo(order, acc)

    return kernel


def build_mwg_kernel(logdensity: Callable, scales, data: tuple = ()) -> Callable:
    """Componentwise random-walk Metropolis-within-Gibbs with per-coordinate ``scales`` (systematic scan)."""
    scales = np.asarray(scales, dtype=np.float64)
    return build_kernel([MetropolisUpdate(logdensity, float(s), data) for s in scales])


def mwg_warmup(rng: np.random.Generator, logdensity: Callable, state: GibbsState, n_warmup: int, *,
               scales=None, target_accept: float = 0.44, adapt_scale: bool = True, data: tuple = (),
               infos: list | None = None):
    """Adaptive warm-up of :func:`build_mwg_kernel`; returns ``(state, scales)``.

    Each coordinate's log scale moves by t^-0.6 (alpha_i - target) after every sweep (Robbins-
    Monro); the scales are frozen afterwards. ``infos``, when a list, receives each sweep's info.
    """
    d = state.position.shape[0]
    scales = np.ones(d) if scales is None else np.array(scales, dtype=np.float64)
    for t in range(n_warmup):
        state, info = build_mwg_kernel(logdensity, scales, data)(rng, state)
        if infos is not None:
            infos.append(info)
        if adapt_scale:
            for i in range(d):
                scales[i] = np.exp(adapt.rm_update(np.log(scales[i]), info.acceptance_prob[i], target_accept,
                                                   float(t + 1)))
    return state, scales
