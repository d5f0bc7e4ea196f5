"""Early stopping on a held-out score: keep the best parameters, stop after ``patience`` bad checks.

Prechelt (1998, "Early stopping - but when?", in *Neural Networks: Tricks of the Trade*): train,
score a validation set every few epochs, remember the parameters with the best score, and stop
when ``patience`` successive scores failed to beat it by more than ``min_delta``; the result is the
remembered best. For harmoniums the score is the held-out log-likelihood with log Z by AIS
(Salakhutdinov & Murray 2008), which the estimator supplies as ``score(model)``: this module does
not know how it is computed (the layers import downward, and AIS lives in evaluation).

The stopper is part of the fit's state, not of its tuning: :meth:`EarlyStopping.arrays` and
:meth:`EarlyStopping.extra` give what a checkpoint stores, :meth:`EarlyStopping.restore` reads it
back, so a resumed fit stops where an uninterrupted one would.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["EarlyStopping"]


class EarlyStopping:
    """Track ``score(model)`` every ``every`` epochs; keep a copy of the best parameters.

    Parameters
    ----------
    score : callable
        ``score(model) -> float``, higher is better (a held-out log-likelihood).
    every : int
        Epochs between scores (epochs ``every``, ``2 every``, ...).
    patience : int or None
        Scores in a row without improvement after which :attr:`stop` turns True; None: never.
    min_delta : float
        An improvement must exceed the best score by more than this.

    Attributes
    ----------
    best_score : float
        -inf before the first score.
    best_epoch : int
        The epoch of the best score (0: none yet).
    best_params : dict or None
        Copies of the model's parameters at ``best_epoch``.
    n_bad : int
        Scores since the last improvement.
    last_score : float
        The score of the latest check (NaN before the first).
    stop : bool
    """

    def __init__(self, score: Callable, *, every: int = 1, patience: int | None = None, min_delta: float = 0.0):
        self.score = score
        self.every = int(every)
        self.patience = patience
        self.min_delta = float(min_delta)
        self.best_score = -np.inf
        self.best_epoch = 0
        self.best_params: dict | None = None
        self.n_bad = 0
        self.last_score = float("nan")
        self.stop = False

    def _copy(self, params: dict) -> dict:
        return {k: np.array(v, copy=True) for k, v in params.items()}

    def update(self, epoch: int, model) -> bool:
        """After ``epoch``: score ``model`` if it is a scoring epoch; returns :attr:`stop`."""
        if epoch % self.every != 0:
            return self.stop
        s = float(self.score(model))
        self.last_score = s
        if s > self.best_score + self.min_delta or self.best_params is None:
            self.best_score, self.best_epoch = s, int(epoch)
            self.best_params = self._copy(model.params)
            self.n_bad = 0
        else:
            self.n_bad += 1
        self.stop = self.patience is not None and self.n_bad >= self.patience
        return self.stop

    # -- checkpoints ----------------------------------------------------------------------
    def arrays(self, prefix: str = "best.") -> dict:
        """The best parameters as checkpoint arrays (keys ``prefix + name``)."""
        return {} if self.best_params is None else {prefix + k: v for k, v in self.best_params.items()}

    def extra(self) -> dict:
        """The stopper's scalars (JSON)."""
        return {"best_score": None if not np.isfinite(self.best_score) else float(self.best_score),
                "best_epoch": int(self.best_epoch), "n_bad": int(self.n_bad),
                "last_score": None if not np.isfinite(self.last_score) else float(self.last_score),
                "stop": bool(self.stop)}

    def restore(self, extra: dict, arrays: dict) -> None:
        """Back to the state :meth:`extra` and :meth:`arrays` described (``arrays`` keyed by parameter name)."""
        bs, ls = extra.get("best_score"), extra.get("last_score")
        self.best_score = -np.inf if bs is None else float(bs)
        self.last_score = float("nan") if ls is None else float(ls)
        self.best_epoch = int(extra.get("best_epoch", 0))
        self.n_bad = int(extra.get("n_bad", 0))
        self.stop = bool(extra.get("stop", False))
        self.best_params = self._copy(arrays) if arrays else None
