"""Parity of the SparseLDA sweep with a plain-numpy twin (same buckets, same list order, same uniforms)."""

from __future__ import annotations

import numpy as np

from harmonium._kernels import lda_sparse
from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs
from harmonium.models.directed.lda import counts_from_assignments, make_model

from .test_lda_gibbs_parity import _random_problem


def reference_sparse_sweep(rng, doc_ptr, words, z, n_dk, n_wk, n_k, alpha, beta):
    V, K = n_wk.shape
    wl = [sorted((k for k in range(K) if n_wk[w, k] > 0), key=lambda k, w=w: -n_wk[w, k]) for w in range(V)]
    c = 1.0 / (n_k + V * beta)
    for d in range(len(doc_ptr) - 1):
        dl = list(dict.fromkeys(int(k) for k in z[doc_ptr[d]:doc_ptr[d + 1]]))
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            w, old = words[i], z[i]
            n_k[old] -= 1
            c[old] = 1.0 / (n_k[old] + V * beta)
            n_dk[d, old] -= 1
            if n_dk[d, old] == 0:
                j = dl.index(old)
                dl[j] = dl[-1]
                dl.pop()
            n_wk[w, old] -= 1
            if n_wk[w, old] == 0:
                j = wl[w].index(old)
                wl[w][j] = wl[w][-1]
                wl[w].pop()
            q = np.cumsum([(alpha[k] + n_dk[d, k]) * c[k] * n_wk[w, k] for k in wl[w]]) if wl[w] else np.zeros(0)
            r = np.cumsum([n_dk[d, k] * beta * c[k] for k in dl]) if dl else np.zeros(0)
            s = np.cumsum(alpha * beta * c)
            qt, rt = (q[-1] if len(q) else 0.0), (r[-1] if len(r) else 0.0)
            u = rng.random() * (s[-1] + rt + qt)
            if u < qt:
                new = wl[w][int(np.searchsorted(q, u, side="right"))]
            elif u < qt + rt:
                new = dl[int(np.searchsorted(r, u - qt, side="right"))]
            else:
                new = min(int(np.searchsorted(s, u - qt - rt, side="right")), K - 1)
            z[i] = new
            n_k[new] += 1
            c[new] = 1.0 / (n_k[new] + V * beta)
            if n_dk[d, new] == 0:
                dl.append(new)
            n_dk[d, new] += 1
            if n_wk[w, new] == 0:
                wl[w].append(new)
            n_wk[w, new] += 1


def test_sparse_sweep_matches_reference():
    for seed in range(3):
        tokens, z, alpha, K, V = _random_problem(seed, D=9, V=13, K=5)
        beta = 0.05
        model = make_model(K, V, alpha, beta)
        state = cgs.state_from_assignments(tokens, model, z.copy())
        ref = [a.copy() for a in counts_from_assignments(tokens.doc_ptr, tokens.words, z, K, V)]
        zb = z.copy()
        sweep = cgs.sparse_sweep(model, tokens)
        ra, rb = np.random.default_rng(seed), np.random.default_rng(seed)
        for _ in range(3):
            sweep(ra, state, 0, len(tokens.doc_ptr) - 1)
            reference_sparse_sweep(rb, tokens.doc_ptr, tokens.words, zb, *ref, alpha, beta)
            np.testing.assert_array_equal(state.z, zb)
            for a, b in zip(state[1:], ref, strict=True):
                np.testing.assert_array_equal(a, b)


def test_word_lists_hold_exactly_the_nonzero_topics():
    tokens, z, alpha, K, V = _random_problem(4, D=9, V=13, K=5)
    n_wk = counts_from_assignments(tokens.doc_ptr, tokens.words, z, K, V)[1]
    freq = np.bincount(tokens.words, minlength=V)
    wptr = np.concatenate([[0], np.cumsum(np.minimum(freq, K))]).astype(np.int64)
    wtop, wlen = np.empty(int(wptr[-1]), np.int32), np.empty(V, np.int32)
    lda_sparse.build_word_lists(n_wk, wptr, wtop, wlen)
    for w in range(V):
        assert sorted(wtop[wptr[w]:wptr[w] + wlen[w]]) == list(np.flatnonzero(n_wk[w]))
