"""A one-line progress bar with an estimate of the time left, written to stderr (no dependency).

Long evaluations (AIS over a test set, ``compare``, the Bayesian EFH fit) take a ``progress``
argument read by :func:`progress_bar`:

* ``None`` (the default of the library calls): a bar when stderr is a terminal, none otherwise
  (pipes, log files, pytest, notebooks that do not report a terminal);
* ``True`` / ``False``: always / never;
* a callable: called with a :class:`ProgressEvent` at every update instead of drawing a bar.

The estimate of the time left is the elapsed time times (total - done) / done, i.e. it assumes the
remaining steps cost what the finished ones did on average.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import NamedTuple, TextIO

__all__ = ["Progress", "ProgressEvent", "format_seconds", "progress_bar"]


class ProgressEvent(NamedTuple):
    """One update of a :class:`Progress`.

    Attributes
    ----------
    label : str
        What is running.
    done, total : int
        Steps finished and steps in all.
    elapsed : float
        Seconds since the bar was created.
    remaining : float
        Estimated seconds left (``nan`` before the first step is done).
    """

    label: str
    done: int
    total: int
    elapsed: float
    remaining: float


def format_seconds(seconds: float) -> str:
    """``'42 s'``, ``'3 min 05 s'`` or ``'2 h 07 min'``; ``'?'`` for an unknown (nan) time."""
    if seconds != seconds:  # nan
        return "?"
    s = int(round(max(seconds, 0.0)))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {(s % 3600) // 60:02d} min"


class Progress:
    """Counts steps towards ``total`` and reports them (a bar on ``stream``, or a callback).

    Parameters
    ----------
    total : int
        Steps in all.
    label : str
        Printed before the bar.
    enabled : bool
        False: every call is a no-op.
    callback : callable, optional
        Called with a :class:`ProgressEvent` instead of drawing the bar.
    stream : file, optional
        Default ``sys.stderr``.
    min_interval : float, default 0.5
        Seconds between two redraws (the last step is always drawn).

    Examples
    --------
    >>> import io
    >>> out = io.StringIO()
    >>> with Progress(4, "demo", stream=out, min_interval=0.0) as bar:
    ...     for _ in range(4):
    ...         bar.update()
    >>> out.getvalue().splitlines()[-1].startswith("demo [")
    True
    """

    def __init__(self, total: int, label: str = "", *, enabled: bool = True,
                 callback: Callable[[ProgressEvent], None] | None = None, stream: TextIO | None = None,
                 min_interval: float = 0.5):
        self.total = max(int(total), 0)
        self.label = label
        self.enabled = bool(enabled) or callback is not None
        self.callback = callback
        self.stream = sys.stderr if stream is None else stream
        self.min_interval = float(min_interval)
        self.done = 0
        self.t0 = time.perf_counter()
        self._last = -float("inf")
        self._closed = False

    def event(self) -> ProgressEvent:
        """The current state as a :class:`ProgressEvent`."""
        elapsed = time.perf_counter() - self.t0
        remaining = elapsed * (self.total - self.done) / self.done if self.done else float("nan")
        return ProgressEvent(self.label, self.done, self.total, elapsed, remaining)

    def update(self, n: int = 1) -> None:
        """Count ``n`` more steps done; redraw at most every ``min_interval`` seconds."""
        if not self.enabled:
            return
        self.done = min(self.done + int(n), self.total)
        now = time.perf_counter()
        if self.done < self.total and now - self._last < self.min_interval:
            return
        self._last = now
        ev = self.event()
        if self.callback is not None:
            self.callback(ev)
            return
        width = 24
        filled = width * ev.done // max(ev.total, 1)
        self.stream.write(f"\r{ev.label} [{'#' * filled:<{width}}] {ev.done}/{ev.total} "
                          f"{format_seconds(ev.elapsed)} elapsed, {format_seconds(ev.remaining)} left   ")
        self.stream.flush()

    def close(self) -> None:
        """End the bar's line (once)."""
        if self.enabled and self.callback is None and not self._closed and self._last > -float("inf"):
            self.stream.write("\n")
            self.stream.flush()
        self._closed = True

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def progress_bar(progress, total: int, label: str, *, stream: TextIO | None = None) -> Progress:
    """A :class:`Progress` for a ``progress`` argument (``None``, bool or callable; module docstring)."""
    if callable(progress):
        return Progress(total, label, callback=progress, stream=stream)
    if progress is None:
        s = sys.stderr if stream is None else stream
        isatty = getattr(s, "isatty", None)
        progress = bool(isatty()) if isatty is not None else False
    return Progress(total, label, enabled=bool(progress), stream=stream)
