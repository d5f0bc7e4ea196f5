"""Where the word-partitioned sweep's extra CPU goes, on one thread: the cell layout and the extra visits (issue 21).

From one warm state (the benchmark's training split of CORPUS, K topics, seed 0, 30 serial sweeps, no n_dk
table), these sweeps run on their own copies, alternating round by round in one process:

* ``serial``: the 1-thread SparseLDA sweep;
* ``cells1``: ``parallel_gibbs.PartitionedSparse`` with 1 shard and 1 word block: the cell layout (the token
  order, the cell pointers, the rounds' Python) with the serial sweep's visits, one a document;
* ``cells2``: the library's 2-thread layout (2 shards x 2 blocks), its cells run one after the other on one
  thread: every document visited twice;
* ``cellsP`` for any other P in LAYOUTS (the optional third argument, a comma-separated list, default ``1,2``):
  the P-thread layout (P shards x P blocks) on one thread, every document visited P times;
* with ``table`` (the fifth argument), ``cellsP+table`` for each P >= 2 in LAYOUTS: the same layout on a state
  with the (D, K) n_dk table, each document's topic list kept between its visits (``refresh_doc_lists``, timed
  as ``refresh``), which ``LDA(n_jobs=P)`` made before the fourth session (benchmarks/lda/README.md, "Threads
  without the D x K table").

CORPUS (the optional fourth argument, default ``debian``) is the benchmark's corpus name (``_common.load_data``).
Each call of the sweep kernels and of the list refreshes is timed on the thread's CPU clock. Prints, per
sweep, the median milliseconds in the kernel, in the refresh and in the rest (Python), and the per-round
ratios of the total CPU against ``serial``, of ``cells2`` against ``cells1`` and of each ``cellsP+table``
against ``cellsP`` (quartiles).

    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/threads_pieces.py 100 100     # K, rounds
    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/threads_pieces.py 100 30 1,2,4,8 debian table

2026-11-29 (tenth session, AMD EPYC VM): results/threads-pieces-amd.txt; benchmarks/lda/README.md, "Threads: the
price of a document visit". Thirteenth session (LAYOUTS, CORPUS, ``table``): results/threads-layouts-amd.txt;
"Threads: what more threads cost".
"""
from __future__ import annotations

import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/lda: sweep_ab_inprocess

from sweep_ab_inprocess import alternate, warm_state  # noqa: E402

from harmonium._kernels import lda_sparse  # noqa: E402
from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs  # noqa: E402
from harmonium.inference.mcmc.lda import parallel_gibbs as pg  # noqa: E402
from harmonium.parallel.threads import child_generators  # noqa: E402

TIMED = ("refresh_word_lists", "refresh_block_word_lists", "refresh_doc_lists", "sparse_sweep", "sparse_sweep_cell")


def main(argv) -> None:
    K, rounds = int(argv[0]), int(argv[1])
    layouts = [int(c) for c in argv[2].split(",")] if len(argv) > 2 else [1, 2]
    if 1 not in layouts or 2 not in layouts:
        raise SystemExit("threads_pieces.py: the layouts must include 1 and 2 (cells2 / cells1 is printed)")
    corpus = argv[3] if len(argv) > 3 else "debian"
    table = len(argv) > 4 and argv[4] == "table"
    if len(argv) > 4 and not table:
        raise SystemExit(f"threads_pieces.py: the fifth argument may only be 'table'; got {argv[4]!r}")
    tokens, model, state = warm_state(corpus, K, 30, doc_counts=False)
    spent: dict = {}

    def clocked(fn, piece):
        def call(*args):
            t = time.thread_time()
            out = fn(*args)
            spent[piece] = spent.get(piece, 0.0) + time.thread_time() - t
            return out
        return call

    # the two sweep modules see a copy of lda_sparse whose timed functions run on the clock
    shim = SimpleNamespace(**{n: getattr(lda_sparse, n) for n in dir(lda_sparse) if not n.startswith("__")})
    for n in TIMED:
        setattr(shim, n, clocked(getattr(lda_sparse, n), "kernel" if n.startswith("sparse") else "refresh"))
    cgs.lda_sparse = pg.lda_sparse = shim
    serial = cgs.build_kernel(sampler="sparse", compute_log_joint=False)
    runs = {"serial": lambda rng, st: serial(rng, st, tokens, model)}
    with_table = []
    for c in layouts:
        for kept in (False, True) if table and c >= 2 else (False,):
            sw = pg.PartitionedSparse(model, tokens, c)
            sw.runner = lambda fn, args: [fn(*a) for a in args]
            name = f"cells{c}+table" if kept else f"cells{c}"
            runs[name] = lambda rng, st, sw=sw, c=c: sw(child_generators(rng, c), st)
            if kept:
                with_table.append(c)
    states = {n: cgs.state_from_assignments(tokens, model, state.z.copy(), doc_counts=n.endswith("+table"))
              for n in runs}
    rngs = {n: np.random.default_rng(9) for n in runs}
    pieces = {n: {"kernel": [], "refresh": [], "python": [], "total": []} for n in runs}

    def clocked_run(n):
        def run():
            spent.clear()
            t = time.thread_time()
            runs[n](rngs[n], states[n])
            total = time.thread_time() - t
            pieces[n]["total"].append(total)
            for p in ("kernel", "refresh"):
                pieces[n][p].append(spent.get(p, 0.0))
            pieces[n]["python"].append(total - sum(spent.values()))
        return run

    alternate({n: clocked_run(n) for n in runs}, rounds)
    for by_piece in pieces.values():
        for v in by_piece.values():
            del v[:1]  # the call off the clock (alternate makes one of each run before the rounds)
    names = list(runs)
    q = [0.25, 0.5, 0.75]
    serial_total = np.array(pieces["serial"]["total"])
    print(f"{corpus}, K = {K}, 30 warm sweeps, {rounds} rounds")
    for n in names:
        p = {k: np.array(v) for k, v in pieces[n].items()}
        print(f"{n:12s} ms a sweep: kernel {np.median(p['kernel']) * 1e3:.1f}, "
              f"refresh {np.median(p['refresh']) * 1e3:.2f}, python {np.median(p['python']) * 1e3:.2f}; "
              f"total CPU / serial per round "
              f"{np.round(np.quantile(p['total'] / serial_total, q), 3)}")
    ratio = np.array(pieces["cells2"]["total"]) / np.array(pieces["cells1"]["total"])
    print("cells2 / cells1 per round", np.round(np.quantile(ratio, q), 3))
    for c in with_table:
        ratio = np.array(pieces[f"cells{c}+table"]["total"]) / np.array(pieces[f"cells{c}"]["total"])
        print(f"cells{c}+table / cells{c} per round", np.round(np.quantile(ratio, q), 3))


if __name__ == "__main__":
    main(sys.argv[1:])
