"""Where one HDP direct-assignment iteration spends its time (harmonium only, one thread).

Runs ``--warmup`` iterations of the benchmark kernel (as in ``hdp_peers.py``: sparse sweep,
alpha and gamma resampled, no log joint), then ``--iters`` iterations with each piece of
:func:`harmonium.inference.mcmc.isbn.hdp.build_kernel` timed on its own, in the
kernel's order: word lists, z sweep, compaction, table counts, alpha/gamma, tau.

Example::

    .venv/bin/python benchmarks/isbn/hdp_profile.py --warmup 40 --iters 10
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parents[1]  # benchmarks/, where the shared _common.py lives
sys.path.insert(0, str(HERE))

import _common as C  # noqa: E402


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", choices=C.CORPORA, default="debian")
    ap.add_argument("--max-docs", type=int, default=None)
    ap.add_argument("--warmup", type=int, default=40)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--initial-topics", type=int, default=100)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)

    from harmonium._kernels import hdp as khdp
    from harmonium.inference.mcmc.isbn import hdp as da
    from harmonium.inference.mcmc.isbn import hyper
    from harmonium.models.directed.hdp import HDPModel

    data = C.load_data(args.corpus, args.max_docs)
    tokens = data.train.tokens()
    model = HDPModel(0.01, data.corpus.n_words)
    rng = np.random.default_rng(0)
    state = da.init(rng, tokens, model, n_topics=args.initial_topics, alpha=1.0, gamma=1.0)
    kernel = da.build_kernel(sample_alpha=True, sample_gamma=True, compute_log_joint=False)
    for _ in range(args.warmup):
        state, _ = kernel(rng, state, tokens, model)
    N = tokens.words.shape[0]
    V = model.n_words
    wptr = np.zeros(V + 1, dtype=np.int64)
    np.cumsum(np.bincount(tokens.words, minlength=V), out=wptr[1:])
    wtop = np.empty(N, dtype=np.int32)
    wlen = np.zeros(V, dtype=np.int64)
    lengths = np.diff(tokens.doc_ptr).astype(np.float64)
    lengths = lengths[lengths > 0]
    parts: dict[str, list[float]] = {}

    def tick(name, t0):
        t1 = time.perf_counter()
        parts.setdefault(name, []).append(t1 - t0)
        return t1

    for _ in range(args.iters):
        t_all = t = time.perf_counter()
        K = state.n_topics
        khdp.build_word_lists(state.n_wk, K, wptr, wtop, wlen)
        t = tick("word lists", t)
        i = 0
        carry_f, carry_i = np.zeros(2), np.zeros(2, dtype=np.int64)
        dtop = np.zeros(0, dtype=np.int32)
        while True:
            cap1 = state.capacity + 1
            dtop = np.concatenate([dtop, np.zeros(cap1 - dtop.shape[0], dtype=np.int32)])
            scratch = (np.zeros(cap1), np.zeros(cap1), np.zeros(cap1), dtop, np.zeros(cap1, dtype=np.uint8))
            K, _, _, i = khdp.da_sparse_sweep(rng, tokens.doc_ptr, tokens.words, state.z, state.n_dk, state.n_wk,
                                              state.n_k, state.tau, K, state.alpha, model.beta, state.gamma, i,
                                              wptr, wtop, wlen, *scratch, carry_f, carry_i)
            if i >= N:
                break
            state = da.grow(state, max(state.capacity + 1, int(state.capacity * 1.5)))
        t = tick("z sweep", t)
        K = int(khdp.compact(state.z, state.n_dk, state.n_wk, state.n_k, state.tau, K, np.empty(K, np.int64)))
        t = tick("compaction", t)
        m_k = np.zeros(max(K, 1), dtype=np.int64)
        m_total = int(khdp.sample_tables(rng, state.n_dk, K, state.alpha, state.tau, m_k))
        t = tick("table counts", t)
        alpha = hyper.resample_alpha(rng, state.alpha, m_total, lengths, model.alpha_prior, 1)
        gamma = hyper.resample_gamma(rng, state.gamma, K, m_total, model.gamma_prior, 1)
        t = tick("alpha, gamma", t)
        khdp.sample_tau(rng, m_k, K, gamma, state.tau)
        state = state._replace(n_topics=K, alpha=alpha, gamma=gamma)
        t = tick("tau", t)
        tick("total", t_all)
    total = statistics.median(parts["total"])
    print(f"{args.corpus} {data.describe()['n_train_tokens']} tokens, K = {state.n_topics}, "
          f"capacity {state.capacity}, median of {args.iters} iterations after {args.warmup}")
    print("| piece | median s | share |\n|---|---|---|")
    for name, v in parts.items():
        print(f"| {name} | {statistics.median(v):.4f} | {statistics.median(v) / total:.1%} |")
    if args.out:
        command = "python benchmarks/isbn/hdp_profile.py " + " ".join(argv or sys.argv[1:])
        rec = {"command": command, "K": state.n_topics,
               "git": C.git_revision(str(HERE.parent)), "parts": parts}
        with open(args.out, "a") as f:
            f.write(json.dumps(rec) + "\n")


if __name__ == "__main__":
    main()
