"""Variational LDA with a seeded (asymmetric) topic-word prior eta = beta + delta: parity with plain numpy.

Each update is recomputed here from its equation with a dense (V, K) prior
matrix B = beta + delta (Hoffman et al. 2010 eqs. 3, 5 and Algorithm 2;
Asuncion et al. 2009 eq. 7) and compared with the library's seeded update.
The E-step itself is the unseeded kernel's (its parity is in
tests/kernels/test_lda_vb_parity.py); what is new is where delta enters.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import digamma, gammaln

from harmonium.inference.vi import lda_vb as vb
from harmonium.models.directed.lda import SeedPrior, make_model

K, V, D = 3, 11, 9
SEEDS = SeedPrior(np.array([0, 4, 4, 9], dtype=np.int32), np.array([0, 0, 2, 1], dtype=np.int32),
                  np.array([3, 3, 5, 7], dtype=np.int32))
ALPHA = np.array([0.2, 0.1, 0.4])
BETA = 0.05


def _data(seed=0):
    dense = np.random.default_rng(seed).poisson(0.7, size=(D, V)).astype(np.int32)
    m = sp.csr_matrix(dense)
    return vb.VBData(m.indptr.astype(np.int32), m.indices.astype(np.int32), m.data.astype(np.int32), V), dense


def _prior():
    b = np.full((V, K), BETA)
    b[SEEDS.words, SEEDS.topics] += SEEDS.counts
    return b


SEEDED = make_model(K, V, ALPHA, BETA, SEEDS)
PLAIN = make_model(K, V, ALPHA, BETA)


def test_batch_vb_m_step_is_prior_plus_sstats():
    data, _ = _data()
    rng = np.random.default_rng(1)
    lam0 = rng.gamma(2.0, 1.0, size=(V, K))
    gamma0 = vb.initial_gamma(data, ALPHA)
    sstats, _ = vb.e_step(data, vb.exp_elog_beta(lam0), ALPHA, gamma0.copy(), max_iter=100, tol=1e-3, collect=True)
    kernel = vb.build_batch_kernel()
    seeded, _ = kernel(rng, vb.BatchVBState(lam0.copy(), gamma0.copy()), data, SEEDED)
    np.testing.assert_allclose(seeded.lam_wk, _prior() + sstats, rtol=1e-12)
    plain, _ = kernel(rng, vb.BatchVBState(lam0.copy(), gamma0.copy()), data, PLAIN)
    assert np.abs(plain.lam_wk - seeded.lam_wk).max() > 1.0  # delta is what moved it


def test_elbo_topic_terms_with_asymmetric_prior():
    lam = np.random.default_rng(2).gamma(2.0, 1.0, size=(V, K))
    b = _prior()
    elog = digamma(lam) - digamma(lam.sum(axis=0))
    ref = (gammaln(b.sum(axis=0)) - gammaln(b).sum(axis=0) + ((b - 1) * elog).sum(axis=0)  # E log Dir(phi | b)
           - (gammaln(lam.sum(axis=0)) - gammaln(lam).sum(axis=0) + ((lam - 1) * elog).sum(axis=0))).sum()  # + H
    assert vb.elbo_global(lam, BETA, SEEDS) == pytest.approx(ref, rel=1e-12)
    assert vb.elbo_global(lam, BETA) != pytest.approx(ref, rel=1e-3)


def test_online_vb_step_is_the_convex_combination_with_the_seeded_target():
    data, _ = _data(3)
    rng = np.random.default_rng(4)
    lam0 = rng.gamma(2.0, 1.0, size=(V, K))
    total = 40
    kernel = vb.build_online_kernel(total_docs=total, tau0=1.0, kappa=0.7, return_gamma=True)
    # two steps: the second runs with c != 1 and b != 0, where delta must be scaled by 1/c
    state = vb.online_state_from_lambda(lam0.copy(), 0)
    lam = lam0.copy()
    for t in (1, 2):
        eb_rows = np.exp(digamma(lam) - digamma(lam.sum(axis=0)))
        sstats, _ = vb.e_step(data, eb_rows, ALPHA, vb.initial_gamma(data, ALPHA), max_iter=100, tol=1e-3,
                              collect=True)
        rho = vb.step_size(t, 1.0, 0.7)
        lam = (1 - rho) * lam + rho * (_prior() + total / D * sstats)
        state, _ = kernel(rng, state, data, SEEDED)
        np.testing.assert_allclose(vb.online_lambda(state), lam, rtol=1e-10)
        np.testing.assert_allclose(state.c * state.usum + V * state.b, lam.sum(axis=0), rtol=1e-10)


def _cvb0_twin(data, gamma, n_dk, n_wk, n_k, alpha, b):
    """CVB0 (Asuncion et al. eq. 7) with a prior matrix b: (n_wk + b_wk)(n_dk + alpha)/(n_k + sum_w b_wk)."""
    bsum = b.sum(axis=0)
    for d in range(data.n_docs):
        for j in range(data.indptr[d], data.indptr[d + 1]):
            w, c, old = data.indices[j], data.data[j], gamma[j].astype(np.float64)
            p = (n_wk[w] - old + b[w]) * (n_dk[d] - old + alpha) / (n_k - old + bsum)
            new = p / p.sum()
            n_dk[d] += c * (new - old)
            n_wk[w] += c * (new - old)
            n_k += c * (new - old)
            gamma[j] = new


def test_cvb0_sweep_with_asymmetric_prior():
    data, dense = _data(5)
    state = vb.cvb0_init(np.random.default_rng(6), data, SEEDED)
    plain_counts = vb.cvb0_state_from_gamma(data, state.gamma, K)
    # the state carries delta: n_wk = expected counts + delta, n_k = expected counts + Delta
    np.testing.assert_allclose(state.n_wk - plain_counts.n_wk, _prior() - BETA)
    np.testing.assert_allclose(state.n_k - plain_counts.n_k, SEEDS.topic_totals(K))
    g_ref = state.gamma.astype(np.float64)
    n_dk, n_wk, n_k = plain_counts.n_dk.copy(), plain_counts.n_wk.copy(), plain_counts.n_k.copy()
    _cvb0_twin(data, g_ref, n_dk, n_wk, n_k, ALPHA, _prior())
    ours, _ = vb.build_cvb0_kernel()(None, state, data, SEEDED)
    np.testing.assert_allclose(ours.gamma, g_ref, rtol=2e-6, atol=1e-6)  # gamma is float32
    np.testing.assert_allclose(ours.n_wk - (_prior() - BETA), n_wk, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ours.n_dk.sum(axis=1), dense.sum(axis=1), rtol=1e-5)
    theta, phi = vb.cvb0_theta_phi(ours, SEEDED)
    np.testing.assert_allclose(phi.T, (n_wk + _prior()) / (n_k + _prior().sum(axis=0)), rtol=1e-5)
