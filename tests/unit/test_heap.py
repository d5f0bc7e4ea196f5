"""harmonium._heap.release_free_heap gives freed heap pages back to the system (glibc), and is a no-op elsewhere."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from harmonium import _heap


def _rss_mib() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(not sys.platform.startswith("linux") or not _heap._malloc_trim(), reason="glibc only")
def test_release_free_heap_returns_freed_pages():
    """64 MiB of small buffers freed under a live one at the top of the heap stay resident until trimmed."""
    blocks = [np.ones(16384 // 8) for _ in range(4096)]  # 16 KiB each: below the mmap threshold, in the heap
    pin = np.ones(16384 // 8)  # keeps the heap's top in use, so free() cannot shrink it by itself
    del blocks
    before = _rss_mib()
    assert _heap.release_free_heap() is True
    after = _rss_mib()
    assert before - after > 32, (before, after)
    assert pin.sum() == 2048  # the live block is untouched


def test_release_free_heap_is_a_no_op_without_glibc(monkeypatch):
    monkeypatch.setattr(_heap, "_TRIM", False)
    assert _heap.release_free_heap() is False
