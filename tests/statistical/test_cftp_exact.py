"""Monotone coupling from the past for GB-EFH (seed 000 §5.1) against enumeration.

* The heat-bath conditional leaves the enumerated p(x | W) invariant (pi P = pi, deterministic).
* CFTP draws of a 4-unit and a 5-unit model with V = W W^T >= 0 pass a chi-square test against the
  enumerated distribution (alpha = 1e-4 each).
* Negative control: fixed-horizon forward sampling from the top state (one sweep; the natural
  "shortcut") fails the same test.
* A W whose V has a negative entry is refused with a message naming V.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import chi2

from harmonium.errors import InvalidParameterError
from harmonium.inference.mcmc import cftp
from harmonium.models.undirected.variants import gb_efh

ALPHA = 1e-4


def _model(m, seed):
    rng = np.random.default_rng(seed)
    W = np.abs(rng.normal(0.0, 0.6, (m, 2)))
    theta = rng.normal(-0.7, 0.5, m)
    return W, theta


def _exact(W, theta):
    states = np.array(list(itertools.product([0.0, 1.0], repeat=W.shape[0])))
    logp = states @ theta + 0.5 * ((states @ W) ** 2).sum(axis=1)
    return states, np.exp(logp - logsumexp(logp))


def _chi2_pvalue(x, states, p):
    codes = (x @ (2 ** np.arange(x.shape[1] - 1, -1, -1))).astype(int)
    counts = np.bincount(codes, minlength=states.shape[0])
    expected = x.shape[0] * p
    stat = ((counts - expected) ** 2 / expected).sum()
    return chi2.sf(stat, states.shape[0] - 1)


def test_marginal_matches_the_harmonium():
    W, theta = _model(4, 1)
    states, p = _exact(W, theta)
    m = gb_efh(4, 2, dtype=np.float64)
    m.params["W:0"], m.params["v:0:bias"] = W, theta
    lp = m.log_unnormalized(states)
    np.testing.assert_allclose(p, np.exp(lp - logsumexp(lp)), rtol=1e-10)


def test_heat_bath_leaves_p_invariant():
    W, theta = _model(4, 2)
    C, b = cftp.ising_parameters(W, theta)
    states, p = _exact(W, theta)
    codes = {tuple(s): k for k, s in enumerate(states)}
    for i in range(4):
        P = np.zeros((16, 16))
        for k, s in enumerate(states):
            q = cftp.conditional(C, b, s, i)
            for v, pr in ((1.0, q), (0.0, 1 - q)):
                t = s.copy()
                t[i] = v
                P[k, codes[tuple(t)]] += pr
        np.testing.assert_allclose(p @ P, p, atol=1e-12)


@pytest.mark.parametrize("m,seed", [(4, 3), (5, 4)])
def test_cftp_draws_are_exact(m, seed):
    W, theta = _model(m, seed)
    states, p = _exact(W, theta)
    x, info = cftp.sample(np.random.default_rng(seed), W, theta, 20_000)
    assert info.all_coalesced
    assert _chi2_pvalue(x, states, p) > ALPHA


def test_negative_control_fixed_horizon_forward_sampling():
    W, theta = _model(4, 3)
    states, p = _exact(W, theta)
    x = cftp.forward_sample(np.random.default_rng(3), W, theta, 20_000, n_sweeps=1, start=1.0)
    assert _chi2_pvalue(x, states, p) < ALPHA


def test_refuses_negative_couplings():
    W = np.array([[1.0, 0.0], [-1.0, 0.0], [0.5, 0.5]])
    with pytest.raises(InvalidParameterError, match="V = W W"):
        cftp.sample(np.random.default_rng(0), W, None, 3)
