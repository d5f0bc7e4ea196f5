"""Parity of the alias-table kernels (lda_alias, lda_alias_mh) with plain-numpy references.

Alias tables must reproduce their weights exactly: the mass each outcome gets
from the bins, (prob[k] + sum_{alias[j] = k} (1 - prob[j])) / n, equals
w_k / W to 1e-12. The MH sweep consumes the same uniforms as a numpy
reference, so with equal seeds the assignments agree exactly. Runs under
NUMBA_DISABLE_JIT=1 too.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from harmonium._kernels import lda_alias_mh as kern
from harmonium._kernels.lda_alias import build_alias, draw_alias
from harmonium.corpus import Corpus
from harmonium.inference.mcmc.lda import alias_mh as amh
from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs
from harmonium.models.directed.lda import counts_from_assignments, make_model


def reference_build(weights):
    """Vose's construction in numpy, same stack discipline as the kernel."""
    n = len(weights)
    total = 0.0
    for x in weights:  # sequential, as the kernel sums
        total += float(x)
    prob = np.asarray(weights, dtype=np.float64) * (n / total)
    alias = np.arange(n)
    small = [j for j in range(n) if prob[j] < 1.0]
    large = [j for j in range(n) if prob[j] >= 1.0]
    while small and large:
        s, g = small.pop(), large.pop()
        alias[s] = g
        prob[g] = (prob[g] + prob[s]) - 1.0
        (small if prob[g] < 1.0 else large).append(g)
    for j in large + small:
        prob[j] = 1.0
    return prob, alias, total


def outcome_mass(prob, alias):
    n = len(prob)
    mass = prob.copy()
    np.add.at(mass, alias, 1.0 - prob)
    return mass / n


def _weights(seed):
    rng = np.random.default_rng(seed)
    for n in (1, 2, 3, 7, 50, 1000):
        w = rng.gamma(0.3, size=n)
        w[rng.random(n) < 0.3] = 0.0
        if w.sum() == 0:
            w[0] = 1.0
        yield w
    yield np.full(9, 0.25)
    yield np.array([1e-300, 1.0, 1e300])


def _build(w, base=3):
    n = len(w)
    prob = np.full(n + base + 2, -7.0)
    alias = np.full(n + base + 2, -7, dtype=np.int32)
    prob[base:base + n] = w
    small, large = np.empty(n, np.int32), np.empty(n, np.int32)
    total = build_alias(prob, alias, base, n, small, large)
    # the table stays inside its slot
    assert (prob[:base] == -7.0).all() and (prob[base + n:] == -7.0).all()
    return prob[base:base + n], alias[base:base + n], total


def test_alias_table_reproduces_the_weights_exactly():
    for seed in range(3):
        for w in _weights(seed):
            prob, alias, total = _build(w)
            assert total == np.sum(w) or abs(total - np.sum(w)) <= 1e-12 * np.sum(w)
            assert ((0 <= alias) & (alias < len(w))).all() and ((0 <= prob) & (prob <= 1)).all()
            np.testing.assert_allclose(outcome_mass(prob, alias), w / w.sum(), rtol=0, atol=1e-12)


def test_alias_table_matches_reference_build():
    for w in _weights(7):
        prob, alias, total = _build(w)
        rp, ra, rt = reference_build(w)
        np.testing.assert_array_equal(alias, ra)
        np.testing.assert_array_equal(prob, rp)
        assert abs(total - rt) <= 1e-12 * rt


def reference_draw(rng, prob, alias):
    n = len(prob)
    u = rng.random() * n
    j = min(int(u), n - 1)
    return j if u - j < prob[j] else int(alias[j])


def test_alias_draw_matches_reference():
    w = np.array([0.1, 0.0, 2.0, 0.7, 0.2])
    prob, alias, _ = _build(w, base=0)
    ra, rb = np.random.default_rng(3), np.random.default_rng(3)
    a = [draw_alias(ra, prob, alias, 0, len(w)) for _ in range(500)]
    b = [reference_draw(rb, prob, alias) for _ in range(500)]
    assert a == b
    assert 1 not in a  # zero weight never drawn


def test_degenerate_weights_do_not_raise():
    prob = np.zeros(4)
    alias = np.zeros(4, np.int32)
    total = build_alias(prob, alias, 0, 4, np.empty(4, np.int32), np.empty(4, np.int32))
    assert total == 0.0
    np.testing.assert_array_equal(outcome_mass(prob, alias), 0.25)


def _random_problem(seed, D=9, V=11, K=5):
    rng = np.random.default_rng(seed)
    tokens = Corpus(sp.csr_matrix(rng.poisson(0.9, size=(D, V)))).tokens()
    z = rng.integers(0, K, size=tokens.words.shape[0], dtype=np.int32)
    alpha = rng.uniform(0.05, 1.0, size=K) if seed % 2 else np.full(K, 0.3)
    return tokens, make_model(K, V, alpha, 0.07), z


def test_word_tables_draw_the_word_proposal_exactly():
    tokens, model, z = _random_problem(1)
    st = cgs.state_from_assignments(tokens, model, z)
    K, V = model.n_topics, model.n_words
    freq = np.bincount(tokens.words, minlength=V)
    wptr = np.zeros(V + 1, np.int64)
    np.cumsum(np.minimum(freq, K), out=wptr[1:])
    n = int(wptr[-1])
    wlen, mass = np.zeros(V, np.int32), np.zeros(V)
    tt, ta, tp = np.empty(n, np.int32), np.empty(n, np.int32), np.empty(n)
    n_other, n_other_k = np.empty((V, K), np.int32), np.empty(K, np.int64)
    c, bp, ba, sm, lg = np.empty(K), np.empty(K), np.empty(K, np.int32), np.empty(K, np.int32), np.empty(K, np.int32)
    D = tokens.doc_ptr.shape[0] - 1
    for parity in (0, 1):
        kern.other_counts(tokens.doc_ptr, tokens.words, st.z, st.n_wk, st.n_k, 0, D, parity, n_other, n_other_k)
        b = kern.build_word_tables(n_other, n_other_k, model.beta, model.beta * V, wptr, wlen, tt, tp, ta, mass,
                                   c, bp, ba, sm, lg)
        for i in range(tokens.words.shape[0]):
            d = int(np.searchsorted(tokens.doc_ptr, i, side="right") - 1)
            if d % 2 != parity:
                continue
            w = tokens.words[i]
            lo, m = wptr[w], wlen[w]
            p = outcome_mass(bp, ba) * (b / (mass[w] + b))
            if m:
                np.add.at(p, tt[lo:lo + m], outcome_mass(tp[lo:lo + m], ta[lo:lo + m]) * (mass[w] / (mass[w] + b)))
            np.testing.assert_allclose(p, amh.word_proposal(st, tokens, model, i), rtol=0, atol=1e-12)


def reference_sweep(rng, tokens, model, z, n_dk, n_wk, n_k, mh_steps):
    """The two-phase alias/MH sweep in numpy, drawing uniforms in the kernel's order."""
    doc_ptr, words, alpha, beta = tokens.doc_ptr, tokens.words, model.alpha, model.beta
    D, V, K = doc_ptr.shape[0] - 1, model.n_words, model.n_topics
    symmetric = bool((alpha == alpha[0]).all())
    a_prob, a_alias, _ = reference_build(alpha)
    changed = 0
    for parity in (0, 1):
        n_other, n_other_k = n_wk.astype(np.int64), n_k.astype(np.int64)
        for d in range(parity, D, 2):
            for i in range(doc_ptr[d], doc_ptr[d + 1]):
                n_other[words[i], z[i]] -= 1
                n_other_k[z[i]] -= 1
        c = 1.0 / (n_other_k + beta * V)
        b_prob, b_alias, b_mass = reference_build(beta * c)
        for d in range(parity, D, 2):
            for i in range(doc_ptr[d], doc_ptr[d + 1]):
                w, old = words[i], z[i]
                n_dk[d, old] -= 1
                n_wk[w, old] -= 1
                n_k[old] -= 1
                p = (n_dk[d] + alpha) * (n_wk[w] + beta) / (n_k + beta * V)
                s = old
                for step in range(mh_steps):
                    if step % 2 == 0:
                        q = (n_other[w] + beta) * c
                        topics = np.flatnonzero(n_other[w] > 0)
                        s_w = 0.0
                        if len(topics):
                            t_prob, t_alias, s_w = reference_build(n_other[w, topics] * c[topics])
                        if rng.random() * (s_w + b_mass) < s_w:
                            t = int(topics[reference_draw(rng, t_prob, t_alias)])
                        else:
                            t = reference_draw(rng, b_prob, b_alias)
                    else:
                        q = n_dk[d] + alpha
                        lo, n_rest = doc_ptr[d], doc_ptr[d + 1] - doc_ptr[d] - 1
                        u = rng.random() * (n_rest + alpha.sum())
                        if u < n_rest:
                            pos = lo + min(int(u), n_rest - 1)
                            t = int(z[pos + (pos >= i)])
                        elif symmetric:
                            t = min(int(rng.random() * K), K - 1)
                        else:
                            t = reference_draw(rng, a_prob, a_alias)
                    if t != s and rng.random() * (p[s] * q[t]) < p[t] * q[s]:
                        s = t
                z[i] = s
                n_dk[d, s] += 1
                n_wk[w, s] += 1
                n_k[s] += 1
                changed += s != old
    return changed


def test_alias_mh_sweep_matches_reference():
    for seed in range(4):
        tokens, model, z = _random_problem(seed)
        for mh_steps in (1, 2, 3):
            a = cgs.state_from_assignments(tokens, model, z)
            b = [x.copy() for x in a]
            sweep = amh.make_sweep(model, tokens, mh_steps=mh_steps)
            ra, rb = np.random.default_rng(seed), np.random.default_rng(seed)
            for _ in range(3):
                ca = sweep(ra, a, 0, tokens.doc_ptr.shape[0] - 1)
                cb = reference_sweep(rb, tokens, model, *b, mh_steps)
                assert ca == cb
            np.testing.assert_array_equal(a.z, b[0])
            for x, y in zip(a[1:], counts_from_assignments(tokens.doc_ptr, tokens.words, a.z, model.n_topics,
                                                           model.n_words), strict=True):
                np.testing.assert_array_equal(x, y)
