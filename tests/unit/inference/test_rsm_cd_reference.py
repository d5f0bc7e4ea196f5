"""The library's CD-1 update for Replicated Softmax against a plain-numpy reference (seed 001 eqs. 5-6; issue 17).

The RSM's CD-1 step for a mini-batch of B documents with counts v_n and lengths D_n:
hidden input eta_nj = sum_k v_nk W_kj + D_n c_j; h_n ~ Bernoulli(sigmoid(eta_n)); the reconstruction
v~_n draws D_n words from softmax(b + W h_n) (a multinomial with D_n trials); then, with the hidden
means p = sigmoid(eta) at the data and p~ at the reconstructions,

    dW = lr / B (v^T p - v~^T p~),  db = lr / B sum_n (v_n - v~_n),  dc = lr / B sum_n D_n (p_n - p~_n).

Given the reconstructions the step is deterministic, so it is compared exactly; the reconstructions
are compared in expectation with the exact E[v~ | v] (2^F hidden states enumerated), with Monte
Carlo tolerances. Each check has a broken twin (the hidden biases not scaled by D) that must fail.
"""

from __future__ import annotations

import itertools

import numpy as np
import scipy.sparse as sp

from harmonium.inference.learning import cd
from harmonium.models.undirected.variants import replicated_softmax

V, F = 6, 3
LENGTHS = np.array([3.0, 7.0, 12.0, 40.0, 5.0, 90.0])


def _setup(seed=0):
    rng = np.random.default_rng(seed)
    rows = [rng.multinomial(int(d), rng.dirichlet(np.full(V, 0.7))) for d in LENGTHS]
    x = sp.csr_matrix(np.array(rows, dtype=np.float64))
    params = {"W:0": 0.6 * rng.standard_normal((V, F)), "v:0:bias": 0.5 * rng.standard_normal(V),
              "h:bias": 0.1 * rng.standard_normal(F)}
    return x, params


def _sigmoid(a):
    return 1.0 / (1.0 + np.exp(-a))


def reference_update(params, x, x_neg, lengths, lr, scale_by_length=True):
    """The CD step given the reconstructions, in plain numpy (module docstring)."""
    W, c = params["W:0"], params["h:bias"]
    x, x_neg = np.asarray(x.todense()), np.asarray(x_neg.todense())
    s = lengths[:, None] if scale_by_length else 1.0
    p, p_neg = _sigmoid(x @ W + s * c), _sigmoid(x_neg @ W + s * c)
    n = x.shape[0]
    return {"W:0": lr / n * (x.T @ p - x_neg.T @ p_neg), "v:0:bias": lr / n * (x - x_neg).sum(axis=0),
            "h:bias": lr / n * (s * (p - p_neg)).sum(axis=0)}


def reference_mean_reconstruction(params, x, lengths, scale_by_length=True):
    """E[v~ | v] = sum_h p(h | v) D softmax(b + W h), over the 2^F hidden states."""
    W, b, c = params["W:0"], params["v:0:bias"], params["h:bias"]
    x = np.asarray(x.todense())
    s = lengths[:, None] if scale_by_length else 1.0
    p = _sigmoid(x @ W + s * c)
    out = np.zeros_like(x)
    for h in itertools.product((0.0, 1.0), repeat=F):
        h = np.array(h)
        ph = np.prod(np.where(h == 1.0, p, 1.0 - p), axis=1)
        eta = b + W @ h
        soft = np.exp(eta - eta.max())
        out += ph[:, None] * lengths[:, None] * (soft / soft.sum())[None, :]
    return out


def _state(params):
    model = replicated_softmax(V, F, params={k: v.copy() for k, v in params.items()})
    return cd.init(np.random.default_rng(0), model)


def test_cd1_step_matches_the_numpy_reference_given_the_reconstructions():
    x, params = _setup()
    state = _state(params)
    cfg = cd.CDConfig(batch_size=len(LENGTHS), n_gibbs=1)
    lr = 0.05
    (x_neg,), lens = cd.batch_update(np.random.default_rng(1), state, (x,), LENGTHS, cfg, lr, 0.0)
    # the negative phase keeps every document's length: D draws
    np.testing.assert_array_equal(np.asarray(x_neg.sum(axis=1)).ravel(), LENGTHS)
    step = {k: state.model.params[k] - params[k] for k in params}
    ref = reference_update(params, x, x_neg, LENGTHS, lr)
    for k in params:
        np.testing.assert_allclose(step[k], ref[k], rtol=1e-10, atol=1e-13, err_msg=k)
    # broken twin: the hidden biases not scaled by D in the hidden input and the c gradient
    twin = reference_update(params, x, x_neg, LENGTHS, lr, scale_by_length=False)
    assert not np.allclose(step["h:bias"], twin["h:bias"], rtol=1e-6, atol=1e-9)
    assert not np.allclose(step["W:0"], twin["W:0"], rtol=1e-6, atol=1e-9)


def test_cd1_reconstructions_have_the_exact_expectation():
    x, params = _setup()
    state = _state(params)
    cfg = cd.CDConfig(batch_size=len(LENGTHS), n_gibbs=1)
    rng = np.random.default_rng(2)
    reps = 3000
    draws = np.empty((reps,) + x.shape)
    for r in range(reps):  # lr = 0: the parameters stay put, each call is one fresh negative phase
        (x_neg,), _ = cd.batch_update(rng, state, (x,), LENGTHS, cfg, 0.0, 0.0)
        draws[r] = x_neg.toarray()
    for k in params:
        np.testing.assert_array_equal(state.model.params[k], params[k])
    mean = draws.mean(axis=0)
    se = draws.std(axis=0, ddof=1) / np.sqrt(reps) + 1e-12
    z = np.abs(mean - reference_mean_reconstruction(params, x, LENGTHS)) / se
    assert z.max() < 4.5, z.max()  # 36 cells: P(max |z| > 4.5) < 36 * 7e-6
    z_twin = np.abs(mean - reference_mean_reconstruction(params, x, LENGTHS, scale_by_length=False)) / se
    assert z_twin.max() > 10.0, z_twin.max()
