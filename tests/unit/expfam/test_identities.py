"""Exponential-family identities: grad A = E[T], Monte Carlo moments, batching, generic vs closed forms."""

from __future__ import annotations

import numpy as np
import pytest

from harmonium.expfam import ExponentialFamily, Gamma

from ._cases import CASES, NAMES, Z, member


def _full(dist):
    """Natural parameters broadcast to ``batch_shape + event_shape`` (writable copies)."""
    out = []
    for p, nd in zip(dist.natural_params, dist.event_dims, strict=True):
        p = np.asarray(p, dtype=float)
        ev = p.shape[p.ndim - nd:] if nd else ()
        out.append(np.array(np.broadcast_to(p, dist.batch_shape + ev)))
    return out


def _directions(event_shape):
    """Unit directions of one part; for a matrix part, symmetric ones (E_jk + E_kj)."""
    if len(event_shape) == 2:
        d = event_shape[0]
        for j in range(d):
            for k in range(j, d):
                e = np.zeros(event_shape)
                e[j, k] = e[k, j] = 1.0
                yield e
    else:
        for idx in np.ndindex(*event_shape):
            e = np.zeros(event_shape)
            e[idx] = 1.0
            yield e


@pytest.mark.parametrize("name", NAMES)
def test_gradient_of_log_partition_is_mean_params(name):
    dist = CASES[name].batch()
    eta, fixed, mu = _full(dist), dist.fixed_params, dist.mean_params()
    h = 1e-5
    for i, nd in enumerate(dist.event_dims):
        ev = eta[i].shape[eta[i].ndim - nd:] if nd else ()
        for e in _directions(ev):
            plus = [p.copy() for p in eta]
            minus = [p.copy() for p in eta]
            plus[i] = plus[i] + h * e
            minus[i] = minus[i] - h * e
            fd = (type(dist).from_natural(*plus, **fixed).log_partition()
                  - type(dist).from_natural(*minus, **fixed).log_partition()) / (2 * h)
            expected = (np.asarray(mu[i]) * e).sum(axis=tuple(range(-nd, 0))) if nd else np.asarray(mu[i]) * e
            np.testing.assert_allclose(fd, expected, rtol=1e-5, atol=1e-6, err_msg=f"{name} part {i}")


def _within_mc(samples, target):
    """|MC mean - target| <= Z standard errors, per coordinate (samples: leading axis = draws)."""
    n = samples.shape[0]
    mc = samples.mean(axis=0)
    se = samples.std(axis=0, ddof=1) / np.sqrt(n)
    return np.abs(mc - target) <= Z * se + 1e-12 * (1 + np.abs(target))


@pytest.mark.parametrize("name", NAMES)
def test_mean_params_match_monte_carlo(name):
    dist = CASES[name].batch()
    x = dist.sample(np.random.default_rng(1234), 20_000)
    for t, m in zip(dist.sufficient_stats(x), dist.mean_params(), strict=True):
        m = np.asarray(m)
        t = np.broadcast_to(t, (20_000,) + m.shape)
        ok = _within_mc(t, m)
        assert ok.all(), f"{name}: MC {t.mean(axis=0)[~ok]} vs mean_params {m[~ok]}"


def test_monte_carlo_check_catches_a_wrong_mean():
    """Negative control: E[lambda] off by 2% is caught by the same tolerance."""
    dist = Gamma(np.array([2.0, 6.0]), np.array([3.0, 0.5]))
    t = dist.sufficient_stats(dist.sample(np.random.default_rng(5), 20_000))[1]
    assert _within_mc(t, dist.mean_params()[1]).all()
    assert not _within_mc(t, 1.02 * dist.mean_params()[1]).any()


@pytest.mark.parametrize("name", NAMES)
def test_sample_shapes(name):
    dist = CASES[name].batch()
    rng = np.random.default_rng(0)
    one, many = dist.sample(rng), dist.sample(rng, (4, 2))
    if isinstance(one, tuple):
        assert one[0].shape[:1] == (3,) and many[0].shape[:3] == (4, 2, 3)
    else:
        assert one.shape[:1] == (3,) and many.shape[:3] == (4, 2, 3)
    assert dist.batch_shape == (3,)


@pytest.mark.parametrize("name", NAMES)
def test_batch_equals_separate_distributions(name):
    case = CASES[name]
    dist = case.batch()
    x = dist.sample(np.random.default_rng(7), 5)
    lp = dist.log_prob(x)
    other = type(dist).from_natural(*(p[::-1] for p in _full(dist)), **dist.fixed_params)
    kl = dist.kl(other)
    for i in range(3):
        single, sub = case.single(i), dist[i]
        xi = member(x, i)
        for d in (single, sub):
            np.testing.assert_allclose(d.log_partition(), dist.log_partition()[i], rtol=1e-10)
            np.testing.assert_allclose(d.entropy(), dist.entropy()[i], rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(d.log_prob(xi), lp[:, i], rtol=1e-9)
            np.testing.assert_allclose(d.kl(other[i]), kl[i], rtol=1e-9, atol=1e-12)
            for a, b in zip(d.mean_params(), dist.mean_params(), strict=True):
                np.testing.assert_allclose(a, np.asarray(b)[i], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", NAMES)
def test_closed_forms_agree_with_generic_natural_form(name):
    """Overridden log_prob / entropy / kl equal the base-class formulas from (eta, T, h, A, mu)."""
    dist = CASES[name].batch()
    rng = np.random.default_rng(3)
    x = dist.sample(rng, 4)
    np.testing.assert_allclose(dist.log_prob(x), ExponentialFamily.log_prob(dist, x), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(dist.entropy(), ExponentialFamily.entropy(dist), rtol=1e-9, atol=1e-9)
    other = dist[np.array([1, 2, 0])]
    if name in ("Binomial", "Multinomial", "GaussianKnownVariance"):
        with pytest.raises(ValueError, match="same"):
            dist.kl(other)
        other = type(dist).from_natural(*(np.asarray(p)[[1, 2, 0]] for p in _full(dist)), **dist.fixed_params)
    np.testing.assert_allclose(dist.kl(other), ExponentialFamily.kl(dist, other), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("name", NAMES)
def test_from_natural_round_trip(name):
    dist = CASES[name].batch()
    back = type(dist).from_natural(*dist.natural_params, **dist.fixed_params)
    for a, b in zip(back.natural_params, dist.natural_params, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
