"""Identities of the harmonium model: free energies, conditionals, statistics (gradients), sparse inputs."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import logsumexp

from harmonium.errors import InvalidParameterError
from harmonium.models.undirected.efh import Harmonium
from harmonium.models.undirected.units import BernoulliUnits, BinomialUnits, GaussianUnits
from harmonium.models.undirected.variants import (
    dual_wing,
    gb_efh,
    multi_wing,
    random_init,
    rate_adapting_poisson,
    rbm,
    replicated_softmax,
)


def _randomise(model, seed=0, scale=0.7):
    rng = np.random.default_rng(seed)
    random_init(rng, model, scale)
    for k in model.params:
        if k.endswith(":bias"):
            model.params[k] = rng.normal(0, 0.5, size=model.params[k].shape)
        if k.endswith(":log_var"):
            model.params[k] = rng.normal(0, 0.3, size=model.params[k].shape)
    return model


def test_rbm_free_energy_sums_the_hidden_layer_out():
    m = _randomise(rbm(5, 3))
    X = m.wings[0].units.states(5)
    H = m.hidden.states(3)
    joint = np.array([[m.log_joint_unnormalized(X[i:i + 1], H[j:j + 1])[0] for j in range(8)] for i in range(32)])
    np.testing.assert_allclose(m.log_unnormalized(X), logsumexp(joint, axis=1), rtol=1e-12)
    np.testing.assert_allclose(m.log_unnormalized_hidden(H), logsumexp(joint, axis=0), rtol=1e-12)
    np.testing.assert_allclose(m.free_energy(X), -m.log_unnormalized(X))


def test_gb_efh_marginal_is_seed_eq_33():
    """log p*(x) = theta^T x + x^T W W^T x / 2 (h ~ N(W^T x, 1) integrated out, lambda = 0)."""
    m = _randomise(gb_efh(6, 3))
    m.params["h:bias"][:] = 0.0
    m.params["h:log_var"][:] = 0.0
    X = m.wings[0].units.states(6)
    theta, W = m.params["v:0:bias"], m.W()
    np.testing.assert_allclose(m.log_unnormalized(X), X @ theta + 0.5 * ((X @ W) ** 2).sum(axis=1), rtol=1e-12)
    np.testing.assert_allclose(m.mean_h(X), X @ W)  # seed 000 eq. 22
    assert "h:bias" not in m.learnable()


def test_gaussian_hidden_marginal_by_quadrature():
    """One Gaussian hidden unit with learned variance: log p*(x) against a numerical integral over h."""
    m = _randomise(Harmonium([("w", "bernoulli", 3)], GaussianUnits(1.5, learn_variance=True), 1))
    X = m.wings[0].units.states(3)
    h = np.linspace(-30, 30, 60001)[:, None]
    dh = h[1, 0] - h[0, 0]
    for x in X:
        lj = m.log_joint_unnormalized(np.repeat(x[None], h.shape[0], axis=0), h)
        np.testing.assert_allclose(m.log_unnormalized(x[None])[0], logsumexp(lj) + np.log(dh), rtol=1e-8)


def test_conditionals_are_ratios_of_the_joint():
    m = _randomise(multi_wing([("a", "bernoulli", 3), ("b", {"type": "binomial", "n_trials": 2}, 2)], "bernoulli", 2))
    rng = np.random.default_rng(1)
    xs = m.sample_x(rng, rng.integers(0, 2, size=(6, 2)).astype(float))
    h = rng.integers(0, 2, size=(6, 2)).astype(float)
    log_ph = m.p_h_given_x(xs).log_prob(h).sum(axis=1)
    np.testing.assert_allclose(log_ph, m.log_joint_unnormalized(xs, h) - m.log_unnormalized(xs), rtol=1e-10)
    log_px = sum(d.log_prob(x).sum(axis=1) for d, x in zip(m.p_x_given_h(h), xs, strict=True))
    np.testing.assert_allclose(log_px, m.log_joint_unnormalized(xs, h) - m.log_unnormalized_hidden(h), rtol=1e-10)


def test_replicated_softmax_scales_hidden_bias_by_length():
    """Seed 001 eq. 5: E = -sum W h v - b.v - D a.h, so p(h_j = 1 | v) = sigmoid(D a_j + (v W)_j)."""
    m = _randomise(replicated_softmax(5, 3))
    v = np.array([[2.0, 0, 1, 0, 4], [0, 1, 0, 0, 0]])
    D = v.sum(axis=1)
    a, W, b = m.params["h:bias"], m.W(), m.params["v:0:bias"]
    np.testing.assert_allclose(m.hidden_eta(v), D[:, None] * a + v @ W)
    lp = v @ b + np.logaddexp(0.0, D[:, None] * a + v @ W).sum(axis=1)
    np.testing.assert_allclose(m.log_unnormalized(v), lp)
    # the same counts as CSR
    np.testing.assert_allclose(m.log_unnormalized(sp.csr_matrix(v)), lp)
    x = m.sample_x(np.random.default_rng(0), np.ones((2, 3)), lengths=D)[0]
    np.testing.assert_array_equal(np.asarray(x.sum(axis=1)).ravel(), D)
    # rate-adapting Poisson: same energy without the D scaling
    r = rate_adapting_poisson(5, 3)
    r.params.update({k: v.copy() for k, v in m.params.items()})
    np.testing.assert_allclose(r.hidden_eta(v), a + v @ W)


@pytest.mark.parametrize("factory", [
    lambda: rbm(4, 3),
    lambda: gb_efh(4, 2, fit_hidden_bias=True),
    lambda: replicated_softmax(4, 2),
    lambda: Harmonium([("w", "poisson", 3)], BinomialUnits(2), 2),
    lambda: Harmonium([("w", "bernoulli", 3), ("f", GaussianUnits(1.0, True), 2)], GaussianUnits(0.5, True), 2),
], ids=["rbm", "gbefh", "rsm", "poisson-binomial", "dual-learned-variances"])
def test_statistics_are_gradients_of_log_p_star(factory):
    """statistics(x) = d log p*(x) / d param, against central finite differences (every parameter)."""
    m = _randomise(factory(), seed=2, scale=0.3)
    rng = np.random.default_rng(3)
    h = m.hidden.sample(rng, np.zeros((5, m.n_hidden)), m.hidden_params())
    lengths = np.array([3, 1, 4, 2, 5.0]) if m.length_wing is not None else None
    xs = m.sample_x(rng, h, lengths)
    stats = m.statistics(xs, lengths)
    assert set(stats) == set(m.learnable())
    eps = 1e-6
    for name, g in stats.items():
        flat = m.params[name].reshape(-1)
        for i in range(flat.size):
            old = flat[i]
            flat[i] = old + eps
            up = m.log_unnormalized(xs, lengths).sum()
            flat[i] = old - eps
            down = m.log_unnormalized(xs, lengths).sum()
            flat[i] = old
            np.testing.assert_allclose(np.asarray(g).reshape(-1)[i], (up - down) / (2 * eps), rtol=1e-5, atol=1e-6,
                                       err_msg=f"{name}[{i}]")


def test_sparse_and_dense_inputs_agree():
    m = _randomise(rbm(6, 3))
    x = (np.random.default_rng(0).random((5, 6)) < 0.4).astype(float)
    xs = sp.csr_matrix(x)
    np.testing.assert_allclose(m.log_unnormalized(xs), m.log_unnormalized(x))
    np.testing.assert_allclose(m.mean_h(xs), m.mean_h(x))
    for k, v in m.statistics(xs).items():
        np.testing.assert_allclose(v, m.statistics(x)[k])
    m32 = m.with_params(m.params, dtype=np.float32)
    np.testing.assert_allclose(m32.mean_h(sp.csr_matrix(x, dtype=np.float32)), m.mean_h(x), rtol=1e-5)


def test_dual_wing_shares_the_hidden_layer():
    m = _randomise(dual_wing(4, 2, 3), seed=4, scale=0.2)
    m.params["h:bias"][:] = 0.0
    m.params["h:log_var"][:] = 0.0
    rng = np.random.default_rng(0)
    words = (rng.random((3, 4)) < 0.5).astype(float)
    feats = rng.normal(size=(3, 2))
    np.testing.assert_allclose(m.mean_h((words, feats)), words @ m.W(0) + feats @ m.W(1))
    with pytest.raises(InvalidParameterError, match="2 wings"):
        m.mean_h(words)


def test_bad_architectures_and_parameters():
    with pytest.raises(InvalidParameterError, match="distinct"):
        Harmonium([("a", "bernoulli", 2), ("a", "bernoulli", 2)], "bernoulli", 2)
    with pytest.raises(InvalidParameterError, match="hidden layer"):
        Harmonium([("a", "bernoulli", 2)], "replicated_softmax", 2)
    with pytest.raises(InvalidParameterError, match="scale_hidden_bias"):
        Harmonium([("a", "bernoulli", 2)], "bernoulli", 2, scale_hidden_bias=True)
    with pytest.raises(InvalidParameterError, match="shape"):
        Harmonium([("a", "bernoulli", 2)], BernoulliUnits(), 2, params={"W:0": np.zeros((3, 2))})
    with pytest.raises(InvalidParameterError, match="units"):
        rbm(3, 2).mean_h(np.zeros((2, 4)))
    with pytest.raises(InvalidParameterError, match="lengths"):
        replicated_softmax(3, 2).log_unnormalized_hidden(np.zeros((1, 2)))
