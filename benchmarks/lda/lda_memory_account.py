"""Where the resident memory of one Gibbs ``LDA.fit`` goes, stage by stage (issue 21, item 2).

One fit of ``harmonium.LDA`` (collapsed Gibbs, default sampler) on the Debian corpus or the PyPI
summaries, in this process, with marks at the stage boundaries of ``LDA._fit_gibbs``. At each mark
the script reads VmRSS (resident now), VmHWM (the peak since the previous mark: the peak is reset at
every mark through ``/proc/self/clear_refs``) and glibc's ``mallinfo2`` (heap bytes freed but not
returned to the system, ``fordblks``). With ``--tracemalloc`` it also records the bytes numpy and
Python hold at each mark and their peak within the stage (tracemalloc sees numpy's data buffers;
it does not see numba's or LLVM's own allocations, nor memory-mapped code). tracemalloc's own
bookkeeping adds resident memory, so the RSS columns come from a run without it.

    .venv/bin/python benchmarks/lda/lda_memory_account.py --topics 100 [--burn-in 6] [--tracemalloc]

Linux only (``/proc/self/status``, ``clear_refs``, glibc).
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import json
import sys
import time
import tracemalloc
from pathlib import Path


def status(field: str) -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


def reset_peak() -> None:
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                               "fsmblks", "uordblks", "fordblks", "keepcost")]


_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
_libc.mallinfo2.restype = _Mallinfo2


def heap() -> tuple[float, float, float]:
    """(allocated in the main heap and arenas, freed but kept, mmap'd blocks) in MiB."""
    m = _libc.mallinfo2()
    return m.uordblks / 2**20, m.fordblks / 2**20, m.hblkhd / 2**20


ROWS: list[dict] = []


def mark(stage: str) -> None:
    used, free, mapped = heap()
    row = {"stage": stage, "rss": status("VmRSS"), "stage_peak": status("VmHWM"), "heap_used": used,
           "heap_free": free, "mmap": mapped, "t": time.perf_counter()}
    if tracemalloc.is_tracing():
        cur, peak = tracemalloc.get_traced_memory()
        row["py_now"], row["py_peak"] = cur / 2**20, peak / 2**20
        tracemalloc.reset_peak()
    ROWS.append(row)
    reset_peak()


def wrap(owner, name: str, before: str | None, after: str | None, once: bool = False):
    fn = getattr(owner, name)
    seen = []

    def wrapped(*args, **kwargs):
        first = not seen
        seen.append(1)
        if before and (first or not once):
            mark(before)
        out = fn(*args, **kwargs)
        if after and (first or not once):
            mark(after)
        return out

    setattr(owner, name, wrapped)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--topics", type=int, default=100)
    ap.add_argument("--sweeps", type=int, default=6)
    ap.add_argument("--burn-in", type=int, default=None)
    ap.add_argument("--corpus", choices=("debian", "pypi", "debian-long"), default="debian")
    ap.add_argument("--tracemalloc", action="store_true")
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    mark("process start")
    import harmonium

    mark("import harmonium")
    if a.corpus == "debian":
        from harmonium.datasets import load_debian

        corpus = load_debian()
    else:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        import _common as C

        corpus = C.load_corpus(a.corpus, None)
    mark("corpus loaded")
    if a.tracemalloc:
        tracemalloc.start()
        mark("tracemalloc on")
    import numba  # noqa: F401

    mark("import numba")
    from harmonium.estimators import lda as est
    from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs
    from harmonium.inference.mcmc.lda import estimates
    from harmonium.models.directed import lda as model_mod

    mark("import samplers (kernel modules)")
    wrap(est.LDA, "_fit_gibbs", "validate, recorder, fingerprint", "end of _fit_gibbs")
    wrap(type(corpus), "tokens", None, "token stream", once=True)
    wrap(cgs, "init", "model", "init: z and count tables")
    wrap(estimates.ChainAverage, "__init__", None, "ChainAverage allocated")
    wrap(estimates.ChainAverage, "add", "sweep (kernel)", "sample added (ChainAverage.add)")
    wrap(estimates.ChainAverage, "topic_word", "theta source", "topic_word_ (ChainAverage.topic_word)")
    wrap(estimates, "final_state_theta", None, "theta source (final state)")
    wrap(estimates, "final_state_topic_word", None, "topic_word_ (final state)")
    wrap(model_mod, "collapsed_log_joint", "sweep (kernel)", "log joint evaluated")
    # the lazy names in estimators.lda resolve to the wrapped functions on first use
    lda = harmonium.LDA(a.topics, n_iter=a.sweeps, burn_in=a.burn_in, thin=1, evaluate_every=10**6,
                        random_state=0)
    mark("estimator made")
    sweep_no = []

    def callback(it, n, info):
        sweep_no.append(it)
        mark(f"after sweep {it}")

    lda.fit(corpus, callback=callback)
    mark("fit returned")
    if a.tracemalloc:
        tracemalloc.stop()
    out = {"topics": a.topics, "sweeps": a.sweeps, "burn_in": a.burn_in, "corpus": a.corpus,
           "tracemalloc": a.tracemalloc, "n_samples": lda.n_samples_, "rows": ROWS}
    prev = ROWS[0]["rss"]
    print(f"{'stage':45s} {'rss':>7s} {'delta':>7s} {'peak':>7s} {'heapfree':>8s} {'mmap':>7s}"
          + (f" {'py_now':>7s} {'py_pk':>7s}" if a.tracemalloc else ""))
    for r in ROWS:
        print(f"{r['stage']:45s} {r['rss']:7.1f} {r['rss'] - prev:+7.1f} {r['stage_peak']:7.1f} "
              f"{r['heap_free']:8.1f} {r['mmap']:7.1f}"
              + (f" {r.get('py_now', 0):7.1f} {r.get('py_peak', 0):7.1f}" if a.tracemalloc else ""))
        prev = r["rss"]
    if a.out:
        with a.out.open("a") as f:
            f.write(json.dumps(out) + "\n")


if __name__ == "__main__":
    main()
