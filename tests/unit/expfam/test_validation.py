"""Bad input gives one clear InvalidParameterError; extreme logits stay finite; small API behaviours."""

from __future__ import annotations

import numpy as np
import pytest

from harmonium import expfam as ef
from harmonium.errors import InvalidParameterError

BAD = [
    (lambda: ef.Beta(-1.0, 2.0), r"^Beta: 'a' must be finite and > 0; got -1\.0\.$"),
    (lambda: ef.Beta([1.0, 2.0, 3.0, -1.0], 1.0),
     r"^Beta: 'a' must be finite and > 0 everywhere; got -1\.0 at index 3\.$"),
    (lambda: ef.Beta("x", 1.0), r"Beta: 'a' must be a real number"),
    (lambda: ef.Gamma(1.0, 0.0), r"Gamma: 'rate' must be finite and > 0; got 0\.0"),
    (lambda: ef.Dirichlet([[1.0, 2.0], [3.0, -1.0]]), r"Dirichlet: 'alpha' .* got -1\.0 at index \(1, 1\)"),
    (lambda: ef.Dirichlet(1.0), r"Dirichlet: 'alpha' must be a vector"),
    (lambda: ef.Categorical([0.5, 0.6]), r"Categorical: 'probs.sum\(axis=-1\)' must be 1 .*got 1\.1"),
    (lambda: ef.Categorical([-0.1, 1.1]), r"Categorical: 'probs' must be finite and >= 0 .*index 0"),
    (lambda: ef.Categorical.from_logits([np.nan, 0.0]), r"Categorical.from_logits: 'logits' must be a real number"),
    (lambda: ef.Categorical.from_logits([-np.inf, -np.inf]), r"at least one possible category"),
    (lambda: ef.Bernoulli(1.5), r"Bernoulli: 'p' must be in \[0, 1\]; got 1\.5"),
    (lambda: ef.Binomial(2.5, 0.3), r"Binomial: 'n' must be an integer >= 0; got 2\.5"),
    (lambda: ef.Multinomial(-1, [0.5, 0.5]), r"Multinomial: 'n' must be an integer >= 0"),
    (lambda: ef.Poisson([1.0, 0.0]), r"Poisson: 'rate' must be finite and > 0 everywhere; got 0\.0 at index 1"),
    (lambda: ef.Gaussian(0.0, -1.0), r"Gaussian: 'variance' must be finite and > 0"),
    (lambda: ef.Gaussian(np.nan, 1.0), r"Gaussian: 'mu' must be finite"),
    (lambda: ef.Gaussian.from_natural(1.0, 0.5), r"Gaussian.from_natural: 'eta2' must be finite and < 0"),
    (lambda: ef.GaussianKnownVariance(0.0, 0.0), r"GaussianKnownVariance: 'variance'"),
    (lambda: ef.MultivariateGaussian([0.0, 0.0], [[1.0, 2.0], [2.0, 1.0]]),
     r"MultivariateGaussian: 'cov \(smallest eigenvalue\)' must be > 0"),
    (lambda: ef.MultivariateGaussian([0.0, 0.0], [[1.0, 0.5], [0.0, 1.0]]), r"'cov \(largest \|M - M\^T\|\)'"),
    (lambda: ef.MultivariateGaussian([0.0, 0.0, 0.0], np.eye(2)), r"must be 3 x 3 to match 'mu'"),
    (lambda: ef.NormalInverseWishart([0.0, 0.0], 1.0, 0.5, np.eye(2)),
     r"NormalInverseWishart: 'nu' must be > d - 1 = 1"),
    (lambda: ef.NormalInverseWishart([0.0, 0.0], [1.0, -1.0], 3.0, np.eye(2)), r"'kappa' .* at index 1"),
    (lambda: ef.NormalGamma(0.0, 1.0, 0.0, 1.0), r"NormalGamma: 'alpha' must be finite and > 0"),
    (lambda: ef.Binomial.from_natural(0.3), r"Binomial.from_natural: pass the fixed 'n'"),
    (lambda: ef.Categorical.conjugate_stats([0, 5], n_categories=3),
     r"Categorical.conjugate_stats: 'x' must be an integer label in \[0, 2\] everywhere; got 5 at index 1"),
    (lambda: ef.Categorical.conjugate_stats([0, 1]), r"pass 'n_categories'"),
    (lambda: ef.Binomial.conjugate_stats([1, 2]), r"Binomial.conjugate_stats: pass the fixed 'n'"),
    (lambda: ef.Binomial.conjugate_stats([1, 7], n=5), r"'x' must be an integer in \[0, n\] .* got 7\.0 at index 1"),
    (lambda: ef.Poisson.conjugate_stats([1.5]), r"Poisson.conjugate_stats: 'x' must be a non-negative integer"),
    (lambda: ef.Bernoulli.conjugate_stats([0, 2]), r"Bernoulli.conjugate_stats: 'x' must be 0 or 1"),
    (lambda: ef.Multinomial.conjugate_stats([[1, -1]]), r"Multinomial.conjugate_stats: 'x' must be a non-negative"),
    (lambda: ef.GaussianKnownVariance.conjugate_stats([1.0]), r"pass the fixed 'variance'"),
    (lambda: ef.Gaussian.conjugate_stats([1.0, 2.0], weights=[1.0]), r"'weights' must have shape sample_shape \(2,\)"),
    (lambda: ef.Gaussian.conjugate_stats([1.0, 2.0], weights=[1.0, np.nan]), r"'weights' must be finite"),
    (lambda: ef.Dirichlet([1.0, 1.0]).posterior((np.array([-2.0, 0.0]),)), r"Dirichlet: 'alpha' .*got -1\.0"),
    (lambda: ef.Categorical([0.5, 0.5]).log_prob(2), r"Categorical.log_prob: 'x' must be an integer label"),
]


@pytest.mark.parametrize(("make", "message"), BAD)
def test_bad_input_raises_one_clear_error(make, message):
    with pytest.raises(InvalidParameterError, match=message):
        make()


def test_errors_are_value_errors():
    with pytest.raises(ValueError):
        ef.Beta(0.0, 1.0)


def test_extreme_logits_are_finite():
    b = ef.Bernoulli.from_logits([-1000.0, 1000.0, 0.0])
    np.testing.assert_allclose(b.log_partition(), [0.0, 1000.0, np.log(2.0)])
    np.testing.assert_allclose(b.entropy(), [0.0, 0.0, np.log(2.0)], atol=1e-300)
    np.testing.assert_allclose(b.mean_params()[0], [0.0, 1.0, 0.5])
    np.testing.assert_allclose(b.log_prob([1, 1, 1]), [-1000.0, 0.0, -np.log(2.0)])
    np.testing.assert_allclose(b.kl(ef.Bernoulli(0.5)), [np.log(2.0)] * 2 + [0.0], atol=1e-12)
    assert set(b.sample(np.random.default_rng(0), 50)[:, :2].ravel()) <= {0, 1}
    c = ef.Categorical.from_logits([[1000.0, -1000.0, 0.0], [-1000.0, -1000.0, -1000.0]])
    np.testing.assert_allclose(c.log_partition(), [1000.0, -1000.0 + np.log(3.0)])
    np.testing.assert_allclose(c.entropy(), [0.0, np.log(3.0)], atol=1e-12)
    np.testing.assert_allclose(c.mean_params()[0][1], [1 / 3] * 3)
    np.testing.assert_allclose(c.log_prob([0, 0]), [0.0, -np.log(3.0)])
    assert np.isfinite(c.kl(ef.Categorical([1 / 3] * 3))).all()
    m = ef.Multinomial.from_logits(4, [1000.0, -1000.0, 0.0])
    np.testing.assert_allclose(m.log_prob([4, 0, 0]), 0.0, atol=1e-12)
    assert np.isfinite(m.entropy()) and np.isfinite(ef.Binomial.from_logits(4, 1000.0).entropy())


def test_zero_probabilities():
    c = ef.Categorical([0.0, 0.5, 0.5])
    np.testing.assert_allclose(c.entropy(), np.log(2.0))
    assert c.log_prob(0) == -np.inf
    assert c.kl(ef.Categorical([0.5, 0.5, 0.0])) == np.inf
    np.testing.assert_allclose(ef.Categorical([0.5, 0.5, 0.0]).kl(ef.Categorical([0.25, 0.25, 0.5])), np.log(2.0))
    assert (c.sample(np.random.default_rng(0), 200) > 0).all()
    b = ef.Bernoulli([0.0, 1.0])
    np.testing.assert_allclose(b.log_prob([0, 1]), [0.0, 0.0])
    np.testing.assert_allclose(b.entropy(), [0.0, 0.0])


def test_dirichlet_small_alpha_samples_stay_on_simplex():
    x = ef.Dirichlet(np.full(5, 0.01)).sample(np.random.default_rng(0), 1000)
    assert np.isfinite(x).all()
    np.testing.assert_allclose(x.sum(axis=-1), 1.0)


def test_conjugate_stats_on_an_instance_uses_its_fixed_parameters():
    x = np.array([0, 3, 5, 2])
    for a, b in zip(ef.Binomial(5, 0.3).conjugate_stats(x), ef.Binomial.conjugate_stats(x, n=5), strict=True):
        np.testing.assert_allclose(a, b)
    np.testing.assert_allclose(ef.Categorical([0.2, 0.2, 0.6]).conjugate_stats([0, 2, 2])[0], [1.0, 0.0, 2.0])
    gkv = ef.GaussianKnownVariance(0.0, 2.0)
    np.testing.assert_allclose(gkv.log_likelihood_base([1.0, 2.0]),
                               ef.GaussianKnownVariance.log_likelihood_base([1.0, 2.0], variance=2.0))


def test_indexing_and_repr():
    d = ef.Dirichlet(np.ones((4, 3)))
    assert d[1:3].batch_shape == (2,)
    assert repr(d) == "Dirichlet(batch_shape=(4,))"
    with pytest.raises(IndexError, match="batch shape"):
        d[0, 1]
    layer = ef.Bernoulli.from_logits(np.zeros((5, 7)))  # a harmonium unit layer, batch (n, M)
    assert layer.batch_shape == (5, 7) and layer.sample(np.random.default_rng(0)).shape == (5, 7)
    assert layer[2].batch_shape == (7,)
