"""The hierarchical Dirichlet process topic model: what is modelled.

Teh, Jordan, Beal & Blei (2006); seed 002 Fig. 1b and §4-5 (the HDP is the
simplest ISBN: one latent node z with an HDP prior on pi_{z|j}, one observed
node x with a Dirichlet-categorical CPT phi_{x|z}):

    tau ~ GEM(gamma)                    (seed 002: tau ~ D[gamma/K] as K -> inf)
    pi_j | tau ~ DP(alpha, tau)         (seed 002: pi_{z|j} ~ D[alpha tau])
    phi_k ~ Dir(beta) over V words
    z_ji ~ Cat(pi_j),  w_ji ~ Cat(phi_{z_ji})

With pi and phi integrated out and the Chinese-restaurant-franchise table
counts m_jk made explicit, the joint of a clustering z of the tokens into K
unlabelled topics and the table counts is (Teh et al. 2006 §5; Antoniak 1974)

    p(z, m) = prod_j [ G(alpha)/G(alpha + n_j) alpha^{m_j.} prod_k |s(n_jk, m_jk)| ]
              * gamma^K G(gamma)/G(gamma + m..) prod_k G(m_.k)

with |s(n, m)| the unsigned Stirling numbers of the first kind, and given m,
tau = (tau_1..tau_K, tau_u) ~ Dir(m_.1, ..., m_.K, gamma) (seed 002 eq. 3, one
level). The words add prod_k DirMult(n_.k. | beta). These closed forms are the
exact targets of tests/statistical/test_hdp_exact.py.

Hyperpriors (Escobar & West 1995; Teh et al. 2006 appendix A):
alpha ~ Gamma(a_alpha, rate b_alpha), gamma ~ Gamma(a_gamma, rate b_gamma), and

    p(alpha | m, n) ∝ p(alpha) alpha^{m..} prod_j G(alpha)/G(alpha + n_j)
    p(gamma | K, m) ∝ p(gamma) gamma^K G(gamma)/G(gamma + m..).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.special import gammaln


class HDPModel(NamedTuple):
    """Fixed quantities of the HDP topic model.

    ``beta`` is the symmetric Dirichlet prior of each topic's word
    distribution; ``alpha_prior`` and ``gamma_prior`` are the (shape, rate)
    of the Gamma hyperpriors of the concentrations (used when they are resampled).
    """

    beta: float
    n_words: int
    alpha_prior: tuple[float, float] = (1.0, 1.0)
    gamma_prior: tuple[float, float] = (1.0, 1.0)


def unsigned_stirling1(n_max: int) -> np.ndarray:
    """|s(n, m)| for 0 <= m <= n <= n_max as an (n_max+1, n_max+1) float64 table.

    |s(n+1, m)| = n |s(n, m)| + |s(n, m-1)|; exact in float64 for n_max <= 20.
    """
    s = np.zeros((n_max + 1, n_max + 1))
    s[0, 0] = 1.0
    for n in range(n_max):
        s[n + 1, 1:] = n * s[n, 1:] + s[n, :-1]
    return s


def antoniak_pmf(n: int, a: float) -> np.ndarray:
    """P(S = s), s = 0..n, of S ~ A[n, a]: |s(n, s)| a^s G(a)/G(a + n) (Antoniak 1974)."""
    st = unsigned_stirling1(n)[n]
    s = np.arange(n + 1)
    with np.errstate(divide="ignore"):
        logp = np.log(st) + s * np.log(a) + gammaln(a) - gammaln(a + n)
    return np.exp(logp)


def crf_log_prior(n_jk: np.ndarray, m_jk: np.ndarray, alpha: float, gamma: float) -> float:
    """log p(z, m) of the module docstring for a (J, K) table of counts n_jk and table counts m_jk.

    Every column must be a used topic (n_.k >= 1) and 1 <= m_jk <= n_jk where n_jk > 0, m_jk = 0 elsewhere.
    """
    n_jk = np.asarray(n_jk, dtype=np.int64)
    m_jk = np.asarray(m_jk, dtype=np.int64)
    n_max = int(n_jk.max()) if n_jk.size else 0
    st = unsigned_stirling1(max(n_max, 1))
    n_j = n_jk.sum(axis=1)
    m_k = m_jk.sum(axis=0)
    K = n_jk.shape[1]
    total = float(np.sum(gammaln(alpha) - gammaln(alpha + n_j)))
    total += float(m_jk.sum()) * np.log(alpha) + float(np.sum(np.log(st[n_jk, m_jk])))
    total += K * np.log(gamma) + gammaln(gamma) - gammaln(gamma + m_k.sum()) + float(np.sum(gammaln(m_k)))
    return total


def word_log_likelihood(n_wk: np.ndarray, beta: float) -> float:
    """log p(w | z, beta) = sum_k log DirMult(n_.k | beta) for a (V, K) table of word-topic counts."""
    n_wk = np.asarray(n_wk, dtype=np.float64)
    V = n_wk.shape[0]
    n_k = n_wk.sum(axis=0)
    return float(np.sum(gammaln(V * beta) - gammaln(n_k + V * beta))
                 + np.sum(gammaln(n_wk + beta) - gammaln(beta)))


def alpha_log_posterior(alpha, m_total: int, doc_lengths, prior: tuple[float, float]) -> np.ndarray:
    """Unnormalised log p(alpha | m, n) (module docstring), vectorised over ``alpha``."""
    a = np.asarray(alpha, dtype=np.float64)[..., None]
    n = np.asarray(doc_lengths, dtype=np.float64)
    shape, rate = prior
    return ((shape - 1) * np.log(a[..., 0]) - rate * a[..., 0] + m_total * np.log(a[..., 0])
            + np.sum(gammaln(a) - gammaln(a + n), axis=-1))


def gamma_log_posterior(gamma, n_topics: int, m_total: int, prior: tuple[float, float]) -> np.ndarray:
    """Unnormalised log p(gamma | K, m) (module docstring), vectorised over ``gamma``."""
    g = np.asarray(gamma, dtype=np.float64)
    shape, rate = prior
    return (shape - 1) * np.log(g) - rate * g + n_topics * np.log(g) + gammaln(g) - gammaln(g + m_total)
