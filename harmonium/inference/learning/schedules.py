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
"""

from __future__ import annotations

from dataclasses import dataclass

from harmonium._validation import Interval, Options, validate_params

__all__ = ["SCHEDULES", "Schedule", "make_schedule", "momentum_schedule"]

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
