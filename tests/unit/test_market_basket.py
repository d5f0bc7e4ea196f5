"""make_market_basket: the IBM Quest generator's statistics against the papers' formulas.

Every statistical assertion is a z-test (or an exact binomial / chi-square test) whose expected value
and standard error are derived below from Agrawal & Srikant's procedure, conditioned on what the
generator shows upstream (pattern lengths, corruption levels), so the null distribution is exact up
to the normal approximation. Tolerance: |z| < 3.29, a two-sided false-alarm rate of 1e-3 per
assertion; p-values >= 1e-3 for the exact tests. Seeds are fixed; nothing is retried. Each test has
a broken twin (a generator with one ingredient changed) that fails the same test.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats

import harmonium.datasets.market_basket as mb
from harmonium._kernels.market_basket import fill_transactions
from harmonium.datasets import MarketBasket, make_market_basket
from harmonium.errors import InvalidParameterError

Z = 3.29  # two-sided normal quantile for a 1e-3 false alarm per assertion
P_MIN = 1e-3

BIG_TABLES = dict(n_transactions=2_000, n_customers=50, n_items=5_000, n_basket_patterns=20_000,
                  n_customer_patterns=20_000, mean_basket_pattern_size=3.0, mean_customer_pattern_length=4.0)


def _z(observed, expected, variance):
    return (np.sum(observed) - np.sum(expected)) / np.sqrt(np.sum(variance))


# ------------------------------------------------------------------ expected values (the papers)


def _min_moments(p_ge):
    """Mean and variance of Y >= 0 from P(Y >= m), m = 1..M (array, one row per draw)."""
    m = np.arange(1, p_ge.shape[1] + 1)
    mean = p_ge.sum(axis=1)
    second = (p_ge * (2 * m - 1)).sum(axis=1)
    return mean, second - mean**2


def _overlap_moments(new_len, prev_len, corr):
    """Y = min(round(f * l_new), l_new, l_prev), f ~ Exp(mean corr): P(Y >= m) = exp(-(m - 1/2) / (l_new corr))."""
    top = int(max(new_len.max(), 1))
    m = np.arange(1, top + 1)
    p = np.exp(-(m[None, :] - 0.5) / (new_len[:, None] * corr))
    p[m[None, :] > np.minimum(new_len, prev_len)[:, None]] = 0.0
    return _min_moments(p)


def _dropped_moments(length, c):
    """D = min(G, l), P(G >= d) = c**d (drop while a uniform is below c)."""
    top = int(max(length.max(), 1))
    m = np.arange(1, top + 1)
    p = c[:, None] ** m[None, :]
    p[m[None, :] > length[:, None]] = 0.0
    return _min_moments(p)


def _clipped_normal_moments(mean, variance):
    sd = np.sqrt(variance)
    pdf = stats.norm(mean, sd).pdf
    above = stats.norm(mean, sd).sf(1.0)
    m1 = integrate.quad(lambda x: x * pdf(x), 0, 1)[0] + above
    m2 = integrate.quad(lambda x: x * x * pdf(x), 0, 1)[0] + above
    return m1, m2 - m1**2


@pytest.fixture(scope="module")
def big() -> MarketBasket:
    return make_market_basket(**BIG_TABLES, random_state=1)


# ------------------------------------------------------------------ pattern tables


def _basket_size_z(data, mean):
    sizes = np.array([g.size for g in data.item_groups])
    return _z(sizes, mean * np.ones(sizes.size), (mean - 1.0) * np.ones(sizes.size))


def _customer_length_z(data, mean):
    lengths = np.array([g.size for g in data.customer_groups])
    return _z(lengths, mean * np.ones(lengths.size), (mean - 1.0) * np.ones(lengths.size))


def test_pattern_sizes_have_the_poisson_means(big):
    assert abs(_basket_size_z(big, 3.0)) < Z
    assert abs(_customer_length_z(big, 4.0)) < Z


def test_pattern_sizes_broken_twin_wrong_poisson_mean_fails(monkeypatch):
    monkeypatch.setattr(mb, "_sizes", lambda rng, mean, n: 1 + rng.poisson(mean, n))
    data = make_market_basket(**BIG_TABLES, random_state=1)
    assert abs(_basket_size_z(data, 3.0)) > Z
    assert abs(_customer_length_z(data, 4.0)) > Z


def _basket_overlap_z(data, corr):
    groups = data.item_groups
    lengths = np.array([g.size for g in groups])
    overlap = np.array([np.intersect1d(groups[k], groups[k - 1]).size for k in range(1, len(groups))])
    mean, var = _overlap_moments(lengths[1:], lengths[:-1], corr)
    return _z(overlap, mean, var)


def test_successive_basket_patterns_share_items_as_the_correlation_level_says(big):
    assert abs(_basket_overlap_z(big, 0.5)) < Z


def test_correlation_broken_twin_without_the_correlation_step_fails(monkeypatch):
    monkeypatch.setattr(mb, "_n_from_previous", lambda rng, lengths, corr: np.zeros(lengths.size, dtype=np.int64))
    data = make_market_basket(**BIG_TABLES, random_state=1)
    assert abs(_basket_overlap_z(data, 0.5)) > Z


def test_correlation_broken_twin_with_rate_for_mean_fails(monkeypatch):
    # Exp with *rate* equal to the correlation level (mean 2 instead of 0.5)
    real = mb._n_from_previous
    monkeypatch.setattr(mb, "_n_from_previous", lambda rng, lengths, corr: real(rng, lengths, 1.0 / corr))
    data = make_market_basket(**BIG_TABLES, random_state=1)
    assert abs(_basket_overlap_z(data, 0.5)) > Z


def test_customer_patterns_reuse_the_previous_ones_elements(big):
    seqs = big.customer_groups
    n_prev = big.patterns.customer_n_from_previous
    lengths = np.array([s.size for s in seqs])
    for k in range(1, len(seqs)):  # the reused elements come first, in the previous pattern's order
        it = iter(seqs[k - 1].tolist())
        assert all(x in it for x in seqs[k][: n_prev[k]].tolist())
    mean, var = _overlap_moments(lengths[1:], lengths[:-1], 0.25)
    assert abs(_z(n_prev[1:], mean, var)) < Z
    # the fresh elements are drawn by the basket weights
    fresh = np.concatenate([s[n:] for s, n in zip(seqs, n_prev, strict=True)])
    expected = big.patterns.basket_weights * fresh.size
    assert stats.chisquare(np.bincount(fresh, minlength=expected.size), expected).pvalue > P_MIN


def test_weights_are_normalised_exponentials(big):
    # normalised Exp(1) weights are Dirichlet(1, ..., 1): E[sum w^2] = 2/(n+1)
    for w in (big.patterns.basket_weights, big.patterns.customer_weights):
        n = w.size
        second = (4 * n + 20) / ((n + 1) * (n + 2) * (n + 3))
        assert np.isclose(w.sum(), 1.0)
        assert abs(_z(np.sum(w**2), 2 / (n + 1), second - 4 / (n + 1) ** 2)) < Z


def test_corruption_levels_are_clipped_normals(big):
    for c, mean in ((big.patterns.basket_corruption, 0.5), (big.patterns.customer_corruption, 0.75)):
        m1, var = _clipped_normal_moments(mean, 0.1)
        assert abs(_z(c, m1 * np.ones(c.size), var * np.ones(c.size))) < Z


# ------------------------------------------------------------------ the stream: recurrence and corruption


def _stream(pat=None, n_seq=40_000, seed=2):
    data = make_market_basket(n_transactions=500, n_customers=20, n_items=500, n_basket_patterns=200,
                              n_customer_patterns=100, mean_basket_pattern_size=3.0, random_state=0)
    real = data.patterns
    return real, mb._stream(np.random.default_rng(seed), pat or real, n_seq)


def _recurrence_p(real, s):
    expected = real.customer_weights * s.customer_pattern.size
    return stats.chisquare(np.bincount(s.customer_pattern, minlength=expected.size), expected).pvalue


def _corruption_zs(real, s):
    b_len = np.array([g.size for g in real.basket_items])
    s_len = np.array([g.size for g in real.customer_baskets])
    mean_b, var_b = _dropped_moments(b_len[s.basket_pattern], real.basket_corruption[s.basket_pattern])
    mean_s, var_s = _dropped_moments(s_len[s.customer_pattern], real.customer_corruption[s.customer_pattern])
    z_items = _z(b_len[s.basket_pattern] - s.basket_kept, mean_b, var_b)
    z_baskets = _z(s_len[s.customer_pattern] - s.n_baskets_kept, mean_s, var_s)
    return z_items, z_baskets


def test_customer_patterns_recur_by_their_weights():
    real, s = _stream()
    assert _recurrence_p(real, s) > P_MIN


def test_recurrence_broken_twin_drawing_patterns_uniformly_fails():
    real, _ = _stream()
    flat = np.full(real.customer_weights.size, 1.0 / real.customer_weights.size)
    _, s = _stream(real._replace(customer_weights=flat))
    assert _recurrence_p(real, s) < P_MIN


def test_corruption_drops_while_a_uniform_is_below_the_level():
    real, s = _stream()
    z_items, z_baskets = _corruption_zs(real, s)
    assert abs(z_items) < Z
    assert abs(z_baskets) < Z
    # the kept items are members of their pattern, and as many as counted
    assert s.items.size == s.basket_kept.sum()


def test_corruption_broken_twin_with_keep_probability_for_drop_fails(monkeypatch):
    real_dropped = mb._n_dropped
    monkeypatch.setattr(mb, "_n_dropped", lambda rng, c, n: real_dropped(rng, 1.0 - c, n))
    real, s = _stream()
    z_items, z_baskets = _corruption_zs(real, s)
    assert abs(z_items) > Z and abs(z_baskets) > Z


# ------------------------------------------------------------------ transactions


def _target_size_z(data, mean):
    per_customer = np.bincount(data.customer, minlength=data.counts.shape[0]).astype(float)
    return _z(data.target_sizes, mean * data.customer.size,
              (per_customer + per_customer**2) * (mean - 1.0))


def test_transaction_sizes_have_the_poisson_mean():
    data = make_market_basket(n_transactions=100_000, n_customers=5_000, n_items=500, random_state=3)
    assert abs(_target_size_z(data, 4.0)) < Z
    # customers' transaction counts: multinomial, i.e. Poisson(|C|) given the total
    per_customer = np.bincount(data.customer, minlength=5_000)
    assert per_customer.sum() == 100_000
    assert stats.chisquare(per_customer).pvalue > P_MIN


def test_transaction_sizes_broken_twin_wrong_poisson_mean_fails(monkeypatch):
    monkeypatch.setattr(mb, "_sizes", lambda rng, mean, n: 1 + rng.poisson(mean, n))
    data = make_market_basket(n_transactions=100_000, n_customers=5_000, n_items=500, random_state=3)
    assert abs(_target_size_z(data, 4.0)) > Z


def _decisions(put_anyway, seed=4):
    """Over-target vs under-target transactions among those that met an itemset that did not fit."""
    real, s = _stream(n_seq=60_000)
    sizes = s.basket_kept[s.basket_kept > 0]
    rng = np.random.default_rng(seed)
    targets = 1 + rng.poisson(rng.poisson(3.0, 40_000))
    bounds = np.empty(targets.size + 1, dtype=np.int64)
    assert fill_transactions(sizes, targets, rng.random(targets.size), put_anyway, bounds) == targets.size
    ptr = np.concatenate([[0], np.cumsum(sizes)])
    realised = np.diff(ptr[bounds])
    forced = sizes[bounds[:-1]] > targets  # an empty transaction takes the itemset on hand
    over = int(np.sum((realised > targets) & ~forced))
    under = int(np.sum(realised < targets))
    return over, under


def test_itemsets_that_do_not_fit_go_in_anyway_half_the_time():
    over, under = _decisions(mb.PUT_ANYWAY)
    assert over + under > 5_000
    assert stats.binomtest(over, over + under, 0.5).pvalue > P_MIN


def test_half_rule_broken_twin_fails():
    over, under = _decisions(0.6)
    assert stats.binomtest(over, over + under, 0.5).pvalue < P_MIN


def test_transactions_and_ground_truth_agree():
    data = make_market_basket(n_transactions=5_000, n_customers=200, n_items=300, random_state=5)
    sizes = np.diff(data.indptr)
    assert data.customer.size == 5_000 and np.all(np.diff(data.customer) >= 0)
    assert sizes.min() >= 1 and data.indptr[-1] == data.items.size == data.counts.sum()
    assert data.counts.shape == (200, 300)
    dense = np.zeros((200, 300), dtype=np.int64)
    np.add.at(dense, (np.repeat(data.customer, sizes), data.items), 1)
    np.testing.assert_array_equal(data.counts.toarray(), dense)
    for item, b, s in zip(data.items, data.purchase_basket_pattern, data.purchase_customer_pattern, strict=True):
        assert item in data.item_groups[b] and b in data.customer_groups[s]
    bought = dense.sum(axis=0) > 0
    np.testing.assert_array_equal(data.item_group >= 0, bought)
    for i in np.flatnonzero(bought)[:50]:
        per_pattern = np.bincount(data.purchase_basket_pattern[data.items == i])
        assert data.item_group[i] == np.argmax(per_pattern)
        assert np.isclose(data.item_group_share[i], per_pattern.max() / per_pattern.sum())
    assert np.all((data.customer_group >= 0) == (dense.sum(axis=1) > 0))


# ------------------------------------------------------------------ determinism and errors

SMALL = dict(n_transactions=3_000, n_customers=100, n_items=200)


def test_same_seed_same_data_other_seed_other_data():
    a, b = make_market_basket(**SMALL, random_state=7), make_market_basket(**SMALL, random_state=7)
    c = make_market_basket(**SMALL, random_state=8)
    for field in ("customer", "indptr", "items", "target_sizes", "purchase_basket_pattern"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
    assert (a.counts != b.counts).nnz == 0 and a.seed == 7
    assert a.items.size != c.items.size or not np.array_equal(a.items, c.items)
    g = make_market_basket(**SMALL, random_state=np.random.default_rng(7))
    assert g.seed is None and np.array_equal(g.items, make_market_basket(
        **SMALL, random_state=np.random.default_rng(7)).items)


@pytest.mark.parametrize("name, value", [
    ("n_transactions", 0), ("n_customers", 1.5), ("n_items", -1), ("mean_transaction_size", 0.5),
    ("n_basket_patterns", 0), ("n_customer_patterns", True), ("mean_basket_pattern_size", 0.0),
    ("mean_basket_pattern_size", 500.0), ("mean_customer_pattern_length", float("nan")),
    ("basket_correlation", -0.1), ("customer_correlation", "high"), ("basket_corruption_mean", 1.0),
    ("customer_corruption_mean", -0.2), ("corruption_variance", -1.0), ("random_state", "seed"),
])
def test_bad_parameters_get_one_clear_error_naming_them(name, value):
    with pytest.raises(InvalidParameterError, match=f"'{name}'"):
        make_market_basket(**{**SMALL, name: value})


def test_corruption_that_leaves_nothing_is_refused():
    with pytest.raises(InvalidParameterError, match="basket_corruption_mean"):
        make_market_basket(**SMALL, basket_corruption_mean=0.999, customer_corruption_mean=0.999,
                           corruption_variance=0.0, random_state=0)
