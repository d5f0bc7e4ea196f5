"""Block Gibbs sampling of harmoniums leaves the enumerated joint invariant (DESIGN.md, statistical tests).

1. A 4x3 binary harmonium: the transition matrix of one sweep (h' ~ p(h | x), x' ~ p(x | h')) built
   from the exposed conditionals satisfies pi P = pi exactly; the real sampler's states after one
   sweep from exact draws of pi pass a chi-square test against pi (dense and sparse draws).
2. The same for Replicated Softmax (3 words, D = 2, 2 hidden units), whose stationary law over
   count vectors carries the multinomial coefficient.
3. Negative controls: a sweep whose p(x | h) misses the visible bias fails both checks.

Alpha per chi-square assertion 1e-3 (6 assertions in the file); fixed seeds; no retries.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats
from scipy.special import gammaln, logsumexp

from harmonium.models.undirected.variants import random_init, rbm, replicated_softmax

N_CHAINS = 100_000


def _model_4x3():
    rng = np.random.default_rng(11)
    m = random_init(rng, rbm(4, 3), 1.0)
    m.params["v:0:bias"] = rng.normal(0, 1, 4)
    m.params["h:bias"] = rng.normal(0, 1, 3)
    return m


def _rsm():
    rng = np.random.default_rng(12)
    m = random_init(rng, replicated_softmax(3, 2), 1.0)
    m.params["v:0:bias"] = rng.normal(0, 1, 3)
    m.params["h:bias"] = rng.normal(0, 1, 2)
    return m


def _rsm_states(n_words=3, length=2):
    states = [c for c in itertools.product(range(length + 1), repeat=n_words) if sum(c) == length]
    return np.array(states, dtype=float)


def _joint(m, X, H, lengths=None):
    """All (x, h) pairs, row-major in x; log pi up to a constant (with the multinomial coefficient for counts)."""
    xi, hi = np.meshgrid(np.arange(len(X)), np.arange(len(H)), indexing="ij")
    xx, hh = X[xi.ravel()], H[hi.ravel()]
    lens = None if lengths is None else np.full(len(xx), lengths, dtype=float)
    lp = m.log_joint_unnormalized(xx, hh, lens)
    if lengths is not None:
        lp = lp + gammaln(lengths + 1.0) - gammaln(xx + 1.0).sum(axis=1)
    return xx, hh, lp - logsumexp(lp)


def _transition(m, X, H, lengths=None, drop_visible_bias=False):
    """P[(x, h) -> (x', h')] = p(h' | x) p(x' | h'), from the model's exposed conditionals."""
    lens_x = None if lengths is None else np.full(len(X), lengths, dtype=float)
    lens_h = None if lengths is None else np.full(len(H), lengths, dtype=float)
    ph = np.stack([m.p_h_given_x(X, lens_x).log_prob(np.broadcast_to(h, (len(X), len(h)))).sum(axis=1) for h in H],
                  axis=1)  # (n_x, n_h)
    mx = m
    if drop_visible_bias:
        mx = m.copy()
        mx.params["v:0:bias"][:] = 0.0
    px = np.stack([mx.p_x_given_h(H, lens_h)[0].log_prob(np.broadcast_to(x, (len(H), len(x)))).reshape(len(H), -1)
                   .sum(axis=1) for x in X], axis=1)  # (n_h, n_x)
    n_x, n_h = len(X), len(H)
    P = np.zeros((n_x * n_h, n_x * n_h))
    for x in range(n_x):
        for h2 in range(n_h):
            for x2 in range(n_x):
                p = np.exp(ph[x, h2] + px[h2, x2])
                for h in range(n_h):
                    P[x * n_h + h, x2 * n_h + h2] = p
    return P


@pytest.mark.parametrize("drop", [False, True], ids=["correct", "missing-bias"])
def test_rbm_transition_matrix_keeps_pi(drop):
    m = _model_4x3()
    X, H = m.wings[0].units.states(4), m.hidden.states(3)
    _, _, log_pi = _joint(m, X, H)
    pi = np.exp(log_pi)
    P = _transition(m, X, H, drop_visible_bias=drop)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)
    gap = np.abs(pi @ P - pi).sum()
    if drop:
        assert gap > 0.05  # negative control: pi is not invariant
    else:
        assert gap < 1e-12


def _chi_square_after_one_sweep(m, X, H, step, lengths=None, seed=0):
    xx, hh, log_pi = _joint(m, X, H, lengths)
    pi = np.exp(log_pi)
    rng = np.random.default_rng(seed)
    start = rng.choice(len(pi), size=N_CHAINS, p=pi)
    x0 = xx[start]
    x1, h1 = step(rng, x0)
    x1 = x1.toarray() if hasattr(x1, "toarray") else np.asarray(x1)
    # index of (x1, h1) in the joint enumeration
    xkey = {tuple(r): i for i, r in enumerate(X)}
    hkey = {tuple(r): i for i, r in enumerate(H)}
    idx = np.array([xkey[tuple(a)] * len(H) + hkey[tuple(b)] for a, b in zip(x1, np.asarray(h1), strict=True)])
    counts = np.bincount(idx, minlength=len(pi))
    return stats.chisquare(counts, N_CHAINS * pi).pvalue


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse-kernel"])
def test_rbm_sampler_chi_square(sparse):
    m = _model_4x3()
    X, H = m.wings[0].units.states(4), m.hidden.states(3)

    def step(rng, x):
        xs, h = m.gibbs_step(rng, x, sparse=sparse)
        return xs[0], h

    assert _chi_square_after_one_sweep(m, X, H, step, seed=1 + sparse) > 1e-3


def test_rbm_sampler_chi_square_negative_control():
    m = _model_4x3()
    broken = m.copy()
    broken.params["v:0:bias"][:] = 0.0
    X, H = m.wings[0].units.states(4), m.hidden.states(3)

    def step(rng, x):
        h = m.sample_h(rng, x)
        return broken.sample_x(rng, h)[0], h

    assert _chi_square_after_one_sweep(m, X, H, step, seed=3) < 1e-10


@pytest.mark.parametrize("drop", [False, True], ids=["correct", "missing-bias"])
def test_replicated_softmax_transition_keeps_pi(drop):
    m = _rsm()
    X, H = _rsm_states(), m.hidden.states(2)
    _, _, log_pi = _joint(m, X, H, lengths=2)
    pi = np.exp(log_pi)
    P = _transition(m, X, H, lengths=2, drop_visible_bias=drop)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)
    gap = np.abs(pi @ P - pi).sum()
    assert (gap > 0.05) if drop else (gap < 1e-12)


def test_replicated_softmax_sampler_chi_square():
    m = _rsm()
    X, H = _rsm_states(), m.hidden.states(2)
    lengths = np.full(N_CHAINS, 2.0)

    def step(rng, x):
        xs, h = m.gibbs_step(rng, x, lengths)
        return xs[0], h

    assert _chi_square_after_one_sweep(m, X, H, step, lengths=2, seed=4) > 1e-3
