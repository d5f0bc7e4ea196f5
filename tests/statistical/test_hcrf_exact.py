"""The HCRF against brute-force enumeration (harmonium.models.undirected.hcrf).

Targets, on problems small enough to list every hidden configuration
(T <= 4, H <= 3, C = 2 or 3, chains and a 4-node tree, ergodic and
left-to-right transitions):

* log Z_y(x), p(y | x), the node and edge marginals on the clamped graph
  p(z | y, x) and on the full graph p(y, z | x);
* the expected features on both graphs, and the seed 004 gradient
  E_{y,z ~ p(.,. | x)}[f] - E_{z ~ p(. | y, x)}[f] against central finite
  differences of the objective (which includes the L2 term).

Negative controls fail the same checks: a forward pass without the
transition term, marginals from the upward pass alone (filtering, not
smoothing), and the gradient without the full-graph term.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.special import logsumexp

from harmonium.models.undirected import hcrf as mh

CHAIN = None
TREE = np.array([2, 2, -1, 1])  # root 2; 2 -> {0, 1}; 1 -> 3 (given out of breadth-first order on purpose)


def score_of(p: mh.HCRFParams, x, parent, y, z):
    """score(y, z, x) - b_y written out from the model's definition."""
    T = len(x)
    is_leaf = np.ones(T, bool)
    is_leaf[parent[parent >= 0]] = False
    root = int(np.flatnonzero(parent < 0)[0])
    s = p.start_weights[y, z[root]]
    for t in range(T):
        s += p.state_weights[y, z[t]] @ x[t] + p.state_bias[y, z[t]]
        if is_leaf[t]:
            s += p.end_weights[y, z[t]]
        if parent[t] >= 0:
            s += p.transition_weights[y, z[parent[t]], z[t]]
    return s


def enumerate_posterior(p: mh.HCRFParams, x, parent=None):
    """(log Z (C,), node (C, T, H), edge (C, T, H, H)) on the clamped graphs, by listing every z."""
    C, H, _ = p.shape
    T = len(x)
    parent = np.arange(T) - 1 if parent is None else np.asarray(parent)
    zs = list(itertools.product(range(H), repeat=T))
    log_z = np.empty(C)
    node = np.zeros((C, T, H))
    edge = np.zeros((C, T, H, H))
    for y in range(C):
        s = np.array([score_of(p, x, parent, y, z) for z in zs])
        log_z[y] = logsumexp(s)
        for z, q in zip(zs, np.exp(s - log_z[y]), strict=True):
            for t in range(T):
                node[y, t, z[t]] += q
                if parent[t] >= 0:
                    edge[y, t, z[parent[t]], z[t]] += q
    return log_z, node, edge


def random_params(seed, C=3, H=3, F=2, scale=0.8, transitions="full"):
    rng = np.random.default_rng(seed)
    allowed = mh.transition_mask(H, transitions)
    w = rng.normal(0, scale, size=mh.n_params(C, H, F))
    p = mh.unpack(w, C, H, F)
    return p._replace(transition_weights=mh.effective_transitions(p.transition_weights, allowed)), allowed


def data(seed, F=2, lengths=(1, 2, 4, 3)):
    rng = np.random.default_rng(seed + 100)
    return [rng.normal(size=(T, F)) for T in lengths]


SETUPS = [
    dict(seed=0, C=3, H=3, transitions="full"),
    dict(seed=1, C=2, H=3, transitions="left_to_right"),
    dict(seed=2, C=3, H=2, transitions="full"),
]


# -- reusable checks (the negative controls run them on broken variants) -------------------------


def check_log_z(log_z_fn, p, x, parent=None):
    want, _, _ = enumerate_posterior(p, x, parent)
    np.testing.assert_allclose(log_z_fn(p, x, parent), want, rtol=1e-12, atol=1e-12)


def check_marginals(marg_fn, p, x, parent=None):
    _, node, edge = enumerate_posterior(p, x, parent)
    got_node, got_edge = marg_fn(p, x, parent)
    np.testing.assert_allclose(got_node, node, atol=1e-12)
    np.testing.assert_allclose(got_edge, edge, atol=1e-12)


def check_gradient(grad_fn, w, seqs, y, C, H, l2, allowed):
    def f(v):
        return mh.objective(v, seqs, y, C, H, l2, allowed)[0]

    eps = 1e-5
    fd = np.array([(f(w + e) - f(w - e)) / (2 * eps) for e in np.eye(w.size) * eps])
    if allowed is not None:
        fd *= mh.free_mask(C, H, seqs.n_features, allowed)
    np.testing.assert_allclose(grad_fn(w), fd, atol=1e-6 * max(1.0, np.abs(fd).max()))


def ours_log_z(p, x, parent):
    return mh.sequence_posterior(p, x, parent).log_z


def ours_marginals(p, x, parent):
    post = mh.sequence_posterior(p, x, parent)
    return post.node, post.edge


# -- exact targets ---------------------------------------------------------------------------------


@pytest.mark.parametrize("setup", SETUPS)
@pytest.mark.parametrize("parent", [CHAIN, TREE], ids=["chain", "tree"])
def test_log_partition_and_marginals_match_enumeration(setup, parent):
    p, _ = random_params(**setup)
    xs = data(setup["seed"]) if parent is None else [data(setup["seed"], lengths=(4,))[0]]
    for x in xs:
        check_log_z(ours_log_z, p, x, parent)
        check_marginals(ours_marginals, p, x, parent)


@pytest.mark.parametrize("setup", SETUPS)
def test_class_posterior_and_full_graph_marginals(setup):
    """p(y | x) from the fast scaled kernels and from the log-space pass; full-graph marginals are mixtures."""
    p, _ = random_params(**setup)
    xs = data(setup["seed"])
    seqs = mh.as_sequences(xs, where="test")
    got = np.exp(mh.predict_log_proba(p, seqs))
    for n, x in enumerate(xs):
        log_z, node, _ = enumerate_posterior(p, x)
        s = p.label_bias + log_z
        want = np.exp(s - logsumexp(s))
        np.testing.assert_allclose(got[n], want, rtol=1e-12)
        post = mh.sequence_posterior(p, x)
        np.testing.assert_allclose(post.class_proba, want, rtol=1e-12)
        # p(z_t = h | x) on the full graph by direct enumeration over (y, z)
        full = np.einsum("c,cth->th", want, node)
        np.testing.assert_allclose(np.einsum("c,cth->th", post.class_proba, post.node), full, atol=1e-12)


@pytest.mark.parametrize("setup", SETUPS)
def test_expected_features_match_enumeration(setup):
    p, _ = random_params(**setup)
    xs = data(setup["seed"])
    y = np.arange(len(xs)) % setup["C"]
    seqs = mh.as_sequences(xs, where="test")
    clamped = mh.pack(mh.expected_features(p, seqs, y))
    full = mh.pack(mh.expected_features(p, seqs, None))
    C, H, F = p.shape
    want_clamped, want_full = np.zeros_like(clamped), np.zeros_like(full)
    for n, x in enumerate(xs):
        T = len(x)
        parent = np.arange(T) - 1
        log_z, _, _ = enumerate_posterior(p, x)
        s = p.label_bias + log_z
        py = np.exp(s - logsumexp(s))
        for z in itertools.product(range(H), repeat=T):
            for c in range(C):
                pz = np.exp(score_of(p, x, parent, c, z) - log_z[c])  # p(z | c, x)
                f = mh.unpack(np.zeros(mh.n_params(C, H, F)), C, H, F)
                f.label_bias[c] = 1
                f.start_weights[c, z[0]] += 1
                f.end_weights[c, z[-1]] += 1
                for t in range(T):
                    f.state_weights[c, z[t]] += x[t]
                    f.state_bias[c, z[t]] += 1
                    if t > 0:
                        f.transition_weights[c, z[t - 1], z[t]] += 1
                fv = mh.pack(f)
                want_full += py[c] * pz * fv
                if c == y[n]:
                    want_clamped += pz * fv
    np.testing.assert_allclose(clamped, want_clamped, atol=1e-11)
    np.testing.assert_allclose(full, want_full, atol=1e-11)


@pytest.mark.parametrize("setup", SETUPS)
@pytest.mark.parametrize("trees", [False, True])
def test_gradient_matches_finite_differences_and_seed004_difference(setup, trees):
    p, allowed = random_params(**setup)
    C, H, F = p.shape
    xs = data(setup["seed"])
    parents = [TREE if len(x) == 4 else np.arange(len(x)) - 1 for x in xs] if trees else None
    seqs = mh.as_sequences(xs, parents, where="test")
    y = (np.arange(len(xs)) + 1) % C
    w = mh.pack(p)
    w[~np.isfinite(w)] = 0.0
    l2 = 0.3

    def ours(v):
        return mh.objective(v, seqs, y, C, H, l2, allowed)[1]

    check_gradient(ours, w, seqs, y, C, H, l2, allowed)
    # the seed 004 form: full-graph minus clamped expectations (of the negative log-likelihood's sign flipped)
    expected = mh.pack(mh.expected_features(p, seqs, None)) - mh.pack(mh.expected_features(p, seqs, y))
    expected += 2 * l2 * w * mh.penalty_mask(C, H, F, allowed)
    expected *= mh.free_mask(C, H, F, allowed)
    np.testing.assert_allclose(ours(w), expected, atol=1e-11)


def test_threads_give_the_same_objective():
    p, allowed = random_params(seed=4, C=3, H=3, transitions="left_to_right")
    xs = data(4, lengths=(3, 1, 4, 2, 4, 3, 2))
    seqs = mh.as_sequences(xs, where="test")
    y = np.arange(len(xs)) % 3
    w = mh.pack(p)
    w[~np.isfinite(w)] = 0.0
    f1, g1 = mh.objective(w, seqs, y, 3, 3, 0.1, allowed, n_jobs=1)
    for n_jobs in (2, 3):
        f, g = mh.objective(w, seqs, y, 3, 3, 0.1, allowed, n_jobs=n_jobs)
        np.testing.assert_allclose(f, f1, rtol=1e-13)
        np.testing.assert_allclose(g, g1, rtol=1e-12, atol=1e-13)


# -- negative controls ----------------------------------------------------------------------------


def test_negative_control_forward_pass_without_transitions_fails():
    p, _ = random_params(seed=0)
    x = data(0)[2]

    def no_transitions(p, x, parent):
        return mh.sequence_posterior(p._replace(transition_weights=np.zeros_like(p.transition_weights)), x).log_z

    check_log_z(ours_log_z, p, x)
    with pytest.raises(AssertionError):
        check_log_z(no_transitions, p, x)


def test_negative_control_filtering_instead_of_smoothing_fails():
    """Node marginals from the upward (backward) pass alone, normalised: right at the root only."""
    from harmonium._kernels import hcrf as kh

    p, _ = random_params(seed=1)
    x = data(1)[2]

    def upward_only(p, x, parent):
        seqs = mh.as_sequences([x], where="test")
        tabs = mh.transition_tables(p.transition_weights)
        C, H, _ = p.shape
        T = len(x)
        phi_all = mh.base_potentials(p, seqs.X)
        node = np.empty((C, T, H))
        for c in range(C):
            phi = phi_all[:, :, c] + np.where(seqs.leaf[:, None], p.end_weights[c], 0.0)
            phi[0] += p.start_weights[c]
            inside, msg = np.empty((T, H)), np.zeros((T, H))
            kh.upward(np.ascontiguousarray(phi), p.transition_weights[c], tabs.e_row[c], tabs.row_max[c], seqs.parent,
                      T, inside, msg, np.empty(H))
            node[c] = np.exp(inside - logsumexp(inside, axis=1, keepdims=True))
        return node, ours_marginals(p, x, parent)[1]

    check_marginals(ours_marginals, p, x)
    with pytest.raises(AssertionError):
        check_marginals(upward_only, p, x)


def test_negative_control_gradient_without_full_graph_term_fails():
    p, allowed = random_params(seed=2, C=3, H=2)
    C, H, F = p.shape
    xs = data(2)
    seqs = mh.as_sequences(xs, where="test")
    y = np.arange(len(xs)) % C
    w = mh.pack(p)
    l2 = 0.3

    def clamped_only(v):
        q = mh.unpack(v, C, H, F)
        return -mh.pack(mh.expected_features(q, seqs, y)) + 2 * l2 * v * mh.penalty_mask(C, H, F)

    check_gradient(lambda v: mh.objective(v, seqs, y, C, H, l2)[1], w, seqs, y, C, H, l2, allowed)
    with pytest.raises(AssertionError):
        check_gradient(clamped_only, w, seqs, y, C, H, l2, allowed)
