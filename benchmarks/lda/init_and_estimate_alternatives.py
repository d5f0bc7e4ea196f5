"""Two levers on time to quality measured and not kept (issue 21): the sequential initialisation of
Griffiths & Steyvers (2004) and the conditional-probability estimate of phi of Papanikolaou et al. (2017).

``init``: one SparseLDA chain (alpha = 0.1, beta = 0.01, the time-to-quality benchmark's training split,
seed SEED) from a random start ("random", what harmonium does) or from the "online" start of Griffiths &
Steyvers (2004, PNAS 101 suppl. 1, "Finding scientific topics": z assigned by the collapsed conditional
with the counts of the tokens seen so far, in stream order; plain O(K) loop here). Held-out perplexity of
the state at each sweep count in EVALS (``_common.heldout_perplexity``), with CPU seconds.

``cgsp``: the same chain from a random start; at each sweep count in EVALS, the perplexity of phi from
the state's counts ("state"), from the default window's Rao-Blackwellised average (the last tenth at
thin 5, as ``default_burn_in``; "rb_window"), and from CGS_p (Papanikolaou, Foulds, Rubin & Tsoumakas
2017, JMLR 18(62), "Dense distributions from sparse samples": phi_kw ∝ beta + sum over the tokens of w of
p(z_i = k | z_-i, w)) on the last state ("cgsp_last") and averaged over the same window ("cgsp_window").
``soft_cpu``: CPU seconds of the dense O(K) pass that computes the conditional probabilities here.

    S=benchmarks/lda/init_and_estimate_alternatives.py
    PYTHONPATH=$PWD .venv/bin/python $S init debian 100 0 online 0,5,10,25,50,100,150,200
    PYTHONPATH=$PWD .venv/bin/python $S cgsp debian 1000 0 20,40,60,80

Records of 2026-11-27: results/init-and-estimate-alternatives.jsonl.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: _common

import _common as C  # noqa: E402

from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs  # noqa: E402
from harmonium.models.directed.lda import make_model, topic_word_mean  # noqa: E402

ALPHA, BETA = 0.1, 0.01


@njit(cache=True)
def online_z(seed, doc_ptr, words, K, V, alpha, beta):
    """Griffiths & Steyvers' start: each token in stream order drawn from the conditional given the tokens before it."""
    np.random.seed(seed)  # noqa: NPY002 (numba's per-thread generator inside njit; the records used it)
    z = np.empty(words.shape[0], np.int32)
    n_wk = np.zeros((V, K), np.int32)
    n_k = np.zeros(K, np.int64)
    row = np.zeros(K, np.int64)
    p = np.empty(K)
    vb = V * beta
    for d in range(doc_ptr.shape[0] - 1):
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            w = words[i]
            acc = 0.0
            for k in range(K):
                acc += (alpha + row[k]) * (n_wk[w, k] + beta) / (n_k[k] + vb)
                p[k] = acc
            u = np.random.random() * acc  # noqa: NPY002
            new = K - 1
            for k in range(K):
                if u < p[k]:
                    new = k
                    break
            z[i] = new
            row[new] += 1
            n_wk[w, new] += 1
            n_k[new] += 1
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            row[z[i]] = 0
    return z


@njit(cache=True)
def soft_counts(doc_ptr, words, z, n_wk, n_k, alpha, beta, out):
    """out[w, k] += p(z_i = k | z_-i, w) for every token i of word w (dense O(K) a token)."""
    V, K = n_wk.shape
    vb = V * beta
    row = np.zeros(K, np.int64)
    p = np.empty(K)
    for d in range(doc_ptr.shape[0] - 1):
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            row[z[i]] += 1
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            w = words[i]
            old = z[i]
            tot = 0.0
            for k in range(K):
                own = 1 if k == old else 0
                p[k] = (alpha + row[k] - own) * (n_wk[w, k] - own + beta) / (n_k[k] - own + vb)
                tot += p[k]
            for k in range(K):
                out[w, k] += p[k] / tot
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            row[z[i]] = 0


def main(argv) -> None:
    what, corpus, K, seed = argv[0], argv[1], int(argv[2]), int(argv[3])
    data = C.load_data(corpus, None)
    tokens = data.train.tokens()
    V = data.train.n_words
    model = make_model(K, V, ALPHA, BETA)
    rng = np.random.default_rng(seed)
    kernel = cgs.build_kernel(sampler="sparse", compute_log_joint=False)

    def score(phi):
        return round(C.heldout_perplexity(C.check_phi(phi, K, data.corpus.n_words), ALPHA, data, n_iter=50), 1)

    if what == "init":
        init, evals = argv[4], [int(x) for x in argv[5].split(",")]
        t0 = time.process_time()
        if init == "random":
            state = cgs.init(rng, tokens, model, doc_counts=False)
        else:
            z = online_z(seed, tokens.doc_ptr, tokens.words, K, V, ALPHA, BETA)
            state = cgs.state_from_assignments(tokens, model, z, doc_counts=False)
        t_init = time.process_time() - t0
        t_sweeps = 0.0
        for it in range(0, max(evals) + 1):
            if it:
                t0 = time.process_time()
                state, _ = kernel(rng, state, tokens, model)
                t_sweeps += time.process_time() - t0
            if it in evals:
                print(json.dumps({"what": "init", "corpus": corpus, "K": K, "seed": seed, "init": init, "sweep": it,
                                  "ppl": score(topic_word_mean(state.n_wk, state.n_k, BETA)),
                                  "sweep_cpu": round(t_sweeps, 2), "init_cpu": round(t_init, 2)}), flush=True)
        return
    evals = [int(x) for x in argv[4].split(",")]
    state = cgs.init(rng, tokens, model, doc_counts=False)
    win = {}
    phi_p = None
    t_soft = 0.0
    for it in range(1, max(evals) + 1):
        state, _ = kernel(rng, state, tokens, model)
        for e in evals:
            b = e - max(1, (e // 10) // 5) * 5
            if b < it <= e and (it - b) % 5 == 0:
                acc = win.setdefault(e, [np.zeros((K, V)), np.zeros((K, V)), 0])
                acc[0] += topic_word_mean(state.n_wk, state.n_k, BETA)
                sc = np.zeros((V, K))
                t0 = time.process_time()
                soft_counts(tokens.doc_ptr, tokens.words, state.z, state.n_wk, state.n_k, ALPHA, BETA, sc)
                t_soft = time.process_time() - t0
                phi_p = ((sc + BETA) / (sc.sum(0) + V * BETA)).T
                acc[1] += phi_p
                acc[2] += 1
        if it in evals:
            acc = win.pop(it)
            print(json.dumps({"what": "cgsp", "corpus": corpus, "K": K, "seed": seed, "sweep": it,
                              "state": score(topic_word_mean(state.n_wk, state.n_k, BETA)),
                              "cgsp_last": score(phi_p), "rb_window": score(acc[0] / acc[2]),
                              "cgsp_window": score(acc[1] / acc[2]), "n": acc[2], "soft_cpu": round(t_soft, 2)}),
                  flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
