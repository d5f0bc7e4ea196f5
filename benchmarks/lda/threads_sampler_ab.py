"""Whole 2-thread fits of ``LDA(inference="parallel_gibbs", n_jobs=2)`` with two samplers, alternating (issue 21).

For the word-partitioned F+LDA sweep: ``sampler="auto"`` (its per-sweep choice between the word-partitioned
F+LDA and SparseLDA sweeps, ``parallel_gibbs.PartitionedAuto``) against ``sampler="sparse"`` (SparseLDA in
every sweep, what ``n_jobs=2`` ran before), on the training split of CORPUS, K topics, SWEEPS sweeps, seed 0,
in one process: one fit of each off the clock (numba's cache, the layouts), then ROUNDS rounds of one fit
each, the order reversed every other round. Prints each fit's wall and CPU seconds (the fit as a user calls
it: initialisation, sweeps and the estimate).

    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/threads_sampler_ab.py pypi 100 40 2

2026-11-28: results/threads-sampler-ab-intel.txt.
"""
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: _common

import _common as C  # noqa: E402

import harmonium  # noqa: E402


def fit(train, K: int, sweeps: int, sampler: str) -> tuple[float, float]:
    """(wall s, CPU s) of one 2-thread fit."""
    model = harmonium.LDA(n_topics=K, doc_topic_prior=0.1, topic_word_prior=0.01, n_iter=sweeps, random_state=0,
                          evaluate_every=sweeps, inference="parallel_gibbs", n_jobs=2, sampler=sampler)
    t, c = time.perf_counter(), time.process_time()
    model.fit(train)
    return time.perf_counter() - t, time.process_time() - c


def main(argv) -> None:
    corpus, K, sweeps, rounds = argv[0], int(argv[1]), int(argv[2]), int(argv[3])
    train = C.load_data(corpus).train
    samplers = ("auto", "sparse")
    for s in samplers:  # off the clock
        fit(train, K, sweeps, s)
    walls = {s: [] for s in samplers}
    for r in range(rounds):
        for s in (samplers if r % 2 == 0 else samplers[::-1]):
            wall, cpu = fit(train, K, sweeps, s)
            walls[s].append(wall)
            print(f"round {r} sampler={s}: wall {wall:.2f} s, CPU {cpu:.2f} s", flush=True)
    ratio = np.array(walls["sparse"]) / np.array(walls["auto"])
    print(f"{corpus}, K = {K}, {sweeps} sweeps: wall sparse / auto per round {np.round(ratio, 3).tolist()}")


if __name__ == "__main__":
    main(sys.argv[1:])
