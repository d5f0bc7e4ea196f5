"""Parity of the WarpLDA-style sweep with a plain-numpy twin (same passes, same proposals, same uniforms)."""

from __future__ import annotations

import numpy as np

from harmonium._kernels.lda_alias import build_alias, draw_alias
from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs
from harmonium.inference.mcmc.lda import parallel_gibbs as pgs
from harmonium.inference.mcmc.lda import warp as lda_warp
from harmonium.models.directed.lda import counts_from_assignments, make_model

from .test_lda_gibbs_parity import _random_problem


def _other(rng, self_pos, lo, hi, topics, prior_mass):
    n_rest = hi - lo - 1
    u = rng.random() * (n_rest + prior_mass)
    if u < n_rest:
        pos = lo + int(u)
        return int(topics[pos + 1 if pos >= self_pos else pos])
    return -1


def _uniform(rng, K):
    return min(int(rng.random() * K), K - 1)


def reference_warp_sweep(rng, doc_ptr, words, z, n_dk, n_wk, n_k, alpha, beta, mh_steps=1):
    """Word pass (doc proposals, tokens by word) then document pass (word proposals), current counts."""
    V, K = n_wk.shape
    vb = V * beta
    D = len(doc_ptr) - 1
    doc_of = np.repeat(np.arange(D), np.diff(doc_ptr))
    symmetric = bool(np.all(alpha == alpha[0]))
    prob, alias = alpha.astype(np.float64).copy(), np.empty(K, np.int32)
    build_alias(prob, alias, 0, K, np.empty(K, np.int32), np.empty(K, np.int32))
    by_word = [np.flatnonzero(words == w) for w in range(V)]  # tokens of w, in document order
    for w in range(V):
        for i in by_word[w]:
            d, s = doc_of[i], int(z[i])
            n_wk[w, s] -= 1
            n_k[s] -= 1
            for _ in range(mh_steps):
                t = _other(rng, i, doc_ptr[d], doc_ptr[d + 1], z, alpha.sum())
                if t < 0:
                    t = _uniform(rng, K) if symmetric else int(draw_alias(rng, prob, alias, 0, K))
                if t != s and rng.random() * (n_wk[w, s] + beta) * (n_k[t] + vb) < (n_wk[w, t] + beta) * (n_k[s] + vb):
                    s = t
            n_wk[w, s] += 1
            n_k[s] += 1
            n_dk[d, z[i]] -= 1
            n_dk[d, s] += 1
            z[i] = s
    for d in range(D):
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            w, s = words[i], int(z[i])
            n_dk[d, s] -= 1
            n_k[s] -= 1
            toks = by_word[w]
            p = int(np.searchsorted(toks, i))
            for _ in range(mh_steps):
                t = _other(rng, p, 0, len(toks), z[toks], beta * K)
                if t < 0:
                    t = _uniform(rng, K)
                num = (n_dk[d, t] + alpha[t]) * (n_k[s] + vb)
                if t != s and rng.random() * (n_dk[d, s] + alpha[s]) * (n_k[t] + vb) < num:
                    s = t
            n_dk[d, s] += 1
            n_k[s] += 1
            n_wk[w, z[i]] -= 1
            n_wk[w, s] += 1
            z[i] = s


def _check(seed, alpha_symmetric, mh_steps):
    tokens, z, alpha, K, V = _random_problem(seed, D=8, V=9, K=5)
    if alpha_symmetric:
        alpha = np.full(K, 0.3)
    beta = 0.05
    model = make_model(K, V, alpha, beta)
    state = cgs.state_from_assignments(tokens, model, z.copy())
    ref = [a.copy() for a in counts_from_assignments(tokens.doc_ptr, tokens.words, z, K, V)]
    zb = z.copy()
    sweep = lda_warp.make_sweep(model, tokens, mh_steps=mh_steps)
    ra, rb = np.random.default_rng(seed), np.random.default_rng(seed)
    for _ in range(3):
        sweep(ra, state, 0, len(tokens.doc_ptr) - 1)
        reference_warp_sweep(rb, tokens.doc_ptr, tokens.words, zb, *ref, alpha, beta, mh_steps)
        np.testing.assert_array_equal(state.z, zb)
        for a, b in zip(state[1:], ref, strict=True):
            np.testing.assert_array_equal(a, b)
    assert ra.random() == rb.random()  # the same number of uniforms consumed


def test_warp_sweep_matches_reference_symmetric_alpha():
    for seed in range(3):
        _check(seed, True, 1)


def test_warp_sweep_matches_reference_asymmetric_alpha_and_two_steps():
    for seed in range(3, 5):
        _check(seed, False, 2)


def test_counts_stay_consistent_under_threads():
    # two document blocks with private n_wk copies (AD-LDA): every block's proposals come from its own copy
    tokens, z, alpha, K, V = _random_problem(7, D=12, V=9, K=4)
    model = make_model(K, V, alpha, 0.1)
    state = cgs.state_from_assignments(tokens, model, z)
    kernel = pgs.build_kernel(sampler="warp", n_threads=2, compute_log_joint=False)
    rng = np.random.default_rng(1)
    for _ in range(4):
        state, _ = kernel(rng, state, tokens, model)
        for a, b in zip(state[1:], counts_from_assignments(tokens.doc_ptr, tokens.words, state.z, K, V), strict=True):
            np.testing.assert_array_equal(a, b)
