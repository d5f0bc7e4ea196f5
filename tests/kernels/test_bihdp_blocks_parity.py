"""Parity of harmonium._kernels.bihdp_blocks with a plain-numpy twin that recounts every block from the dense
customer x item matrix (no block bookkeeping), and the twin's broken variant used by the exactness tests.

Also runs under NUMBA_DISABLE_JIT=1.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse
from scipy.special import betaln

from harmonium.inference.mcmc.isbn import bihdp_blocks as bb


def reference_logits(X, w_self, w_other, z, z_o, used, used_o, e, alpha, a, b, forget_nonpurchases=False):
    """Log conditional of element e over ``used`` groups (e already out of them) and a new group, from the
    dense matrix ``X`` (rows: this side). ``forget_nonpurchases``: the broken twin, which leaves e's
    non-purchases out of the predictive (N of a block does not grow with e)."""
    out = []
    others = [z_o == h for h in used_o]
    s = np.array([X[e, m].sum() for m in others], dtype=float)
    f = np.array([w_self[e] * w_other[m].sum() for m in others], dtype=float) - s
    if forget_nonpurchases:
        f = np.zeros_like(f)
    rest = np.arange(X.shape[0]) != e
    for g in used:
        mem = (z == g) & rest
        S = np.array([X[mem][:, m].sum() for m in others], dtype=float)
        N = np.array([w_self[mem].sum() * w_other[m].sum() for m in others], dtype=float)
        out.append(np.log(mem.sum()) + np.sum(betaln(a + S + s, b + N - S + f) - betaln(a + S, b + N - S)))
    out.append(np.log(alpha) + np.sum(betaln(a + s, b + f) - betaln(a, b)))
    return np.array(out)


def reference_draw(rng, logp):
    """The kernel's draw: weights exp(logp - max), cumulated, inverted by one uniform (linear search)."""
    cum = np.cumsum(np.exp(logp - logp.max()))
    u = rng.random() * cum[-1]
    k = int(np.searchsorted(cum[:-1], u, side="right"))
    return k


def reference_sweep_side(rng, order, X, w_self, w_other, z, z_o, perm, K, perm_o, K_o, alpha, a, b,
                         forget_nonpurchases=False):
    """One sweep of one side in ``order``; mutates ``z`` and the list ``perm`` (used ids first, as the kernel
    keeps them: an emptied group swaps with the last used id). Returns K."""
    for e in order:
        g0 = z[e]
        z[e] = -1
        if not (z == g0).any():  # retire g0: swap it with the last used id
            k = perm.index(g0)
            perm[k], perm[K - 1] = perm[K - 1], g0
            K -= 1
        lp = reference_logits(X, w_self, w_other, z, z_o, perm[:K], list(perm_o[:K_o]), e, alpha, a, b,
                              forget_nonpurchases)
        k = reference_draw(rng, lp)
        if k == K:
            if K == len(perm):  # the kernel grows its capacity here; a list just takes a fresh id
                perm.append(len(perm))
            K += 1
        z[e] = perm[k]
    return K


def reference_epoch(rng, X, T, z, perm, K, alpha, a, b, forget_nonpurchases=False):
    """Customers then items, each side in a random order drawn as the kernel draws it."""
    ones = np.ones(X.shape[1], dtype=np.int64)
    o = rng.permutation(X.shape[0])
    K[0] = reference_sweep_side(rng, o, X, T, ones, z[0], z[1], perm[0], K[0], perm[1], K[1], alpha[0], a, b,
                                forget_nonpurchases)
    o = rng.permutation(X.shape[1])
    K[1] = reference_sweep_side(rng, o, X.T, ones, T, z[1], z[0], perm[1], K[1], perm[0], K[0], alpha[1], a, b,
                                forget_nonpurchases)


def _problem(seed, C=7, I=6):
    rng = np.random.default_rng(seed)
    T = rng.integers(0, 5, C)
    X = np.minimum(rng.poisson(0.8, (C, I)), T[:, None])
    return X, T


def test_sweep_matches_reference():
    a, b, alpha = 0.7, 1.3, (1.1, 0.6)
    for seed in range(4):
        X, T = _problem(seed)
        data = bb.make_data(sparse.csr_matrix(X), T)
        state = bb.init(np.random.default_rng(seed), data, n_customer_groups=3, n_item_groups=2, alpha=alpha,
                        capacity=2)  # tiny capacity: the growth path runs too
        z = [state.z[0].copy(), state.z[1].copy()]
        perm = [state.perm[0].tolist(), state.perm[1].tolist()]
        K = [int(state.K[0]), int(state.K[1])]
        kernel = bb.build_kernel(a=a, b=b, sample_concentration=False)
        r1, r2 = np.random.default_rng(100 + seed), np.random.default_rng(100 + seed)
        for _ in range(5):
            state, _info = kernel(r1, state, data)
            reference_epoch(r2, X, T, z, perm, K, alpha, a, b)
            # group ids may differ once the kernel grew its arrays; compare partitions
            for s in range(2):
                assert np.array_equal(np.unique(state.z[s], return_inverse=True)[1],
                                      np.unique(z[s], return_inverse=True)[1])
            assert [int(state.K[0]), int(state.K[1])] == K


def test_conditional_matches_reference_logits():
    a, b = 0.9, 2.0
    X, T = _problem(7, C=6, I=5)
    data = bb.make_data(X, T)
    state = bb.init(np.random.default_rng(3), data, n_customer_groups=3, n_item_groups=3, alpha=(0.8, 1.7))
    ones = np.ones(X.shape[1])
    for side, (Xs, ws, wo) in enumerate([(X, T, ones), (X.T, ones, T)]):
        for e in range(Xs.shape[0]):
            ids, p = bb.conditional(state, data, side, e, a, b)
            z = state.z[side].copy()
            z[e] = -1
            used = [g for g in ids[:-1]]
            lp = reference_logits(Xs, ws, wo, z, state.z[1 - side], used, state.perm[1 - side][:state.K[1 - side]],
                                  e, state.alpha[side], a, b)
            q = np.exp(lp - lp.max())
            np.testing.assert_allclose(p, q / q.sum(), rtol=1e-10, atol=1e-13)


def test_block_invariants_after_sweeps():
    X, T = _problem(11, C=40, I=25)
    data = bb.make_data(X, T)
    rng = np.random.default_rng(0)
    state = bb.init(rng, data, n_customer_groups=6, n_item_groups=4, capacity=3)
    kernel = bb.build_kernel()
    for _ in range(10):
        state, info = kernel(rng, state, data)
        for s, w in enumerate((T, np.ones(X.shape[1], dtype=np.int64))):
            used = state.perm[s][:state.K[s]]
            assert set(np.unique(state.z[s])) == set(used.tolist())
            assert np.array_equal(state.n[s][used], np.bincount(state.z[s], minlength=state.n[s].size)[used])
            assert np.array_equal(state.W[s][used], np.bincount(state.z[s], weights=w, minlength=state.n[s].size)[used])
            assert (state.n[s][state.perm[s][state.K[s]:]] == 0).all()
        S = np.zeros_like(state.S)
        np.add.at(S, (state.z[0][:, None], state.z[1][None, :]), X)
        assert np.array_equal(S, state.S)
        assert info.n_groups == (int(state.K[0]), int(state.K[1]))
