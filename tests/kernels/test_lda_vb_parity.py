"""Parity of the LDA variational kernels with plain-numpy twins (harmonium._kernels.lda_vb)."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import digamma, logsumexp

from harmonium._kernels import lda_vb as kv


def _corpus(seed=0, D=7, V=11):
    rng = np.random.default_rng(seed)
    dense = rng.poisson(0.6, size=(D, V)).astype(np.int32)
    dense[3] = 0  # an empty document
    m = sp.csr_matrix(dense)
    return m.indptr.astype(np.int32), m.indices.astype(np.int32), m.data.astype(np.int32), dense


def _eb(lam_wk):
    return np.exp(digamma(lam_wk) - digamma(lam_wk.sum(axis=0)))


def test_digamma_matches_scipy():
    x = np.concatenate([np.geomspace(1e-8, 1e12, 600), [0.5, 1.0, 1.4616321449683622, 5.999, 6.0, 6.001, 1e6]])
    ours = np.array([kv.digamma(v) for v in x])
    np.testing.assert_allclose(ours, digamma(x), rtol=1e-12, atol=1e-12)


def test_exp_elog_beta_wordmajor():
    lam = np.random.default_rng(1).gamma(2.0, 1.0, size=(11, 4))
    out = np.empty_like(lam)
    kv.exp_elog_beta_wordmajor(lam, out)
    np.testing.assert_allclose(out, _eb(lam), rtol=1e-12)


def _estep_twin(dense, eb, alpha, gamma, max_iter, tol):
    K = alpha.shape[0]
    sstats = np.zeros_like(eb)
    for d in range(dense.shape[0]):
        ids = np.flatnonzero(dense[d])
        if ids.size == 0:
            gamma[d] = alpha
            continue
        cts = dense[d, ids]
        for _ in range(max_iter):
            et = np.exp(digamma(gamma[d]) - digamma(gamma[d].sum()))
            norm = eb[ids] @ et + 1e-100
            new = alpha + et * ((cts / norm) @ eb[ids])
            change = np.abs(new - gamma[d]).sum() / K
            gamma[d] = new
            if change < tol:
                break
        et = np.exp(digamma(gamma[d]) - digamma(gamma[d].sum()))
        norm = eb[ids] @ et + 1e-100
        sstats[ids] += (cts / norm)[:, None] * et[None, :] * eb[ids]
    return sstats


@pytest.mark.parametrize("tol", [1e-3, 0.0])
def test_vb_estep_parity(tol):
    indptr, indices, data, dense = _corpus()
    rng = np.random.default_rng(2)
    K = 3
    eb = _eb(rng.gamma(1.0, 1.0, size=(dense.shape[1], K)))
    alpha = np.array([0.1, 0.3, 0.2])
    g0 = rng.gamma(1.0, 1.0, size=(dense.shape[0], K)) + 0.5
    g_ref, g = g0.copy(), g0.copy()
    ref = _estep_twin(dense, eb, alpha, g_ref, 20, tol)
    out = np.zeros_like(eb)
    n = kv.vb_estep(indptr, indices, data, 0, dense.shape[0], 0, eb, alpha, g, out, 20, tol, True)
    np.testing.assert_allclose(g, g_ref, rtol=1e-11)
    np.testing.assert_allclose(out, ref, rtol=1e-11, atol=1e-14)
    assert n > 0
    # sstats hold n_dw phi_dwk: their total is the number of tokens
    assert out.sum() == pytest.approx(dense.sum(), rel=1e-12)


def test_vb_estep_offset_rows_and_no_collect():
    indptr, indices, data, dense = _corpus(3)
    eb = _eb(np.random.default_rng(4).gamma(1.0, 1.0, size=(dense.shape[1], 2)))
    alpha = np.full(2, 0.5)
    full = np.ones((dense.shape[0], 2))
    kv.vb_estep(indptr, indices, data, 0, dense.shape[0], 0, eb, alpha, full, np.zeros_like(eb), 30, 1e-6, False)
    part = np.ones((3, 2))
    kv.vb_estep(indptr, indices, data, 2, 5, 2, eb, alpha, part, np.zeros((1, 2)), 30, 1e-6, False)
    np.testing.assert_allclose(part, full[2:5], rtol=1e-13)


def test_vb_doc_bound_parity():
    from scipy.special import gammaln

    indptr, indices, data, dense = _corpus(5)
    rng = np.random.default_rng(6)
    K = 4
    elog = np.log(_eb(rng.gamma(1.0, 1.0, size=(dense.shape[1], K))))
    alpha = rng.gamma(1.0, 1.0, size=K)
    gamma = rng.gamma(1.0, 1.0, size=(dense.shape[0], K)) + 0.1
    total = 0.0
    for d in range(dense.shape[0]):
        elt = digamma(gamma[d]) - digamma(gamma[d].sum())
        ids = np.flatnonzero(dense[d])
        total += float(dense[d, ids] @ logsumexp(elt[None, :] + elog[ids], axis=1))
        total += gammaln(alpha.sum()) - gammaln(alpha).sum() + ((alpha - gamma[d]) * elt).sum()
        total += gammaln(gamma[d]).sum() - gammaln(gamma[d].sum())
    ours = kv.vb_doc_bound(indptr, indices, data, 0, dense.shape[0], 0, elog, alpha, gamma)
    assert ours == pytest.approx(total, rel=1e-12)


def _cvb0_twin(indptr, indices, data, gamma, n_dk, n_wk, n_k, alpha, beta):
    V = n_wk.shape[0]
    for d in range(indptr.shape[0] - 1):
        for j in range(indptr[d], indptr[d + 1]):
            w, c, old = indices[j], data[j], gamma[j].astype(np.float64)
            p = (n_wk[w] - old + beta) * (n_dk[d] - old + alpha) / (n_k - old + V * beta)
            new = np.maximum(p, 0) / np.maximum(p, 0).sum()
            n_dk[d] += c * (new - old)
            n_wk[w] += c * (new - old)
            n_k += c * (new - old)
            gamma[j] = new


def test_cvb0_sweep_parity_and_count_invariants():
    indptr, indices, data, dense = _corpus(7)
    rng = np.random.default_rng(8)
    K = 3
    g = rng.random((indices.shape[0], K)).astype(np.float32)
    g /= g.sum(axis=1, keepdims=True)
    alpha, beta = np.array([0.2, 0.1, 0.4]), 0.05

    def counts(gam):
        n_dk, n_wk, n_k = np.zeros((dense.shape[0], K)), np.zeros((dense.shape[1], K)), np.zeros(K)
        kv.cvb0_counts(indptr, indices, data, gam, n_dk, n_wk, n_k)
        return n_dk, n_wk, n_k

    g_ref = g.astype(np.float64)
    ref = counts(g_ref)
    _cvb0_twin(indptr, indices, data, g_ref, *ref, alpha, beta)
    ours = counts(g)
    kv.cvb0_sweep(indptr, indices, data, 0, dense.shape[0], g, *ours, alpha, beta, dense.shape[1] * beta)
    np.testing.assert_allclose(g, g_ref, rtol=2e-6, atol=1e-6)  # gamma is float32
    for a, b in zip(ours, ref, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    # the in-place counts stay those of the responsibilities
    for a, b in zip(ours, counts(g), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ours[0].sum(axis=1), dense.sum(axis=1), rtol=1e-5)


def test_point_log_likelihood_parity():
    indptr, indices, data, dense = _corpus(9)
    rng = np.random.default_rng(10)
    theta = rng.dirichlet(np.ones(3), size=dense.shape[0])
    phi_wk = rng.dirichlet(np.ones(dense.shape[1]), size=3).T.copy()
    ref = float((dense * np.log(theta @ phi_wk.T)).sum())
    ours = kv.point_log_likelihood(indptr, indices, data, 0, dense.shape[0], theta, phi_wk)
    assert ours == pytest.approx(ref, rel=1e-12)


def test_cvb0_log_likelihood_is_the_point_log_likelihood_of_cvb0_theta():
    """CVB0's monitor makes theta's rows on the fly (issue 21); it equals the dense computation."""
    indptr, indices, data, dense = _corpus(12)
    rng = np.random.default_rng(13)
    n_dk = (rng.random((dense.shape[0], 3)) * 4).astype(np.float32)
    alpha = np.array([0.2, 0.1, 0.4])
    phi_wk = rng.dirichlet(np.ones(dense.shape[1]), size=3).T.copy()
    theta = (n_dk + alpha) / (n_dk + alpha).sum(axis=1, keepdims=True)
    ref = float((dense * np.log(theta @ phi_wk.T)).sum())
    ours = kv.cvb0_log_likelihood(indptr, indices, data, 0, dense.shape[0], n_dk, alpha, phi_wk)
    assert ours == pytest.approx(ref, rel=1e-10)


# -- CVB0 with quantised responsibilities (issue 21) -------------------------------------------
def _cumulative_round(p, scale, u=0.5):
    cum = np.cumsum(p * (scale / np.cumsum(p)[-1]))  # sequential sums, as the kernel adds
    cur = np.floor(cum + u).astype(np.int64)
    cur[-1] = scale
    return np.diff(cur, prepend=0)


def _cvb0q_twin(indptr, indices, data, q, n_wk, n_k, alpha, beta, scale, broken=False, salt=-1.0):
    """Plain-numpy CVB0 sweep over fixed-point responsibilities q / S with integer counts (units 1 / S).
    ``broken``: the counts drop the entry's *new* stored values instead of its old ones. ``salt`` >= 0:
    entry j rounds with the offset frac(salt + j G) instead of 1/2 (``dither``)."""
    V, inv = n_wk.shape[0], 1.0 / scale
    for d in range(indptr.shape[0] - 1):
        ents = range(indptr[d], indptr[d + 1])
        nd = sum((data[j] * q[j].astype(np.int64) for j in ents), np.zeros(len(alpha), np.int64))
        for j in ents:
            w, c, old = indices[j], np.int64(data[j]), q[j].astype(np.int64)
            x = ((n_wk[w] - old) * inv + beta) * ((nd - old) * inv + alpha) / ((n_k - old) * inv + V * beta)
            u = 0.5 if salt < 0 else (salt + j * 0.6180339887498949) - np.floor(salt + j * 0.6180339887498949)
            new = _cumulative_round(x, scale, u)
            delta = c * (new - (new if broken else old))
            nd += delta
            n_wk[w] += delta
            n_k += delta
            q[j] = new


def _q_counts(indptr, indices, data, q, V, K):
    n_wk, n_k = np.zeros((V, K), np.int64), np.zeros(K, np.int64)
    kv.cvb0q_counts(indptr, indices, data, q, n_wk, n_k)
    return n_wk, n_k


def _dense_q_counts(dense, indptr, indices, q):
    """sum_j c_j q_j by (word, topic) and by topic, from scratch with numpy (no kernel)."""
    n_wk = np.zeros((dense.shape[1], q.shape[1]), np.int64)
    rows = np.repeat(np.arange(dense.shape[0]), np.diff(indptr))
    c = dense[rows, indices].astype(np.int64)
    np.add.at(n_wk, indices, c[:, None] * q.astype(np.int64))
    return n_wk, n_wk.sum(axis=0)


def _q_start(seed, dtype, K=4):
    indptr, indices, data, dense = _corpus(seed)
    rng = np.random.default_rng(seed + 1)
    scale = int(np.iinfo(dtype).max)
    q = np.stack([_cumulative_round(rng.random(K) + 1e-3, scale) for _ in range(indices.shape[0])]).astype(dtype)
    return indptr, indices, data, dense, q, scale


@pytest.mark.parametrize("salt", [-1.0, 0.37])
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_cvb0q_sweep_parity_with_numpy_twin(dtype, salt):
    indptr, indices, data, dense, q, scale = _q_start(21, dtype)
    K, V = q.shape[1], dense.shape[1]
    alpha, beta = np.array([0.2, 0.1, 0.4, 0.3]), 0.05
    q_ref = q.copy()
    ref = _q_counts(indptr, indices, data, q_ref, V, K)
    ours = _q_counts(indptr, indices, data, q, V, K)
    for _ in range(3):
        _cvb0q_twin(indptr, indices, data, q_ref, *ref, alpha, beta, scale, salt=salt)
        kv.cvb0q_sweep(indptr, indices, data, 0, dense.shape[0], q, *ours, alpha, beta, V * beta, scale, salt)
    np.testing.assert_array_equal(q, q_ref)  # integers: exact
    for a, b in zip(ours, ref, strict=True):
        np.testing.assert_array_equal(a, b)
    assert (q.astype(np.int64).sum(axis=1) == scale).all()


def _sweeps_keep_invariant(sweep, seed, dtype, n_sweeps=3):
    """After each sweep: every stored row sums to S, and n_wk, n_k equal exactly the sums of c_j q_j."""
    indptr, indices, data, dense, q, scale = _q_start(seed, dtype)
    K, V = q.shape[1], dense.shape[1]
    alpha, beta = np.full(K, 0.1), 0.01
    n_wk, n_k = _q_counts(indptr, indices, data, q, V, K)
    for _ in range(n_sweeps):
        sweep(indptr, indices, data, q, n_wk, n_k, alpha, beta, scale)
        if not (q.astype(np.int64).sum(axis=1) == scale).all():
            return False
        want_wk, want_k = _dense_q_counts(dense, indptr, indices, q)
        if not (np.array_equal(n_wk, want_wk) and np.array_equal(n_k, want_k)):
            return False
    return True


@pytest.mark.parametrize("salt", [-1.0, 0.61])
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
@pytest.mark.parametrize("seed", [31, 32])
def test_cvb0q_counts_are_exactly_the_sums_of_the_stored_values(seed, dtype, salt):
    def sweep(indptr, indices, data, q, n_wk, n_k, alpha, beta, scale):
        kv.cvb0q_sweep(indptr, indices, data, 0, indptr.shape[0] - 1, q, n_wk, n_k, alpha, beta,
                       n_wk.shape[0] * beta, scale, salt)

    assert _sweeps_keep_invariant(sweep, seed, dtype)


def test_cvb0q_invariant_fails_for_a_twin_that_subtracts_the_new_value():
    """Negative control: the same check catches a sweep that removes the new stored value, not the old."""
    def broken(indptr, indices, data, q, n_wk, n_k, alpha, beta, scale):
        _cvb0q_twin(indptr, indices, data, q, n_wk, n_k, alpha, beta, scale, broken=True)

    def good(indptr, indices, data, q, n_wk, n_k, alpha, beta, scale):
        _cvb0q_twin(indptr, indices, data, q, n_wk, n_k, alpha, beta, scale)

    assert _sweeps_keep_invariant(good, 31, np.uint8)
    assert not _sweeps_keep_invariant(broken, 31, np.uint8)


def test_cvb0q_doc_topic_and_log_likelihood_rebuild_n_dk_from_q():
    indptr, indices, data, dense, q, scale = _q_start(41, np.uint8)
    K = q.shape[1]
    rows = np.repeat(np.arange(dense.shape[0]), np.diff(indptr))
    n_dk = np.zeros((dense.shape[0], K))
    np.add.at(n_dk, rows, data[:, None] * q.astype(np.float64) / scale)
    alpha = np.array([0.2, 0.1, 0.4, 0.3])
    out = np.empty((dense.shape[0], K))
    kv.cvb0q_doc_topic(indptr, indices, data, 0, dense.shape[0], q, scale, alpha, out, False)
    np.testing.assert_allclose(out, n_dk, rtol=1e-12, atol=1e-12)
    kv.cvb0q_doc_topic(indptr, indices, data, 0, dense.shape[0], q, scale, alpha, out, True)
    theta = (n_dk + alpha) / (n_dk + alpha).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(out, theta, rtol=1e-12)
    phi_wk = np.random.default_rng(42).dirichlet(np.ones(dense.shape[1]), size=K).T.copy()
    ref = float((dense * np.log(theta @ phi_wk.T)).sum())
    ours = kv.cvb0q_log_likelihood(indptr, indices, data, 0, dense.shape[0], q, scale, alpha, phi_wk)
    assert ours == pytest.approx(ref, rel=1e-10)
