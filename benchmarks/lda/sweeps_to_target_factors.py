"""What moves the number of sweeps to a held-out perplexity, apart from the sampler (issue 21).

Three one-factor experiments on the serial SparseLDA chain (the harmonium sampler of the time-to-quality
benchmark), each scored by the benchmark's own document completion (``_common.heldout_perplexity``, theta
from 50 fixed-topics sweeps), alpha = 0.1, beta = 0.01, seed 0:

* ``init``: the initial state. ``random`` is the library's (every z uniform); ``sequential`` draws each
  token in stream order from the collapsed conditional given the tokens before it (the o-LDA step of
  Song et al. 2005, as Canini, Shi & Griffiths 2009, AISTATS, describe it). Prints the current state's perplexity and
  the CPU seconds at a few sweep counts.
* ``estimate``: at a few sweep counts, phi of the current state (hard counts, what the benchmark's trace
  uses) against phi from the per-token conditional probabilities p(z_i = k | z_-i, w) summed in place of
  the counts (the estimator of Papanikolaou, Foulds, Rubin & Tsoumakas 2017, JMLR 18), same state.
* ``average``: for each length L listed, the default estimate of ``LDA(n_iter=L)`` (the counts' phi averaged
  over the last tenth of the chain, every 5th sweep, ``estimates.default_burn_in``) against the same average
  of the conditional-probability phi above (Papanikolaou et al. 2017, eq. for CGS_p, averaged over the same
  samples), and each of the two on the last state alone; one chain, seed as given.
* ``fit``: ``harmonium.LDA(n_iter=n)`` as a user calls it, whose ``topic_word_`` averages the second half
  of the chain (every 5th sweep); one fit per n.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/sweeps_to_target_factors.py init debian 100 150 sequential
    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/sweeps_to_target_factors.py estimate debian 100 200
    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/sweeps_to_target_factors.py estimate pypi 1000 20 10,20

``estimate``'s optional last argument lists the sweeps at which the conditional estimate is scored (default:
every 50th).
    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/sweeps_to_target_factors.py fit debian 100 100 150
    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/sweeps_to_target_factors.py average debian 100 150,175,200 SEED
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # benchmarks/: _common

import _common as C  # noqa: E402

import harmonium  # noqa: E402
from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs  # noqa: E402
from harmonium.models.directed.lda import make_model, topic_word_mean  # noqa: E402

ALPHA, BETA = 0.1, 0.01


@njit(cache=True)
def sequential_init(rng, doc_ptr, words, z, n_wk, n_k, alpha, beta):
    """Each token in stream order drawn from the collapsed conditional given the tokens before it (O(K) each)."""
    V, K = n_wk.shape
    p = np.empty(K)
    ndk = np.zeros(K, np.int64)
    vb = V * beta
    for d in range(doc_ptr.shape[0] - 1):
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            w = words[i]
            acc = 0.0
            for k in range(K):
                acc += (ndk[k] + alpha[k]) * (n_wk[w, k] + beta) / (n_k[k] + vb)
                p[k] = acc
            u = rng.random() * acc
            k = 0
            while k < K - 1 and p[k] <= u:
                k += 1
            z[i] = k
            ndk[k] += 1
            n_wk[w, k] += 1
            n_k[k] += 1
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            ndk[z[i]] = 0


@njit(cache=True)
def conditional_counts(doc_ptr, words, z, n_wk, n_k, alpha, beta, S):
    """S[w, k] += p(z_i = k | z_-i, w) for every token i (its own count removed, then restored)."""
    V, K = n_wk.shape
    vb = V * beta
    ndk = np.zeros(K, np.int64)
    p = np.empty(K)
    for d in range(doc_ptr.shape[0] - 1):
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            ndk[z[i]] += 1
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            w = words[i]
            o = z[i]
            ndk[o] -= 1
            n_wk[w, o] -= 1
            n_k[o] -= 1
            tot = 0.0
            for k in range(K):
                p[k] = (ndk[k] + alpha[k]) * (n_wk[w, k] + beta) / (n_k[k] + vb)
                tot += p[k]
            for k in range(K):
                S[w, k] += p[k] / tot
            ndk[o] += 1
            n_wk[w, o] += 1
            n_k[o] += 1
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            ndk[z[i]] = 0


def main(argv):
    what, corpus, K = argv[0], argv[1], int(argv[2])
    data = C.load_data(corpus, None)

    def score(phi):
        return round(C.heldout_perplexity(C.check_phi(phi, K, data.corpus.n_words), ALPHA, data, n_iter=50), 1)

    if what == "fit":
        for n in map(int, argv[3:]):
            m = harmonium.LDA(n_topics=K, doc_topic_prior=ALPHA, topic_word_prior=BETA, n_iter=n, random_state=0,
                              evaluate_every=n)
            t = time.process_time()
            m.fit(data.train)
            print(json.dumps({"what": what, "corpus": corpus, "K": K, "n_iter": n,
                              "cpu_s": round(time.process_time() - t, 2), "perplexity": score(m.topic_word_)}),
                  flush=True)
        return
    if what == "average":
        average(data, K, [int(x) for x in argv[3].split(",")], int(argv[4]), score)
        return
    n = int(argv[3])
    tokens = data.train.tokens()
    model = make_model(K, data.train.n_words, ALPHA, BETA)
    rng = np.random.default_rng(0)
    t0 = time.process_time()
    if what == "init" and argv[4] == "sequential":
        z = np.empty(tokens.words.shape[0], np.int32)
        n_wk = np.zeros((model.n_words, K), np.int32)
        n_k = np.zeros(K, np.int32)
        sequential_init(rng, tokens.doc_ptr, tokens.words, z, n_wk, n_k, model.alpha, model.beta)
        state = cgs.state_from_assignments(tokens, model, z, doc_counts=False)
    else:
        state = cgs.init(rng, tokens, model, doc_counts=False)
    cpu = time.process_time() - t0
    kernel = cgs.build_kernel(sampler="sparse", compute_log_joint=False)
    marks = {1, 2, 5, 10, 25} | set(range(50, n + 1, 50))
    estimate_at = set(range(50, n + 1, 50))
    if what == "estimate" and len(argv) > 4:
        estimate_at = {int(x) for x in argv[4].split(",")}
        marks |= estimate_at
    for it in range(1, n + 1):
        t = time.process_time()
        state, _ = kernel(rng, state, tokens, model)
        cpu += time.process_time() - t
        if it not in marks:
            continue
        row = {"what": what, "corpus": corpus, "K": K, "sweep": it, "cpu_s": round(cpu, 2),
               "perplexity": score(topic_word_mean(state.n_wk, state.n_k, model.beta))}
        if what == "init":
            row["init"] = argv[4]
        elif it in estimate_at:
            S = np.zeros((model.n_words, K))
            t = time.process_time()
            conditional_counts(tokens.doc_ptr, tokens.words, state.z, state.n_wk, state.n_k, model.alpha,
                               model.beta, S)
            row["conditional_cpu_s"] = round(time.process_time() - t, 2)
            row["perplexity_conditional"] = score(((S + BETA) / (S.sum(0) + model.n_words * BETA)).T)
        elif what == "estimate":
            continue
        print(json.dumps(row), flush=True)


def conditional_phi(tokens, state, model):
    """CGS_p's phi of one state: (S + beta) / (sum_w S + V beta), S[w, k] the summed conditionals."""
    S = np.zeros((model.n_words, model.n_topics))
    conditional_counts(tokens.doc_ptr, tokens.words, state.z, state.n_wk, state.n_k, model.alpha, model.beta, S)
    return ((S + model.beta) / (S.sum(0) + model.n_words * model.beta)).T


def average(data, K, lengths, seed, score):
    """``average``: the window means of both estimates at each length in ``lengths`` (one chain)."""
    from harmonium.inference.mcmc.lda.estimates import default_burn_in, keep_sample

    thin = 5
    tokens = data.train.tokens()
    model = make_model(K, data.train.n_words, ALPHA, BETA)
    rng = np.random.default_rng(seed)
    state = cgs.init(rng, tokens, model, doc_counts=False)
    kernel = cgs.build_kernel(sampler="sparse", compute_log_joint=False)
    sums = {L: [0.0, 0.0, 0] for L in lengths}
    cpu = {"sweeps": 0.0, "conditional": 0.0}
    for it in range(1, max(lengths) + 1):
        t = time.process_time()
        state, _ = kernel(rng, state, tokens, model)
        cpu["sweeps"] += time.process_time() - t
        wanted = [L for L in lengths if it <= L and keep_sample(it, default_burn_in(L, thin), thin)]
        if not wanted:
            continue
        phi = topic_word_mean(state.n_wk, state.n_k, model.beta)
        t = time.process_time()
        phi_p = conditional_phi(tokens, state, model)
        cpu["conditional"] += time.process_time() - t
        for L in wanted:
            sums[L][0] = sums[L][0] + phi
            sums[L][1] = sums[L][1] + phi_p
            sums[L][2] += 1
            if it == L:
                n = sums[L][2]
                print(json.dumps({"what": "average", "corpus": data.name, "K": K, "seed": seed, "n_iter": L,
                                  "samples": n, "state": score(phi), "state_conditional": score(phi_p),
                                  "average": score(sums[L][0] / n), "average_conditional": score(sums[L][1] / n),
                                  "cpu_s_sweeps": round(cpu["sweeps"], 2),
                                  "cpu_s_conditional_so_far": round(cpu["conditional"], 2)}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
