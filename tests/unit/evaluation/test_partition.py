"""Partition functions of harmoniums: exact enumeration, naive MC (seed 000 App. A), IS (seed 001 eqs. 9-10), AIS.

Accuracy: |log Z_AIS - log Z| < 0.05 nats on models small enough to enumerate (or to integrate in
closed form), with 1,500 temperatures and 100 runs in the default tier; the standard schedule of
14,500 temperatures is in the slow tier. Negative control: AIS with a wrong base-rate log Z fails.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.special import logsumexp

from harmonium.errors import InvalidParameterError
from harmonium.evaluation import partition
from harmonium.evaluation.partition import (
    ais_log_partition,
    base_rate_model,
    default_betas,
    exact_log_partition,
    harmonium_log_likelihood,
    importance_sampling_log_partition,
    log_mean_exp,
    naive_mc_log_partition,
)
from harmonium.models.undirected.efh import Harmonium
from harmonium.models.undirected.units import BinomialUnits
from harmonium.models.undirected.variants import dual_wing, gb_efh, random_init, rbm, replicated_softmax

N_T = 1_500


def _rbm(n_v=12, n_h=8, scale=0.6, seed=0):
    rng = np.random.default_rng(seed)
    m = random_init(rng, rbm(n_v, n_h), scale)
    m.params["v:0:bias"] = rng.normal(-1.0, 1.0, n_v)
    m.params["h:bias"] = rng.normal(-0.5, 0.5, n_h)
    return m


def _gbefh(seed=1):
    rng = np.random.default_rng(seed)
    m = random_init(rng, gb_efh(10, 3), 0.35)
    m.params["v:0:bias"] = rng.normal(-1.0, 0.5, 10)
    return m


def _rsm(seed=2):
    rng = np.random.default_rng(seed)
    m = random_init(rng, replicated_softmax(20, 6), 0.5)
    m.params["v:0:bias"] = rng.normal(0.0, 1.0, 20)
    m.params["h:bias"] = rng.normal(-0.2, 0.2, 6)
    return m


def _dual(seed=3):
    rng = np.random.default_rng(seed)
    m = random_init(rng, dual_wing(6, 2, 3), 0.3)
    m.params["v:0:bias"] = rng.normal(-1.0, 0.5, 6)
    m.params["v:1:bias"] = rng.normal(0.0, 0.5, 2)
    return m


def _dual_exact(m):
    """Words enumerated; features z ~ N(.,1) and topics h ~ N(.,1) integrated: a Gaussian integral per x."""
    X = m.wings[0].units.states(m.wings[0].size)
    Wx, U, c = m.W(0), m.W(1), m.params["v:1:bias"]
    p, f = U.shape
    # log p*(x, z, h) = theta.x + c.z - z.z/2 + x Wx h + z U h - h.h/2 - (p + f)/2 log 2 pi
    A = np.block([[np.eye(p), -U], [-U.T, np.eye(f)]])
    sign, logdet = np.linalg.slogdet(A)
    assert sign > 0
    Ainv = np.linalg.inv(A)
    out = []
    for x in X:
        b = np.concatenate([c, x @ Wx])
        out.append(x @ m.params["v:0:bias"] + 0.5 * b @ Ainv @ b - 0.5 * logdet)
    return logsumexp(out)


# -- exact ---------------------------------------------------------------------------------
def test_exact_enumeration_matches_brute_force_over_both_layers():
    m = _rbm(6, 4, scale=1.0)
    X, H = m.wings[0].units.states(6), m.hidden.states(4)
    joint = [m.log_joint_unnormalized(X[i:i + 1], H[j:j + 1])[0] for i in range(64) for j in range(16)]
    assert exact_log_partition(m).log_z == pytest.approx(logsumexp(joint), abs=1e-10)
    # visible enumeration (hidden layer larger than the visible one)
    m2 = _rbm(4, 7, scale=1.0)
    X2 = m2.wings[0].units.states(4)
    H2 = m2.hidden.states(7)
    assert exact_log_partition(m2).log_z == pytest.approx(logsumexp(m2.log_unnormalized_hidden(H2)), abs=1e-10)
    assert exact_log_partition(m2).log_z == pytest.approx(logsumexp(m2.log_unnormalized(X2)), abs=1e-10)


def test_exact_multi_wing_binomial():
    rng = np.random.default_rng(4)
    m = random_init(rng, Harmonium([("a", "bernoulli", 3), ("b", BinomialUnits(2), 2)], "gaussian", 2), 0.4)
    X = list(itertools.product([0, 1], repeat=3))
    Y = list(itertools.product([0, 1, 2], repeat=2))
    xs = (np.array([x for x in X for _ in Y], float), np.array([y for _ in X for y in Y], float))
    assert exact_log_partition(m).log_z == pytest.approx(logsumexp(m.log_unnormalized(xs)), abs=1e-10)


def test_gb_efh_exact_is_the_seed_closed_form():
    m = _gbefh()
    X = m.wings[0].units.states(10)
    ref = logsumexp(X @ m.params["v:0:bias"] + 0.5 * ((X @ m.W()) ** 2).sum(axis=1))
    assert exact_log_partition(m).log_z == pytest.approx(ref, abs=1e-10)


def test_replicated_softmax_exact_matches_sum_over_sequences():
    rng = np.random.default_rng(5)
    m = random_init(rng, replicated_softmax(4, 3), 0.8)
    m.params["h:bias"] = rng.normal(0, 0.5, 3)
    for d in (1, 3):
        total = [m.log_unnormalized(np.bincount(seq, minlength=4)[None].astype(float), [d])[0]
                 for seq in itertools.product(range(4), repeat=d)]
        assert exact_log_partition(m, [d]).log_z[0] == pytest.approx(logsumexp(total), abs=1e-10)


def test_exact_refuses_too_many_states():
    with pytest.raises(InvalidParameterError, match="max_states"):
        exact_log_partition(_rbm(30, 30), max_states=1000)
    with pytest.raises(InvalidParameterError, match="lengths"):
        exact_log_partition(replicated_softmax(3, 2))


# -- schedules and error bars ---------------------------------------------------------------
def test_default_schedule_is_salakhutdinov_murray():
    b = default_betas()
    assert b.size == 14_501 and b[0] == 0.0 and b[-1] == 1.0 and np.all(np.diff(b) > 0)
    steps = b[1:]
    assert np.sum(steps <= 0.5) == 500 and np.sum((steps > 0.5) & (steps <= 0.9)) == 4_000
    assert np.sum(steps > 0.9) == 10_000
    assert default_betas(100).size == 101


def test_log_mean_exp_error_delta_method_and_bootstrap_agree():
    lw = np.random.default_rng(0).normal(0, 0.5, size=2000)
    est, se = log_mean_exp(lw)
    assert est == pytest.approx(np.log(np.mean(np.exp(lw))))
    _, se_b = log_mean_exp(lw, n_bootstrap=400, rng=np.random.default_rng(1))
    assert se_b == pytest.approx(se, rel=0.2)


# -- stochastic estimators -----------------------------------------------------------------
def _ais(model, seed, lengths=None, **kw):
    return ais_log_partition(seed, model, n_runs=100, n_temperatures=N_T, lengths=lengths, **kw)


@pytest.mark.parametrize("name", ["rbm", "gbefh", "dual_wing"])
def test_ais_is_accurate_to_005_nats(name):
    m = {"rbm": _rbm, "gbefh": _gbefh, "dual_wing": _dual}[name]()
    exact = _dual_exact(m) if name == "dual_wing" else exact_log_partition(m).log_z
    est = _ais(m, seed=10)
    assert abs(est.log_z - exact) < 0.05
    assert est.std_error < 0.05 and est.n_temperatures == N_T


def test_ais_is_accurate_for_replicated_softmax_at_each_length():
    m = _rsm()
    lengths = np.array([5, 20, 60])
    exact = exact_log_partition(m, lengths).log_z
    est = _ais(m, seed=11, lengths=lengths)
    np.testing.assert_array_equal(est.lengths, lengths)
    assert np.all(np.abs(est.log_z - exact) < 0.05), est.log_z - exact


def test_ais_base_rates_from_data():
    m = _rbm()
    x = m.gibbs_step(np.random.default_rng(0), np.zeros((500, 12)))[0][0]
    base = base_rate_model(m, x)
    assert np.all(base.W() == 0) and np.all(base.params["h:bias"] == 0)
    est = _ais(m, seed=12, base=base)
    assert abs(est.log_z - exact_log_partition(m).log_z) < 0.05


def test_ais_with_a_wrong_base_log_z_fails(monkeypatch):
    """Negative control: log Z_A without the hidden units' B_j(0) = log 2 terms."""
    m = _rbm()
    right = partition.base_log_partition

    def wrong(base, lengths=None):
        return right(base, lengths) - base.n_hidden * np.log(2.0)

    monkeypatch.setattr(partition, "base_log_partition", wrong)
    est = _ais(m, seed=10)
    assert abs(est.log_z - exact_log_partition(m).log_z) > 0.05


def test_simple_importance_sampling_within_its_error():
    m = _rbm(8, 4, scale=0.4)
    exact = exact_log_partition(m).log_z
    est = importance_sampling_log_partition(13, m, 20_000)
    assert est.method == "importance_sampling" and est.n_temperatures == 1
    assert abs(est.log_z - exact) < 4 * est.std_error + 0.01


def test_naive_monte_carlo_is_the_seed_lognormal_form():
    """Seed 000 eqs. 35-36: h ~ N(0, I), weight prod_i (1 + t_i), t = exp(theta + W h)."""
    m = _gbefh()
    est = naive_mc_log_partition(14, m, 20_000)
    rng = np.random.default_rng(14)
    h = rng.standard_normal((20_000, 3))
    t = np.exp(m.params["v:0:bias"] + h @ m.W().T)
    np.testing.assert_allclose(est.log_weights, np.log1p(t).sum(axis=1), rtol=1e-12)
    assert est.log_z_base == pytest.approx(0.0)
    exact = exact_log_partition(m).log_z
    assert abs(est.log_z - exact) < 4 * est.std_error + 0.01


def test_naive_monte_carlo_for_replicated_softmax():
    m = _rsm()
    est = naive_mc_log_partition(15, m, 20_000, lengths=[5])
    exact = exact_log_partition(m, [5]).log_z
    assert abs(est.log_z[0] - exact[0]) < 4 * est.std_error[0] + 0.01


def test_log_likelihood_errors_are_shared_within_a_length():
    m = _rsm()
    rng = np.random.default_rng(0)
    x = np.stack([rng.multinomial(d, np.full(20, 0.05)) for d in (5, 5, 5, 20)]).astype(float)
    lz = exact_log_partition(m, [5, 20])
    lz = lz._replace(std_error=np.array([0.1, 0.2]))
    ll, se = harmonium_log_likelihood(m, x, lz)
    np.testing.assert_allclose(ll, m.log_unnormalized(x) - lz.log_z[[0, 0, 0, 1]])
    np.testing.assert_allclose(se, [0.1 * np.sqrt(3)] * 3 + [0.2])
    assert np.sqrt((se ** 2).sum()) == pytest.approx(np.hypot(3 * 0.1, 0.2))


def test_bad_arguments():
    with pytest.raises(InvalidParameterError, match="betas"):
        ais_log_partition(0, _rbm(), betas=[0.0, 0.5])
    with pytest.raises(InvalidParameterError, match="lengths"):
        ais_log_partition(0, _rsm(), n_temperatures=10)
    with pytest.raises(InvalidParameterError, match="n_runs"):
        ais_log_partition(0, _rbm(), n_runs=0)
    with pytest.raises(InvalidParameterError, match="base model"):
        ais_log_partition(0, _rbm(), base=_rbm(), n_temperatures=10)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["rbm", "rsm"])
def test_ais_default_schedule_is_accurate(name):
    """The standard 14,500-temperature schedule on a larger enumerable model (2^10 hidden states)."""
    if name == "rbm":
        m = _rbm(40, 10, scale=0.5, seed=7)
        exact, est = exact_log_partition(m).log_z, ais_log_partition(20, m, n_runs=100)
        assert abs(est.log_z - exact) < 0.05
    else:
        m = _rsm(seed=8)
        exact = exact_log_partition(m, [30]).log_z[0]
        est = ais_log_partition(21, m, n_runs=100, lengths=[30])
        assert abs(est.log_z[0] - exact) < 0.05
