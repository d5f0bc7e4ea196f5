"""CPU seconds of the serial SparseLDA sweep on the first 20,000 Debian documents (or on the time-to-quality
benchmark's training split of CORPUS), and a hash of z after the sweeps.

For A/B runs of a kernel change against another tree (e.g. ``git archive HEAD | tar -x -C /tmp/head``), alternating:

    cd TREE && PYTHONPATH=$PWD python benchmarks/lda/sweep_speed_ab.py K N_SWEEPS LABEL
    cd TREE && PYTHONPATH=$PWD python /path/to/this/benchmarks/lda/sweep_speed_ab.py K N_SWEEPS LABEL pypi

One JSON line: the median CPU seconds of sweeps 2..N (the first loads the kernels), each sweep's CPU seconds,
whether the state held an n_dk table, and the first 16 hex digits of SHA-256(z): equal hashes mean the same chain.
A tree whose ``init`` has no ``doc_counts`` keyword (before issue 21's n_dk-free state) runs with its dense table.
"""
import hashlib
import json
import sys
import time
from pathlib import Path

import numpy as np

import harmonium
from harmonium.datasets import load_debian
from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs
from harmonium.models.directed.lda import make_model

K, n_sweeps, tag = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
if len(sys.argv) > 4:  # the benchmark's 90% training split of debian or pypi (benchmarks/_common.py)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import _common

    corpus = _common.load_data(sys.argv[4]).train
else:
    corpus = load_debian()[:20000]
tokens = corpus.tokens()
model = make_model(K, corpus.n_words, 0.1, 0.01)
try:
    state = cgs.init(np.random.default_rng(0), tokens, model, doc_counts=False)
except TypeError:
    state = cgs.init(np.random.default_rng(0), tokens, model)
kernel = cgs.build_kernel(sampler="sparse", compute_log_joint=False)
rng = np.random.default_rng(1)
cpu = []
for _ in range(n_sweeps):
    t = time.process_time()
    state, _ = kernel(rng, state, tokens, model)
    cpu.append(time.process_time() - t)
print(json.dumps({"tag": tag, "K": K, "corpus": sys.argv[4] if len(sys.argv) > 4 else "debian[:20000]",
 "tree": harmonium.__file__, "n_dk": state.n_dk is not None,
                  "median_cpu_s": float(np.median(cpu[1:])), "cpu": [round(c, 4) for c in cpu],
                  "z_sha": hashlib.sha256(state.z.tobytes()).hexdigest()[:16]}))
