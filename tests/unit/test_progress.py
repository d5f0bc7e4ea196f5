"""The shared progress bar: counts, the time left, TTY auto-detection, callbacks."""

from __future__ import annotations

import io

import pytest

from harmonium import _progress
from harmonium._progress import Progress, ProgressEvent, format_seconds, progress_bar


class _Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


@pytest.fixture
def clock(monkeypatch):
    c = _Clock()
    monkeypatch.setattr(_progress.time, "perf_counter", c)
    return c


def test_time_left_is_elapsed_times_remaining_over_done(clock):
    events = []
    bar = Progress(10, "job", callback=events.append, min_interval=0.0)
    clock.t += 4.0
    bar.update(2)                      # 2 of 10 in 4 s: 8 more at 2 s each
    assert events[-1] == ProgressEvent("job", 2, 10, 4.0, 16.0)
    clock.t += 16.0
    bar.update(8)
    assert events[-1].done == 10 and events[-1].remaining == 0.0


def test_bar_text_and_final_newline(clock):
    out = io.StringIO()
    with Progress(4, "AIS", stream=out, min_interval=0.0) as bar:
        clock.t += 30.0
        bar.update(1)
        clock.t += 30.0
        bar.update(3)
    text = out.getvalue()
    assert "AIS [######" in text and "1/4 30 s elapsed, 1 min 30 s left" in text
    assert text.endswith("\n") and "4/4 1 min 00 s elapsed, 0 s left" in text


def test_redraws_are_throttled_but_the_last_step_is_drawn(clock):
    events = []
    bar = Progress(1000, "x", callback=events.append, min_interval=1.0)
    for _ in range(999):
        bar.update()                   # the clock stands still: only the first draw
    assert len(events) == 1
    bar.update()
    assert len(events) == 2 and events[-1].done == 1000


def test_disabled_writes_nothing():
    out = io.StringIO()
    with Progress(3, "x", enabled=False, stream=out) as bar:
        bar.update(3)
    assert out.getvalue() == ""


class _Tty(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize(("progress", "stream", "enabled"), [
    (None, io.StringIO(), False),      # a pipe or a file: no bar by default
    (None, _Tty(), True),              # a terminal: the bar
    (True, io.StringIO(), True),
    (False, _Tty(), False),
])
def test_progress_argument(progress, stream, enabled):
    assert progress_bar(progress, 5, "x", stream=stream).enabled is enabled


def test_a_callable_gets_events():
    events = []
    bar = progress_bar(events.append, 2, "x")
    bar.min_interval = 0.0
    bar.update()
    bar.update()
    assert [e.done for e in events] == [1, 2]


@pytest.mark.parametrize(("s", "text"), [(0.4, "0 s"), (59.4, "59 s"), (65, "1 min 05 s"), (7_500, "2 h 05 min"),
                                         (float("nan"), "?")])
def test_format_seconds(s, text):
    assert format_seconds(s) == text


def test_compare_bar_shows_the_time_left_and_ends_its_line(clock):
    from harmonium.experiments.compare import _TextProgress

    out = io.StringIO()
    bar = _TextProgress(stream=out)
    ev = {"n_cells": 2, "model": "lsi", "n_topics": 4, "seed": 0}
    bar({**ev, "event": "start", "done": 0})
    clock.t += 10.0
    bar({**ev, "event": "done", "done": 1})
    assert "1/2 10 s elapsed, 10 s left" in out.getvalue()
    clock.t += 10.0
    bar({**ev, "event": "done", "done": 2, "n_topics": 8})
    assert out.getvalue().endswith("\n") and "compare done    lsi K=8 seed=0" in out.getvalue()
