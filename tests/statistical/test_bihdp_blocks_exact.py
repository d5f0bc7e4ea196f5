"""Exactness of the binomial-block BiHDP sampler (harmonium.inference.mcmc.isbn.bihdp_blocks).

Targets computed without block counts: the joint of a labelling is the CRP prior of both partitions times, for
every block, the integral over p of the product of the block's pairwise Binomial(n_ji; T_j, p) pmfs against
Beta(a, b), done by quadrature pair by pair. Tests:

1. every element's conditional (customers and items) equals the normalised brute-force joint over its moves;
2. one epoch started from an exact posterior draw leaves the posterior over (customer partition, item
   partition) invariant (chi-square over all 15 x 5 = 75 states); the broken twin that forgets an element's
   non-purchases (N of a block does not grow with the element's trials) fails the same test.
"""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import gammaln

from harmonium.inference.mcmc.isbn import bihdp_blocks as bb
from tests.kernels.test_bihdp_blocks_parity import reference_epoch

from .test_hdp_exact import ALPHA_TEST, chi2_pvalue

# 4 customers with their transactions T_j, 3 items; counts n_ji <= T_j
T = np.array([4, 3, 5, 1])
X = np.array([[3, 0, 1],
              [2, 0, 0],
              [0, 4, 1],
              [0, 1, 0]])
A, B = 0.8, 1.5
ALPHA = (1.2, 0.7)
N_CHAINS = 3000


def set_partitions(n):
    """All partitions of range(n) as canonical label vectors (first appearance order)."""
    out = []

    def rec(i, labels, k):
        if i == n:
            out.append(tuple(labels))
            return
        for g in range(k + 1):
            rec(i + 1, labels + [g], max(k, g + 1))

    rec(0, [], 0)
    return out


def canonical(z):
    _, first = np.unique(z, return_index=True)
    order = np.argsort(first)
    remap = np.empty(order.size, dtype=np.int64)
    remap[order] = np.arange(order.size)
    return tuple(remap[np.unique(z, return_inverse=True)[1]].tolist())


def crp_log_prior(z, alpha):
    m = np.bincount(z)
    m = m[m > 0]
    return m.size * np.log(alpha) + gammaln(alpha) - gammaln(alpha + z.size) + gammaln(m).sum()


@functools.cache
def _block_integral(pairs):
    if not pairs:
        return 1.0
    n, t = np.array(pairs).T

    def f(p):
        return np.prod(stats.binom.pmf(n, t, p)) * stats.beta.pdf(p, A, B)

    return integrate.quad(f, 0.0, 1.0, epsabs=0, epsrel=1e-11, limit=200)[0]


def block_integral(pairs):
    """integral_0^1 prod over pairs Binomial(n; T, p) Beta(p; A, B) dp, by quadrature (pair by pair)."""
    return _block_integral(tuple(sorted(pairs)))


def brute_log_joint(z1, z2, x=X, t=T):
    lj = crp_log_prior(np.asarray(z1), ALPHA[0]) + crp_log_prior(np.asarray(z2), ALPHA[1])
    for g in set(z1):
        for h in set(z2):
            pairs = [(x[j, i], t[j]) for j in range(len(z1)) if z1[j] == g for i in range(len(z2)) if z2[i] == h]
            lj += np.log(block_integral(pairs))
    return lj


@pytest.fixture(scope="module")
def posterior():
    states = list(itertools.product(set_partitions(X.shape[0]), set_partitions(X.shape[1])))
    lj = np.array([brute_log_joint(z1, z2) for z1, z2 in states])
    p = np.exp(lj - lj.max())
    return states, p / p.sum()


def test_conditional_equals_brute_force():
    data = bb.make_data(X, T)
    rng = np.random.default_rng(5)
    for _trial in range(6):
        state = bb.init(rng, data, n_customer_groups=3, n_item_groups=2, alpha=ALPHA)
        for side in (0, 1):
            n_el = X.shape[side]
            for e in range(n_el):
                ids, p = bb.conditional(state, data, side, e, A, B)
                lj = []
                for g in ids:
                    z = [state.z[0].copy(), state.z[1].copy()]
                    z[side][e] = g if g >= 0 else 10_000
                    lj.append(brute_log_joint(tuple(z[0]), tuple(z[1])))
                q = np.exp(np.array(lj) - max(lj))
                np.testing.assert_allclose(p, q / q.sum(), rtol=1e-7, atol=1e-12)


def _run(epoch, posterior, seed):
    states, p = posterior
    index = {s: k for k, s in enumerate(states)}
    rng = np.random.default_rng(seed)
    start = rng.choice(len(states), N_CHAINS, p=p)
    out = np.empty(N_CHAINS, dtype=np.int64)
    for c, k in enumerate(start):
        z1, z2 = states[k]
        z = epoch(rng, np.array(z1), np.array(z2))
        out[c] = index[(canonical(z[0]), canonical(z[1]))]
    pv = chi2_pvalue(np.bincount(out, minlength=len(states)).astype(float), p)
    print("chi-square p-value", pv)
    return pv


def _kernel_epoch():
    data = bb.make_data(X, T)
    kernel = bb.build_kernel(a=A, b=B, sample_concentration=False)

    def epoch(rng, z1, z2):
        state = bb.init(rng, data, labels=(z1, z2), alpha=ALPHA)
        state, _ = kernel(rng, state, data)
        return state.z

    return epoch


def _twin_epoch(forget):
    def epoch(rng, z1, z2):
        z = [z1.copy(), z2.copy()]
        perm = [list(range(X.shape[0] + 1)), list(range(X.shape[1] + 1))]
        K = [int(z1.max()) + 1, int(z2.max()) + 1]
        reference_epoch(rng, X, T, z, perm, K, ALPHA, A, B, forget_nonpurchases=forget)
        return z

    return epoch


def test_kernel_keeps_posterior(posterior):
    assert _run(_kernel_epoch(), posterior, 1) > ALPHA_TEST


def test_broken_twin_forgetting_nonpurchases_fails(posterior):
    assert _run(_twin_epoch(True), posterior, 1) < ALPHA_TEST


@pytest.mark.slow
def test_twin_keeps_posterior(posterior):
    assert _run(_twin_epoch(False), posterior, 2) > ALPHA_TEST
