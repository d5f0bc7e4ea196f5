"""The training options of the harmonium learners against exact targets, each with a broken twin.

* CD-k with a rising k (``n_gibbs=(start, end)``): at an epoch where the schedule gives k, the
  negatives the update draws have the exact k-step distribution (data row times T^k, T the
  visible-to-visible Gibbs transition of an enumerable RBM): the Monte Carlo mean of the
  statistics is within 4.5 standard errors of the exact k-step expectation, and rejects the
  expectations of k - 1 and k + 1 steps (what an off-by-one schedule would draw).
* Weight decay adds exactly -lr lambda W to the update of the couplings and nothing to the
  biases (a twin that decays the biases too fails).
* The sparsity penalty's gradient equals finite differences of the penalty (RBM and Replicated
  Softmax, whose hidden biases are scaled by D); twins that drop the (1 - decay) factor or the
  length scaling fail; the update applies exactly lr (CD gradient - penalty gradient).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.special import expit

from harmonium.inference.learning import cd
from harmonium.inference.learning.schedules import gibbs_schedule, make_schedule, momentum_schedule
from harmonium.models.undirected.variants import random_init, rbm, replicated_softmax


def _tiny_rbm():
    rng = np.random.default_rng(31)
    m = random_init(rng, rbm(5, 3), 2.5)
    m.params["v:0:bias"] = rng.normal(0, 0.8, 5)
    m.params["h:bias"] = rng.normal(0, 0.8, 3)
    data = np.array([[1, 1, 0, 0, 0], [0, 0, 1, 1, 1], [1, 0, 1, 0, 1], [0, 1, 0, 1, 0]], dtype=float)
    return m, data


def _bits(n):
    return np.array(list(itertools.product((0.0, 1.0), repeat=n)))


def _transition(m):
    """T[x, x'] = sum_h p(h | x) p(x' | h) over all 2^5 visible and 2^3 hidden states."""
    X, H = _bits(5), _bits(3)
    W, b, c = m.params["W:0"], m.params["v:0:bias"], m.params["h:bias"]
    ph = expit(X @ W + c)                     # (32, 3)
    A = np.prod(np.where(H[None, :, :] == 1, ph[:, None, :], 1 - ph[:, None, :]), axis=2)  # (32, 8)
    px = expit(H @ W.T + b)                   # (8, 5)
    B = np.prod(np.where(X[None, :, :] == 1, px[:, None, :], 1 - px[:, None, :]), axis=2)  # (8, 32)
    return X, A @ B


def _stats(m, x):
    """Per-row statistics S(x) (W, visible bias, hidden bias) flattened: (n, 5*3 + 5 + 3)."""
    h = expit(x @ m.params["W:0"] + m.params["h:bias"])
    return np.hstack([(x[:, :, None] * h[:, None, :]).reshape(len(x), -1), x, h])


def _exact_k_step(m, data, k):
    X, T = _transition(m)
    idx = [int("".join(str(int(v)) for v in row), 2) for row in data]
    Tk = np.linalg.matrix_power(T, k)
    return (Tk[idx] @ _stats(m, X)).mean(axis=0)


@pytest.mark.parametrize("epoch,k,wrong", [(1, 1, 2), (2, 2, 1)])
def test_scheduled_cd_k_draws_the_exact_k_step_negatives(epoch, k, wrong):
    m, data = _tiny_rbm()
    sched = gibbs_schedule((1, 5), 10)  # k = 1, 1, 2, 2, 3, 3, 4, 4, 5, 5
    assert sched(epoch) == k
    cfg = cd.CDConfig(batch_size=10 ** 6, n_gibbs=sched, learning_rate=make_schedule("constant", 0.0))
    state = cd.init(np.random.default_rng(0), m)._replace(epoch=epoch)
    x = np.repeat(data, 6000, axis=0)
    before = {name: v.copy() for name, v in m.params.items()}
    xs_neg, _ = cd.batch_update(np.random.default_rng(7 + epoch), state, x, None, cfg, 0.0, 0.0)
    for name, v in before.items():  # learning rate 0: the model did not move
        np.testing.assert_array_equal(m.params[name], v)
    s = _stats(m, np.asarray(xs_neg[0].toarray() if hasattr(xs_neg[0], "toarray") else xs_neg[0]))
    mc, se = s.mean(axis=0), s.std(axis=0, ddof=1) / np.sqrt(len(s))
    z = (mc - _exact_k_step(m, data, k)) / se
    assert np.abs(z).max() < 4.5, z
    z_wrong = (mc - _exact_k_step(m, data, wrong)) / se  # negative control: an off-by-one schedule
    assert np.abs(z_wrong).max() > 8.0, np.abs(z_wrong).max()
    assert cd.config_at(cfg, epoch).n_gibbs == k and cd.config_at(cfg, 9).n_gibbs == 5


@pytest.mark.parametrize("broken", [False, True])
def test_weight_decay_adds_exactly_minus_lr_lambda_w(broken):
    lr, wd, mom = 0.1, 0.05, 0.5
    steps = []
    for decay in (0.0, wd):
        m, data = _tiny_rbm()
        before = m.copy()
        state = cd.init(np.random.default_rng(0), m)
        cfg = cd.CDConfig(batch_size=8, learning_rate=make_schedule("constant", lr), momentum=momentum_schedule(mom),
                          weight_decay=decay)
        cd.batch_update(np.random.default_rng(1), state, data, None, cfg, lr, mom)
        steps.append({k: m.params[k] - before.params[k] for k in m.params})
    ok = True
    for k in steps[0]:
        expected = -lr * wd * before.params[k] if (k.startswith("W:") or broken) else 0.0
        ok &= np.allclose(steps[1][k] - steps[0][k], expected, rtol=1e-10, atol=1e-13)
    assert ok != broken  # the twin that decays the biases as well fails


# -- sparsity ----------------------------------------------------------------------------------------
def _tiny_rsm():
    rng = np.random.default_rng(33)
    m = random_init(rng, replicated_softmax(4, 3), 0.6)
    m.params["v:0:bias"] = rng.normal(0, 0.5, 4)
    m.params["h:bias"] = rng.normal(0, 0.3, 3)
    data = np.array([[1, 0, 2, 0], [0, 3, 0, 1], [2, 1, 0, 0], [0, 0, 1, 4], [1, 1, 1, 1]], dtype=float)
    return m, data, data.sum(axis=1)


def _sparse_models():
    m, data = _tiny_rbm()
    return {"rbm": (m, data, None), "rsm": _tiny_rsm()}


def _fd(m, data, lengths, q_old, eps=1e-6, **kw):
    out = {}
    for name in m.params:
        flat = m.params[name].reshape(-1)
        g = np.zeros(flat.size)
        for i in range(flat.size):
            old = flat[i]
            flat[i] = old + eps
            up = cd.sparsity_penalty(m, data, lengths, q_old=q_old, **kw)[0]
            flat[i] = old - eps
            down = cd.sparsity_penalty(m, data, lengths, q_old=q_old, **kw)[0]
            flat[i] = old
            g[i] = (up - down) / (2 * eps)
        out[name] = g.reshape(m.params[name].shape)
    return out


SPARSE_KW = {"target": 0.1, "cost": 0.7, "decay": 0.9}


@pytest.mark.parametrize("name", ["rbm", "rsm"])
@pytest.mark.parametrize("with_q_old", [False, True])
def test_sparsity_gradient_is_the_penalty_gradient(name, with_q_old):
    m, data, lengths = _sparse_models()[name]
    q_old = np.array([0.3, 0.05, 0.6]) if with_q_old else None
    fd = _fd(m, data, lengths, q_old, **SPARSE_KW)
    got, q = cd.sparsity_gradient(m, data, lengths, q_old=q_old, **SPARSE_KW)
    assert set(got) == {"W:0", "h:bias"}
    for k in m.params:
        np.testing.assert_allclose(got.get(k, np.zeros_like(fd[k])), fd[k], rtol=1e-6, atol=1e-9, err_msg=k)
    # broken twins: no (1 - decay) factor; the hidden bias's length scaling forgotten
    if with_q_old:
        twin, _ = cd.sparsity_gradient(m, data, lengths, q_old=q_old, **{**SPARSE_KW, "decay": 0.0})
        assert not np.allclose(twin["W:0"], fd["W:0"], rtol=1e-3)
    if lengths is not None:
        unscaled, _ = cd.sparsity_gradient(m, data, np.ones_like(lengths), q_old=q_old, **SPARSE_KW)
        assert not np.allclose(unscaled["h:bias"], fd["h:bias"], rtol=1e-3)


def test_update_applies_lr_times_cd_minus_sparsity_gradient():
    m, data = _tiny_rbm()
    before = m.copy()
    state = cd.init(np.random.default_rng(0), m)._replace(hidden_q=np.full(3, np.nan))
    cfg = cd.CDConfig(batch_size=8, learning_rate=make_schedule("constant", 0.1), sparsity_target=0.1,
                      sparsity_cost=0.5, sparsity_decay=0.9)
    xs_neg, _ = cd.batch_update(np.random.default_rng(1), state, data, None, cfg, 0.1, 0.0)
    grad = cd.cd_gradient(before, data, xs_neg[0].toarray() if hasattr(xs_neg[0], "toarray") else xs_neg[0])
    sg, q = cd.sparsity_gradient(before, data, None, 0.1, 0.5, 0.9, None)
    for k in before.params:
        np.testing.assert_allclose(m.params[k] - before.params[k], 0.1 * (grad[k] - sg.get(k, 0.0)), rtol=1e-9,
                                   atol=1e-12, err_msg=k)
    np.testing.assert_allclose(state.hidden_q, q)  # the running activity starts at the first batch's mean
    # the next update decays it: q = 0.9 q_old + 0.1 mean
    q_old = state.hidden_q.copy()
    cd.batch_update(np.random.default_rng(2), state, data, None, cfg, 0.1, 0.0)
    mean = expit(data @ m.params["W:0"] + m.params["h:bias"]).mean(axis=0)
    assert not np.allclose(state.hidden_q, q_old)
    assert np.all(np.abs(state.hidden_q - q_old) <= 0.1 * np.abs(mean - q_old) + 0.05)


# -- fast PCD ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("broken", [False, True])
def test_fast_pcd_chains_move_under_the_fast_augmented_model(broken):
    """With the regular couplings at 0 and large fast couplings, the persistent chains' reconstructions follow
    p(x | h) of theta + theta_fast; the twin that runs the chains under theta alone is rejected."""
    m, _ = _tiny_rbm()
    fast_w = m.params["W:0"].copy()
    m.params["W:0"][...] = 0.0
    n = 20000
    h = np.tile([1.0, 0.0, 1.0], (n, 1))
    state = cd.init(np.random.default_rng(0), m, persistent=True, n_chains=n)
    state.chains[...] = h
    fast = {k: np.zeros_like(v) for k, v in m.params.items()}
    fast["W:0"] = fast_w.copy()  # decayed in place by the update, after the chains moved
    state = state._replace(fast=fast)
    cfg = cd.CDConfig(batch_size=n, persistent=True, learning_rate=make_schedule("constant", 0.0),
                      fast_learning_rate=0.0 if broken else 1e-9)
    xs_neg, _ = cd.batch_update(np.random.default_rng(3), state, np.zeros((n, 5)), None, cfg, 0.0, 0.0)
    x = np.asarray(xs_neg[0].toarray() if hasattr(xs_neg[0], "toarray") else xs_neg[0])
    p = expit(m.params["v:0:bias"] + h[0] @ fast_w.T)  # the fast-augmented model's p(x | h)
    z = (x.mean(axis=0) - p) / np.sqrt(p * (1 - p) / n)
    assert (np.abs(z).max() < 4.5) != broken, z


@pytest.mark.parametrize("broken", [False, True])
def test_fast_pcd_update_is_the_regular_gradient_for_both(broken):
    """theta += lr g and theta_fast <- decay theta_fast + eta_fast g, g the regular model's CD gradient at the chains'
    negatives (the twin takes the hidden means of the fast-augmented model)."""
    m, data = _tiny_rbm()
    before = m.copy()
    rng = np.random.default_rng(4)
    fast0 = {k: rng.normal(0, 0.5, v.shape) for k, v in m.params.items()}
    state = cd.init(np.random.default_rng(0), m, persistent=True, n_chains=4)
    state.chains[...] = (rng.random(state.chains.shape) < 0.5)
    state = state._replace(fast={k: v.copy() for k, v in fast0.items()})
    cfg = cd.CDConfig(batch_size=4, persistent=True, learning_rate=make_schedule("constant", 0.1),
                      fast_learning_rate=0.3, fast_decay=0.9)
    xs_neg, _ = cd.batch_update(np.random.default_rng(5), state, data, None, cfg, 0.1, 0.0)
    x_neg = xs_neg[0].toarray() if hasattr(xs_neg[0], "toarray") else xs_neg[0]
    g = cd.cd_gradient(before, data, x_neg)
    if broken:  # negative statistics with the fast-augmented model's hidden means
        aug = before.with_params({k: before.params[k] + fast0[k] for k in fast0})
        wrong = aug.statistics(x_neg, None)
        right = before.statistics(x_neg, None)
        g = {k: g[k] + (np.asarray(right[k]) - np.asarray(wrong[k])) / x_neg.shape[0] for k in g}
    ok = True
    for k in before.params:
        ok &= np.allclose(m.params[k] - before.params[k], 0.1 * g[k], rtol=1e-9, atol=1e-12)
        ok &= np.allclose(state.fast[k], 0.9 * fast0[k] + 0.3 * g[k], rtol=1e-9, atol=1e-12)
    assert ok != broken
