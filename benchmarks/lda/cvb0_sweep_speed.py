"""CPU seconds per CVB0 sweep by storage of gamma (issue 21): the kernels alone, Debian, K = 100.

Each argument is a storage ("float32", "uint16", "uint8"); each is timed for ``--sweeps`` sweeps from
its own initialisation (seed 0), in the order given (repeat a storage to alternate). uint8 and uint16
use the dithered rounding of ``LDA(cvb0_dtype=...)``.

    .venv/bin/python benchmarks/lda/cvb0_sweep_speed.py float32 uint8 uint16 float32 uint8 uint16
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from harmonium.datasets import load_debian
from harmonium.inference.vi import lda_vb as vb
from harmonium.models.directed.lda import make_model


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("storage", nargs="+", choices=vb.CVB0_GAMMA_DTYPES)
    ap.add_argument("--topics", type=int, default=100)
    ap.add_argument("--sweeps", type=int, default=4)
    a = ap.parse_args()
    corpus = load_debian()
    data = vb.VBData.from_corpus(corpus)
    model = make_model(a.topics, corpus.n_words, 0.1, 0.01)
    for storage in a.storage:
        rng = np.random.default_rng(0)
        if storage == "float32":
            state, kernel = vb.cvb0_init(rng, data, model), vb.build_cvb0_kernel()
        else:
            state, kernel = vb.cvb0q_init(rng, data, model, storage), vb.build_cvb0q_kernel(dither=True)
        times = []
        for _ in range(a.sweeps):
            t = time.process_time()
            state, _ = kernel(rng, state, data, model)
            times.append(time.process_time() - t)
        print(storage, "CPU s per sweep", [round(x, 3) for x in times], flush=True)


if __name__ == "__main__":
    main()
