"""harmonium.evaluation.pam: the Rao-Blackwellised theta of infinite PAM (seed 002 footnote 2).

theta_{k|j} = sum_s (a1 tau1_s + n_{s|j}) / (a1 + n_j) * (a2 tau2_k + n_{k|s,j}) / (a2 + n_{s|j}), checked on a
hand-worked document, against a dense triple loop, through label mapping and sweep averaging; a version with
the wrong normaliser of the sub-topic rows (a2 + n_j instead of a2 + n_{s|j}) fails the hand case.
"""

from __future__ import annotations

import numpy as np
import pytest

from harmonium.evaluation.pam import (
    PythonPAMView,
    label_positions,
    rao_blackwell_theta,
    theta_from_fold_in,
    topic_word_with_new,
)

TAU1 = np.array([0.5, 0.3, 0.2])
TAU2 = np.array([0.4, 0.4, 0.2])
A1, A2 = 1.0, 2.0
# one document, three items: (super, sub) = (0, 0), (0, 1), (1, 0)
SUP, SUB, DOC = np.array([0, 0, 1]), np.array([0, 1, 0]), np.zeros(3, dtype=int)
# by hand: E[pi_s|j] = (0.5 + 2, 0.3 + 1, 0.2) / 4; rows E[pi_k|s,j]: s=0 (0.8 + 1, 0.8 + 1, 0.4) / 4,
# s=1 (0.8 + 1, 0.8, 0.4) / 3, s=unused tau2
HAND = (0.625 * np.array([0.45, 0.45, 0.1]) + 0.325 * np.array([0.6, 0.8 / 3, 0.4 / 3])
        + 0.05 * np.array([0.4, 0.4, 0.2]))


def _broken_theta(super_pos, sub_pos, doc, n_docs, tau_super, tau_sub, alpha_super, alpha_sub):
    """Negative control: sub-topic rows normalised by the document length instead of n_{s|j}."""
    K1, K2 = len(tau_super), len(tau_sub)
    n1 = np.bincount(doc * K1 + super_pos, minlength=n_docs * K1).reshape(n_docs, K1).astype(float)
    n_j = n1.sum(axis=1, keepdims=True)
    e1 = (alpha_super * tau_super + n1) / (alpha_super + n_j)
    n2 = np.zeros((n_docs, K1, K2))
    np.add.at(n2, (doc, super_pos, sub_pos), 1.0)
    return np.einsum("js,jsk->jk", e1, (alpha_sub * tau_sub + n2) / (alpha_sub + n_j[:, :, None]))


def _matches_hand(fn) -> bool:
    return bool(np.allclose(fn(SUP, SUB, DOC, 1, TAU1, TAU2, A1, A2)[0], HAND, rtol=0, atol=1e-12))


def test_hand_worked_document_and_negative_control():
    assert HAND.sum() == pytest.approx(1.0, abs=1e-15)
    assert _matches_hand(rao_blackwell_theta)
    assert not _matches_hand(_broken_theta)


def test_equals_dense_triple_loop():
    rng = np.random.default_rng(3)
    K1, K2, J, N = 4, 6, 5, 60
    tau1, tau2 = rng.dirichlet(np.ones(K1)), rng.dirichlet(np.ones(K2))
    s, k, d = rng.integers(0, K1, N), rng.integers(0, K2, N), rng.integers(0, J - 1, N)  # doc J-1 empty
    got = rao_blackwell_theta(s, k, d, J, tau1, tau2, 0.7, 1.3)
    want = np.zeros((J, K2))
    for j in range(J):
        n1 = np.array([np.sum((d == j) & (s == a)) for a in range(K1)])
        for a in range(K1):
            for b in range(K2):
                n2 = np.sum((d == j) & (s == a) & (k == b))
                want[j, b] += (0.7 * tau1[a] + n1[a]) / (0.7 + n1.sum()) * (1.3 * tau2[b] + n2) / (1.3 + n1[a])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
    np.testing.assert_allclose(got.sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(got[J - 1], tau2, rtol=1e-12)  # an empty document gets the prior tau2


class _FakeEngine:
    def __init__(self):
        self._states = {"super": np.array([7, 3]), "sub": np.array([5, 2])}
        self._tau = {"super": TAU1, "sub": TAU2}
        self._alpha = {"super": A1, "sub": A2}

    def states(self, b):
        return self._states[b]

    def tau(self, b):
        return self._tau[b]

    def alpha(self, b):
        return self._alpha[b]


def test_labels_map_through_alive_states_and_sweeps_average():
    eng = _FakeEngine()
    np.testing.assert_array_equal(label_positions(np.array([3, 7, -1, 3]), np.array([7, 3])), [1, 0, 2, 1])
    with pytest.raises(ValueError, match="neither alive"):
        label_positions(np.array([4]), np.array([7, 3]))
    # sweep 1 is the hand case written in labels (super 0 -> 7, 1 -> 3; sub 0 -> 5, 1 -> 2);
    # sweep 2 puts every item in the new states (-1); sweep 0 is burn-in and must be ignored
    draws = {"super": np.array([[3, 3, 3], [7, 7, 3], [-1, -1, -1]]),
             "sub": np.array([[2, 2, 2], [5, 2, 5], [-1, -1, -1]])}
    got = theta_from_fold_in(draws, DOC, 1, eng, keep_from=1)
    e1_new = (A1 * TAU1 + np.array([0, 0, 3])) / (A1 + 3)
    rows_new = np.vstack([TAU2, TAU2, (A2 * TAU2 + np.array([0, 0, 3])) / (A2 + 3)])
    np.testing.assert_allclose(got[0], 0.5 * HAND + 0.5 * e1_new @ rows_new, rtol=1e-12)
    with pytest.raises(ValueError, match="keep_from"):
        theta_from_fold_in(draws, DOC, 1, eng, keep_from=3)


def test_topic_word_with_new_row():
    phi = topic_word_with_new(np.array([[3.0, 0.0, 1.0], [0.0, 0.0, 0.0]]), 0.5)
    np.testing.assert_allclose(phi, [[3.5 / 5.5, 0.5 / 5.5, 1.5 / 5.5], [1 / 3] * 3, [1 / 3] * 3])


def test_python_view_fold_in_runs_on_a_tiny_pam():
    """The reference fold-in over the Python engine: labels are alive or -1, training state untouched."""
    from harmonium.inference.mcmc.isbn.gibbs import ISBNSampler
    from harmonium.models.directed.isbn_examples import infinite_pam

    rng = np.random.default_rng(0)
    V = 6
    doc = np.repeat(np.arange(4), 5)
    w = np.concatenate([rng.integers(0, 3, 10), rng.integers(3, 6, 10)])
    s = ISBNSampler(infinite_pam(V, beta=0.1), {"doc": doc}, {"w": w})
    view = PythonPAMView(s, beta=0.1)
    for _ in range(3):
        view.step(rng)
    before = (view.observed_counts().copy(), view.tau("super").copy(), view.tau("sub").copy())
    draws = view.fold_in({"doc": np.array([9, 9, 9, 10])}, {"w": np.array([0, 1, 2, 5])}, n_sweeps=4, rng=rng)
    assert draws["super"].shape == draws["sub"].shape == (4, 4)
    for b in ("super", "sub"):
        assert np.all(np.isin(draws[b], np.append(view.states(b), -1)))
    np.testing.assert_array_equal(view.observed_counts(), before[0])
    np.testing.assert_array_equal(view.tau("super"), before[1])
    theta = theta_from_fold_in(draws, np.array([0, 0, 0, 1]), 2, view, keep_from=2)
    assert theta.shape == (2, len(view.states("sub")) + 1)
    np.testing.assert_allclose(theta.sum(axis=1), 1.0)


def _compiled_pam(seed: int):
    from harmonium.inference.mcmc.isbn.compiled import CompiledISBNSampler
    from harmonium.models.directed.isbn_examples import infinite_pam

    rng = np.random.default_rng(seed)
    doc = np.repeat(np.arange(6), 6)
    w = np.concatenate([rng.integers(0, 3, 18), rng.integers(3, 6, 18)])
    init = {"super": rng.integers(0, 2, doc.size), "sub": rng.integers(0, 3, doc.size)}
    eng = CompiledISBNSampler(infinite_pam(6, beta=0.5), {"doc": doc}, {"w": w}, init=init)
    for _ in range(5):
        eng.step(rng)
    return eng, rng


@pytest.mark.parametrize("row_norm, ok", [("own", True), ("document", False)])
def test_compiled_fold_in_two_token_pam_documents_follow_the_chain_the_estimator_assumes(row_norm, ok):
    """First (sequential) fold-in pass of two-token documents in the compiled engine: s1, k1 ~ tau1_s tau2_k F1_k;
    s2, k2 | s1, k1 ~ (a1 tau1_s + [s = s1]) (a2 tau2_k + [s = s1][k = k1]) / (a2 + [s = s1]) F2_k: the rows
    E[pi_{k|s,j}] that rao_blackwell_theta uses. The control normalises every sub row by a2 + n_j (= a2 + 1)."""
    from scipy import stats

    eng, rng = _compiled_pam(5)
    x1, x2 = 1, 4
    t1, t2, a1, a2 = eng.tau("super"), eng.tau("sub"), eng.alpha("super"), eng.alpha("sub")
    phi = topic_word_with_new(eng.observed_counts(), 0.5)  # F of a frozen row (beta = 0.5) and of NEW (1/V)
    K1, K2 = t1.size, t2.size
    p1 = (t1[:, None] * (t2 * phi[:, x1])[None, :]).ravel()
    p1 /= p1.sum()
    p2 = np.empty((K1 * K2, K1 * K2))
    for c in range(K1 * K2):
        s1, k1 = divmod(c, K2)
        same = (np.arange(K1) == s1)[:, None]
        norm = (a2 + same) if row_norm == "own" else np.full((K1, 1), a2 + 1.0)
        q = (a1 * t1 + same[:, 0])[:, None] * (a2 * t2[None, :] + same * (np.arange(K2) == k1)[None, :]) / norm
        q = (q * phi[:, x2][None, :]).ravel()
        p2[c] = q / q.sum()
    target = (p1[:, None] * p2).ravel()
    n_docs = 6000
    out = eng.fold_in({"doc": np.repeat(np.arange(n_docs), 2)}, {"w": np.tile([x1, x2], n_docs)}, n_sweeps=1,
                      rng=rng)
    s = label_positions(out["super"][0], eng.states("super")).reshape(n_docs, 2)
    k = label_positions(out["sub"][0], eng.states("sub")).reshape(n_docs, 2)
    code = (s[:, 0] * K2 + k[:, 0]) * (K1 * K2) + s[:, 1] * K2 + k[:, 1]
    counts = np.bincount(code, minlength=target.size).astype(float)
    exp = target * n_docs
    small = exp < 5  # cells with expected count < 5 pooled into one
    obs, ex = np.append(counts[~small], counts[small].sum()), np.append(exp[~small], exp[small].sum())
    keep = ex > 0
    pv = stats.chisquare(obs[keep], ex[keep] * obs[keep].sum() / ex[keep].sum()).pvalue
    assert (pv > 1e-4) == ok, pv


def test_compiled_engine_end_to_end_theta_and_perplexity():
    from harmonium.corpus import Corpus
    from harmonium.evaluation import completion_perplexity

    eng, rng = _compiled_pam(7)
    doc = np.array([0, 0, 0, 1, 1])
    draws = eng.fold_in({"doc": doc}, {"w": np.array([0, 1, 1, 4, 5])}, n_sweeps=5, rng=rng)
    theta = theta_from_fold_in(draws, doc, 2, eng, keep_from=1)
    assert theta.shape == (2, eng.n_states()["sub"] + 1)
    np.testing.assert_allclose(theta.sum(axis=1), 1.0, rtol=1e-12)
    phi = topic_word_with_new(eng.observed_counts(), 0.5)
    held = Corpus(np.array([[0, 2, 0, 0, 0, 0], [0, 0, 0, 1, 1, 0]]))
    res = completion_perplexity(theta, phi, held)
    assert np.isfinite(res.perplexity) and 1.0 < res.perplexity < 6.0
