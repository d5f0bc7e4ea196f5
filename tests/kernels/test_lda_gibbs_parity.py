"""Parity of the compiled LDA Gibbs kernels with plain-numpy references.

Both consume the same uniforms from the same Generator, so with equal seeds the
assignments must agree exactly. This file also runs under NUMBA_DISABLE_JIT=1
(``make test`` does so for tests/kernels).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from harmonium._kernels import lda_gibbs, lda_infer
from harmonium._kernels.categorical import draw_unnormalised
from harmonium.corpus import Corpus
from harmonium.models.directed.lda import counts_from_assignments


def _draw(rng, p):
    c = np.cumsum(p)
    u = rng.random() * c[-1]
    k = int(np.searchsorted(c, u, side="right"))
    return min(k, len(p) - 1)


def reference_collapsed_sweep(rng, doc_ptr, words, z, n_dk, n_wk, n_k, alpha, beta):
    V = n_wk.shape[0]
    changed = 0
    for d in range(len(doc_ptr) - 1):
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            w, old = words[i], z[i]
            n_dk[d, old] -= 1
            n_wk[w, old] -= 1
            n_k[old] -= 1
            p = (n_dk[d] + alpha) * (n_wk[w] + beta) / (n_k + V * beta)
            new = _draw(rng, p)
            z[i] = new
            n_dk[d, new] += 1
            n_wk[w, new] += 1
            n_k[new] += 1
            changed += new != old
    return changed


def reference_fixed_topics_sweep_sparse(rng, doc_ptr, words, z, n_dk, phi_wk, alpha, initialise):
    """Plain-numpy twin of lda_infer.fixed_topics_sweep_sparse (same buckets, same list order)."""
    a_cum = np.cumsum(alpha[None, :] * phi_wk, axis=1)
    for d in range(len(doc_ptr) - 1):
        dtop = [] if initialise else list(dict.fromkeys(int(k) for k in z[doc_ptr[d]:doc_ptr[d + 1]]))
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            w = words[i]
            if not initialise:
                old = z[i]
                n_dk[d, old] -= 1
                if n_dk[d, old] == 0:
                    j = dtop.index(old)
                    dtop[j] = dtop[-1]
                    dtop.pop()
            row = a_cum[w]
            r = np.cumsum([n_dk[d, k] * phi_wk[w, k] for k in dtop]) if dtop else np.zeros(0)
            total_r = r[-1] if len(r) else 0.0
            u = rng.random() * (row[-1] + total_r)
            if u < row[-1]:
                new = int(np.searchsorted(row, u, side="right"))
            else:
                new = dtop[int(np.searchsorted(r, u - row[-1], side="right"))]
            z[i] = new
            if n_dk[d, new] == 0:
                dtop.append(new)
            n_dk[d, new] += 1


def _random_problem(seed, D=7, V=11, K=4):
    rng = np.random.default_rng(seed)
    counts = sp.csr_matrix(rng.poisson(0.8, size=(D, V)))
    tokens = Corpus(counts).tokens()
    z = rng.integers(0, K, size=tokens.words.shape[0], dtype=np.int32)
    alpha = rng.uniform(0.05, 1.0, size=K)
    return tokens, z, alpha, K, V


def test_draw_unnormalised_matches_inverse_cdf():
    p = np.array([0.2, 0.0, 1.3, 0.5])
    for seed in range(20):
        a = draw_unnormalised(np.random.default_rng(seed), p.copy(), 4)
        b = _draw(np.random.default_rng(seed), p)
        assert a == b


def test_collapsed_sweep_matches_reference():
    for seed in range(3):
        tokens, z, alpha, K, V = _random_problem(seed)
        beta = 0.07
        counts_a = counts_from_assignments(tokens.doc_ptr, tokens.words, z, K, V)
        counts_b = [c.copy() for c in counts_a]
        za, zb = z.copy(), z.copy()
        ra, rb = np.random.default_rng(seed), np.random.default_rng(seed)
        for _ in range(3):
            ca = lda_gibbs.collapsed_sweep(
                ra, tokens.doc_ptr, tokens.words, za, *counts_a, alpha, beta, np.empty(K), 0, len(tokens.doc_ptr) - 1
            )
            cb = reference_collapsed_sweep(rb, tokens.doc_ptr, tokens.words, zb, *counts_b, alpha, beta)
            assert ca == cb
        np.testing.assert_array_equal(za, zb)
        for a, b in zip(counts_a, counts_b, strict=True):
            np.testing.assert_array_equal(a, b)
        # counts stay consistent with z after every sweep
        for a, b in zip(counts_a, counts_from_assignments(tokens.doc_ptr, tokens.words, za, K, V), strict=True):
            np.testing.assert_array_equal(a, b)


def _fixed_topics_problem():
    """A random corpus, fixed topics phi_wk and their prior tables, and two zeroed z (kernel, reference)."""
    tokens, _, alpha, K, V = _random_problem(5)
    phi_wk = np.random.default_rng(1).dirichlet(np.ones(V), size=K).T.copy()
    a_cum = np.empty((V, K))
    lda_infer.word_prior_tables(phi_wk, alpha, a_cum)
    return tokens, alpha, K, len(tokens.doc_ptr) - 1, phi_wk, a_cum, np.zeros_like(tokens.words), \
        np.zeros_like(tokens.words)


def test_fixed_topics_sweep_sparse_matches_reference():
    tokens, alpha, K, n_docs, phi_wk, a_cum, za, zb = _fixed_topics_problem()
    na, nb = np.zeros((n_docs, K), np.int32), np.zeros((n_docs, K), np.int32)
    ra, rb = np.random.default_rng(9), np.random.default_rng(9)
    for initialise in (True, False, False, False):
        lda_infer.fixed_topics_sweep_sparse(ra, tokens.doc_ptr, tokens.words, za, na, phi_wk, a_cum, 0, n_docs,
                                            initialise, np.empty(K, np.int32), np.empty(K), np.zeros(K, np.uint8))
        reference_fixed_topics_sweep_sparse(rb, tokens.doc_ptr, tokens.words, zb, nb, phi_wk, alpha, initialise)
        np.testing.assert_array_equal(za, zb)
        np.testing.assert_array_equal(na, nb)


def test_fixed_topics_sweep_rows_matches_reference():
    # transform without a D x K table: each document's counts rebuilt from z; same z, and the kept sums
    tokens, alpha, K, n_docs, phi_wk, a_cum, za, zb = _fixed_topics_problem()
    nb = np.zeros((n_docs, K), np.int32)
    total, want = np.zeros((n_docs, K)), np.zeros((n_docs, K))
    drow = np.zeros(K, np.int32)
    ra, rb = np.random.default_rng(9), np.random.default_rng(9)
    for sweep, initialise in enumerate((True, False, False, False)):
        keep = sweep >= 2
        lda_infer.fixed_topics_sweep_rows(ra, tokens.doc_ptr, tokens.words, za, phi_wk, a_cum, 0, n_docs,
                                          initialise, np.empty(K, np.int32), np.empty(K), np.zeros(K, np.uint8),
                                          drow, total, keep)
        reference_fixed_topics_sweep_sparse(rb, tokens.doc_ptr, tokens.words, zb, nb, phi_wk, alpha, initialise)
        if keep:
            want += nb
        np.testing.assert_array_equal(za, zb)
        np.testing.assert_array_equal(total, want)
        assert not drow.any()


def test_apply_moves_is_the_count_difference():
    """AD-LDA's merge: moving each token from its old to its new topic gives the recount of the new z."""
    rng = np.random.default_rng(11)
    N, V, K = 300, 17, 6
    doc_ptr = np.array([0, 120, N])
    words = rng.integers(0, V, N).astype(np.int32)
    z0 = rng.integers(0, K, N).astype(np.int32)
    z1 = z0.copy()
    moved = rng.random(N) < 0.4
    z1[moved] = rng.integers(0, K, moved.sum())
    _, n_wk, n_k = counts_from_assignments(doc_ptr, words, z0, K, V)
    lda_gibbs.apply_moves(words[120:], z0[120:], z1[120:], n_wk, n_k)  # one worker's token range
    z_want = np.concatenate([z0[:120], z1[120:]])
    _, want_wk, want_k = counts_from_assignments(doc_ptr, words, z_want, K, V)
    np.testing.assert_array_equal(n_wk, want_wk)
    np.testing.assert_array_equal(n_k, want_k)
