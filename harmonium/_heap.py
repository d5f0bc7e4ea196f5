"""Give the C heap's free pages back to the operating system (glibc's ``malloc_trim``).

Reading a corpus makes and drops many small buffers (tokenizer strings, the sparse matrix's build
arrays). glibc keeps the freed memory in its heap for reuse and does not return it by itself, so the
process stays that much larger for the rest of its life: 63 MiB after ``load_debian()`` (issue 21,
benchmarks/lda/memory.md). ``malloc_trim(0)`` returns every whole free page of the heap (and of the
other arenas) with ``madvise(MADV_DONTNEED)``; nothing that is in use moves or changes, so results are
unaffected. Elsewhere (macOS, Windows, musl) this does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

_TRIM = None  # the C function, looked up on first use; False where there is none


def _malloc_trim():
    global _TRIM
    if _TRIM is None:
        _TRIM = False
        if sys.platform.startswith("linux"):
            try:
                libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
                fn = libc.malloc_trim  # glibc only: musl has no malloc_trim (AttributeError)
                fn.argtypes = [ctypes.c_size_t]
                fn.restype = ctypes.c_int
                _TRIM = fn
            except (OSError, AttributeError):
                _TRIM = False
    return _TRIM


def release_free_heap() -> bool:
    """Return the heap's free pages to the system (glibc ``malloc_trim(0)``); False where unsupported.

    True means the call was made (glibc says whether any memory was released; that is not reported).
    It takes milliseconds (one walk over the free lists), so callers use it once after building large
    structures, not in loops.
    """
    fn = _malloc_trim()
    if not fn:
        return False
    fn(0)
    return True
