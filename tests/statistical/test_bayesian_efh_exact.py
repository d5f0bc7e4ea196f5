"""The Bayesian EFH samplers against the exact posterior of a GB-EFH small enough to enumerate.

Model: GB-EFH with M = 2 binary words and J = 1 Gaussian topic, so W is a 2-vector and its
posterior (seed 000 eq. 9) is computed by quadrature on a 2-D grid, with log Z(W) summed over the
4 visible states (written out here independently of the library). The prior mean is far enough
from 0 that the half-plane of the mirror mode at -W holds < 1e-4 of the mass.

* Gradient terms (eqs. 15-17) equal finite differences of the exact log posterior.
* Langevin (eq. 13, unadjusted, small eps) with the exact grad log Z, MALA with exact log Z, and
  random-walk MH with the exact Z ratio (eq. 11) and (slow tier) with the importance-sampling ratio
  (eq. 12, 2,000 exact draws of p(x | W') per step), and SGLD on mini-batches, match the posterior
  mean and second moment within 4 MCSE (split-chain ESS; alpha ~ 6e-5 per assertion), with split
  R-hat < 1.05. The eq. 12 identity itself matches enumeration; fed samples of the wrong model, it
  does not.
* Negative controls fail the same checks: Langevin with the log Z gradient sign-flipped or at half
  weight, SGLD and MALA with it at half weight, MH with the Z ratio dropped.
* Brief sampling (§3.2): its Monte Carlo mean equals the exact expectation under l steps of the
  x-chain (transition matrix by Gauss-Hermite quadrature over h); its bias against the exact
  gradient is non-zero at l = 1, bounded by 2 max|S| TV(P_0 K^l, p), and vanishes as l grows. A
  broken brief sampler (theta forgotten in the reconstructions) fails the first check.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from numpy.polynomial.hermite_e import hermegauss
from scipy.special import expit, logsumexp

from harmonium.evaluation.diagnostics import mcse_mean, rhat
from harmonium.inference.learning.empirical_bayes import initial_hyperparameters, m_step
from harmonium.inference.mcmc.bayesian_efh import langevin as bl
from harmonium.inference.mcmc.bayesian_efh import mh as befh_mh
from harmonium.models.undirected import bayesian_efh as befh
from harmonium.models.undirected.variants import gb_efh

Z_TOL = 4.0
STATES = np.array(list(itertools.product([0.0, 1.0], repeat=2)))
THETA = np.array([-0.3, 0.2])
PRIOR_MEAN, PRIOR_SCALE = 0.8, 0.3


def _tiny():
    m = gb_efh(2, 1, dtype=np.float64)
    m.params["v:0:bias"] = THETA.copy()
    m.params["W:0"] = np.array([[0.9], [0.6]])
    rng = np.random.default_rng(5)
    _, p, _ = befh.visible_distribution(m)
    X = STATES[rng.choice(4, size=20, p=p)]
    return m, X


def _log_post(W, X):
    """Exact log p(W | X) + const for W of shape (..., 2)."""
    W = np.asarray(W, dtype=np.float64)
    proj = np.einsum("si,...i->s...", STATES, W)
    log_z = logsumexp((STATES @ THETA).reshape((4,) + (1,) * (W.ndim - 1)) + 0.5 * proj**2, axis=0)
    xw = np.einsum("ni,...i->n...", X, W)
    ll = (X @ THETA).sum() + 0.5 * (xw**2).sum(axis=0) - X.shape[0] * log_z
    lp = -0.5 * (((W - PRIOR_MEAN) / PRIOR_SCALE) ** 2).sum(axis=-1)
    return ll + lp


@pytest.fixture(scope="module")
def exact():
    m, X = _tiny()
    g = np.linspace(-2.5, 3.5, 601)
    A, B = np.meshgrid(g, g, indexing="ij")
    L = _log_post(np.stack([A, B], axis=-1), X)
    w = np.exp(L - L.max())
    w /= w.sum()
    mirror = w[(A + B) < 0].sum()
    assert mirror < 1e-4  # the half-plane of the mirror mode: negligible next to the MCSE (~1e-2)
    assert w[0, :].sum() + w[-1, :].sum() + w[:, 0].sum() + w[:, -1].sum() < 1e-12  # grid covers the mass
    mean = np.array([(w * A).sum(), (w * B).sum()])
    second = np.array([(w * A * A).sum(), (w * B * B).sum()])
    return m, X, mean, second


def _prior():
    return befh.GaussianColumnPrior(2, PRIOR_MEAN, PRIOR_SCALE)


def _zscores(draws, mean, second):
    """z-scores of the mean and second moment; inf when the chains are not finite or not mixed
    (split R-hat >= 1.05): a chain that ran away has a huge MCSE that would hide its error."""
    if not np.isfinite(draws).all() or np.max(rhat(draws)) >= 1.05:
        return np.full(4, np.inf)
    z1 = (draws.mean(axis=(0, 1)) - mean) / mcse_mean(draws)
    z2 = ((draws**2).mean(axis=(0, 1)) - second) / mcse_mean(draws**2)
    return np.concatenate([z1, z2])


def _run_langevin(m, X, cfg, n_draws, seed, thin=2):
    res = bl.sample_posterior(np.random.default_rng(seed), m, X, [_prior()], cfg, n_chains=4, n_warmup=300,
                              n_samples=n_draws, thin=thin)
    return res


def test_gradient_terms_match_finite_differences(exact):
    m, X, _, _ = exact
    target_W = np.array([0.7, 0.4])
    model = befh.posterior_model(m)
    befh.set_couplings(model, target_W)
    g = (_prior().grad_log_density(target_W[:, None]).ravel()
         + befh.grad_log_unnormalized_likelihood(model, X)
         - X.shape[0] * befh.grad_log_partition_exact(model)[0])
    h = 1e-6
    fd = np.array([(_log_post(target_W + h * e, X) - _log_post(target_W - h * e, X)) / (2 * h) for e in np.eye(2)])
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-6)
    # eq. 16 for GB-EFH is X^T X W
    np.testing.assert_allclose(befh.grad_log_unnormalized_likelihood(model, X), X.T @ X @ target_W, rtol=1e-12)


def test_langevin_exact_gradient_matches_posterior(exact):
    m, X, mean, second = exact
    res = _run_langevin(m, X, bl.LangevinConfig(step_size=0.06, gradient="exact"), 1500, 11, thin=3)
    z = _zscores(res.draws, mean, second)
    assert np.all(np.abs(z) < Z_TOL), z


@pytest.mark.parametrize("sign", [-1.0, 0.5])
def test_langevin_negative_control_log_partition_gradient(exact, sign):
    m, X, mean, second = exact
    res = _run_langevin(m, X, bl.LangevinConfig(step_size=0.06, gradient="exact", log_partition_sign=sign), 300, 11)
    z = _zscores(res.draws, mean, second)
    assert not np.all(np.abs(z) < Z_TOL), z


@pytest.mark.parametrize("sign,ok", [(1.0, True), (0.5, False)])
def test_sgld_minibatch_matches_posterior(exact, sign, ok):
    """SGLD (mini-batches of 10 of the 20 rows, gradient scaled by N / n, exact grad log Z, constant
    small step) matches the posterior within MCSE; with the log Z gradient at half weight it does not."""
    m, X, mean, second = exact
    cfg = bl.LangevinConfig(step_size=0.05, gradient="exact", batch_size=10, log_partition_sign=sign)
    res = _run_langevin(m, X, cfg, 1500 if ok else 300, 14, thin=3)
    z = _zscores(res.draws, mean, second)
    assert np.all(np.abs(z) < Z_TOL) == ok, z


def test_mala_exact_matches_posterior(exact):
    m, X, mean, second = exact
    res = _run_langevin(m, X, bl.LangevinConfig(step_size=0.25, gradient="exact", adjust="exact"), 1200, 12)
    assert 0.4 < res.acceptance.mean() < 0.95
    z = _zscores(res.draws, mean, second)
    assert np.all(np.abs(z) < Z_TOL), z


def test_mala_negative_control_drops_log_partition(exact):
    m, X, mean, second = exact
    cfg = bl.LangevinConfig(step_size=0.25, gradient="exact", adjust="exact", log_partition_sign=0.5)
    res = _run_langevin(m, X, cfg, 400, 12)
    z = _zscores(res.draws, mean, second)
    assert not np.all(np.abs(z) < Z_TOL), z


def _run_mh(m, X, ratio, n_steps, seed, **kw):
    rng = np.random.default_rng(seed)
    kernel = befh_mh.build_kernel(m, X, [_prior()], scale=0.3, ratio=ratio, **kw)
    draws = np.empty((4, n_steps, 2))
    for c, crng in enumerate(rng.spawn(4)):
        st = befh_mh.init(m, X, [_prior()], np.array([0.8, 0.5]) + 0.2 * crng.standard_normal(2),
                          ratio=ratio)
        for t in range(300 + 2 * n_steps):
            st, _ = kernel(crng, st)
            if t >= 300 and (t - 300) % 2 == 0:
                draws[c, (t - 300) // 2] = st.position
    return draws


def test_importance_sampling_ratio_identity(exact):
    """Eq. 12 with exact draws of p(x | W') against the enumerated log Z(W) - log Z(W'), within 4 SE;
    the swapped identity (samples of p(x | W) used as if from W') fails it."""
    m, _, _, _ = exact
    model = befh.posterior_model(m)
    W, W1 = np.array([[0.7], [0.4]]), np.array([[0.9], [0.1]])
    model.params["W:0"] = W
    log_z = befh.visible_distribution(model)[2]
    xs_w = bl.exact_visible_sampler(np.random.default_rng(7), model, 20_000)
    model.params["W:0"] = W1
    log_z1 = befh.visible_distribution(model)[2]
    xs_w1 = bl.exact_visible_sampler(np.random.default_rng(8), model, 20_000)
    est, se = bl.log_partition_ratio_is(model, {"W:0": W}, xs_w1)
    assert abs(est - (log_z - log_z1)) < Z_TOL * se
    np.testing.assert_array_equal(model.params["W:0"], W1)
    bad, bad_se = bl.log_partition_ratio_is(model, {"W:0": W}, xs_w)
    assert abs(bad - (log_z - log_z1)) > Z_TOL * bad_se


def test_first_order_ratio_is_second_order_accurate(exact):
    """Eq. 20 (log Z(W) - log Z(W') ~ (W - W') . grad log Z(W'), exact gradient): the error shrinks
    like |W - W'|^2 (x ~1/4 when the step halves); with the sign of the expansion flipped it does not."""
    m, _, _, _ = exact
    model = befh.posterior_model(m)
    W = np.array([0.7, 0.4])
    d = np.array([0.3, -0.2])

    def log_z(q):
        befh.set_couplings(model, q)
        return befh.visible_distribution(model)[2]

    errs, bad = [], []
    for h in (0.1, 0.05, 0.025):
        est = befh_mh.log_z_ratio(None, model, W, W + h * d, ratio="first_order", sampler=bl.exact_visible_sampler)
        truth = log_z(W) - log_z(W + h * d)
        errs.append(abs(est - truth))
        bad.append(abs(-est - truth))
    assert 3.0 < errs[0] / errs[1] < 5.0 and 3.0 < errs[1] / errs[2] < 5.0
    assert bad[0] / bad[1] < 2.5


def test_mh_exact_partition_ratio_matches_posterior(exact):
    m, X, mean, second = exact
    z = _zscores(_run_mh(m, X, "exact", 1500, 13), mean, second)
    assert np.all(np.abs(z) < Z_TOL), z


@pytest.mark.slow
def test_mh_importance_sampling_ratio_approaches_posterior(exact):
    """Eq. 12 with exact draws of p(x | W'): a noisy ratio in the MH acceptance is not exactly
    invariant (Murray & Ghahramani 2004), but with 2,000 draws per step its error is below the MCSE."""
    m, X, mean, second = exact
    z = _zscores(_run_mh(m, X, "is", 1500, 13, n_is_samples=2_000, sampler=bl.exact_visible_sampler), mean, second)
    assert np.all(np.abs(z) < Z_TOL), z


def test_mh_negative_control_ignores_partition_ratio(exact):
    m, X, mean, second = exact
    z = _zscores(_run_mh(m, X, "ignore", 400, 13), mean, second)
    assert not np.all(np.abs(z) < Z_TOL), z


# -- brief sampling ----------------------------------------------------------------------------
def _x_chain(W, n_nodes=80):
    """K[x, x'] = int N(h; x^T W, 1) prod_i Bern(x'_i | sigmoid(theta_i + W_i h)) dh (Gauss-Hermite)."""
    z, wts = hermegauss(n_nodes)
    wts = wts / wts.sum()
    K = np.zeros((4, 4))
    for a, x in enumerate(STATES):
        h = x @ W + z
        p1 = expit(THETA[None, :] + h[:, None] * W[None, :])
        for b, x1 in enumerate(STATES):
            K[a, b] = (wts * np.prod(np.where(x1 == 1, p1, 1 - p1), axis=1)).sum()
    return K


def _stats(W):
    return STATES * (STATES @ W)[:, None]  # S_W(x) = x x^T W, one row per state


def _brief_expectation(W, X, ell):
    K = np.linalg.matrix_power(_x_chain(W), ell)
    idx = (X @ np.array([2, 1])).astype(int)
    p0 = K[idx].mean(axis=0)
    return p0 @ _stats(W), p0


@pytest.fixture(scope="module")
def brief_setup():
    m, X = _tiny()
    W = np.array([0.3, -0.2])  # far from the W that generated X: brief sampling is biased here
    model = befh.posterior_model(m)
    befh.set_couplings(model, W)
    logp = STATES @ THETA + 0.5 * (STATES @ W) ** 2
    p = np.exp(logp - logsumexp(logp))
    return model, X, W, p


def _mc_brief(model, X, ell, n_rep, seed, broken=False):
    """Replicates of the brief-sampling estimate; ``broken`` forgets theta in the reconstructions."""
    rng = np.random.default_rng(seed)
    out = np.empty((n_rep, 2))
    sampler = model
    if broken:
        sampler = model.copy()
        sampler.params["v:0:bias"] = np.zeros(2)
    for r in range(n_rep):
        _, xs = befh.grad_log_partition_brief(rng, sampler, X, ell, return_samples=True)
        out[r] = befh.grad_log_unnormalized_likelihood(model, xs) / X.shape[0]
    return out


@pytest.mark.parametrize("ell", [1, 3])
def test_brief_sampling_matches_its_exact_expectation(brief_setup, ell):
    model, X, W, _ = brief_setup
    expect, _ = _brief_expectation(W, X, ell)
    mc = _mc_brief(model, X, ell, 3000, 20 + ell)
    z = (mc.mean(axis=0) - expect) / (mc.std(axis=0, ddof=1) / np.sqrt(mc.shape[0]))
    assert np.all(np.abs(z) < Z_TOL), z


def test_brief_sampling_negative_control_without_gibbs_step(brief_setup):
    model, X, W, _ = brief_setup
    expect, _ = _brief_expectation(W, X, 1)
    mc = _mc_brief(model, X, 1, 3000, 21, broken=True)
    z = (mc.mean(axis=0) - expect) / (mc.std(axis=0, ddof=1) / np.sqrt(mc.shape[0]))
    assert not np.all(np.abs(z) < Z_TOL), z


def test_brief_sampling_bias_is_shown_and_bounded(brief_setup):
    _, X, W, p = brief_setup
    exact_grad = p @ _stats(W)
    s_max = np.abs(_stats(W)).max()
    biases = []
    for ell in (1, 2, 5, 20, 200):
        expect, p_l = _brief_expectation(W, X, ell)
        bias = np.abs(expect - exact_grad)
        tv = 0.5 * np.abs(p_l - p).sum()
        assert np.all(bias <= 2 * s_max * tv + 1e-12)
        biases.append(bias.max())
    assert biases[0] > 1e-3  # brief sampling with l = 1 is biased away from the data's model ...
    assert biases[-1] < 1e-9  # ... and the bias vanishes as the x-chain mixes
    assert biases[2] < biases[0]


# -- empirical Bayes ---------------------------------------------------------------------------
def test_em_m_step_and_initialisation_equations():
    rng = np.random.default_rng(3)
    W = rng.normal(size=(7, 5, 3))  # K, M, J
    mu, sigma = m_step(W)
    flat = np.concatenate([W[k] for k in range(7)], axis=1)  # M x (J K)
    np.testing.assert_allclose(mu, flat.mean(axis=1))
    np.testing.assert_allclose(sigma, flat.std(axis=1, ddof=1))
    mu0, s0 = initial_hyperparameters(W[0])
    np.testing.assert_allclose(mu0, W[0].mean(axis=1))
    np.testing.assert_allclose(s0, W[0].std(axis=1, ddof=1))
    assert np.all(m_step(W * 0.0, min_scale=0.05)[1] == 0.05)


def test_em_m_step_with_a_known_mean():
    """fit_mean=False's M-step: mu unchanged, sigma the ML scale about it (divisor JK, not JK - 1)."""
    rng = np.random.default_rng(3)
    W = rng.normal(2.0, 1.0, size=(7, 5, 3))  # K, M, J
    mu, sigma = m_step(W, mean=0.0)
    flat = np.concatenate([W[k] for k in range(7)], axis=1)  # M x (J K)
    np.testing.assert_array_equal(mu, np.zeros(5))
    np.testing.assert_allclose(sigma, np.sqrt((flat**2).mean(axis=1)))
    assert np.all(sigma > m_step(W)[1])  # the spread about 0 includes the offset 2 that eq. 25 removes


def test_em_fit_mean_false_holds_mu_and_validates():
    from harmonium.errors import InvalidParameterError
    from harmonium.inference.learning.empirical_bayes import monte_carlo_em

    rng = np.random.default_rng(9)
    X = (rng.random((50, 3)) < 0.7).astype(float)
    m = gb_efh(3, 2, dtype=np.float64)
    m.params["W:0"] = 0.5 + 0.01 * rng.standard_normal((3, 2))  # row means 0.5: eq. 26 would start mu there
    res = monte_carlo_em(rng, m, X, bl.LangevinConfig(step_size=0.01), n_em_iter=2, n_chains=1, n_warmup=5,
                         n_samples=3, thin=1, init_scales=[np.full(3, 0.2)], fit_mean=False)
    assert all(np.all(h[0][0] == 0.0) for h in res.history)
    assert np.all(res.scales[0] > 0.1)  # the spread about 0 of couplings near 0.5
    with pytest.raises(InvalidParameterError, match="'fit_mean' must be True or False"):
        monte_carlo_em(rng, m, X, bl.LangevinConfig(step_size=0.01), n_em_iter=1, fit_mean="no")


def test_em_theta_step_moves_towards_the_data_rates():
    """ML of theta inside MC-EM (theta_steps): with couplings near 0, theta_i moves towards logit(mean x_i)."""
    from harmonium.inference.learning.empirical_bayes import monte_carlo_em

    rng = np.random.default_rng(9)
    X = (rng.random((200, 2)) < np.array([0.9, 0.2])).astype(float)
    m = gb_efh(2, 2, dtype=np.float64)
    m.params["W:0"] = 0.01 * rng.standard_normal((2, 2))
    res = monte_carlo_em(rng, m, X, bl.LangevinConfig(step_size=0.005), n_em_iter=2, n_chains=1, n_warmup=5,
                         n_samples=3, thin=1, init_means=[np.zeros(2)], init_scales=[np.full(2, 0.01)],
                         theta_steps=20, theta_learning_rate=0.5)
    theta = res.theta["v:0:bias"]
    assert theta[0] > 1.0 and theta[1] < -0.7  # logit(0.9) = 2.2, logit(0.2) = -1.4, from 0


def test_full_covariance_prior_matches_scipy():
    from scipy.stats import multivariate_normal

    rng = np.random.default_rng(4)
    A = rng.normal(size=(3, 3))
    cov = A @ A.T + 0.5 * np.eye(3)
    mu = rng.normal(size=3)
    prior = befh.GaussianColumnPrior(3, mu, covariance=cov)
    W = rng.normal(size=(3, 2))
    ref = sum(multivariate_normal(mu, cov).logpdf(W[:, j]) for j in range(2))
    assert prior.log_density(W) == pytest.approx(ref, rel=1e-10)
    h = 1e-6
    fd = np.array([(prior.log_density(W + h * E) - prior.log_density(W - h * E)) / (2 * h)
                   for E in np.eye(6).reshape(6, 3, 2)]).reshape(3, 2)
    np.testing.assert_allclose(prior.grad_log_density(W), fd, rtol=1e-5, atol=1e-6)
