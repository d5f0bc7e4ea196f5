"""Latency of dependent random loads (a pointer chase) by working-set size, one thread and two at once (issue 21).

Each thread walks its own random cycle through an int64 array of SIZE; the time per load is the latency of the
level that holds the array. Two threads at once on separate arrays show whether the cores contend for it.
Tells how much of the machine's cache a kernel's random accesses can count on.

    .venv/bin/python benchmarks/cache_latency.py 256 1024 2048 4096 8192 16384 65536    # sizes in KiB

2026-11-28 (the 2-vCPU Intel VM): benchmarks/lda/results/cache-latency-intel.txt.
"""
import sys
import threading
import time

import numba
import numpy as np


@numba.njit(nogil=True, cache=True)
def chase(a, n):
    j, s = 0, 0
    for _ in range(n):
        j = a[j]
        s += j
    return s


def cycle(size: int, seed: int) -> np.ndarray:
    """An int64 array whose entries form one random cycle through all positions."""
    p = np.random.default_rng(seed).permutation(size).astype(np.int64)
    a = np.empty(size, dtype=np.int64)
    a[p] = np.roll(p, 1)
    return a


def main(argv) -> None:
    for kib in map(int, argv):
        arrays = [cycle(kib * 1024 // 8, s) for s in range(2)]
        n = 5_000_000
        for a in arrays:
            chase(a, n)  # compile, and bring the arrays in
        row = []
        for t in (1, 2, 1, 2):
            threads = [threading.Thread(target=chase, args=(arrays[i], n)) for i in range(t)]
            w0 = time.perf_counter()
            for h in threads:
                h.start()
            for h in threads:
                h.join()
            row.append(f"{t} thread{'s' if t > 1 else ''} {(time.perf_counter() - w0) / n * 1e9:.1f} ns")
        print(f"{kib} KiB: " + ", ".join(row), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
