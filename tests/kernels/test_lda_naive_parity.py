"""Parity of the naive-Gibbs LDA kernels with plain-numpy references, and count invariants.

The references consume the same random numbers in the same order (one
``random()`` per token for z; per Gamma variate one ``standard_gamma`` and, for
shapes < 1, one ``random()``), so with equal seeds the assignments agree
exactly and Theta, B agree to rounding. Runs under NUMBA_DISABLE_JIT=1 too.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from harmonium._kernels import lda_naive
from harmonium.corpus import Corpus
from harmonium.inference.mcmc.lda import naive_gibbs as ngs
from harmonium.models.directed.lda import counts_from_assignments, make_model


def _draw(rng, p):
    c = np.cumsum(p)
    u = rng.random() * c[-1]
    return min(int(np.searchsorted(c, u, side="right")), len(p) - 1)


def ref_log_gamma(rng, a):
    if a >= 1.0:
        return math.log(rng.standard_gamma(a))
    g = rng.standard_gamma(a + 1.0)
    return math.log(g) + math.log(1.0 - rng.random()) / a


def _normalise_log(lg, axis):
    e = np.exp(lg - lg.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def ref_scan(rng, doc_ptr, words, z, n_dk, n_wk, n_k, theta, phi_wk, alpha, beta):
    changed = 0
    for d in range(len(doc_ptr) - 1):
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            w, old = words[i], z[i]
            new = _draw(rng, theta[d] * phi_wk[w])
            z[i] = new
            n_dk[d, old] -= 1
            n_wk[w, old] -= 1
            n_k[old] -= 1
            n_dk[d, new] += 1
            n_wk[w, new] += 1
            n_k[new] += 1
            changed += new != old
    D, K = n_dk.shape
    lg = np.array([[ref_log_gamma(rng, alpha[k] + n_dk[d, k]) for k in range(K)] for d in range(D)])
    theta[:] = _normalise_log(lg, axis=1)
    V = n_wk.shape[0]
    lg = np.array([[ref_log_gamma(rng, beta + n_wk[w, k]) for k in range(K)] for w in range(V)])
    phi_wk[:] = _normalise_log(lg, axis=0)
    return changed


def _problem(seed, D=7, V=11, K=4, alpha_range=(0.05, 1.5), beta=0.07):
    rng = np.random.default_rng(seed)
    tokens = Corpus(sp.csr_matrix(rng.poisson(0.9, size=(D, V)))).tokens()
    model = make_model(K, V, rng.uniform(*alpha_range, size=K), beta)
    state = ngs.init(rng, tokens, model)
    return tokens, model, state


def _copy(state):
    return ngs.NaiveGibbsState(*(a.copy() for a in state))


def _check_invariants(state, tokens, model):
    for a, b in zip(state[1:4], counts_from_assignments(tokens.doc_ptr, tokens.words, state.z,
                                                        model.n_topics, model.n_words), strict=True):
        np.testing.assert_array_equal(a, b)
    assert np.isfinite(state.theta).all() and (state.theta >= 0).all()
    assert np.isfinite(state.phi_wk).all() and (state.phi_wk >= 0).all()
    np.testing.assert_allclose(state.theta.sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(state.phi_wk.sum(axis=0), 1.0, rtol=1e-12)


def test_log_gamma_variate_matches_reference():
    for a in (1e-9, 0.02, 0.7, 1.0, 3.5, 40.0):
        ra, rb = np.random.default_rng(7), np.random.default_rng(7)
        x = [lda_naive.log_gamma_variate(ra, a) for _ in range(50)]
        y = [ref_log_gamma(rb, a) for _ in range(50)]
        np.testing.assert_allclose(x, y, rtol=1e-13)
        assert np.isfinite(x).all()


def test_scan_matches_reference():
    for seed in range(3):
        tokens, model, state = _problem(seed)
        a, b = _copy(state), _copy(state)
        ra, rb = np.random.default_rng(seed), np.random.default_rng(seed)
        kernel = ngs.build_kernel(compute_log_joint=False)
        for _ in range(4):
            a, info = kernel(ra, a, tokens, model)
            changed = ref_scan(rb, tokens.doc_ptr, tokens.words, *b, model.alpha, model.beta)
            assert info.n_changed == changed
            np.testing.assert_array_equal(a.z, b.z)
            for x, y in zip(a[1:4], b[1:4], strict=True):
                np.testing.assert_array_equal(x, y)
            np.testing.assert_allclose(a.theta, b.theta, rtol=1e-12, atol=1e-300)
            np.testing.assert_allclose(a.phi_wk, b.phi_wk, rtol=1e-12, atol=1e-300)


def test_kernel_is_the_compiled_scan():
    tokens, model, state = _problem(11)
    a, b = _copy(state), _copy(state)
    ra, rb = np.random.default_rng(5), np.random.default_rng(5)
    ngs.build_kernel()(ra, a, tokens, model)
    K = model.n_topics
    lda_naive.naive_scan(rb, tokens.doc_ptr, tokens.words, *b, model.alpha, model.beta,
                         np.empty(K), np.empty(K), np.empty(K))
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)


def test_count_invariants_after_every_scan_with_tiny_priors():
    # alpha, beta << 1: Gamma variates underflow without the log-space trick
    tokens, model, state = _problem(2, D=9, V=13, K=5, alpha_range=(1e-7, 1e-5), beta=1e-9)
    kernel = ngs.build_kernel()
    rng = np.random.default_rng(8)
    _check_invariants(state, tokens, model)
    for _ in range(6):
        state, info = kernel(rng, state, tokens, model)
        _check_invariants(state, tokens, model)
        assert np.isfinite(info.log_joint)


def test_count_invariants_after_every_scan():
    tokens, model, state = _problem(4, D=12, V=20, K=3)
    kernel = ngs.build_kernel()
    rng = np.random.default_rng(9)
    for _ in range(6):
        state, _ = kernel(rng, state, tokens, model)
        _check_invariants(state, tokens, model)


def test_sweep_z_over_document_ranges_composes_to_the_full_sweep():
    # the z step over [0, 3) then [3, D) equals the full sweep, and per-range delta tables add up
    tokens, model, state = _problem(6, D=8)
    D = tokens.doc_ptr.shape[0] - 1
    a, b = _copy(state), _copy(state)
    ra, rb = np.random.default_rng(1), np.random.default_rng(1)
    na = ngs.sweep_z(ra, a, tokens, model, 0, D)
    nb = ngs.sweep_z(rb, b, tokens, model, 0, 3) + ngs.sweep_z(rb, b, tokens, model, 3, D)
    assert na == nb
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)
    # threaded layout: each range writes n_wk / n_k deltas into its own zero tables
    c = _copy(state)
    rc = np.random.default_rng(1)
    p = np.empty(model.n_topics)
    for lo, hi in ((0, 3), (3, D)):
        dw, dk = np.zeros_like(c.n_wk), np.zeros_like(c.n_k)
        lda_naive.sweep_z(rc, tokens.doc_ptr, tokens.words, c.z, c.n_dk, dw, dk, c.theta, c.phi_wk, p, lo, hi)
        c.n_wk[:] += dw
        c.n_k[:] += dk
    for x, y in zip(a, c, strict=True):
        np.testing.assert_array_equal(x, y)
