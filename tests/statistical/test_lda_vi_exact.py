"""Variational LDA against exact quantities on enumerable corpora (harmonium.inference.vi.lda_vb).

Targets:
* K = 1: mean-field VB is exact, the ELBO equals the Dirichlet-multinomial evidence;
* the ELBO is a lower bound on log p(w | alpha, beta), enumerated over all z, and never decreases
  under coordinate ascent (warm-started gamma);
* the converged batch VB point is a stationary point of an independent numpy ELBO;
* online VB's expected update over a partition into mini-batches is the batch update;
* one CVB0 update of a token whose neighbours are one-hot is the exact collapsed Gibbs conditional;
* the hyperparameter updates are stationary points of the ELBO in (alpha, beta).
Each has a negative control: a deliberately broken variant fails the same check.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import digamma, gammaln, logsumexp

from harmonium._kernels import lda_vb as kv
from harmonium.corpus import Corpus
from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs
from harmonium.inference.vi import lda_vb as vb
from harmonium.models.directed.lda import collapsed_log_joint, make_model

DENSE = np.array([[1, 2, 0, 0], [0, 0, 2, 1], [1, 0, 1, 0]])
CORPUS = Corpus(sp.csr_matrix(DENSE), ["a", "b", "c", "d"])
DATA = vb.VBData.from_corpus(CORPUS)


def exact_log_evidence(corpus: Corpus, model) -> float:
    """log p(w | alpha, beta) = logsumexp over every z of the collapsed joint."""
    tokens = corpus.tokens()
    n = tokens.words.shape[0]
    logs = [collapsed_log_joint(*cgs.state_from_assignments(tokens, model, np.array(z, dtype=np.int32))[1:], model)
            for z in itertools.product(range(model.n_topics), repeat=n)]
    return float(logsumexp(logs))


def numpy_elbo(gamma, lam_wk, alpha, beta, dense=DENSE) -> float:
    """ELBO with phi at its optimum given (gamma, lambda), written out from Blei et al. (2003) appendix A.3."""
    elt = digamma(gamma) - digamma(gamma.sum(axis=1, keepdims=True))  # (D, K)
    elb = digamma(lam_wk) - digamma(lam_wk.sum(axis=0))  # (V, K)
    V, K = lam_wk.shape
    words = (dense * logsumexp(elt[:, None, :] + elb[None, :, :], axis=2)).sum()
    theta = (gammaln(alpha.sum()) - gammaln(alpha).sum() + ((alpha - gamma) * elt).sum(axis=1)
             + gammaln(gamma).sum(axis=1) - gammaln(gamma.sum(axis=1))).sum()
    phi = (K * (gammaln(V * beta) - V * gammaln(beta)) + ((beta - lam_wk) * elb).sum() + gammaln(lam_wk).sum()
           - gammaln(lam_wk.sum(axis=0)).sum())
    return float(words + theta + phi)


def run_batch(kernel, model, n_iter, seed=0, data=DATA):
    rng = np.random.default_rng(seed)
    state = vb.batch_init(rng, data, model)
    trace = []
    for _ in range(n_iter):
        state, _ = kernel(rng, state, data, model)
        trace.append(vb.elbo(data, state.lam_wk, state.gamma, model))
    return state, np.array(trace)


def broken_no_beta(kernel):
    """Negative control: the M-step forgets the prior (lambda = sstats)."""
    def k(rng, st, data, model):
        st, info = kernel(rng, st, data, model)
        return st._replace(lam_wk=st.lam_wk - model.beta + 1e-3), info
    return k


# -- K = 1: VB is exact ------------------------------------------------------------------------
def _single_topic_check(kernel) -> tuple[float, float]:
    model = make_model(1, 4, 0.5, 0.3)
    state, trace = run_batch(kernel, model, 3)
    counts = DENSE.sum(axis=0)
    exact = float(gammaln(4 * 0.3) - gammaln(counts.sum() + 4 * 0.3) + (gammaln(counts + 0.3) - gammaln(0.3)).sum())
    return float(np.abs(state.lam_wk[:, 0] - (0.3 + counts)).max()), abs(trace[-1] - exact)


def test_single_topic_vb_is_exact():
    lam_err, elbo_err = _single_topic_check(vb.build_batch_kernel(doc_tol=0.0))
    assert lam_err < 1e-12 and elbo_err < 1e-9


def test_single_topic_negative_control():
    lam_err, elbo_err = _single_topic_check(broken_no_beta(vb.build_batch_kernel(doc_tol=0.0)))
    assert lam_err > 0.1 and elbo_err > 1e-3


# -- lower bound, monotone, stationary --------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_elbo_is_a_lower_bound_that_never_decreases(seed):
    model = make_model(2, 4, [0.3, 0.8], 0.4)
    # coordinate ascent (gamma warm-started) never decreases the ELBO
    state, trace = run_batch(vb.build_batch_kernel(max_doc_iter=3, doc_tol=1e-3, warm_start=True), model, 60,
                             seed=seed)
    assert np.all(np.diff(trace) >= -1e-10 * np.abs(trace[:-1]))
    assert trace[-1] <= exact_log_evidence(CORPUS, model)
    # our kernel-based ELBO equals the independent numpy formula
    assert trace[-1] == pytest.approx(numpy_elbo(state.gamma, state.lam_wk, model.alpha, model.beta), rel=1e-12)


def _stationarity(kernel, model) -> float:
    """Largest |dL/d log x| over gamma and lambda at the kernel's converged point (central differences)."""
    state, _ = run_batch(kernel, model, 400)
    g, lam = state.gamma, state.lam_wk
    h = 1e-5
    worst = 0.0
    for arr in (g, lam):
        for idx in np.ndindex(arr.shape):
            old = arr[idx]
            arr[idx] = old * np.exp(h)
            up = numpy_elbo(g, lam, model.alpha, model.beta)
            arr[idx] = old * np.exp(-h)
            down = numpy_elbo(g, lam, model.alpha, model.beta)
            arr[idx] = old
            worst = max(worst, abs(up - down) / (2 * h))
    return worst


def test_converged_vb_is_a_stationary_point_of_the_elbo():
    model = make_model(2, 4, [0.3, 0.8], 0.4)
    assert _stationarity(vb.build_batch_kernel(max_doc_iter=50, doc_tol=0.0), model) < 1e-6


def test_stationarity_negative_control():
    model = make_model(2, 4, [0.3, 0.8], 0.4)
    assert _stationarity(broken_no_beta(vb.build_batch_kernel(max_doc_iter=50, doc_tol=0.0)), model) > 1e-2


# -- online VB ----------------------------------------------------------------------------------
def _online_targets(scale_fix=1.0):
    """lambda-tilde of each single-document mini-batch, recovered from the kernel's update."""
    model = make_model(2, 4, [0.3, 0.8], 0.4)
    lam0 = np.random.default_rng(5).gamma(2.0, 1.0, size=(4, 2))
    D = DENSE.shape[0]
    kernel = vb.build_online_kernel(total_docs=int(D * scale_fix), tau0=3.0, kappa=0.8, doc_tol=0.0, max_doc_iter=200)
    targets = []
    for d in range(D):
        batch = vb.VBData.from_corpus(CORPUS[[d]])
        st, info = kernel(None, vb.online_state_from_lambda(lam0.copy(), 4), batch, model)
        rho = vb.step_size(5, 3.0, 0.8)
        assert info.rho == rho
        targets.append((vb.online_lambda(st) - (1 - rho) * lam0) / rho)
    full = vb.build_batch_kernel(doc_tol=0.0, max_doc_iter=200)
    gamma = vb.initial_gamma(DATA, model.alpha)
    batch_state, _ = full(None, vb.BatchVBState(lam0.copy(), gamma), DATA, model)
    return np.mean(targets, axis=0), batch_state.lam_wk


def test_online_expected_update_is_the_batch_update():
    mean_target, batch_lam = _online_targets()
    np.testing.assert_allclose(mean_target, batch_lam, rtol=1e-9)


def test_online_negative_control_wrong_scale():
    mean_target, batch_lam = _online_targets(scale_fix=0.5)  # forgets half of D / |batch|
    assert np.abs(mean_target - batch_lam).max() > 0.1


def test_lazy_online_steps_equal_the_dense_update():
    """Many steps of the row-sparse kernel equal lambda <- (1 - rho) lambda + rho (beta + D/S sstats) done densely."""
    model = make_model(2, 4, [0.3, 0.8], 0.4)
    lam0 = np.random.default_rng(7).gamma(2.0, 1.0, size=(4, 2))
    kernel = vb.build_online_kernel(total_docs=30, tau0=0.5, kappa=0.6)
    state, dense = vb.online_state_from_lambda(lam0.copy(), 0), lam0.copy()
    for t in range(1, 40):
        batch = vb.VBData.from_corpus(CORPUS[[t % 3]])
        eb = vb.exp_elog_beta(dense)
        gamma = vb.initial_gamma(batch, model.alpha)
        sstats, _ = vb.e_step(batch, eb, model.alpha, gamma, max_iter=100, tol=1e-3, collect=True)
        rho = vb.step_size(t, 0.5, 0.6)
        dense = (1 - rho) * dense + rho * (model.beta + 30 * sstats)
        state, _ = kernel(None, state, batch, model)
    np.testing.assert_allclose(vb.online_lambda(state), dense, rtol=1e-10)
    np.testing.assert_allclose(state.c * state.usum + 4 * state.b, dense.sum(axis=0), rtol=1e-10)


def test_online_first_full_step_with_tau0_zero_is_a_batch_step():
    model = make_model(2, 4, 0.5, 0.2)
    lam0 = np.random.default_rng(6).gamma(2.0, 1.0, size=(4, 2))
    online = vb.build_online_kernel(total_docs=DATA.n_docs, tau0=0.0, kappa=0.7)
    st, info = online(None, vb.online_state_from_lambda(lam0.copy(), 0), DATA, model)
    assert info.rho == 1.0
    batch, _ = vb.build_batch_kernel()(None, vb.BatchVBState(lam0.copy(), vb.initial_gamma(DATA, model.alpha)),
                                       DATA, model)
    np.testing.assert_allclose(vb.online_lambda(st), batch.lam_wk, rtol=1e-13)


# -- CVB0 -----------------------------------------------------------------------------------------
# the last document is a single token, so a sweep over it updates that token alone
CVB_DENSE = np.array([[1, 1, 0, 0], [0, 0, 1, 1], [1, 0, 1, 0], [0, 1, 0, 0]])
CVB_CORPUS = Corpus(sp.csr_matrix(CVB_DENSE), ["a", "b", "c", "d"])


def _gibbs_conditional_of_last_token(z_rest, model) -> np.ndarray:
    tokens = CVB_CORPUS.tokens()
    logs = []
    for k in range(model.n_topics):
        z = np.array([*z_rest, k], dtype=np.int32)
        logs.append(collapsed_log_joint(*cgs.state_from_assignments(tokens, model, z)[1:], model))
    p = np.exp(np.array(logs) - max(logs))
    return p / p.sum()


def _cvb0_update_error(update) -> float:
    model = make_model(3, 4, [0.2, 0.5, 0.9], 0.3)
    data = vb.VBData.from_corpus(CVB_CORPUS)
    n_tokens = int(CVB_DENSE.sum())
    worst = 0.0
    for z_rest in itertools.product(range(3), repeat=n_tokens - 1):
        for old in range(3):
            gamma = np.zeros((n_tokens, 3), dtype=np.float32)
            gamma[np.arange(n_tokens - 1), z_rest] = 1.0
            gamma[-1, old] = 1.0  # the token's own current value, which the update must remove
            state = vb.cvb0_state_from_gamma(data, gamma, 3)
            update(data, state, model, 3)  # the last document only
            exact = _gibbs_conditional_of_last_token(z_rest, model)
            worst = max(worst, float(np.abs(state.gamma[-1] - exact).max()))
    return worst


def _kernel_update(data, st, model, d):
    kv.cvb0_sweep(data.indptr, data.indices, data.data, d, d + 1, st.gamma, st.n_dk, st.n_wk, st.n_k, model.alpha,
                  model.beta, data.n_words * model.beta)


def _broken_update_keeps_self(data, st, model, d):
    """Negative control: the token's own contribution is not removed from the counts."""
    j = data.indptr[d]
    w = data.indices[j]
    p = (st.n_wk[w] + model.beta) * (st.n_dk[d] + model.alpha) / (st.n_k + data.n_words * model.beta)
    st.gamma[j] = p / p.sum()


def test_cvb0_update_is_the_collapsed_gibbs_conditional():
    assert _cvb0_update_error(_kernel_update) < 1e-6


def test_cvb0_negative_control():
    assert _cvb0_update_error(_broken_update_keeps_self) > 1e-2


# -- hyperparameters --------------------------------------------------------------------------------
def test_hyperparameter_update_maximises_the_elbo():
    model = make_model(2, 4, [0.3, 0.8], 0.4)
    state, _ = run_batch(vb.build_batch_kernel(doc_tol=0.0), model, 30)
    new = vb.update_hyperparameters(state.lam_wk, state.gamma, model)
    before = numpy_elbo(state.gamma, state.lam_wk, model.alpha, model.beta)
    after = numpy_elbo(state.gamma, state.lam_wk, new.alpha, new.beta)
    assert after >= before
    h = 1e-6
    for k in range(2):
        a_up, a_dn = new.alpha.copy(), new.alpha.copy()
        a_up[k] *= np.exp(h)
        a_dn[k] *= np.exp(-h)
        grad = (numpy_elbo(state.gamma, state.lam_wk, a_up, new.beta)
                - numpy_elbo(state.gamma, state.lam_wk, a_dn, new.beta)) / (2 * h)
        assert abs(grad) < 1e-6
    grad_b = (numpy_elbo(state.gamma, state.lam_wk, new.alpha, new.beta * np.exp(h))
              - numpy_elbo(state.gamma, state.lam_wk, new.alpha, new.beta * np.exp(-h))) / (2 * h)
    assert abs(grad_b) < 1e-6
    # negative control: the old values are not stationary
    grad_old = (numpy_elbo(state.gamma, state.lam_wk, model.alpha, model.beta * np.exp(h))
                - numpy_elbo(state.gamma, state.lam_wk, model.alpha, model.beta * np.exp(-h))) / (2 * h)
    assert abs(grad_old) > 1e-3
