"""Learning-rate and momentum schedules for stochastic-gradient learning (CD, PCD).

A schedule is a callable ``schedule(epoch) -> value`` of the 0-based epoch number. Tuning is not
part of a learner's state (DESIGN.md): the schedule is rebuilt from the hyperparameters, and
the state only records how many epochs were done.

* ``constant``:     eta_t = eta_0
* ``exponential``:  eta_t = eta_0 decay^t
* ``inverse``:      eta_t = eta_0 / (1 + t / tau)   (Robbins-Monro, sum eta = inf, sum eta^2 < inf)
* ``linear``:       eta_t = eta_0 (1 - t / T) + eta_end t / T, then eta_end

Momentum (Hinton 2010, "A practical guide to training RBMs", §9): ``momentum_schedule`` gives
``initial`` for the first ``warmup`` epochs and ``final`` afterwards (0.5 then 0.9 there).

CD steps: ``gibbs_schedule`` gives k of CD-k per epoch, rising in equal stages from ``start`` to
``end`` over ``n_epochs`` (k_t = start + floor((end - start + 1) t / T), at most ``end``). Learning
"started with one full Gibbs step and gradually increased to five" in the Replicated Softmax
paper (Salakhutdinov & Hinton 2009, §4, following Salakhutdinov, Mnih & Hinton 2007, §2.2, who
raise T of CD-T as learning progresses): a short chain is enough while the model is far from the
data, a longer one reduces CD's bias near convergence (Carreira-Perpinan & Hinton 2005).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

from harmonium._validation import Interval, Options, validate_params
from harmonium.errors import InvalidParameterError

__all__ = ["SCHEDULES", "GibbsSchedule", "Schedule", "gibbs_schedule", "make_schedule", "momentum_schedule"]

SCHEDULES = ("constant", "exponential", "inverse", "linear")


@dataclass(frozen=True)
class Schedule:
    """eta(t) for one of :data:`SCHEDULES` (see the module docstring)."""

    kind: str
    initial: float
    decay: float = 1.0
    tau: float = 1.0
    n_epochs: int = 1
    final: float = 0.0

    def __call__(self, epoch: int) -> float:
        t = float(epoch)
        if self.kind == "constant":
            return self.initial
        if self.kind == "exponential":
            return self.initial * self.decay ** t
        if self.kind == "inverse":
            return self.initial / (1.0 + t / self.tau)
        frac = min(t / max(self.n_epochs, 1), 1.0)
        return self.initial * (1.0 - frac) + self.final * frac


def make_schedule(kind: str = "constant", initial: float = 0.01, *, decay: float = 0.95, tau: float = 10.0,
                  n_epochs: int = 1, final: float = 0.0) -> Schedule:
    """A learning-rate schedule (validated)."""
    validate_params(
        "make_schedule",
        {"kind": kind, "initial": initial, "decay": decay, "tau": tau, "n_epochs": n_epochs, "final": final},
        {"kind": [Options(SCHEDULES)], "initial": [Interval("real", 0, None, "left")],
         "decay": [Interval("real", 0, 1, "right")], "tau": [Interval("real", 0, None, "neither")],
         "n_epochs": [Interval("int", 1, None)], "final": [Interval("real", 0, None, "left")]},
    )
    return Schedule(kind, float(initial), float(decay), float(tau), int(n_epochs), float(final))


@dataclass(frozen=True)
class MomentumSchedule:
    initial: float
    final: float
    warmup: int

    def __call__(self, epoch: int) -> float:
        return self.initial if epoch < self.warmup else self.final


def momentum_schedule(final: float = 0.0, *, initial: float | None = None, warmup: int = 0) -> MomentumSchedule:
    """``initial`` (default: ``final``) for the first ``warmup`` epochs, then ``final``."""
    initial = final if initial is None else initial
    validate_params("momentum_schedule", {"final": final, "initial": initial, "warmup": warmup},
                    {"final": [Interval("real", 0, 1, "left")], "initial": [Interval("real", 0, 1, "left")],
                     "warmup": [Interval("int", 0, None)]})
    return MomentumSchedule(float(initial), float(final), int(warmup))


@dataclass(frozen=True)
class GibbsSchedule:
    """k of CD-k at each epoch: ``start`` rising to ``end`` in equal stages over ``n_epochs`` (module docstring)."""

    start: int
    end: int
    n_epochs: int

    def __call__(self, epoch: int) -> int:
        stage = ((self.end - self.start + 1) * int(epoch)) // max(self.n_epochs, 1)
        return int(min(self.start + stage, self.end))


def _is_int(v) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def gibbs_schedule(n_gibbs, n_epochs: int, *, owner: str = "gibbs_schedule", name: str = "n_gibbs") -> GibbsSchedule:
    """The CD-k schedule of ``n_gibbs``: an int k >= 1 (constant) or a pair ``(start, end)``, 1 <= start <= end.

    ``(1, 5)`` over 100 epochs: k = 1 for epochs 0-19, 2 for 20-39, ..., 5 for 80-99 (and after).

    Raises
    ------
    InvalidParameterError
        Naming ``owner`` and ``name`` when ``n_gibbs`` is neither.
    """
    if isinstance(n_gibbs, GibbsSchedule):
        return n_gibbs
    if _is_int(n_gibbs) and n_gibbs >= 1:
        return GibbsSchedule(int(n_gibbs), int(n_gibbs), max(int(n_epochs), 1))
    if (isinstance(n_gibbs, (tuple, list)) and len(n_gibbs) == 2 and all(_is_int(k) for k in n_gibbs)
            and 1 <= n_gibbs[0] <= n_gibbs[1]):
        return GibbsSchedule(int(n_gibbs[0]), int(n_gibbs[1]), max(int(n_epochs), 1))
    raise InvalidParameterError(
        f"The {name!r} parameter of {owner} must be an int >= 1 or a pair (start, end) of ints with "
        f"1 <= start <= end (CD-k with k rising from start to end over the epochs). Got {n_gibbs!r}.")
