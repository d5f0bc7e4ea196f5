"""Does the (D, K) n_dk table pay in the word-partitioned sweep once its per-sweep list refresh is gone? (issue 21)

The word-partitioned sweep (``parallel_gibbs.PartitionedSparse``) visits each document once a word block, and at
each visit walks the document's tokens to rebuild its row of n_dk and its topic list (about 3 ns a token). On a
state with the table it reads the row instead and keeps each document's list between visits, but it then pays
``refresh_doc_lists`` at every sweep (a pass over every document's list and row, to sort the lists so that a
resumed run draws what the uninterrupted one drew). VARIANT is a kernel file that keeps each list in ascending
order as it samples (an order-keeping remove and insert) and checks it in place at each visit (strictly ascending,
positive counts adding up to the document's length; else found again from z), so that no refresh is needed
(``results/kept-sorted-doc-lists-not-kept.patch``).

From one warm state (the benchmark's training split of CORPUS, K topics, seed 0, WARM serial sweeps), four
sweeps run on their own copies, alternating round by round in one process (the order reversed every other round):

* ``serial``: the 1-thread SparseLDA sweep (the tree's kernel, no table);
* ``walk``: the tree's P x P cells on a state without the table, as ``LDA(n_jobs=P)`` runs them;
* ``table_refresh``: the tree's cells on a state with the table, ``refresh_doc_lists`` at each shard's first
  round (what ``LDA(n_jobs=P)`` ran before the fourth session);
* ``table_inline``: VARIANT's cells on a state with the table, no refresh.

The cells run one after the other on the calling thread, or on P threads with ``threads``. Prints each run's median
wall and CPU milliseconds a sweep (CPU: all threads), and per-round ratios (quartiles).

    patch -o /tmp/variant.py harmonium/_kernels/lda_sparse.py \\
        benchmarks/lda/results/kept-sorted-doc-lists-not-kept.patch
    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/doc_table_cells_ab.py /tmp/variant.py 100 30 40 debian 2
    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/doc_table_cells_ab.py /tmp/variant.py 100 30 40 debian 2 threads

CORPUS may be ``debian-longG`` (Debian's descriptions joined G to a document, ``_common.load_corpus``), where the
table's O(k_d) read pays against the walk's O(N_d).

2026-11-29 (thirteenth session, AMD EPYC VM): results/threads-layouts-amd.txt (Debian, PyPI) and
results/doc-table-long-amd.txt (long documents); benchmarks/lda/README.md, "Threads: what more threads cost",
items 2 and 5.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/lda: sweep_ab_inprocess

from sweep_ab_inprocess import alternate, load_base, warm_state  # noqa: E402

from harmonium._kernels import lda_sparse  # noqa: E402
from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs  # noqa: E402
from harmonium.inference.mcmc.lda import parallel_gibbs as pg  # noqa: E402
from harmonium.parallel.threads import child_generators  # noqa: E402


class Cells(pg.PartitionedSparse):
    """The library's word-partitioned sweep with the kernel module ``kern``, with or without ``refresh_doc_lists``."""

    def __init__(self, kern, refresh: bool, model, tokens, n_parts: int):
        super().__init__(model, tokens, n_parts)
        self.kern, self.refresh = kern, refresh

    def cell(self, rng, state, n_k, p, block, first, last, docs=(None, None, None)):
        m, t, lay = self.model, self.tokens, self.layout
        lo, hi = lay.doc_parts[p]
        if first:
            self.kern.refresh_block_word_lists(state.n_wk, self.row_sums, lay.block_words[block], self.wptr,
                                               self.wtop, self.wlen)
            if state.n_dk is not None and self.refresh:
                self.kern.refresh_doc_lists(t.doc_ptr, state.z, state.n_dk, lo, hi, *docs, self.scratch[p][4])
        return self.kern.sparse_sweep_cell(
            rng, t.doc_ptr, t.words, state.z, state.n_dk, state.n_wk, n_k, m.alpha, m.beta, lo, hi, lay.order,
            lay.cell_ptr, block, lay.block_words[block], self.wptr, self.wtop, self.wlen, *self.scratch[p], *docs)


def main(argv) -> None:
    variant_path, K, warm, rounds, corpus, P = argv[0], int(argv[1]), int(argv[2]), int(argv[3]), argv[4], int(argv[5])
    threads = len(argv) > 6 and argv[6] == "threads"
    variant = load_base(variant_path, "variant_lda_sparse")
    tokens, model, state = warm_state(corpus, K, warm, doc_counts=False)
    serial = cgs.build_kernel(sampler="sparse", compute_log_joint=False)
    runs = {"serial": (lambda rng, st: serial(rng, st, tokens, model), False)}
    for name, kern, refresh, table in (("walk", lda_sparse, False, False), ("table_refresh", lda_sparse, True, True),
                                       ("table_inline", variant, False, True)):
        sw = Cells(kern, refresh, model, tokens, P)
        if not threads:
            sw.runner = lambda fn, args: [fn(*a) for a in args]
        runs[name] = (lambda rng, st, sw=sw: sw(child_generators(rng, P), st), table)
    states = {n: cgs.state_from_assignments(tokens, model, state.z.copy(), doc_counts=table)
              for n, (_, table) in runs.items()}
    rngs = {n: np.random.default_rng(9) for n in runs}
    wall: dict = {}
    cpu = alternate({n: (lambda n=n: runs[n][0](rngs[n], states[n])) for n in runs}, rounds, wall)
    cpu = {n: np.array(v) for n, v in cpu.items()}
    wall = {n: np.array(v) for n, v in wall.items()}
    q = [0.25, 0.5, 0.75]
    on = "P threads" if threads else "one thread"
    print(f"{corpus}, K = {K}, {warm} warm sweeps, {rounds} rounds, P = {P}, {on}")
    for n in runs:
        print(f"{n:13s} wall {np.median(wall[n]) * 1e3:7.1f} ms, CPU {np.median(cpu[n]) * 1e3:7.1f} ms; CPU / serial "
              f"{np.round(np.quantile(cpu[n] / cpu['serial'], q), 3)}; serial / wall "
              f"{np.round(np.quantile(wall['serial'] / wall[n], q), 3)}")
    for a, b in (("table_inline", "walk"), ("table_inline", "table_refresh"), ("table_refresh", "walk")):
        print(f"{a} / {b} per round: CPU {np.round(np.quantile(cpu[a] / cpu[b], q), 3)}, "
              f"wall {np.round(np.quantile(wall[a] / wall[b], q), 3)}")


if __name__ == "__main__":
    main(sys.argv[1:])
