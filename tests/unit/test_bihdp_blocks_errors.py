"""Bad input to the binomial-block BiHDP sampler gets one InvalidParameterError naming the argument."""

from __future__ import annotations

import numpy as np
import pytest

from harmonium.errors import InvalidParameterError
from harmonium.inference.mcmc.isbn import bihdp_blocks as bb

X = np.array([[1, 0], [2, 1]])
T = np.array([1, 3])


@pytest.mark.parametrize("counts, trials, match", [
    (np.array([1, 2]), T, "'counts'.*2-d"),
    (X, np.array([1, 3, 2]), "'trials'"),
    (X, np.array([1.0, 3.0]), "'trials'"),
    (X, np.array([-1, 3]), "'trials'"),
    (np.array([[1, 0], [2, -1]]), T, "'counts'.*non-negative integers"),
    (np.array([[0.5, 0], [2, 1]]), T, "'counts'.*non-negative integers"),
    (np.array([[2, 0], [2, 1]]), T, "'counts'.*customer 0 bought item 0 2 times in 1 transactions"),
])
def test_make_data_errors(counts, trials, match):
    with pytest.raises(InvalidParameterError, match=match):
        bb.make_data(counts, trials)


@pytest.mark.parametrize("kwargs, match", [
    (dict(n_customer_groups=0), "'n_customer_groups'"),
    (dict(n_item_groups=1.5), "'n_item_groups'"),
    (dict(alpha=0.0), "'alpha'"),
    (dict(alpha=(1.0, np.inf)), "'alpha'"),
    (dict(alpha=(1.0, 2.0, 3.0)), "'alpha'"),
    (dict(labels=(np.zeros(3), np.zeros(2))), "'labels'"),
])
def test_init_errors(kwargs, match):
    data = bb.make_data(X, T)
    with pytest.raises(InvalidParameterError, match=match):
        bb.init(np.random.default_rng(0), data, **kwargs)


@pytest.mark.parametrize("kwargs, match", [
    (dict(a=0.0), "'a'"),
    (dict(b=-1.0), "'b'"),
    (dict(sample_concentration="yes"), "'sample_concentration'"),
    (dict(concentration_prior=(1.0, 0.0)), "'concentration_prior'"),
    (dict(concentration_prior=1.0), "'concentration_prior'"),
])
def test_build_kernel_errors(kwargs, match):
    with pytest.raises(InvalidParameterError, match=match):
        bb.build_kernel(**kwargs)


def test_transaction_counts_counts_transactions_not_purchases():
    # customer 0: transactions {0, 0, 1} and {1}; customer 1: {2}
    counts, trials = bb.transaction_counts([0, 0, 1], [0, 3, 4, 5], [0, 0, 1, 1, 2], 2, 3)
    assert counts.toarray().tolist() == [[1, 2, 0], [0, 0, 1]]
    assert trials.tolist() == [2, 1]
    bb.make_data(counts, trials)  # within the trials
