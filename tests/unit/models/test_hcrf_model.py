"""HCRF model plumbing: data checks, tree renumbering, weight packing (harmonium.models.undirected.hcrf)."""

from __future__ import annotations

import numpy as np
import pytest

from harmonium.errors import CorpusError
from harmonium.models.undirected import hcrf as mh


def test_chains_stack_with_parents_and_leaves():
    xs = [np.ones((3, 2)), np.zeros((1, 2)), np.full((2, 2), 2.0)]
    seqs = mh.as_sequences(xs, where="t")
    np.testing.assert_array_equal(seqs.seq_ptr, [0, 3, 4, 6])
    np.testing.assert_array_equal(seqs.parent, [-1, 0, 1, -1, -1, 0])
    np.testing.assert_array_equal(seqs.leaf, [False, False, True, True, False, True])
    assert seqs.order is None and seqs.X.flags.c_contiguous and seqs.X.dtype == np.float64


def test_three_dimensional_array_is_a_batch_of_equal_length_sequences():
    X = np.arange(24, dtype=float).reshape(2, 4, 3)
    seqs = mh.as_sequences(X, where="t")
    assert seqs.n_sequences == 2 and seqs.n_features == 3
    np.testing.assert_array_equal(seqs.X, X.reshape(8, 3))


def test_trees_are_renumbered_breadth_first_with_consecutive_children():
    parent = np.array([3, 3, 0, -1, 0, 1])  # root 3 -> {0, 1}; 0 -> {2, 4}; 1 -> 5
    x = np.arange(6, dtype=float)[:, None]
    seqs = mh.as_sequences([x], [parent], where="t")
    np.testing.assert_array_equal(seqs.order, [3, 0, 1, 2, 4, 5])
    np.testing.assert_array_equal(seqs.parent, [-1, 0, 0, 1, 1, 2])
    np.testing.assert_array_equal(seqs.X[:, 0], [3, 0, 1, 2, 4, 5])
    np.testing.assert_array_equal(seqs.leaf, [False, False, False, True, True, True])
    for t in range(1, 6):  # children of one parent are consecutive
        kids = np.flatnonzero(seqs.parent == seqs.parent[t])
        assert kids.max() - kids.min() + 1 == kids.size


@pytest.mark.parametrize(
    ("X", "match"),
    [
        ([np.ones(3)], "sequence 0 must be 2-D"),
        ([np.ones((2, 3)), np.ones((4, 2))], "sequence 1 has 2 features but sequence 0's has 3"),
        ([np.ones((2, 3)), np.empty((0, 3))], "sequence 1 is empty"),
        ([np.ones((2, 3)), np.array([[1.0, np.nan, 0], [0, 0, 0]])], "sequence 1 holds NaN or infinity at position 0"),
        ([np.ones((2, 3)), [["a", "b", "c"]]], "sequence 1 is not a numeric array"),
        ([], "got no sequences"),
        ("abc", "expects a list of"),
        (np.ones((3, 2)), "expects a list of"),
    ],
)
def test_bad_sequences_are_named(X, match):
    with pytest.raises(CorpusError, match=match):
        mh.as_sequences(X, where="HCRF.fit")


def test_fitted_feature_count_is_enforced():
    with pytest.raises(CorpusError, match="sequence 0 has 2 features but the fitted model's has 3"):
        mh.as_sequences([np.ones((2, 2))], where="HCRF.predict", n_features=3)


@pytest.mark.parametrize(
    ("parent", "match"),
    [
        ([0, -1, -1], "exactly one root"),
        ([1, 2, 0], "exactly one root"),
        ([-1, 5, 0], "position 1 has parent 5"),
        ([-1, 1, 0], "position 1 has parent 1"),
        ([-1, 2, 1, 0][:3] + [], "cycle"),
        ([-1, 0], "must be 3 integers"),
        ([-1.0, 0.0, 1.0], "must be 3 integers"),
    ],
)
def test_bad_trees_are_named(parent, match):
    with pytest.raises(CorpusError, match=match):
        mh.as_sequences([np.ones((3, 2))], [np.asarray(parent)], where="HCRF.fit")


def test_parent_list_length_must_match():
    with pytest.raises(CorpusError, match="one parent array per sequence: 2 sequences, got 1"):
        mh.as_sequences([np.ones((1, 2)), np.ones((1, 2))], [[-1]], where="HCRF.fit")


def test_pack_unpack_roundtrip_and_masks():
    C, H, F = 3, 4, 2
    w = np.arange(mh.n_params(C, H, F), dtype=float)
    p = mh.unpack(w, C, H, F)
    assert [a.shape for a in p] == [(C, H, F), (C, H), (C, H), (C, H), (C, H, H), (C,)]
    np.testing.assert_array_equal(mh.pack(p), w)
    allowed = mh.transition_mask(H, "left_to_right")
    np.testing.assert_array_equal(allowed, np.eye(H, dtype=bool) | np.eye(H, k=1, dtype=bool))
    assert mh.transition_mask(H, "full") is None
    free = mh.unpack(mh.free_mask(C, H, F, allowed), C, H, F)
    np.testing.assert_array_equal(free.transition_weights, np.broadcast_to(allowed, (C, H, H)))
    pen = mh.unpack(mh.penalty_mask(C, H, F, allowed), C, H, F)
    np.testing.assert_array_equal(pen.label_bias, 0.0)
    np.testing.assert_array_equal(pen.state_weights, 1.0)
    init = mh.init_params(np.random.default_rng(0), C, H, F, 0.1, allowed)
    np.testing.assert_array_equal(init.transition_weights[:, ~allowed], 0.0)
    np.testing.assert_array_equal(init.label_bias, 0.0)


def test_encode_labels_rejects_unknown_labels():
    classes = np.array(["a", "b"])
    np.testing.assert_array_equal(mh.encode_labels(["b", "a", "b"], classes, "t"), [1, 0, 1])
    with pytest.raises(CorpusError, match="label 'c' of sequence 1"):
        mh.encode_labels(["a", "c"], classes, "t")


def test_workspace_reuse_and_sizes():
    rng = np.random.default_rng(0)
    xs = [rng.normal(size=(T, 2)) for T in (2, 5, 3)]
    seqs = mh.as_sequences(xs, where="t")
    p = mh.init_params(rng, 2, 3, 2, 0.5)
    work = mh.Workspace(seqs.X.shape[0], 2, 3)
    a = mh.log_scores(p, seqs, work=work)
    b = mh.log_scores(p, seqs)
    np.testing.assert_array_equal(a, b)
    small = mh.as_sequences(xs[:1], where="t")  # a workspace of the wrong size is not used
    np.testing.assert_allclose(mh.log_scores(p, small, work=work), b[:1], rtol=1e-14)
