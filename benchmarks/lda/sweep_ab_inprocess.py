"""The serial SparseLDA sweep of two versions of ``harmonium/_kernels/lda_sparse.py`` in one process, alternating
sweep by sweep (issue 21; for a kernel change smaller than this machine's swing between two processes' runs).

BASE is a saved copy of lda_sparse.py (e.g. ``git show HEAD:harmonium/_kernels/lda_sparse.py > /tmp/base.py``); the
other version is the working tree's. From one state (the time-to-quality benchmark's training split of CORPUS, K
topics, seed 0, WARM sweeps of the tree's serial kernel, no n_dk table, as ``LDA`` runs it), each version sweeps
its own copy of the state with its own word lists and the same Generator seed, ROUNDS rounds, the order of the
two reversed every other round. Prints each version's median CPU seconds a sweep, the quartiles of the per-round
ratio base / version (> 1: faster than the base) and a hash of z after the rounds (equal: the same chain).

    git show HEAD:harmonium/_kernels/lda_sparse.py > /tmp/base.py
    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/sweep_ab_inprocess.py /tmp/base.py 100 30 12 pypi

2026-11-28 (the prefetch across document ends): results/sweep-ab-prefetch.txt.
"""
import hashlib
import importlib
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: _common

import _common as C  # noqa: E402

from harmonium._kernels import lda_sparse as tree  # noqa: E402
from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs  # noqa: E402
from harmonium.models.directed.lda import doc_count_dtype  # noqa: E402


def sweeper(mod, state, tokens, model, *, list_dtype=np.int64, table=False):
    """One serial sweep of ``mod``'s kernel on a private copy of ``state`` (its own word lists and scratch).

    ``list_dtype``: the packed word lists' integer type (``wordlist_dtype_ab.py``); ``table``: sweep with a
    copy of the state's (D, K) n_dk instead of none (``doc_counts_ab.py``). The returned function carries
    its copy's ``z``, ``n_wk`` and word lists ``(wptr, wtop, wlen)`` for the scripts that read them.
    """
    K, V = model.n_topics, model.n_words
    z, n_wk, n_k = state.z.copy(), state.n_wk.copy(), state.n_k.copy()
    n_dk = state.n_dk.copy() if table else None
    freq = cgs.word_slots(model, tokens)
    row_sums = np.bincount(tokens.words, minlength=V).astype(np.int64)
    if np.dtype(list_dtype).itemsize == 4 and row_sums.max() >= 1 << (31 - mod.topic_bits(K)):
        raise SystemExit(f"a word's count does not fit an int32 list entry at K = {K}")
    wptr = np.zeros(V + 1, dtype=np.int64)
    np.cumsum(np.minimum(freq, K), out=wptr[1:])
    wtop, wlen = np.empty(int(wptr[-1]), dtype=list_dtype), np.zeros(V, dtype=np.int32)
    row_dtype = state.n_dk.dtype if state.n_dk is not None else doc_count_dtype(tokens.doc_ptr)
    scratch = (np.empty(K), np.empty(K), np.empty(K), np.empty(K, dtype=np.int32), np.zeros(K, dtype=np.uint8),
               np.zeros(K, dtype=row_dtype))
    rng = np.random.default_rng(7)

    def sweep():
        mod.refresh_word_lists(n_wk, row_sums, wptr, wtop, wlen)
        mod.sparse_sweep(rng, tokens.doc_ptr, tokens.words, z, n_dk, n_wk, n_k, model.alpha, model.beta, 0,
                         tokens.doc_ptr.shape[0] - 1, wptr, wtop, wlen, *scratch)

    sweep.z, sweep.n_wk, sweep.lists, sweep.row_sums = z, n_wk, (wptr, wtop, wlen), row_sums
    return sweep


def load_base(path, name="base_lda_sparse"):
    """The saved kernel file ``path`` as the module ``name``, imported from a fresh folder: numba's cache of it
    is then its own, and loadable by the next process (a module built from a spec is not)."""
    folder = tempfile.mkdtemp(prefix="sweep-ab-")
    shutil.copy(path, Path(folder) / f"{name}.py")
    sys.path.insert(0, folder)
    return importlib.import_module(name)


def warm_state(corpus: str, K: int, warm: int, doc_counts: bool):
    """(tokens, model, state): the benchmark's training split of ``corpus``, K topics (alpha 0.1, beta 0.01), the
    initial state of seed 0 and ``warm`` serial sparse sweeps of the tree's kernel."""
    _, tokens, model, rng, state = C.lda_start(corpus, K, 0, doc_counts=doc_counts)
    kernel = cgs.build_kernel(sampler="sparse", compute_log_joint=False)
    for _ in range(warm):
        state, _ = kernel(rng, state, tokens, model)
    return tokens, model, state


def alternate(runs: dict, rounds: int, wall: dict | None = None) -> dict:
    """Each sweep of ``runs`` (name -> function) once off the clock, then ``rounds`` rounds of one sweep each, the
    order reversed every other round; returns name -> the CPU seconds (all threads) of each round, and fills
    ``wall`` (if given) with name -> the wall seconds of each round."""
    for sweep in runs.values():  # compile or load, off the clock
        sweep()
    names = list(runs)
    cpu = {name: [] for name in names}
    walls = {name: [] for name in names}
    for r in range(rounds):
        for name in (names if r % 2 == 0 else names[::-1]):
            t, c = time.perf_counter(), time.process_time()
            runs[name]()
            cpu[name].append(time.process_time() - c)
            walls[name].append(time.perf_counter() - t)
    if wall is not None:
        wall.update(walls)
    return cpu


def report(runs: dict, cpu: dict) -> None:
    """Each run's median CPU seconds a sweep, the quartiles of the per-round ratio first run / run (> 1: faster
    than the first) and a hash of its z (equal hashes: the same chain)."""
    first = next(iter(runs))
    b = np.array(cpu[first])
    for name, sweep in runs.items():
        a = np.array(cpu[name])
        z = hashlib.sha256(sweep.z.tobytes()).hexdigest()[:12]
        print(f"{name}: median CPU s a sweep {np.median(a):.4f}; {first} / {name} per round, quartiles "
              f"{np.round(np.quantile(b / a, [0.25, 0.5, 0.75]), 3)}; z {z}")


def report_against_serial(cpu: dict, wall: dict, states: dict | None = None) -> None:
    """For the runs of :func:`alternate` (``cpu`` and ``wall``: name -> seconds of each round; the first run the
    serial sweep), each run's median CPU and wall seconds a sweep, and the quartiles of the per-round ratios
    CPU / serial CPU and serial wall / wall; with ``states`` (name -> the run's state), a hash of its z."""
    q = [0.25, 0.5, 0.75]
    first = next(iter(cpu))
    c0, w0 = np.array(cpu[first]), np.array(wall[first])
    for name in cpu:
        c, w = np.array(cpu[name]), np.array(wall[name])
        z = f"  z {hashlib.sha256(states[name].z.tobytes()).hexdigest()[:10]}" if states else ""
        print(f"{name:12s} CPU s {np.median(c):.4f}  wall s {np.median(w):.4f}  CPU / {first} per round "
              f"{np.round(np.quantile(c / c0, q), 3)}  {first} / this wall {np.round(np.quantile(w0 / w, q), 3)}{z}")


def with_kernels(owner, mod, call, z):
    """A run for :func:`alternate`: ``call()`` with ``owner.kern`` (a sweep module's kernel module) pointing at
    ``mod`` while it runs; the run carries ``z`` (its copy's topics, for :func:`report`)."""
    def run():
        was = owner.kern
        owner.kern = mod
        try:
            call()
        finally:
            owner.kern = was

    run.z = z
    return run


def ab_main(argv, make_sweeper, tree_module, base_name: str, *, doc_counts: bool = False) -> None:
    """``BASE K WARM ROUNDS [CORPUS]``: the saved kernel file BASE (imported as ``base_name``) against
    ``tree_module``, each swept by ``make_sweeper(module, state, tokens, model)`` on its own copy of the state
    (``doc_counts``: the state carries the (D, K) n_dk table, for sweeps that read it)."""
    base = load_base(argv[0], name=base_name)
    K, warm, rounds = int(argv[1]), int(argv[2]), int(argv[3])
    corpus = argv[4] if len(argv) > 4 else "debian"
    tokens, model, state = warm_state(corpus, K, warm, doc_counts=doc_counts)
    runs = {"base": make_sweeper(base, state, tokens, model), "tree": make_sweeper(tree_module, state, tokens, model)}
    cpu = alternate(runs, rounds)
    print(f"{corpus}, K = {K}, {warm} warm sweeps, {rounds} rounds")
    report(runs, cpu)


def main(argv) -> None:
    ab_main(argv, sweeper, tree, "base_lda_sparse")


if __name__ == "__main__":
    main(sys.argv[1:])
