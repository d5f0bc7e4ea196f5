"""Exactness of the naive (uncollapsed) Gibbs sampler for LDA on an enumerable posterior.

The tiny model of ``_lda_tiny`` (2 docs x 3 tokens, K = 2) has an enumerable
p(z | w) = pi, and given z the posterior of (Theta, B) is a product of
Dirichlets. Chains are started from exact draws of p(z, Theta, B | w); if the
scan leaves that posterior invariant, the states after one and after two
scans are again exact draws:

1. the z histograms after scan 1 and after scan 2 pass a chi-square test
   against pi (scan 1 tests step z | Theta, B; scan 2 also depends on the
   kernel's own Theta and B draws);
2. the means of Theta and B after scan 1 equal the exact posterior means
   (enumerated, with exact posterior variances) within 4.5 standard errors.

Negative controls: z drawn without the theta factor fails (1) after one scan;
Theta drawn from Dir(n_d.) without +alpha fails (2) and (1) after two scans.

The chains run in a compiled loop that calls the kernel's own compiled scan
(:func:`harmonium._kernels.lda_naive.naive_scan`, which ``build_kernel``'s
kernel calls; identity of the two is checked in
tests/kernels/test_lda_naive_parity.py), because 200k Python-level kernel
calls would take ~10 s a run.

Suite budget: alpha = 1e-4 for each chi-square; 4.5 standard errors
(two-sided p ~ 7e-6) for each mean; fixed seed, no retries.
"""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit
from scipy import stats
from scipy.special import gammaln

from harmonium._kernels import lda_naive
from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs
from harmonium.inference.mcmc.lda import naive_gibbs as ngs

from ._lda_tiny import MODEL, STATES, TOKENS, exact_posterior, state_index

ALPHA = 1e-4
N_SE = 4.5
N_CHAINS = 200_000
SEED = 20261122
K = MODEL.n_topics
V = MODEL.n_words
D = TOKENS.doc_ptr.shape[0] - 1

# count tables of every enumerated state, stacked: (S, D, K), (S, V, K), (S, K)
_COUNTS = [cgs.state_from_assignments(TOKENS, MODEL, z) for z in STATES]
STATE_NDK = np.stack([c.n_dk for c in _COUNTS])
STATE_NWK = np.stack([c.n_wk for c in _COUNTS])
STATE_NK = np.stack([c.n_k for c in _COUNTS])


@njit
def _run_chains(rng, scan, doc_ptr, words, starts, states, s_ndk, s_nwk, s_nk, theta0, phi0, alpha, beta, n_scans):
    """Run every chain n_scans scans; histogram of z after each scan, Theta / B sums after scan 1."""
    n_states = states.shape[0]
    n_tok = states.shape[1]
    K = alpha.shape[0]
    hist = np.zeros((n_scans, n_states), dtype=np.int64)
    theta_sum = np.zeros(theta0.shape[1:])
    phi_sum = np.zeros(phi0.shape[1:])
    p, colmax, colsum = np.empty(K), np.empty(K), np.empty(K)
    for c in range(starts.shape[0]):
        s = starts[c]
        z = states[s].copy()
        n_dk, n_wk, n_k = s_ndk[s].copy(), s_nwk[s].copy(), s_nk[s].copy()
        theta, phi = theta0[c].copy(), phi0[c].copy()
        for t in range(n_scans):
            scan(rng, doc_ptr, words, z, n_dk, n_wk, n_k, theta, phi, alpha, beta, p, colmax, colsum)
            idx = 0
            for j in range(n_tok):
                idx = idx * K + z[j]
            hist[t, idx] += 1
            if t == 0:
                theta_sum += theta
                phi_sum += phi
    return hist, theta_sum, phi_sum


def _dirichlet_rows(rng, shape):
    g = rng.standard_gamma(shape)
    return g / g.sum(axis=-1, keepdims=True)


def exact_starts(rng, pi, n_chains):
    """(starts, theta0, phi0): z ~ pi, then Theta, B ~ p(Theta, B | z, w) (numpy's own Gamma draws)."""
    starts = rng.choice(STATES.shape[0], size=n_chains, p=pi)
    theta0 = _dirichlet_rows(rng, STATE_NDK[starts] + MODEL.alpha)  # (C, D, K)
    phi_kv = _dirichlet_rows(rng, np.swapaxes(STATE_NWK[starts], 1, 2) + MODEL.beta)  # (C, K, V)
    return starts, theta0, np.ascontiguousarray(np.swapaxes(phi_kv, 1, 2))


def run(scan, n_scans, n_chains=N_CHAINS, seed=SEED):
    pi = exact_posterior()
    rng = np.random.default_rng(seed)
    starts, theta0, phi0 = exact_starts(rng, pi, n_chains)
    return _run_chains(rng, scan, TOKENS.doc_ptr, TOKENS.words, starts, STATES, STATE_NDK, STATE_NWK,
                       STATE_NK, theta0, phi0, MODEL.alpha, MODEL.beta, n_scans)


def exact_moments(pi):
    """Posterior means and variances of Theta (D, K) and phi_wk (V, K), by enumeration over z."""
    a = STATE_NDK + MODEL.alpha  # (S, D, K)
    A = a.sum(axis=2, keepdims=True)
    b = STATE_NWK + MODEL.beta  # (S, V, K)
    B = b.sum(axis=1, keepdims=True)
    out = []
    for x, tot in ((a, A), (b, B)):
        m1 = np.tensordot(pi, x / tot, axes=1)
        m2 = np.tensordot(pi, x * (x + 1) / (tot * (tot + 1)), axes=1)
        out.append((m1, m2 - m1**2))
    return out


# --- deliberately broken scans (negative controls) ---------------------------------------------


@njit
def scan_z_without_theta(rng, doc_ptr, words, z, n_dk, n_wk, n_k, theta, phi_wk, alpha, beta, p, colmax, colsum):
    """Bug: z_i drawn from phi_kw alone (the theta_dk factor is missing)."""
    n_docs = doc_ptr.shape[0] - 1
    ones = np.ones_like(theta)
    n = lda_naive.sweep_z(rng, doc_ptr, words, z, n_dk, n_wk, n_k, ones, phi_wk, p, 0, n_docs)
    lda_naive.draw_theta(rng, n_dk, alpha, theta, 0, n_docs)
    lda_naive.draw_phi(rng, n_wk, beta, phi_wk, colmax, colsum)
    return n


@njit
def scan_theta_without_alpha(rng, doc_ptr, words, z, n_dk, n_wk, n_k, theta, phi_wk, alpha, beta, p, colmax,
                             colsum):
    """Bug: theta_d drawn from Dir(n_d.) (the +alpha is missing; 1e-8 keeps the shapes positive)."""
    no_alpha = np.full_like(alpha, 1e-8)
    return lda_naive.naive_scan(rng, doc_ptr, words, z, n_dk, n_wk, n_k, theta, phi_wk, no_alpha, beta, p, colmax,
                                colsum)


# --- tests -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pi():
    return exact_posterior()


@pytest.fixture(scope="module")
def good_run():
    return run(lda_naive.naive_scan, n_scans=2)


def _chi2_pvalue(hist, pi):
    return stats.chisquare(hist, pi * hist.sum()).pvalue


def _mean_z_scores(theta_sum, phi_sum, pi, n_chains=N_CHAINS):
    (m_t, v_t), (m_p, v_p) = exact_moments(pi)
    z_t = (theta_sum / n_chains - m_t) / np.sqrt(v_t / n_chains)
    z_p = (phi_sum / n_chains - m_p) / np.sqrt(v_p / n_chains)
    return z_t, z_p


def test_z_conditional_is_the_exact_conditional(pi):
    # p(z | Theta, B, w) ∝ prod_i theta_{d_i z_i} phi_{w_i z_i}, enumerated over all 64 states
    rng = np.random.default_rng(3)
    doc_of = np.repeat(np.arange(D), np.diff(TOKENS.doc_ptr))
    for _ in range(3):
        st = ngs.state_from_assignments(TOKENS, MODEL, STATES[17], rng=rng)
        logp = np.array([np.log(st.theta[doc_of, z]).sum() + np.log(st.phi_wk[TOKENS.words, z]).sum()
                         for z in STATES])
        joint = np.exp(logp - logp.max())
        for s in (0, 17, 40):
            z = STATES[s]
            st_s = st._replace(z=z)
            for i in range(len(z)):
                q = ngs.z_conditional(st_s, TOKENS, MODEL, i)
                row = []
                for k in range(K):
                    z2 = z.copy()
                    z2[i] = k
                    row.append(joint[state_index(z2)])
                np.testing.assert_allclose(q, np.array(row) / sum(row), rtol=1e-12)


def _log_dirichlet(x, a):
    return gammaln(a.sum()) - gammaln(a).sum() + ((a - 1) * np.log(x)).sum()


def test_theta_and_phi_conditionals_match_the_complete_log_joint():
    # log p(w, z, Theta, B) - log Dir(theta_d | conditional) does not depend on theta_d (same for phi_k)
    rng = np.random.default_rng(4)
    st = ngs.state_from_assignments(TOKENS, MODEL, STATES[45], rng=rng)
    diffs_t, diffs_p = [], []
    for _ in range(4):
        th = st.theta.copy()
        th[1] = rng.dirichlet(np.ones(K))
        s2 = st._replace(theta=th)
        lj = ngs.complete_log_joint(s2, TOKENS, MODEL)
        diffs_t.append(lj - _log_dirichlet(th[1], ngs.theta_conditional(s2, MODEL, 1)))
        ph = st.phi_wk.copy()
        ph[:, 0] = rng.dirichlet(np.ones(V))
        s3 = st._replace(phi_wk=ph)
        lj = ngs.complete_log_joint(s3, TOKENS, MODEL)
        diffs_p.append(lj - _log_dirichlet(ph[:, 0], ngs.phi_conditional(s3, MODEL, 0)))
    np.testing.assert_allclose(diffs_t, diffs_t[0], rtol=1e-10)
    np.testing.assert_allclose(diffs_p, diffs_p[0], rtol=1e-10)


def test_exact_starts_have_the_exact_moments(pi):
    # checks the test's own start sampler against the enumerated moments
    rng = np.random.default_rng(SEED + 1)
    _, theta0, phi0 = exact_starts(rng, pi, N_CHAINS)
    z_t, z_p = _mean_z_scores(theta0.sum(axis=0), phi0.sum(axis=0), pi)
    assert np.abs(z_t).max() < N_SE and np.abs(z_p).max() < N_SE


def test_z_after_one_scan_has_posterior_frequencies(pi, good_run):
    assert (pi * N_CHAINS).min() >= 5  # chi-square validity
    hist, _, _ = good_run
    assert _chi2_pvalue(hist[0], pi) > ALPHA


def test_z_after_two_scans_has_posterior_frequencies(pi, good_run):
    hist, _, _ = good_run
    assert _chi2_pvalue(hist[1], pi) > ALPHA


def test_theta_and_phi_after_one_scan_have_posterior_means(pi, good_run):
    _, theta_sum, phi_sum = good_run
    z_t, z_p = _mean_z_scores(theta_sum, phi_sum, pi)
    assert np.abs(z_t).max() < N_SE, z_t
    assert np.abs(z_p).max() < N_SE, z_p


def test_negative_control_z_without_theta_fails_chi_square(pi):
    hist, _, _ = run(scan_z_without_theta, n_scans=1)
    assert _chi2_pvalue(hist[0], pi) < ALPHA


def test_negative_control_theta_without_alpha_fails(pi):
    hist, theta_sum, phi_sum = run(scan_theta_without_alpha, n_scans=2)
    z_t, _ = _mean_z_scores(theta_sum, phi_sum, pi)
    assert np.abs(z_t).max() > N_SE
    assert _chi2_pvalue(hist[1], pi) < ALPHA


# --- the Dirichlet / Gamma construction itself -------------------------------------------------


@pytest.mark.parametrize("a", [1e-3, 0.3, 2.5])
def test_log_gamma_variate_has_the_log_gamma_law(a):
    # log G_a with G_a ~ Gamma(a): scipy's loggamma(c=a); a = 1e-3 is where G_a itself underflows
    rng = np.random.default_rng(77)
    x = np.array([lda_naive.log_gamma_variate(rng, a) for _ in range(20_000)])
    assert np.isfinite(x).all()
    assert stats.kstest(x, stats.loggamma(a).cdf).pvalue > ALPHA


def test_draw_theta_marginals_are_beta():
    # theta_d ~ Dir(alpha) (zero counts): theta_dk ~ Beta(alpha_k, sum alpha - alpha_k)
    alpha = np.array([0.05, 0.4, 1.7])
    n_dk = np.zeros((20_000, 3), dtype=np.int32)
    theta = np.empty((20_000, 3))
    lda_naive.draw_theta(np.random.default_rng(78), n_dk, alpha, theta, 0, 20_000)
    np.testing.assert_allclose(theta.sum(axis=1), 1.0, rtol=1e-12)
    for k in (0, 2):
        assert stats.kstest(theta[:, k], stats.beta(alpha[k], alpha.sum() - alpha[k]).cdf).pvalue > ALPHA
