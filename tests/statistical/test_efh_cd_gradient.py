"""The contrastive-divergence gradient against the exact log-likelihood gradient on enumerable harmoniums.

* The exact gradient (finite differences of the enumerated mean log-likelihood, log Z included)
  equals the CD statistic with the model expectation computed exactly over every visible state
  ("CD-infinity"), for an RBM, GB-EFH (Gaussian hidden units) and Replicated Softmax (documents
  of different lengths, each with its own Z(D)).
* CD-k with k = 25 sweeps from the data approaches it: every coordinate within 4.5 Monte Carlo
  standard errors (Bonferroni over the coordinates at alpha ~1e-4).
* Negative controls: a sign-flipped negative statistic and swapped phases fail the same checks.
* The optimised mini-batch update (sparse scatters, momentum, weight decay) applies exactly
  lr * cd_gradient at the negatives it drew.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import gammaln

from harmonium.evaluation.partition import exact_log_partition
from harmonium.inference.learning import cd
from harmonium.inference.learning.schedules import make_schedule, momentum_schedule
from harmonium.models.undirected.variants import gb_efh, random_init, rbm, replicated_softmax


def _rbm():
    rng = np.random.default_rng(21)
    m = random_init(rng, rbm(5, 3), 0.8)
    m.params["v:0:bias"] = rng.normal(0, 0.7, 5)
    m.params["h:bias"] = rng.normal(0, 0.7, 3)
    data = (rng.random((8, 5)) < 0.4).astype(float)
    return m, data, None


def _gbefh():
    rng = np.random.default_rng(22)
    m = random_init(rng, gb_efh(5, 2), 0.4)
    m.params["v:0:bias"] = rng.normal(-0.5, 0.5, 5)
    data = (rng.random((8, 5)) < 0.4).astype(float)
    return m, data, None


def _rsm():
    rng = np.random.default_rng(23)
    m = random_init(rng, replicated_softmax(3, 2), 0.6)
    m.params["v:0:bias"] = rng.normal(0, 0.5, 3)
    m.params["h:bias"] = rng.normal(0, 0.3, 2)
    data = np.array([[1, 0, 1], [0, 3, 0], [2, 1, 0], [0, 0, 1], [1, 1, 1]], dtype=float)
    return m, data, data.sum(axis=1)


MODELS = {"rbm": _rbm, "gbefh": _gbefh, "rsm": _rsm}


def _mean_log_likelihood(m, data, lengths):
    if lengths is None:
        return m.log_unnormalized(data).mean() - exact_log_partition(m).log_z
    lz = exact_log_partition(m, lengths).at(lengths.astype(int))[0]
    return (m.log_unnormalized(data, lengths) - lz).mean()


def _exact_gradient_fd(m, data, lengths, eps=1e-5):
    out = {}
    for name in m.learnable():
        flat = m.params[name].reshape(-1)
        g = np.zeros(flat.size)
        for i in range(flat.size):
            old = flat[i]
            flat[i] = old + eps
            up = _mean_log_likelihood(m, data, lengths)
            flat[i] = old - eps
            down = _mean_log_likelihood(m, data, lengths)
            flat[i] = old
            g[i] = (up - down) / (2 * eps)
        out[name] = g.reshape(m.params[name].shape)
    return out


def _all_states(m, length):
    if length is None:
        X = m.wings[0].units.states(m.wings[0].size)
        lp = m.log_unnormalized(X)
    else:
        n = m.wings[0].size
        X = np.array([c for c in itertools.product(range(length + 1), repeat=n) if sum(c) == length], dtype=float)
        # probability of a count vector = multinomial coefficient x sequence probability
        lp = m.log_unnormalized(X, np.full(len(X), float(length))) + gammaln(length + 1) - gammaln(X + 1).sum(axis=1)
    w = np.exp(lp - lp.max())
    return X, w / w.sum()


def _cd_infinity(m, data, lengths, sign=-1.0):
    """Data term minus the exact model term (mean over documents of E_{p(x | D_n)}), built from Harmonium.statistics."""
    pos = m.statistics(data, lengths)
    n = data.shape[0]
    grad = {k: np.asarray(v, dtype=float) / n for k, v in pos.items()}
    lens = [None] * n if lengths is None else [int(d) for d in lengths]
    for d in set(lens):
        X, p = _all_states(m, d)
        share = lens.count(d) / n
        lx = None if d is None else np.full(len(X), float(d))
        neg = m.statistics(X, lx, weights=p)
        for k in grad:
            grad[k] = grad[k] + sign * share * np.asarray(neg[k], dtype=float)
    return grad


@pytest.mark.parametrize("name", list(MODELS))
def test_cd_infinity_is_the_exact_gradient(name):
    m, data, lengths = MODELS[name]()
    exact = _exact_gradient_fd(m, data, lengths)
    got = _cd_infinity(m, data, lengths)
    for k in exact:
        np.testing.assert_allclose(got[k], exact[k], rtol=1e-5, atol=1e-7, err_msg=k)
    if lengths is None:
        X, p = _all_states(m, None)
        ref = cd.cd_gradient(m, data, X, weights_neg=p)
        for k in exact:
            np.testing.assert_allclose(ref[k], exact[k], rtol=1e-5, atol=1e-7, err_msg=k)


@pytest.mark.parametrize("name", list(MODELS))
def test_sign_flipped_statistic_fails_the_gradient_check(name):
    m, data, lengths = MODELS[name]()
    exact = _exact_gradient_fd(m, data, lengths)
    flipped = _cd_infinity(m, data, lengths, sign=+1.0)
    worst = max(np.abs(flipped[k] - exact[k]).max() for k in exact)
    assert worst > 0.05


def _cd_k_estimate(m, data, lengths, k, n_rep, seed, flip=False):
    """CD-k with n_rep chains per document; per-chain statistics give the Monte Carlo standard error."""
    rng = np.random.default_rng(seed)
    x0 = np.repeat(data, n_rep, axis=0)
    lens = None if lengths is None else np.repeat(lengths, n_rep)
    h = m.sample_h(rng, x0, lens)
    xs, _ = cd.negative_phase(rng, m, h, lens, k)
    x_neg = xs[0].toarray() if sp.issparse(xs[0]) else xs[0]
    grad, se = {}, {}
    pos = m.statistics(data, lengths)
    n = data.shape[0]
    for name in pos:
        per_chain = np.stack([np.asarray(m.statistics(x_neg[i:i + 1], None if lens is None else lens[i:i + 1])[name],
                                         dtype=float) for i in range(0, x_neg.shape[0], 37)])
        neg = np.asarray(m.statistics(x_neg, lens)[name], dtype=float) / x_neg.shape[0]
        sign = 1.0 if flip else -1.0
        grad[name] = np.asarray(pos[name]) / n + sign * neg
        # per-chain spread (subsample every 37th chain for the spread only)
        se[name] = per_chain.std(axis=0, ddof=1) / np.sqrt(x_neg.shape[0]) + 1e-12
    return grad, se


@pytest.mark.parametrize("name", list(MODELS))
def test_cd_k_with_many_sweeps_approaches_the_exact_gradient(name):
    m, data, lengths = MODELS[name]()
    exact = _exact_gradient_fd(m, data, lengths)
    grad, se = _cd_k_estimate(m, data, lengths, k=25, n_rep=2500, seed=5)
    z = np.concatenate([((grad[k] - exact[k]) / se[k]).ravel() for k in exact])
    assert np.abs(z).max() < 4.5, z
    flipped, se_f = _cd_k_estimate(m, data, lengths, k=25, n_rep=2500, seed=5, flip=True)
    z_f = np.concatenate([((flipped[k] - exact[k]) / se_f[k]).ravel() for k in exact])
    assert np.abs(z_f).max() > 10.0  # negative control


def test_cd_1_is_biased_on_this_model():
    """CD-1 is not the maximum-likelihood gradient (Carreira-Perpinan & Hinton 2005): a visible difference here."""
    m, data, lengths = _rbm()
    exact = _exact_gradient_fd(m, data, lengths)
    grad, se = _cd_k_estimate(m, data, lengths, k=1, n_rep=2500, seed=6)
    z = np.concatenate([((grad[k] - exact[k]) / se[k]).ravel() for k in exact])
    assert np.abs(z).max() > 6.0


@pytest.mark.parametrize("sparse_input", [False, True])
@pytest.mark.parametrize("mom,wd", [(0.0, 0.0), (0.7, 0.01)])
@pytest.mark.parametrize("persistent", [False, True])
def test_batch_update_applies_lr_times_cd_gradient(sparse_input, mom, wd, persistent):
    m, data, _ = _rbm()
    before = m.copy()
    state = cd.init(np.random.default_rng(0), m, persistent=persistent, n_chains=8)
    for k in state.velocity:
        state.velocity[k][...] = 0.01 * np.arange(state.velocity[k].size).reshape(state.velocity[k].shape)
    vel0 = {k: v.copy() for k, v in state.velocity.items()}
    cfg = cd.CDConfig(batch_size=8, persistent=persistent, learning_rate=make_schedule("constant", 0.1),
                      momentum=momentum_schedule(mom), weight_decay=wd)
    x = sp.csr_matrix(data) if sparse_input else data
    xs_neg, _ = cd.batch_update(np.random.default_rng(1), state, x, None, cfg, 0.1, mom)
    grad = cd.cd_gradient(before, data, xs_neg[0].toarray() if sp.issparse(xs_neg[0]) else xs_neg[0])
    for k in before.learnable():
        expected_step = 0.1 * grad[k]
        if mom or wd:
            decay = 0.1 * wd * before.params[k] if k.startswith("W:") else 0.0
            expected_step = mom * vel0[k] + expected_step - decay
        np.testing.assert_allclose(m.params[k] - before.params[k], expected_step, rtol=1e-10, atol=1e-12, err_msg=k)


def test_pcd_epoch_kernel_learns_a_binary_model():
    """A few PCD epochs raise the exact log-likelihood of data drawn from a known RBM (smoke test of the driver)."""
    rng = np.random.default_rng(8)
    truth = random_init(rng, rbm(8, 3), 1.5)
    x = truth.sample_x(rng, truth.hidden.sample(rng, np.zeros((2000, 3)), {}))[0]
    for _ in range(50):
        x, _ = truth.gibbs_step(rng, x)
        x = x[0]
    m = rbm(8, 3)
    random_init(rng, m, 0.01)
    ll0 = m.log_unnormalized(x).mean() - exact_log_partition(m).log_z
    state = cd.init(rng, m, persistent=True, n_chains=50)
    kernel = cd.build_kernel(cd.CDConfig(batch_size=50, persistent=True, learning_rate=make_schedule("constant", 0.1)))
    for _ in range(15):
        state, info = kernel(rng, state, cd.TrainingData((sp.csr_matrix(x),), None))
    ll1 = m.log_unnormalized(x).mean() - exact_log_partition(m).log_z
    ll_true = truth.log_unnormalized(x).mean() - exact_log_partition(truth).log_z
    assert info.n_batches == 40 and state.epoch == 15 and state.n_updates == 600
    assert ll1 > ll0 + 0.5
    assert ll1 > ll_true - 0.3
