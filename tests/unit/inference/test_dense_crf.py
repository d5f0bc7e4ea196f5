"""Mean field for fully connected CRFs (harmonium.inference.vi.dense_crf).

Exact targets on problems small enough to enumerate (N <= 8): the free energy
is KL(Q || P) - log Z, the messages match a brute-force numpy sum, parallel
updates match a brute-force mean field and report F correctly, sequential
updates never increase F, and a converged Q is a fixed point of the update
to 1e-8. Negative controls (double-counted pairs, a self-message, a sign
error in the update) fail the same checks. The grid approximation is
measured against the exact messages.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.special import logsumexp

from harmonium.errors import InvalidParameterError
from harmonium.inference.vi import dense_crf as dc


def tiny(seed, N=7, L=3, compat="potts", weights=(1.5, 0.8)):
    rng = np.random.default_rng(seed)
    pos = rng.uniform(0, 3, size=(N, 2))
    col = rng.uniform(0, 2, size=(N, 1))
    unary = rng.normal(0, 1, size=(N, L))
    if compat == "random":
        c = rng.normal(0, 1, size=(L, L))
        compat = c + c.T
    return dc.make_model(unary, [pos, np.hstack([pos, col])], list(weights), compat=compat,
                         bandwidths=[1.0, [1.5, 1.5, 0.7]])


def enumerate_model(model):
    """(log Z, energies of every labelling, the labellings) by listing all L^N of them."""
    N, L = model.unary.shape
    xs = np.array(list(itertools.product(range(L), repeat=N)))
    energies = np.array([dc.energy(model, x) for x in xs])
    return logsumexp(-energies), energies, xs


def kl_by_enumeration(model, Q):
    log_z, energies, xs = enumerate_model(model)
    log_q = np.log(Q[np.arange(Q.shape[0]), xs]).sum(axis=1)
    q = np.exp(log_q)
    return float((q * (log_q + energies + log_z)).sum()), log_z


def brute_messages(model, Q):
    return dc._strength_matrix(model) @ Q


# -- the free energy ------------------------------------------------------------------------------------


def check_free_energy(fe_fn, model, Q):
    kl, log_z = kl_by_enumeration(model, Q)
    np.testing.assert_allclose(fe_fn(model, Q) + log_z, kl, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("compat", ["potts", "random"])
def test_free_energy_is_kl_minus_log_z(compat):
    model = tiny(0, compat=compat)
    Q = np.random.default_rng(1).dirichlet(np.ones(3), size=7)
    check_free_energy(lambda m, q: dc.free_energy(m, q)[0], model, Q)
    F, expected, entropy = dc.free_energy(model, Q)
    assert F == pytest.approx(expected - entropy)


def test_energy_matches_a_direct_double_sum():
    model = tiny(2, N=5)
    x = np.array([0, 2, 1, 1, 0])
    K = np.zeros((5, 5))
    f1, f2 = model.feats[:, :2], model.feats[:, 2:]
    for i, j in itertools.combinations(range(5), 2):
        K[i, j] = model.weights[0] * np.exp(-0.5 * ((f1[i] - f1[j]) ** 2).sum()) + model.weights[1] * np.exp(
            -0.5 * ((f2[i] - f2[j]) ** 2).sum())
    pairs = itertools.combinations(range(5), 2)
    want = model.unary[np.arange(5), x].sum() + sum(K[i, j] * (x[i] != x[j]) for i, j in pairs)
    assert dc.energy(model, x) == pytest.approx(want, rel=1e-13)


def test_negative_control_free_energy_without_the_half_fails():
    model = tiny(0)
    Q = np.random.default_rng(1).dirichlet(np.ones(3), size=7)

    def double_counted(m, q):
        msg = dc.messages(m, q)
        e = (q * m.unary).sum() + (q * (msg @ m.compat.T)).sum()
        return e + (q * np.log(q)).sum()

    with pytest.raises(AssertionError):
        check_free_energy(double_counted, model, Q)


# -- messages -------------------------------------------------------------------------------------------


def check_messages(msg_fn, model, Q):
    np.testing.assert_allclose(msg_fn(model, Q), brute_messages(model, Q), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("n_jobs", [1, 3])
def test_exact_messages_match_brute_force(n_jobs):
    model = tiny(3, N=8)
    Q = np.random.default_rng(0).dirichlet(np.ones(3), size=8)
    check_messages(lambda m, q: dc.messages(m, q, dc.message_plan(m, "exact", n_jobs=n_jobs)), model, Q)


def test_negative_control_message_with_self_term_fails():
    model = tiny(3, N=8)
    Q = np.random.default_rng(0).dirichlet(np.ones(3), size=8)
    with pytest.raises(AssertionError):
        check_messages(lambda m, q: dc.messages(m, q) + m.weights.sum() * q, model, Q)


# -- parallel and sequential updates --------------------------------------------------------------------


def brute_mean_field(model, n_iter):
    """K&K Algorithm 1 in numpy: Q <- softmax(-unary - (K Q) mu^T), from the unary-only start."""
    Q = np.exp(-model.unary - logsumexp(-model.unary, axis=1, keepdims=True))
    K = dc._strength_matrix(model)
    out = [Q]
    for _ in range(n_iter):
        logits = -model.unary - (K @ Q) @ model.compat.T
        Q = np.exp(logits - logsumexp(logits, axis=1, keepdims=True))
        out.append(Q)
    return out


@pytest.mark.parametrize("compat", ["potts", "random"])
def test_parallel_updates_match_brute_force_and_report_the_free_energy(compat):
    model = tiny(4, compat=compat)
    res = dc.mean_field(model, n_iter=6, schedule="parallel")
    qs = brute_mean_field(model, 6)
    np.testing.assert_allclose(res.Q, qs[-1], rtol=1e-11, atol=1e-13)
    assert res.trace["iteration"] == list(range(7))
    for k, Q in enumerate(qs):
        kl, log_z = kl_by_enumeration(model, Q)
        assert res.trace["free_energy"][k] == pytest.approx(kl - log_z, rel=1e-10, abs=1e-10)
        e = (Q * model.unary).sum() + 0.5 * (Q * ((dc._strength_matrix(model) @ Q) @ model.compat.T)).sum()
        assert res.trace["expected_energy"][k] == pytest.approx(e, rel=1e-10, abs=1e-10)
        assert kl >= -1e-12  # F >= -log Z


def check_monotone(sweep_fn, model, n_sweeps=25):
    """F after every single-variable update never rises."""
    plan = dc.message_plan(model)
    state = dc.init(model, plan)
    f = dc.free_energy(model, state.Q)[0]
    rng = np.random.default_rng(0)
    for _ in range(n_sweeps):
        for i in rng.permutation(model.n_variables):
            sweep_fn(model, state, i)
            f_new = dc.free_energy(model, state.Q)[0]
            assert f_new <= f + 1e-12
            f = f_new


def ours_step(model, state, i):
    from harmonium._kernels import dense_crf as kd

    kd.sequential_sweep(model.feats, model.dim_ptr, model.weights, model.unary, model.compat,
                        np.array([i], dtype=np.int64), state.Q, state.msg, np.empty(model.n_labels))


@pytest.mark.parametrize(("seed", "compat", "weights"), [(5, "potts", (1.5, 0.8)), (6, "random", (3.0, 2.0)),
                                                         (7, "random", (10.0, 0.0))])
def test_sequential_updates_never_increase_the_free_energy(seed, compat, weights):
    model = tiny(seed, compat=compat, weights=weights)
    check_monotone(ours_step, model)
    res = dc.mean_field(model, n_iter=30, schedule="sequential")
    assert np.all(np.diff(res.trace["free_energy"]) <= 1e-12)


def test_negative_control_update_with_wrong_sign_raises_the_free_energy():
    model = tiny(5)

    def wrong_sign(model, state, i):
        logits = -model.unary[i] + model.compat @ state.msg[i]  # + instead of -
        q = np.exp(logits - logits.max())
        q /= q.sum()
        state.Q[i] = q
        state.msg[:] = dc.messages(model, state.Q)

    with pytest.raises(AssertionError):
        check_monotone(wrong_sign, model)


@pytest.mark.parametrize("compat", ["potts", "random"])
def test_converged_q_is_a_fixed_point_and_bounds_log_z(compat):
    model = tiny(8, N=8, L=2 if compat == "random" else 3, compat=compat)
    res = dc.mean_field(model, n_iter=500, schedule="sequential", tol=1e-13)
    assert res.converged
    np.testing.assert_allclose(dc.update(model, dc.messages(model, res.Q)), res.Q, atol=1e-8)
    kl, log_z = kl_by_enumeration(model, res.Q)
    assert kl >= 0  # mean field is not exact on a coupled model ...
    # ... but it is without pairwise terms: then Q is the exact marginal
    free = model._replace(weights=np.zeros_like(model.weights))
    q_free = dc.mean_field(free, n_iter=3).Q
    log_z0, energies, xs = enumerate_model(free)
    p = np.exp(-energies - log_z0)
    exact = np.stack([[p[xs[:, i] == l].sum() for l in range(free.n_labels)] for i in range(free.n_variables)])
    np.testing.assert_allclose(q_free, exact, atol=1e-12)


# -- the grid approximation -----------------------------------------------------------------------------


@pytest.mark.parametrize("D", [2, 3])
def test_grid_messages_close_to_exact(D):
    rng = np.random.default_rng(D)
    N, L = 400, 3
    model = dc.make_model(rng.normal(size=(N, L)), [rng.uniform(0, 6, size=(N, D))], [1.0])
    Q = rng.dirichlet(np.ones(L), size=N)
    errs = [dc.grid_error(model, Q, spacing=s) for s in (0.5, 0.75, 1.0)]
    assert errs[0] < errs[1] < errs[2]
    assert errs[0] < 0.01 and errs[1] < 0.02 and errs[2] < 0.04


def test_grid_mean_field_tracks_exact():
    rng = np.random.default_rng(0)
    N, L = 300, 3
    pos = rng.uniform(0, 8, size=(N, 2))
    unary = rng.normal(size=(N, L)) - 2.0 * (pos[:, :1] > 4) * np.eye(L)[0]
    model = dc.make_model(unary, [pos], [0.5])
    exact = dc.mean_field(model, n_iter=5, method="exact")
    grid = dc.mean_field(model, n_iter=5, method="grid", spacing=0.5)
    assert np.abs(grid.Q - exact.Q).mean() < 0.005
    assert (grid.Q.argmax(axis=1) == exact.Q.argmax(axis=1)).mean() >= 0.98
    f_grid, f_exact = grid.trace["free_energy"][-1], exact.trace["free_energy"][-1]
    assert abs(f_grid - f_exact) < 0.01 * abs(f_exact)


# -- validation -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(unary=np.ones(3)), "unary must be a non-empty 2-D array"),
        (dict(unary=np.array([[0.0, np.inf]] * 3)), "unary holds NaN or infinity"),
        (dict(features=np.ones((2, 2))), "features of kernel 0 must be"),
        (dict(weights=[-1.0]), "weights must be 1 finite non-negative"),
        (dict(compat=np.array([[0.0, 1.0], [2.0, 0.0]])), "compat must be symmetric"),
        (dict(compat="ising"), "compat must be 'potts'"),
        (dict(bandwidths=[0.0]), "bandwidths of kernel 0 must be positive"),
    ],
)
def test_make_model_rejects(kwargs, match):
    args = dict(unary=np.zeros((3, 2)), features=np.zeros((3, 2)), weights=[1.0])
    args.update(kwargs)
    with pytest.raises(InvalidParameterError, match=match):
        dc.make_model(**args)


def test_plan_and_schedule_errors():
    model = tiny(0)
    with pytest.raises(InvalidParameterError, match="'spacing' parameter of message_plan"):
        dc.message_plan(model, "grid", spacing=2.0)
    with pytest.raises(InvalidParameterError, match="max_cells"):
        dc.message_plan(model, "grid", spacing=0.01, max_cells=1000)
    with pytest.raises(InvalidParameterError, match="sequential schedule needs method='exact'"):
        dc.mean_field(model, n_iter=1, method="grid", schedule="sequential")
    with pytest.raises(InvalidParameterError, match="'schedule'"):
        dc.build_kernel("random")
