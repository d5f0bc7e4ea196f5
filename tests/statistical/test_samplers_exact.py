"""Exactness of Metropolis-Hastings and Gibbs on an enumerable target, and of the integrators.

Target: a 3 x 4 table pi(i, j) proportional to fixed positive weights.

1. Deterministic: the transition matrix built from the exposed pieces (the test's proposal pmf and
   ``rwmh.acceptance_probability``; the exact conditionals for Gibbs) satisfies pi P = pi.
2. Stochastic: the real kernels (``rwmh.build_mh_kernel``, ``gibbs.build_kernel``) run from exact
   draws of pi for a few steps; the end states pass a chi-square test against pi (alpha = 1e-4).
3. Negative controls fail both: MH with the Hastings correction of the asymmetric proposal
   dropped; Gibbs with an off-by-one conditional.

Also deterministic: MALA's acceptance satisfies detailed balance pi(x) q(x'|x) a(x, x') =
pi(x') q(x|x') a(x', x) (and fails without the proposal correction); the leapfrog integrator,
numpy and compiled, is reversible and volume preserving with O(eps^2) energy error (a sign
flip in the last half step breaks reversibility). And the continuous Gibbs sampler on a
bivariate normal (rho = 0.9) recovers its moments (|z| < 4.5, see ``_mcmc_targets``).
"""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit
from scipy import stats

from harmonium._kernels import mcmc_hmc
from harmonium.inference.mcmc import gibbs, hmc, langevin, rwmh
from harmonium.parallel.seeds import spawn

from ._mcmc_targets import CORR2, Z, moment_z

ALPHA = 1e-4
W = np.random.default_rng(7).uniform(0.2, 2.0, size=(3, 4))
PI = (W / W.sum()).reshape(-1)
SHAPE = W.shape
N_STATES = PI.size
R = [np.array([0.6, 0.3, 0.1]), np.array([0.1, 0.2, 0.3, 0.4])]  # asymmetric proposal pmfs per coordinate


def log_target(x):
    return float(np.log(W[x[0], x[1]]))


def propose(rng, x):
    c = int(rng.integers(2))
    y = x.copy()
    y[c] = int(np.searchsorted(np.cumsum(R[c]), rng.random() * R[c].sum(), side="right"))
    return y


def proposal_pmf(y, x):
    diff = np.flatnonzero(y != x)
    if diff.size == 0:
        return 0.5 * R[0][x[0]] + 0.5 * R[1][x[1]]
    if diff.size == 1:
        c = int(diff[0])
        return 0.5 * R[c][y[c]]
    return 0.0


def proposal_logdensity(y, x):
    return float(np.log(proposal_pmf(y, x)))


def mh_matrix(hastings=True):
    P = np.zeros((N_STATES, N_STATES))
    for s in range(N_STATES):
        x = np.array(np.unravel_index(s, SHAPE))
        for u in range(N_STATES):
            y = np.array(np.unravel_index(u, SHAPE))
            q = proposal_pmf(y, x)
            if u == s or q == 0.0:
                continue
            if hastings:
                a = rwmh.acceptance_probability(log_target(x), log_target(y), np.log(q), np.log(proposal_pmf(x, y)))
            else:
                a = rwmh.acceptance_probability(log_target(x), log_target(y))
            P[s, u] = q * a
        P[s, s] = 1.0 - P[s].sum()
    return P


def _end_states(kernel, init_state, n_chains, n_steps, seed):
    """Histogram of the states after ``n_steps`` kernel calls from exact draws of pi."""
    rng = np.random.default_rng(seed)
    starts = rng.choice(N_STATES, size=n_chains, p=PI)
    hist = np.zeros(N_STATES, dtype=np.int64)
    for c, s0 in enumerate(starts):
        state = init_state(np.array(np.unravel_index(s0, SHAPE)))
        for _ in range(n_steps):
            state, _ = kernel(rng, state)
        hist[np.ravel_multi_index(tuple(state.position), SHAPE)] += 1
        del c
    return hist


def _chi2_p(hist):
    return stats.chisquare(hist, PI * hist.sum()).pvalue


# -- Metropolis-Hastings ----------------------------------------------------------------------------
def test_mh_transition_matrix_leaves_pi_invariant():
    P = mh_matrix()
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
    assert P.min() >= 0.0
    np.testing.assert_allclose(PI @ P, PI, atol=1e-12)


def test_negative_control_mh_without_hastings_correction_is_not_invariant():
    assert np.abs(PI @ mh_matrix(hastings=False) - PI).max() > 1e-3


def _mh_hist(hastings, seed=11):
    kernel = rwmh.build_mh_kernel(lambda x: log_target(x), propose, proposal_logdensity if hastings else None)
    return _end_states(kernel, lambda x: rwmh.init(x, log_target), 20000, 2, seed)


def test_mh_kernel_visits_states_with_pi_frequencies():
    assert _chi2_p(_mh_hist(True)) > ALPHA


def test_negative_control_mh_kernel_without_hastings_fails_chi_square():
    assert _chi2_p(_mh_hist(False)) < ALPHA


# -- Gibbs --------------------------------------------------------------------------------------------
def _draw(rng, p):
    return int(np.searchsorted(np.cumsum(p), rng.random() * p.sum(), side="right"))


def draw_row(rng, x):
    return _draw(rng, W[:, x[1]])


def draw_col(rng, x):
    return _draw(rng, W[x[0], :])


def draw_col_off_by_one(rng, x):
    return _draw(rng, W[(x[0] + 1) % SHAPE[0], :])


def conditional_matrix(coordinate, off_by_one=False):
    """Exact one-block update matrix: block ``coordinate`` redrawn from its conditional."""
    P = np.zeros((N_STATES, N_STATES))
    for s in range(N_STATES):
        i, j = np.unravel_index(s, SHAPE)
        if coordinate == 0:
            p = W[:, j] / W[:, j].sum()
            for v in range(SHAPE[0]):
                P[s, np.ravel_multi_index((v, j), SHAPE)] += p[v]
        else:
            row = W[(i + 1) % SHAPE[0]] if off_by_one else W[i]
            p = row / row.sum()
            for v in range(SHAPE[1]):
                P[s, np.ravel_multi_index((i, v), SHAPE)] += p[v]
    return P


@pytest.mark.parametrize("scan", ["systematic", "random"])
def test_gibbs_sweep_leaves_pi_invariant(scan):
    P0, P1 = conditional_matrix(0), conditional_matrix(1)
    P = P0 @ P1 if scan == "systematic" else np.linalg.matrix_power(0.5 * (P0 + P1), 2)
    np.testing.assert_allclose(PI @ P, PI, atol=1e-12)


def test_negative_control_off_by_one_conditional_is_not_invariant():
    P = conditional_matrix(0) @ conditional_matrix(1, off_by_one=True)
    assert np.abs(PI @ P - PI).max() > 1e-3


def _gibbs_hist(conditionals, scan, seed=13):
    kernel = gibbs.build_kernel(conditionals, scan=scan)
    return _end_states(kernel, lambda x: gibbs.init(x), 20000, 1, seed)


@pytest.mark.parametrize("scan", ["systematic", "random"])
def test_gibbs_kernel_visits_states_with_pi_frequencies(scan):
    assert _chi2_p(_gibbs_hist([draw_row, draw_col], scan)) > ALPHA


def test_negative_control_gibbs_off_by_one_fails_chi_square():
    assert _chi2_p(_gibbs_hist([draw_row, draw_col_off_by_one], "systematic")) < ALPHA


def test_gibbs_on_a_bivariate_normal_recovers_its_moments():
    rho = 0.9
    s = np.sqrt(1 - rho * rho)

    def cond(k):
        return lambda rng, x: rho * x[1 - k] + s * rng.standard_normal()

    kernel = gibbs.build_kernel([cond(0), cond(1)])
    rng = np.random.default_rng(17)
    chains = spawn(rng, 4)
    starts = CORR2.exact_draws(rng, 4)
    draws = np.empty((4, 5000, 2))
    for c in range(4):
        state = gibbs.init(starts[c])
        for t in range(5000):
            state, _ = kernel(chains[c], state)
            draws[c, t] = state.position
    assert np.abs(moment_z(draws, CORR2)).max() < Z


# -- MALA detailed balance ------------------------------------------------------------------------------
def _banana_vg(x):
    u = x[1] + 0.03 * (x[0] ** 2 - 100.0)
    return -x[0] ** 2 / 200.0 - 0.5 * u * u, np.array([-x[0] / 100.0 - u * 0.06 * x[0], -u])


@pytest.mark.parametrize("correct", [True, False])
def test_mala_acceptance_satisfies_detailed_balance(correct):
    rng = np.random.default_rng(19)
    eps, im = 0.7, np.array([4.0, 0.5])
    worst = 0.0
    for _ in range(200):
        x = hmc.init(rng.normal(0, 3, 2), _banana_vg)
        y = hmc.init(x.position + rng.normal(0, 1, 2), _banana_vg)

        def flow(a, b):  # log of pi(a) q(b | a) alpha(a, b)
            log_alpha = min(0.0, langevin.mala_log_ratio(a, b, eps, im, correct))
            return a.logdensity + langevin.proposal_logdensity(b.position, a.position, a.grad, eps, im) + log_alpha

        worst = max(worst, abs(flow(x, y) - flow(y, x)))
    if correct:
        assert worst < 1e-10
    else:
        assert worst > 1e-2


# -- leapfrog --------------------------------------------------------------------------------------------
@njit
def _banana_vg_jit(x):
    u = x[1] + 0.03 * (x[0] * x[0] - 100.0)
    return -x[0] * x[0] / 200.0 - 0.5 * u * u, np.array([-x[0] / 100.0 - u * 0.06 * x[0], -u])


def _leapfrog_numpy(q, p, eps, n, flip_last=False):
    g = _banana_vg(q)[1]
    im = np.array([2.0, 0.5])
    if not flip_last:
        q1, p1, _, _ = hmc.leapfrog(_banana_vg, (), q, p, g, eps, n, im)
        return q1, p1
    for _ in range(n):
        p = p + 0.5 * eps * g
        q = q + eps * im * p
        g = _banana_vg(q)[1]
        p = p - 0.5 * eps * g
    return q, p


def _leapfrog_compiled(q, p, eps, n):
    q, p = q.copy(), p.copy()
    g = _banana_vg_jit(q)[1].copy()
    mcmc_hmc.leapfrog(_banana_vg_jit, (), q, p, g, eps, n, np.array([2.0, 0.5]))
    return q, p


@pytest.mark.parametrize("integrator", ["numpy", "compiled"])
def test_leapfrog_is_reversible_volume_preserving_and_second_order(integrator):
    step = (lambda q, p, e, n: _leapfrog_numpy(q, p, e, n)) if integrator == "numpy" else _leapfrog_compiled
    q0, p0 = np.array([12.0, -3.0]), np.array([0.7, -1.1])
    q1, p1 = step(q0, p0, 0.05, 20)
    q2, p2 = step(q1, -p1, 0.05, 20)  # flip momentum, integrate back
    np.testing.assert_allclose(q2, q0, atol=1e-9)
    np.testing.assert_allclose(-p2, p0, atol=1e-9)
    # Jacobian of (q, p) -> (q1, p1) by central differences has determinant 1
    z0, h = np.concatenate([q0, p0]), 1e-6
    J = np.empty((4, 4))
    for k in range(4):
        e = np.zeros(4)
        e[k] = h
        a = np.concatenate(step((z0 + e)[:2], (z0 + e)[2:], 0.05, 20))
        b = np.concatenate(step((z0 - e)[:2], (z0 - e)[2:], 0.05, 20))
        J[:, k] = (a - b) / (2 * h)
    assert abs(np.linalg.det(J) - 1.0) < 1e-6

    def energy_error(eps):
        q, p = step(q0, p0, eps, int(round(1.0 / eps)))
        h = lambda qq, pp: -_banana_vg(qq)[0] + 0.5 * np.sum(np.array([2.0, 0.5]) * pp * pp)  # noqa: E731
        return abs(h(q, p) - h(q0, p0))

    ratio = energy_error(0.02) / energy_error(0.01)
    assert 3.0 < ratio < 5.5  # O(eps^2): halving eps quarters the error


def test_negative_control_leapfrog_with_flipped_last_half_step_is_not_reversible():
    q0, p0 = np.array([12.0, -3.0]), np.array([0.7, -1.1])
    q1, p1 = _leapfrog_numpy(q0, p0, 0.05, 20, flip_last=True)
    q2, _ = _leapfrog_numpy(q1, -p1, 0.05, 20, flip_last=True)
    assert np.abs(q2 - q0).max() > 1e-3
