"""Exactness of the fixed-topics Gibbs sampler behind ``LDA.transform``.

Target: for one document w (4 tokens) and fixed topics phi, the posterior
p(z | w, phi, alpha) ∝ prod_i phi_{z_i w_i} * prod_k G(n_k + a_k) / G(a_k)
(theta integrated out) is enumerated over K**4 = 81 states. Copies of the
document are independent given phi, so one call of the compiled sweep on many
copies, each started from an exact draw of the posterior, yields iid end
states that are chi-square tested against it. The posterior mean of theta
returned by ``infer_fixed_topics`` is checked against the enumerated
E[theta | w, phi] within its Monte Carlo error. A sweep that keeps the
token's own count (off-by-one) is the negative control.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from numba import njit
from scipy import stats
from scipy.special import gammaln

from harmonium._kernels import lda_infer
from harmonium._kernels.categorical import draw_unnormalised
from harmonium.corpus import Corpus
from harmonium.inference.mcmc.lda.infer import infer_fixed_topics

ALPHA_TEST = 1e-4
K = 3
WORDS = np.array([0, 1, 1, 2], dtype=np.int32)
ALPHA = np.array([0.4, 0.9, 0.25])
PHI_WK = np.array([[0.6, 0.1, 0.3], [0.2, 0.5, 0.3], [0.2, 0.4, 0.4]])  # (V, K), columns are topics
STATES = np.array(list(itertools.product(range(K), repeat=len(WORDS))), dtype=np.int32)


def _index(z):
    return int(np.ravel_multi_index(tuple(z), (K,) * len(z)))


@pytest.fixture(scope="module")
def posterior():
    logp = []
    for z in STATES:
        n = np.bincount(z, minlength=K)
        logp.append(np.log(PHI_WK[WORDS, z]).sum() + (gammaln(n + ALPHA) - gammaln(ALPHA)).sum())
    p = np.exp(np.array(logp) - max(logp))
    return p / p.sum()


@njit
def broken_fixed_topics_sweep(rng, doc_ptr, words, z, n_dk, phi_wk, a_cum, d_lo, d_hi,
                              initialise, dtop, rbuf, in_doc):
    """Off-by-one: the token's own assignment stays in n_dk while it is redrawn (O(K) draw)."""
    K = n_dk.shape[1]
    for d in range(d_lo, d_hi):
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            w = words[i]
            for k in range(K):
                rbuf[k] = (n_dk[d, k] + ALPHA[k]) * phi_wk[w, k]
            new = draw_unnormalised(rng, rbuf, K)
            if not initialise:
                n_dk[d, z[i]] -= 1
            z[i] = new
            n_dk[d, new] += 1


def _one_sweep_hist(posterior, sweep, n_copies=40_000, seed=7):
    rng = np.random.default_rng(seed)
    starts = rng.choice(len(STATES), size=n_copies, p=posterior)
    z = STATES[starts].ravel().copy()
    words = np.tile(WORDS, n_copies)
    doc_ptr = np.arange(0, len(words) + 1, len(WORDS), dtype=np.int64)
    n_dk = np.zeros((n_copies, K), dtype=np.int32)
    np.add.at(n_dk, (np.repeat(np.arange(n_copies), len(WORDS)), z), 1)
    a_cum = np.empty((PHI_WK.shape[0], K))
    lda_infer.word_prior_tables(PHI_WK, ALPHA, a_cum)
    sweep(rng, doc_ptr, words, z, n_dk, PHI_WK, a_cum, 0, n_copies, False,
          np.empty(K, np.int32), np.empty(K), np.zeros(K, np.uint8))
    ends = np.ravel_multi_index(tuple(z.reshape(n_copies, -1).T), (K,) * len(WORDS))
    return np.bincount(ends, minlength=len(STATES))


def test_fixed_topics_sweep_chi_square(posterior):
    hist = _one_sweep_hist(posterior, lda_infer.fixed_topics_sweep_sparse)
    assert (posterior * hist.sum()).min() >= 5
    assert stats.chisquare(hist, posterior * hist.sum()).pvalue > ALPHA_TEST


def _rows_sweep(stale: bool):
    """The sweep without a count table (what transform runs), in the harness's signature. ``stale``: one
    document at a time, each document's counts put back into the scratch after it (the clear at the
    document's end forgotten: a negative control)."""
    def sweep(rng, doc_ptr, words, z, n_dk, phi_wk, a_cum, d_lo, d_hi, initialise, dtop, rbuf, in_doc):
        drow, none = np.zeros(K, np.int32), np.zeros((0, K))
        if not stale:
            lda_infer.fixed_topics_sweep_rows(rng, doc_ptr, words, z, phi_wk, a_cum, d_lo, d_hi,
                                              initialise, dtop, rbuf, in_doc, drow, none, False)
            return
        for d in range(d_lo, d_hi):
            lda_infer.fixed_topics_sweep_rows(rng, doc_ptr, words, z, phi_wk, a_cum, d, d + 1, initialise,
                                              dtop, rbuf, in_doc, drow, none, False)
            np.add.at(drow, z[doc_ptr[d]:doc_ptr[d + 1]], 1)
    return sweep


def test_fixed_topics_sweep_rows_chi_square(posterior):
    hist = _one_sweep_hist(posterior, _rows_sweep(False))
    assert stats.chisquare(hist, posterior * hist.sum()).pvalue > ALPHA_TEST


def test_negative_control_rows_sweep_with_stale_row_fails_chi_square(posterior):
    hist = _one_sweep_hist(posterior, _rows_sweep(True))
    assert stats.chisquare(hist, posterior * hist.sum()).pvalue < ALPHA_TEST


def test_transform_without_count_table_is_bit_identical_to_the_table():
    counts = sp.csr_matrix(np.random.default_rng(2).poisson(1.0, size=(300, 3)))
    tokens = Corpus(counts).tokens()
    for n_threads in (1, 2):
        a = infer_fixed_topics(np.random.default_rng(5), tokens, PHI_WK, ALPHA, 12, n_threads=n_threads)
        b = infer_fixed_topics(np.random.default_rng(5), tokens, PHI_WK, ALPHA, 12, n_threads=n_threads,
                               sweep=lda_infer.fixed_topics_sweep_sparse)
        assert a.tobytes() == b.tobytes()


def test_negative_control_broken_sweep_fails_chi_square(posterior):
    # the same harness, a sweep with the off-by-one
    hist = _one_sweep_hist(posterior, broken_fixed_topics_sweep)
    assert stats.chisquare(hist, posterior * hist.sum()).pvalue < ALPHA_TEST


def test_transform_theta_matches_exact_posterior_mean(posterior):
    n = np.array([np.bincount(z, minlength=K) for z in STATES])
    exact = posterior @ ((n + ALPHA) / (len(WORDS) + ALPHA.sum()))
    n_copies = 4000
    counts = sp.csr_matrix(np.tile(np.bincount(WORDS, minlength=3), (n_copies, 1)))
    for n_threads in (1, 2):  # the threaded path draws other (child) streams; both must be unbiased
        theta = infer_fixed_topics(np.random.default_rng(3), Corpus(counts).tokens(), PHI_WK, ALPHA, 60,
                                   n_threads=n_threads)
        # copies are independent: the spread across them gives the Monte Carlo standard error
        se = theta.std(axis=0, ddof=1) / np.sqrt(n_copies)
        z = np.abs(theta.mean(axis=0) - exact) / se
        assert z.max() < 4.5, (n_threads, theta.mean(axis=0), exact, se)
