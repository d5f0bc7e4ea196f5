"""An enumerable held-out likelihood: K = 3 topics, V = 4 words, documents of 3-6 tokens.

log p(w | Phi, alpha) = log sum_z prod_n phi_{z_n w_n} p(z | alpha), with
p(z | alpha) = G(sum a) / G(N + sum a) prod_k G(N_k + a_k) / G(a_k) (theta
integrated out: the Dirichlet-multinomial of the assignment counts), summed
here over all K**N assignment sequences. The estimators' unbiasedness is tested
on many independent copies of one document, each estimated with fresh
randomness: the mean of p-hat / p over copies must be 1 within its Monte Carlo
error, |z| < Z_CRIT (two-sided alpha = 1e-4 per assertion).
"""

from __future__ import annotations

import itertools

import numpy as np
import scipy.sparse as sp
from scipy.special import gammaln, logsumexp

from harmonium.corpus import Corpus

Z_CRIT = 3.89  # two-sided alpha = 1e-4
K = 3
PHI = np.array([[0.5, 0.3, 0.1, 0.1], [0.1, 0.1, 0.4, 0.4], [0.25, 0.25, 0.25, 0.25]])
ALPHA = np.array([0.3, 0.6, 0.2])
DOC = np.array([0, 2, 2, 1, 3])  # five tokens, one repeated word


def brute_force_log_likelihood(words, phi=PHI, alpha=ALPHA) -> float:
    k = phi.shape[0]
    terms = []
    for z in itertools.product(range(k), repeat=len(words)):
        z = np.array(z)
        c = np.bincount(z, minlength=k)
        log_prior = (gammaln(alpha.sum()) - gammaln(len(words) + alpha.sum())
                     + (gammaln(c + alpha) - gammaln(alpha)).sum())
        terms.append(np.log(phi[z, words]).sum() + log_prior)
    return float(logsumexp(terms))


def copies(words, n_copies: int, n_words: int = PHI.shape[1]) -> Corpus:
    """``n_copies`` identical documents (independent estimates of the same p(w))."""
    row = np.bincount(words, minlength=n_words)
    return Corpus(sp.csr_matrix(np.tile(row, (n_copies, 1))))


def unbiasedness_z(log_estimates: np.ndarray, exact: float) -> float:
    """z-score of mean(p-hat / p) - 1 over independent estimates."""
    ratio = np.exp(np.asarray(log_estimates) - exact)
    return float((ratio.mean() - 1.0) / (ratio.std(ddof=1) / np.sqrt(ratio.shape[0])))
