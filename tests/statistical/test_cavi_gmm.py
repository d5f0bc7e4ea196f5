"""The Bayesian Gaussian mixture on the generic CAVI engine against Bishop's VB-GMM (PRML sec. 10.2).

The reference is written from PRML alone, in Bishop's parameters
(alpha_k, beta_k, m_k, W_k, nu_k): the E-step eqs. 10.46, 10.49, 10.64-10.66,
the M-step eqs. 10.51-10.53, 10.58, 10.60-10.63 and the lower bound
eqs. 10.70-10.77. Engine and reference start from the same arbitrary
variational parameters and run a few sweeps (E-step then M-step); every
parameter must agree to 1e-8. Negative controls: a dropped prior and an E-step
fed E[pi] instead of E[log pi] must fail the parity check; responsibilities
that forget 1/2 E[ln|Lambda_k|] (eq. 10.64) must fail the "ELBO never
decreases" check.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.special import digamma, gammaln, logsumexp

from harmonium.expfam.categorical import Categorical
from harmonium.expfam.dirichlet import Dirichlet
from harmonium.expfam.mvn import MultivariateGaussian
from harmonium.expfam.niw import NormalInverseWishart
from harmonium.inference.vi import cavi
from harmonium.models.mixture import PI, THETA, Z, bayesian_gaussian_mixture, gaussian_mixture_estimates

K, DIM = 3, 2
CENTERS = np.array([[0.0, 0.0], [6.0, 1.0], [1.0, 7.0]])


def blobs(seed: int, n_per: int = 60, scale: float = 1.0):
    rng = np.random.default_rng(seed)
    X = np.concatenate([rng.normal(c, scale, size=(n_per, DIM)) for c in CENTERS])
    labels = np.repeat(np.arange(len(CENTERS)), n_per)
    perm = rng.permutation(X.shape[0])
    return X[perm], labels[perm]


# -- the hand-written reference (Bishop PRML sec. 10.2) -----------------------------------


class Prior(dict):
    """alpha0, beta0, m0, W0, nu0."""


def prior_of(X):
    """The defaults of ``bayesian_gaussian_mixture`` in Bishop's names."""
    return Prior(alpha0=1.0 / K, beta0=1.0, m0=X.mean(axis=0), W0=np.linalg.inv(np.cov(X.T)), nu0=float(DIM))


def e_log_det_lambda(W, nu):
    """E[ln |Lambda_k|], eq. 10.65."""
    i = np.arange(1, DIM + 1)
    return digamma((nu[:, None] + 1 - i) / 2).sum(axis=1) + DIM * np.log(2) + np.linalg.slogdet(W)[1]


def ref_e_step(X, alpha, beta, m, W, nu):
    """Responsibilities r_nk, eqs. 10.46, 10.49 and 10.64-10.66."""
    e_log_pi = digamma(alpha) - digamma(alpha.sum())
    diff = X[:, None, :] - m[None, :, :]  # (n, K, D)
    quad = DIM / beta[None, :] + nu[None, :] * np.einsum("nki,kij,nkj->nk", diff, W, diff)
    log_rho = e_log_pi + 0.5 * e_log_det_lambda(W, nu) - 0.5 * DIM * np.log(2 * np.pi) - 0.5 * quad
    return np.exp(log_rho - logsumexp(log_rho, axis=1, keepdims=True))


def ref_stats(X, r):
    """N_k, xbar_k, S_k of eqs. 10.51-10.53."""
    Nk = r.sum(axis=0)
    xbar = (r.T @ X) / Nk[:, None]
    diff = X[:, None, :] - xbar[None, :, :]
    S = np.einsum("nk,nki,nkj->kij", r, diff, diff) / Nk[:, None, None]
    return Nk, xbar, S


def ref_m_step(X, r, p):
    """alpha_k, beta_k, m_k, W_k, nu_k: eqs. 10.58 and 10.60-10.63."""
    Nk, xbar, S = ref_stats(X, r)
    alpha = p["alpha0"] + Nk
    beta = p["beta0"] + Nk
    m = (p["beta0"] * p["m0"] + Nk[:, None] * xbar) / beta[:, None]
    d0 = xbar - p["m0"]
    W_inv = (np.linalg.inv(p["W0"]) + Nk[:, None, None] * S
             + (p["beta0"] * Nk / (p["beta0"] + Nk))[:, None, None] * np.einsum("ki,kj->kij", d0, d0))
    nu = p["nu0"] + Nk
    return alpha, beta, m, np.linalg.inv(W_inv), nu


def ln_B(W, nu):
    """ln B(W, nu) of the Wishart normaliser, eq. B.79."""
    nu = np.asarray(nu, dtype=np.float64)
    i = np.arange(1, DIM + 1)
    return (-0.5 * nu * np.linalg.slogdet(W)[1]
            - (0.5 * nu * DIM * np.log(2) + 0.25 * DIM * (DIM - 1) * np.log(np.pi)
               + gammaln((nu[..., None] + 1 - i) / 2).sum(axis=-1)))


def ln_C(alpha):
    return gammaln(alpha.sum()) - gammaln(alpha).sum()


def ref_elbo(X, r, alpha, beta, m, W, nu, p):
    """The lower bound, eqs. 10.70-10.77 (valid for any r and any q parameters)."""
    Nk, xbar, S = ref_stats(X, r)
    ln_lam = e_log_det_lambda(W, nu)
    ln_pi = digamma(alpha) - digamma(alpha.sum())
    dx = xbar - m
    trSW = np.einsum("kij,kji->k", S, W)
    e_lik = 0.5 * (Nk * (ln_lam - DIM / beta - nu * trSW - nu * np.einsum("ki,kij,kj->k", dx, W, dx)
                         - DIM * np.log(2 * np.pi))).sum()  # 10.71
    e_pz = (r * ln_pi).sum()  # 10.72
    e_ppi = ln_C(np.full(K, p["alpha0"])) + (p["alpha0"] - 1) * ln_pi.sum()  # 10.73
    dm = m - p["m0"]
    W0_inv = np.linalg.inv(p["W0"])
    e_pmulam = (0.5 * (DIM * np.log(p["beta0"] / (2 * np.pi)) + ln_lam - DIM * p["beta0"] / beta
                       - p["beta0"] * nu * np.einsum("ki,kij,kj->k", dm, W, dm)).sum()
                + K * ln_B(p["W0"], p["nu0"]) + 0.5 * (p["nu0"] - DIM - 1) * ln_lam.sum()
                - 0.5 * (nu * np.einsum("ij,kji->k", W0_inv, W)).sum())  # 10.74
    e_qz = (r * np.log(r)).sum()  # 10.75
    e_qpi = ((alpha - 1) * ln_pi).sum() + ln_C(alpha)  # 10.76
    h_lam = -ln_B(W, nu) - 0.5 * (nu - DIM - 1) * ln_lam + 0.5 * nu * DIM  # B.82
    e_qmulam = (0.5 * ln_lam + 0.5 * DIM * np.log(beta / (2 * np.pi)) - 0.5 * DIM - h_lam).sum()  # 10.77
    return e_lik + e_pz + e_ppi + e_pmulam - e_qz - e_qpi - e_qmulam


# -- engine <-> Bishop -----------------------------------------------------------------------


def to_state(r, alpha, beta, m, W, nu):
    niw = NormalInverseWishart(m, beta, nu, np.linalg.inv(W))
    return cavi.CAVIState({PI: Dirichlet(alpha).natural_params, THETA: niw.natural_params}, {Z: r})


def from_state(state, model):
    q = cavi.posteriors(state, model)
    niw = q[THETA]
    return q[Z].probs, q[PI].alpha, niw.kappa, niw.mu0, np.linalg.inv(niw.Psi), niw.nu


def start(seed: int):
    X, _ = blobs(seed)
    model = bayesian_gaussian_mixture(X, K)
    rng = np.random.default_rng(50 + seed)
    r = rng.dirichlet(np.ones(K), size=X.shape[0])
    alpha = rng.gamma(3.0, 10.0, size=K)
    beta = rng.gamma(3.0, 10.0, size=K)
    m = X[rng.choice(X.shape[0], K, replace=False)] + rng.normal(0, 0.5, size=(K, DIM))
    A = rng.normal(size=(K, DIM, DIM))
    W = 0.05 * (A @ np.swapaxes(A, 1, 2) + np.eye(DIM))
    nu = DIM + rng.gamma(3.0, 10.0, size=K)
    return X, model, (r, alpha, beta, m, W, nu)


def max_parity_error(seed: int, n_sweeps: int = 4) -> float:
    X, model, params = start(seed)
    p = prior_of(X)
    state = to_state(*params)
    data = cavi.prepare(model)
    kernel = cavi.build_kernel()
    worst = 0.0
    for _ in range(n_sweeps):
        state, _ = kernel(None, state, data, model)
        r = ref_e_step(X, *params[1:])
        params = (r, *ref_m_step(X, r, p))
        got = from_state(state, model)
        for name, a, b in zip(("r", "alpha", "beta", "m", "W", "nu"), got, params, strict=True):
            scale = 1.0 if name != "W" else 1.0 / np.abs(b).max()  # compare W relative to its size
            worst = max(worst, np.abs(a - b).max() * scale)
    return worst


def assert_elbo_never_decreases(trace, rtol=1e-9):
    trace = np.asarray(trace)
    drops = trace[:-1] - trace[1:]
    worst = int(np.argmax(drops))
    assert drops[worst] <= rtol * abs(trace[worst]), (
        f"ELBO decreased by {drops[worst]:.3g} at iteration {worst + 1} "
        f"({trace[worst]:.10g} -> {trace[worst + 1]:.10g})"
    )


def elbo_trace(seed: int, n_sweeps: int = 60, init_method: str = "random"):
    X, _ = blobs(seed, scale=2.0)  # overlapping clusters: a slow, long climb
    model = bayesian_gaussian_mixture(X, K + 1)
    data = cavi.prepare(model)
    state = cavi.init(np.random.default_rng(seed), model, data, method=init_method)
    kernel = cavi.build_kernel()
    trace = [cavi.elbo(state, data, model)]
    for _ in range(n_sweeps):
        state, info = kernel(None, state, data, model)
        trace.append(info.elbo)
    return trace


# -- tests --------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sweeps_match_bishop_vb_gmm(seed):
    assert max_parity_error(seed) <= 1e-8


@pytest.mark.parametrize("seed", [0, 1])
def test_elbo_matches_bishop_lower_bound(seed):
    X, model, params = start(seed)
    p = prior_of(X)
    data = cavi.prepare(model)
    state = to_state(*params)
    kernel = cavi.build_kernel()
    assert abs(cavi.elbo(state, data, model) - ref_elbo(X, *params, p)) <= 1e-8
    for _ in range(3):
        state, info = kernel(None, state, data, model)
        r, alpha, beta, m, W, nu = from_state(state, model)
        assert abs(info.elbo - ref_elbo(X, r, alpha, beta, m, W, nu, p)) <= 1e-8


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("init_method", ["random", "points"])
def test_elbo_never_decreases(seed, init_method):
    assert_elbo_never_decreases(elbo_trace(seed, init_method=init_method))


def test_recovers_well_separated_clusters():
    X, labels = blobs(4, n_per=80, scale=0.7)
    # weak priors (W0^-1 = 0.1 I, beta0 = 1e-3), so that E[Lambda_k]^-1 is close to the true 0.49 I
    model = bayesian_gaussian_mixture(X, K, covariance_prior=0.1 * np.eye(DIM), mean_precision=1e-3)
    res = cavi.fit_cavi(3, model, max_iter=500, tol=1e-10, n_init=5)
    assert res.converged
    weights, means, covs = gaussian_mixture_estimates(res.posteriors)
    order = [int(np.argmin(np.linalg.norm(means - c, axis=1))) for c in CENTERS]
    assert sorted(order) == list(range(K))
    np.testing.assert_allclose(means[order], CENTERS, atol=0.25)
    np.testing.assert_allclose(weights[order], 1 / 3, atol=0.02)
    np.testing.assert_allclose(covs[order], np.broadcast_to(0.49 * np.eye(DIM), (K, DIM, DIM)), atol=0.12)
    hard = res.posteriors[Z].probs.argmax(axis=1)
    assert np.mean(np.array(order)[labels] == hard) > 0.99


def test_elbo_is_a_lower_bound_on_the_enumerated_evidence():
    """log p(x) = logsumexp over all K^n assignments of log p(z) + sum_k log p(x_{z=k}) (conjugate marginals)."""
    rng = np.random.default_rng(8)
    X = np.concatenate([rng.normal([0, 0], 0.5, size=(4, DIM)), rng.normal([4, 4], 0.5, size=(4, DIM))])
    model = bayesian_gaussian_mixture(X, 2, weight_concentration=1.0)
    pi_prior, theta_prior = model[PI].prior, model[THETA].prior
    terms = []
    for z in itertools.product(range(2), repeat=X.shape[0]):
        z = np.array(z)
        log_pz = pi_prior.log_marginal_likelihood(Categorical.conjugate_stats(z, n_categories=2))
        stats = MultivariateGaussian.conjugate_stats(X, weights=np.eye(2)[z])
        terms.append(log_pz + theta_prior.log_marginal_likelihood(stats).sum()
                     + MultivariateGaussian.log_likelihood_base(X))
    log_evidence = logsumexp(terms)
    seen = []
    res = cavi.fit_cavi(0, model, max_iter=300, tol=1e-12, n_init=6,
                        callback=lambda it, st, info: seen.append(info.elbo))
    assert max(seen) <= log_evidence
    # the gap at the best optimum: log 2 for the two symmetric modes plus the mean-field gap
    assert log_evidence - res.elbo[-1] < np.log(2) + 2.5


def test_restarts_report_spread_and_return_the_best():
    X, _ = blobs(5, scale=1.6)
    res = cavi.fit_cavi(11, bayesian_gaussian_mixture(X, 5), max_iter=300, tol=1e-9, n_init=10)
    assert res.restart_elbos.shape == (10,) and res.restart_n_iter.shape == (10,)
    assert res.elbo_spread >= 0.0
    assert res.elbo_spread > 1e-3  # CAVI finds local optima (seed 004, the GMM restarts figure)
    assert res.restart_elbos[res.best_restart] == res.restart_elbos.max() == res.elbo[-1]
    # the same seed reproduces every restart
    again = cavi.fit_cavi(11, bayesian_gaussian_mixture(X, 5), max_iter=300, tol=1e-9, n_init=10)
    np.testing.assert_array_equal(again.restart_elbos, res.restart_elbos)


def test_agrees_with_scikit_learn_at_convergence():
    """A sanity check only: sklearn starts elsewhere, so compare fitted mixtures on clear clusters."""
    sklearn_mixture = pytest.importorskip("sklearn.mixture")
    X, _ = blobs(6, n_per=100, scale=0.8)
    res = cavi.fit_cavi(0, bayesian_gaussian_mixture(X, K), max_iter=1000, tol=1e-13, n_init=3)
    p = prior_of(X)
    sk = sklearn_mixture.BayesianGaussianMixture(
        n_components=K, weight_concentration_prior_type="dirichlet_distribution",
        weight_concentration_prior=p["alpha0"], mean_prior=p["m0"], mean_precision_prior=p["beta0"],
        degrees_of_freedom_prior=p["nu0"], covariance_prior=np.linalg.inv(p["W0"]), reg_covar=0.0,
        tol=1e-12, max_iter=2000, n_init=3, random_state=0,
    ).fit(X)
    weights, means, covs = gaussian_mixture_estimates(res.posteriors)
    order = [int(np.argmin(np.linalg.norm(means - mu, axis=1))) for mu in sk.means_]
    np.testing.assert_allclose(means[order], sk.means_, atol=1e-6)
    np.testing.assert_allclose(weights[order], sk.weights_, atol=1e-6)
    np.testing.assert_allclose(covs[order], sk.covariances_, atol=1e-6)
    np.testing.assert_allclose(res.posteriors[THETA].nu[order], sk.degrees_of_freedom_, atol=1e-6)


# -- negative controls ------------------------------------------------------------------


def _drop_prior(prior, message):
    """Broken M-step: the posterior natural parameter without the prior's (flat prior, nu shifted by d + 2)."""
    out = tuple(np.asarray(m, dtype=np.float64) for m in message)
    if len(out) == 4:  # keep the NIW valid (nu > d - 1) so that the failure is numeric, not an error
        out = out[:3] + (out[3] + DIM + 2.0,)
    return out


def _mean_weights(dist):
    """Broken E-step message of the mixing weights: E[pi] where CAVI needs E[log pi]."""
    return (dist.mean(),) if isinstance(dist, Dirichlet) else dist.expected_stats()


def _forget_log_det(dist):
    """Broken E-step message of the components: drops E[-1/2 log|Sigma_k|] = 1/2 E[ln|Lambda_k|] (eq. 10.64)."""
    stats = dist.expected_stats()
    return stats if isinstance(dist, Dirichlet) else stats[:3] + (np.zeros_like(stats[3]),)


def test_negative_control_dropped_prior_fails_parity(monkeypatch):
    monkeypatch.setattr(cavi, "natural_update", _drop_prior)
    assert max_parity_error(0) > 1e-3


def test_negative_control_mean_message_fails_parity(monkeypatch):
    monkeypatch.setattr(cavi, "parent_message", _mean_weights)
    assert max_parity_error(0) > 1e-3


@pytest.mark.parametrize("seed", [0, 1])
def test_negative_control_forgotten_log_det_fails_monotonicity(monkeypatch, seed):
    monkeypatch.setattr(cavi, "parent_message", _forget_log_det)
    assert max_parity_error(seed) > 1e-3
    with pytest.raises(AssertionError, match="ELBO decreased"):
        assert_elbo_never_decreases(elbo_trace(seed))
