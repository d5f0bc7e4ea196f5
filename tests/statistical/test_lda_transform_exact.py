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

from harmonium._kernels import lda_gibbs
from harmonium._kernels.categorical import draw_unnormalised
from harmonium.corpus import Corpus
from harmonium.inference.mcmc.lda_collapsed_gibbs import infer_fixed_topics

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
def broken_fixed_topics_sweep(rng, doc_ptr, words, z, n_dk, phi_wk, alpha, p):
    K = alpha.shape[0]
    for d in range(doc_ptr.shape[0] - 1):
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            w = words[i]
            old = z[i]
            for k in range(K):
                p[k] = (n_dk[d, k] + alpha[k]) * phi_wk[w, k]
            new = draw_unnormalised(rng, p, K)
            z[i] = new
            n_dk[d, old] -= 1
            n_dk[d, new] += 1


def _one_sweep_hist(posterior, sweep, n_copies=40_000, seed=7):
    rng = np.random.default_rng(seed)
    starts = rng.choice(len(STATES), size=n_copies, p=posterior)
    z = STATES[starts].ravel().copy()
    words = np.tile(WORDS, n_copies)
    doc_ptr = np.arange(0, len(words) + 1, len(WORDS), dtype=np.int64)
    n_dk = np.zeros((n_copies, K), dtype=np.int32)
    np.add.at(n_dk, (np.repeat(np.arange(n_copies), len(WORDS)), z), 1)
    sweep(rng, doc_ptr, words, z, n_dk, PHI_WK, ALPHA, np.empty(K))
    ends = np.ravel_multi_index(tuple(z.reshape(n_copies, -1).T), (K,) * len(WORDS))
    return np.bincount(ends, minlength=len(STATES))


def test_fixed_topics_sweep_chi_square(posterior):
    hist = _one_sweep_hist(posterior, lda_gibbs.fixed_topics_sweep)
    assert (posterior * hist.sum()).min() >= 5
    assert stats.chisquare(hist, posterior * hist.sum()).pvalue > ALPHA_TEST


def test_negative_control_broken_sweep_fails_chi_square(posterior):
    hist = _one_sweep_hist(posterior, broken_fixed_topics_sweep)
    assert stats.chisquare(hist, posterior * hist.sum()).pvalue < ALPHA_TEST


def test_transform_theta_matches_exact_posterior_mean(posterior):
    n = np.array([np.bincount(z, minlength=K) for z in STATES])
    exact = posterior @ ((n + ALPHA) / (len(WORDS) + ALPHA.sum()))
    n_copies = 4000
    counts = sp.csr_matrix(np.tile(np.bincount(WORDS, minlength=3), (n_copies, 1)))
    theta = infer_fixed_topics(np.random.default_rng(3), Corpus(counts).tokens(), PHI_WK, ALPHA, 60)
    # copies are independent: the spread across them gives the Monte Carlo standard error
    se = theta.std(axis=0, ddof=1) / np.sqrt(n_copies)
    z = np.abs(theta.mean(axis=0) - exact) / se
    assert z.max() < 4.5, (theta.mean(axis=0), exact, se)
