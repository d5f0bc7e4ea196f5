"""LDA on the generic CAVI engine against hand-written seed 004 eqs. 4-6 and the Blei et al. (2003) ELBO.

The reference below is written from the equations alone (numpy, no harmonium):

    alpha~_jk = alpha + sum_i gamma~_ijk                                   (4)
    beta~_kw  = beta + sum_ij 1(x_ij = w) gamma~_ijk                       (5)
    gamma~_ijk ∝ exp(psi(alpha~_jk) + psi(beta~_{k x_ij}) - psi(sum_w beta~_kw))   (6)

and the ELBO of smoothed LDA (Blei, Ng & Jordan 2003, appendix A.3 with the
Dirichlet on the topics of sec. 5.4). Negative controls: an M-step that drops
the prior's natural parameter must fail the parity check, and an E-step fed
E[theta] instead of E[log theta] must fail the "ELBO never decreases" check.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import digamma, gammaln

from harmonium.inference.vi import cavi
from harmonium.models.directed.lda_cavi import PHI, THETA, Z, lda_cavi_model, variational_parameters

K, V, D = 4, 30, 12
ALPHA, BETA = 0.3, 0.05


def corpus(seed: int):
    rng = np.random.default_rng(seed)
    topics = rng.dirichlet(np.full(V, 0.1), size=K)
    docs = []
    for _ in range(D):
        theta = rng.dirichlet(np.full(K, ALPHA))
        z = rng.choice(K, size=int(rng.integers(5, 40)), p=theta)
        docs.append(np.array([rng.choice(V, p=topics[k]) for k in z], dtype=np.int64))
    docs[3] = np.zeros(0, dtype=np.int64)  # an empty document is allowed
    words = np.concatenate(docs)
    owner = np.concatenate([np.full(len(d), j) for j, d in enumerate(docs)])
    return docs, words, owner


# -- the hand-written reference --------------------------------------------------------


def ref_sweep(words, owner, alpha_t, beta_t):
    """One VB sweep: eq. 6 from (alpha~, beta~), then eqs. 4 and 5 from gamma~."""
    log_g = (digamma(alpha_t[owner]) + digamma(beta_t[:, words].T)
             - digamma(beta_t.sum(axis=1))[None, :])
    log_g -= log_g.max(axis=1, keepdims=True)
    gamma = np.exp(log_g)
    gamma /= gamma.sum(axis=1, keepdims=True)
    alpha_new = np.full((D, K), ALPHA)
    np.add.at(alpha_new, owner, gamma)
    beta_new = np.full((K, V), BETA)
    for i, w in enumerate(words):
        beta_new[:, w] += gamma[i]
    return gamma, alpha_new, beta_new


def ref_elbo(words, owner, gamma, alpha_t, beta_t):
    """L(gamma~, alpha~, beta~) of smoothed LDA, Blei et al. (2003) eq. (15) plus the topic terms."""
    e_log_theta = digamma(alpha_t) - digamma(alpha_t.sum(axis=1, keepdims=True))
    e_log_phi = digamma(beta_t) - digamma(beta_t.sum(axis=1, keepdims=True))
    L = 0.0
    # E[log p(theta | alpha)] - E[log q(theta | alpha~)]
    L += D * (gammaln(K * ALPHA) - K * gammaln(ALPHA)) + ((ALPHA - 1) * e_log_theta).sum()
    L -= (gammaln(alpha_t.sum(axis=1)) - gammaln(alpha_t).sum(axis=1)).sum() + ((alpha_t - 1) * e_log_theta).sum()
    # E[log p(z | theta)] + E[log p(w | z, phi)] - E[log q(z)]
    L += (gamma * e_log_theta[owner]).sum() + (gamma * e_log_phi[:, words].T).sum()
    L -= (gamma * np.log(gamma)).sum()
    # E[log p(phi | beta)] - E[log q(phi | beta~)]
    L += K * (gammaln(V * BETA) - V * gammaln(BETA)) + ((BETA - 1) * e_log_phi).sum()
    L -= (gammaln(beta_t.sum(axis=1)) - gammaln(beta_t).sum(axis=1)).sum() + ((beta_t - 1) * e_log_phi).sum()
    return L


# -- helpers ------------------------------------------------------------------------------


def start(seed: int):
    """A corpus, its model, and variational parameters drawn at random (not a fixed point)."""
    docs, words, owner = corpus(seed)
    model = lda_cavi_model(docs, K, V, alpha=ALPHA, eta=BETA)
    rng = np.random.default_rng(100 + seed)
    gamma = rng.dirichlet(np.ones(K), size=words.size)
    alpha_t = rng.gamma(2.0, 1.0, size=(D, K))
    beta_t = rng.gamma(2.0, 1.0, size=(K, V))
    state = cavi.CAVIState({THETA: (alpha_t - 1.0,), PHI: (beta_t - 1.0,)}, {Z: gamma})
    return model, words, owner, state, (gamma, alpha_t, beta_t)


def max_parity_error(seed: int, n_sweeps: int = 5) -> float:
    """Largest |engine - reference| over gamma~, alpha~, beta~ and n_sweeps sweeps from the same start."""
    model, words, owner, state, (gamma, alpha_t, beta_t) = start(seed)
    data = cavi.prepare(model)
    kernel = cavi.build_kernel()
    worst = 0.0
    for _ in range(n_sweeps):
        state, info = kernel(None, state, data, model)
        gamma, alpha_t, beta_t = ref_sweep(words, owner, alpha_t, beta_t)
        g, a, b = variational_parameters(cavi.posteriors(state, model))
        worst = max(worst, np.abs(g - gamma).max(), np.abs(a - alpha_t).max(), np.abs(b - beta_t).max())
    return worst


def assert_elbo_never_decreases(trace, rtol=1e-9):
    trace = np.asarray(trace)
    drops = trace[:-1] - trace[1:]
    worst = int(np.argmax(drops))
    assert drops[worst] <= rtol * abs(trace[worst]), (
        f"ELBO decreased by {drops[worst]:.3g} at iteration {worst + 1} "
        f"({trace[worst]:.10g} -> {trace[worst + 1]:.10g})"
    )


def elbo_trace(seed: int, n_sweeps: int = 40):
    model, *_ , state, _ = start(seed)
    data = cavi.prepare(model)
    kernel = cavi.build_kernel()
    trace = [cavi.elbo(state, data, model)]
    for _ in range(n_sweeps):
        state, info = kernel(None, state, data, model)
        trace.append(info.elbo)
    return trace


# -- tests --------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sweeps_match_seed004_equations_4_to_6(seed):
    assert max_parity_error(seed) <= 1e-8


@pytest.mark.parametrize("seed", [0, 1])
def test_elbo_matches_blei_formula(seed):
    model, words, owner, state, (gamma, alpha_t, beta_t) = start(seed)
    data = cavi.prepare(model)
    kernel = cavi.build_kernel()
    # at the random start (gamma~ not consistent with alpha~, beta~) and after each of a few sweeps
    assert abs(cavi.elbo(state, data, model) - ref_elbo(words, owner, gamma, alpha_t, beta_t)) <= 1e-8
    for _ in range(4):
        state, info = kernel(None, state, data, model)
        g, a, b = variational_parameters(cavi.posteriors(state, model))
        assert abs(info.elbo - ref_elbo(words, owner, g, a, b)) <= 1e-8


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_elbo_never_decreases(seed):
    assert_elbo_never_decreases(elbo_trace(seed))


def test_fit_cavi_runs_lda_with_restarts():
    docs, *_ = corpus(0)
    model = lda_cavi_model(docs, K, V, alpha=ALPHA, eta=BETA)
    res = cavi.fit_cavi(7, model, max_iter=300, tol=1e-9, n_init=3)
    assert_elbo_never_decreases(res.elbo)
    assert res.converged and res.n_iter < 300
    assert res.elbo[-1] == res.restart_elbos.max() == res.restart_elbos[res.best_restart]
    g, a, b = variational_parameters(res.posteriors)
    assert g.shape == (sum(len(d) for d in docs), K) and a.shape == (D, K) and b.shape == (K, V)
    np.testing.assert_allclose(a[3], ALPHA)  # the empty document keeps its prior
    np.testing.assert_allclose(b.sum(), K * V * BETA + g.shape[0])


# -- negative controls ------------------------------------------------------------------


def _drop_prior(prior, message):
    """Broken M-step: the posterior natural parameter without the prior's."""
    return tuple(np.asarray(m, dtype=np.float64) for m in message)


def _mean_instead_of_log_mean(dist):
    """Broken E-step message: E[theta] where CAVI needs E[log theta]."""
    return (dist.mean(),)


def test_negative_control_dropped_prior_fails_parity(monkeypatch):
    monkeypatch.setattr(cavi, "natural_update", _drop_prior)
    assert max_parity_error(0) > 1e-3


def test_negative_control_mean_message_fails_parity_and_monotonicity(monkeypatch):
    monkeypatch.setattr(cavi, "parent_message", _mean_instead_of_log_mean)
    assert max_parity_error(0) > 1e-3
    with pytest.raises(AssertionError, match="ELBO decreased"):
        assert_elbo_never_decreases(elbo_trace(0))
