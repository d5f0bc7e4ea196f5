"""tomotopy's 1- against 2-thread sweep time on the same machine, as a yardstick for lda_threads.py.

Reads the Debian token stream that benchmarks/lda/lda_memory.py writes (one document a line,
``/tmp/harmonium-debian-tokens.txt`` by default; all 63,439 documents, 2.3 M tokens), builds
``tomotopy.LDAModel(k=K, alpha=0.1, eta=0.01, seed=0)``, and times ``train(n, workers=w,
parallel=PARTITION)`` after an untimed ``train(0)``, alternating 1 and 2 workers, 3 repeats.
Run it with the peers' interpreter (tomotopy is not a harmonium dependency):

    /tmp/tt/bin/python benchmarks/lda/tomotopy_threads.py [tokens.txt] > benchmarks/lda/results/tomotopy-threads.txt
"""

import sys
import time

import tomotopy as tp


def main() -> None:
    path = sys.argv[1] if len(sys.argv) > 1 else "/tmp/harmonium-debian-tokens.txt"
    docs = [line.split() for line in open(path)]
    for K in (100, 1000):
        n = 10 if K == 100 else 3
        for rep in range(3):
            for w in ((1, 2) if rep % 2 == 0 else (2, 1)):
                m = tp.LDAModel(k=K, alpha=0.1, eta=0.01, seed=0)
                for d in docs:
                    if d:
                        m.add_doc(d)
                m.train(0, workers=w)
                t, c = time.perf_counter(), time.process_time()
                m.train(n, workers=w, parallel=tp.ParallelScheme.PARTITION)
                print(K, rep, w, "wall/sweep", round((time.perf_counter() - t) / n, 3),
                      "cpu/sweep", round((time.process_time() - c) / n, 3), flush=True)


if __name__ == "__main__":
    main()
