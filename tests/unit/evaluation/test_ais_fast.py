"""The fast AIS setting: length grids, interpolation of log Z(D) between them, the presets, progress.

Exact targets: log Z(D) of a small replicated softmax model by enumeration of its 2^6 hidden
states at every length 1..120. Interpolating the exact values from the 12-length grid must stay
within 0.02 nats everywhere (measured max 0.006); giving each length its group's log Z (one
estimate per length group, the negative control) is off by tens of nats.
"""

from __future__ import annotations

import numpy as np
import pytest

from harmonium.corpus import train_test_split
from harmonium.errors import InvalidParameterError
from harmonium.estimators.efh import ReplicatedSoftmax
from harmonium.evaluation import perplexity
from harmonium.evaluation.partition import (
    AIS_SETTINGS,
    PartitionEstimate,
    ais_log_partition,
    exact_log_partition,
    interpolate_log_partition,
    length_grid,
)
from harmonium.models.undirected.variants import random_init, replicated_softmax


def _rsm(seed=2):
    rng = np.random.default_rng(seed)
    m = random_init(rng, replicated_softmax(20, 6), 0.5)
    m.params["v:0:bias"] = rng.normal(0.0, 1.0, 20)
    m.params["h:bias"] = rng.normal(-0.2, 0.2, 6)
    return m


def test_length_grid_keeps_the_extremes_and_at_most_n_groups():
    lengths = np.array([1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377])
    assert length_grid(lengths, None).tolist() == lengths.tolist()
    assert length_grid(lengths, 20).tolist() == lengths.tolist()
    g = length_grid(np.repeat(lengths, 3), 5)
    assert g[0] == 1 and g[-1] == 377 and 3 <= g.size <= 5 and set(g) <= set(lengths)
    with pytest.raises(InvalidParameterError, match="n_groups"):
        length_grid(lengths, 1)


def test_interpolated_log_z_matches_enumeration_and_group_sharing_does_not():
    model = _rsm()
    lengths = np.arange(1, 121)
    exact = exact_log_partition(model, lengths)
    grid = length_grid(lengths, AIS_SETTINGS["fast"]["n_length_groups"])
    on_grid = exact_log_partition(model, grid)
    interp = interpolate_log_partition(on_grid, lengths)
    assert interp.lengths.tolist() == lengths.tolist()
    assert np.abs(interp.log_z - exact.log_z).max() < 0.02
    np.testing.assert_allclose(interp.at(grid)[0], on_grid.log_z)        # exact at the grid lengths
    # negative control: one log Z per length group (the nearest grid length) is far off
    nearest = grid[np.abs(lengths[:, None] - grid[None, :]).argmin(axis=1)]
    shared = np.asarray(on_grid.log_z)[np.searchsorted(grid, nearest)]
    assert np.abs(shared - exact.log_z).max() > 5.0


def test_interpolation_refuses_lengths_outside_the_grid():
    est = PartitionEstimate(np.array([1.0, 2.0]), np.zeros(2), "ais", 10, np.array([5, 10]))
    with pytest.raises(InvalidParameterError, match="outside"):
        interpolate_log_partition(est, [4, 6])


def test_ais_reports_progress_per_temperature():
    events = []
    ais_log_partition(0, _rsm(), n_runs=5, n_temperatures=50, lengths=[3, 7], progress=events.append)
    assert events[-1].done == events[-1].total == 50 and events[-1].label.startswith("AIS (10 chains)")


@pytest.fixture(scope="module")
def fitted(synthetic_module):
    train, test = synthetic_module
    rsm = ReplicatedSoftmax(6, n_iter=3, n_ais_runs=20, n_temperatures=200, random_state=0).fit(train)
    return rsm, test


@pytest.fixture(scope="module")
def synthetic_module():
    from harmonium.datasets import load_debian

    corpus = load_debian(n_docs=300)
    train, test = train_test_split(corpus, 0.3, random_state=0)
    return train.drop_empty(), test


def test_fast_setting_through_perplexity_anneals_only_the_grid(fitted):
    rsm, test = fitted
    lengths = np.unique(test.doc_lengths[test.doc_lengths > 0])
    assert lengths.size > AIS_SETTINGS["fast"]["n_length_groups"]
    rsm._log_partition_cache = {}
    fast = perplexity(rsm, test, ais="fast", n_temperatures=200, progress=False)  # fewer temperatures: a test
    (key, annealed), = rsm._log_partition_cache.items()
    assert key[:2] == (AIS_SETTINGS["fast"]["n_runs"], 200)
    assert sorted(annealed) == length_grid(lengths, AIS_SETTINGS["fast"]["n_length_groups"]).tolist()
    exact = rsm.log_partition(lengths=lengths, method="exact")
    lz = rsm.log_partition(lengths=lengths, n_runs=20, n_temperatures=200, n_length_groups=12)  # cached
    assert np.abs(lz.log_z - exact.log_z).max() < 0.1
    assert np.isfinite(fast.perplexity) and fast.perplexity < test.n_words


def test_hook_options_are_checked(fitted):
    rsm, test = fitted
    with pytest.raises(InvalidParameterError, match="'ais'"):
        perplexity(rsm, test, ais="quick")
    with pytest.raises(InvalidParameterError, match="no option 'n_temps'"):
        perplexity(rsm, test, n_temps=10)
