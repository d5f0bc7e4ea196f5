"""Property tests (hypothesis): stability and basic inequalities over random parameters."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from harmonium import expfam as ef

LOGITS = st.floats(-1000.0, 1000.0, allow_nan=False)
FAST = settings(max_examples=40, deadline=None)


@FAST
@given(hnp.arrays(np.float64, st.integers(1, 6), elements=LOGITS), hnp.arrays(np.float64, 6, elements=LOGITS))
def test_bernoulli_is_stable_for_any_logits(eta, other):
    b, q = ef.Bernoulli.from_logits(eta), ef.Bernoulli.from_logits(other[: eta.size])
    h = b.entropy()
    assert np.isfinite(b.log_partition()).all() and (b.log_partition() >= np.maximum(eta, 0.0)).all()
    assert ((h >= 0) & (h <= np.log(2.0) + 1e-12)).all()
    kl = b.kl(q)
    assert np.isfinite(kl).all() and (kl >= -1e-9).all()
    lp = b.log_prob(np.ones_like(eta)), b.log_prob(np.zeros_like(eta))
    np.testing.assert_allclose(np.logaddexp(*lp), 0.0, atol=1e-12)


@FAST
@given(st.integers(2, 6).flatmap(lambda k: hnp.arrays(np.float64, (3, k), elements=LOGITS)))
def test_categorical_is_stable_for_any_logits(logits):
    c = ef.Categorical.from_logits(logits)
    k = logits.shape[-1]
    h = c.entropy()
    assert ((h >= -1e-12) & (h <= np.log(k) + 1e-9)).all()
    np.testing.assert_allclose(c.mean_params()[0].sum(axis=-1), 1.0)
    x = np.arange(k)[:, None]
    np.testing.assert_allclose(np.logaddexp.reduce(c.log_prob(x), axis=0), 0.0, atol=1e-9)
    kl = c.kl(c[[2, 0, 1]])
    assert (kl >= -1e-9).all() and not np.isnan(kl).any()


@FAST
@given(hnp.arrays(np.float64, (2, 4), elements=st.floats(0.05, 50.0)))
def test_dirichlet_kl_is_nonnegative_and_zero_on_itself(alpha):
    p, q = ef.Dirichlet(alpha[0]), ef.Dirichlet(alpha[1])
    assert p.kl(q) >= -1e-9
    assert abs(p.kl(p)) < 1e-9
    np.testing.assert_allclose(p.mean_params()[0], p.expected_log())
