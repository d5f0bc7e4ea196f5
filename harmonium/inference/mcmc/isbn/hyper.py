"""The hyperparameter updates of every HDP-family engine, in one place (seed 002 §4; Teh et al. 2006 §5.3, app. A).

After a sweep over z, each engine augments an HDP node with table counts and redraws what hangs above them:

1. table counts S_{k|l} ~ A[N_{k|l}, alpha tau_k] per CPT row l (Antoniak 1974; seed 002 §4): the number of
   occupied tables of a Chinese restaurant with concentration alpha tau_k after N_{k|l} customers
   (:func:`dense_tables` for a dense (rows, K) table, :func:`row_tables` for rows held as dicts; the compiled
   chain engine counts inside its own kernel, :func:`harmonium._kernels.isbn_chain.table_counts`);
2. optionally the concentrations with tau integrated out: alpha | S, N by the auxiliary variables of Teh et al.
   (2006, appendix A; :func:`resample_alpha`) and gamma | K, S by Escobar & West (1995, §6;
   :func:`resample_gamma`);
3. tau = (tau_1..tau_K, tau_u) ~ Dir(S_.1, ..., S_.K, gamma) (seed 002 eq. 3 with one level; :func:`draw_tau`).

Step 2 is :func:`resample_concentrations`, steps 2-3 for one node :func:`global_step`; the direct-assignment HDP
(:mod:`harmonium.inference.mcmc.isbn.hdp`), the compiled chain engine
(:mod:`harmonium.inference.mcmc.isbn.compiled`) and the Python ISBN engine
(:mod:`harmonium.inference.mcmc.isbn.gibbs`) all call it, and a DP node (whose states are its rows' tables)
calls :func:`resample_alpha` with the numbers of states. The HDP's topic-word prior beta | z, w has a slice
sampler here too (:func:`resample_beta`; Neal 2003 §4).

Each update leaves its conditional invariant: tests/statistical/test_hdp_exact.py checks alpha, gamma and beta
against quadrature (with broken twins), tests/statistical/test_isbn_random_effects.py the alpha step of the
Python engine's HDP and DP nodes.

References
----------
Y. W. Teh, M. I. Jordan, M. J. Beal, D. M. Blei. Hierarchical Dirichlet processes. JASA 2006, §5.3, appendix A.
M. D. Escobar, M. West. Bayesian density estimation and inference using mixtures. JASA 1995, §6.
C. E. Antoniak. Mixtures of Dirichlet processes. Annals of Statistics 1974.
R. M. Neal. Slice sampling. Annals of Statistics 2003, §4.
"""

from __future__ import annotations

import numpy as np

from harmonium._kernels import hdp as khdp


def resample_alpha(rng: np.random.Generator, alpha: float, m_total: int, doc_lengths: np.ndarray,
                   prior: tuple[float, float], n_iter: int = 1) -> float:
    """alpha | m, n by auxiliary variables (Teh et al. 2006, appendix A; Escobar & West 1995).

    w_j ~ Beta(alpha + 1, n_j), s_j ~ Bernoulli(n_j / (n_j + alpha)), then
    alpha ~ Gamma(a + m.. - sum s_j, rate b - sum log w_j); each round leaves
    p(alpha | m, n) of :mod:`harmonium.models.directed.hdp` invariant.
    ``doc_lengths`` (the groups' sizes n_j) must be positive.
    """
    shape, rate = prior
    n = doc_lengths
    for _ in range(n_iter):
        w = rng.beta(alpha + 1.0, n)
        s = rng.random(n.shape[0]) * (n + alpha) < n
        r = rate - float(np.sum(np.log(w)))
        alpha = float(rng.gamma(shape + m_total - int(np.count_nonzero(s)), 1.0 / r))
    return max(alpha, 1e-300)


def resample_gamma(rng: np.random.Generator, gamma: float, n_topics: int, m_total: int,
                   prior: tuple[float, float], n_iter: int = 1) -> float:
    """gamma | K, m.. by Escobar & West (1995, §6): eta ~ Beta(gamma + 1, m..), then a two-Gamma mixture.

    gamma ~ pi Gamma(a + K, b - log eta) + (1 - pi) Gamma(a + K - 1, b - log eta),
    pi / (1 - pi) = (a + K - 1) / (m.. (b - log eta)). Also the concentration of a Chinese restaurant with
    K tables and m.. customers (the CRP priors of :mod:`harmonium.inference.mcmc.isbn.bihdp_blocks`).
    """
    shape, rate = prior
    for _ in range(n_iter):
        eta = rng.beta(gamma + 1.0, m_total)
        r = rate - float(np.log(eta))
        odds = (shape + n_topics - 1) / (m_total * r)
        k_shape = shape + n_topics if rng.random() * (1.0 + odds) < odds else shape + n_topics - 1
        gamma = float(rng.gamma(k_shape, 1.0 / r))
    return max(gamma, 1e-300)


def dense_tables(rng: np.random.Generator, n_dk: np.ndarray, K: int, alpha: float, tau: np.ndarray,
                 m_k: np.ndarray) -> int:
    """Table counts of a dense count table: m_k[k] = sum_d A[n_dk, alpha tau_k] for k < K (fills ``m_k[:K]``,
    rows in order, then columns); returns m.. (:func:`harmonium._kernels.hdp.sample_tables`)."""
    return int(khdp.sample_tables(rng, n_dk, K, alpha, tau, m_k))


def row_tables(rng: np.random.Generator, counts: dict, totals: dict, alpha: float, tau: dict) -> dict:
    """Table counts of CPT rows held as dicts: {row l: {state k: S_{k|l} ~ A[N_{k|l}, alpha tau_k]}} over the rows
    with N_l > 0 and their states with N_{k|l} > 0, in the dicts' order."""
    return {row: {k: int(khdp.antoniak(rng, int(n), alpha * tau[k])) for k, n in cnt.items() if n > 0}
            for row, cnt in counts.items() if totals.get(row, 0) > 0}


def draw_tau(rng: np.random.Generator, S: np.ndarray, gamma: float, out: np.ndarray | None = None) -> np.ndarray:
    """tau ~ Dir(S_1, ..., S_K, gamma) from K + 1 gamma variates (in that order); returns the (K + 1,) weights,
    last tau_u, written into ``out[:K + 1]`` when given (:func:`harmonium._kernels.hdp.sample_tau`)."""
    S = np.ascontiguousarray(S, dtype=np.int64)
    K = S.shape[0]
    tau = np.empty(K + 1) if out is None else out
    khdp.sample_tau(rng, S, K, float(gamma), tau)
    return tau[: K + 1]


def global_step(rng: np.random.Generator, S: np.ndarray, m_total: int, lengths: np.ndarray, alpha: float,
                gamma: float, *, sample_alpha: bool, sample_gamma: bool, alpha_prior: tuple[float, float],
                gamma_prior: tuple[float, float], n_iter: int = 1, tau_out: np.ndarray | None = None):
    """Steps 2-3 of the module docstring for one HDP node given its table counts; returns (tau, alpha, gamma).

    ``S``: (K,) table counts per used state, ``m_total`` their sum, ``lengths``: the sizes N_l > 0 of the
    node's rows (its "documents"). alpha is resampled when ``sample_alpha`` and some row has data, gamma when
    ``sample_gamma`` and ``m_total`` > 0; tau ~ Dir(S, gamma) with the new gamma (alpha and gamma are drawn with
    tau integrated out, so they come first). ``tau_out``: where to write tau (see :func:`draw_tau`).
    """
    alpha, gamma = resample_concentrations(rng, int(S.shape[0]), m_total, lengths, alpha, gamma,
                                           sample_alpha=sample_alpha, sample_gamma=sample_gamma,
                                           alpha_prior=alpha_prior, gamma_prior=gamma_prior, n_iter=n_iter)
    return draw_tau(rng, S, gamma, tau_out), alpha, gamma


def resample_concentrations(rng: np.random.Generator, n_states: int, m_total: int, lengths: np.ndarray,
                            alpha: float, gamma: float, *, sample_alpha: bool = True, sample_gamma: bool = True,
                            alpha_prior: tuple[float, float] = (1.0, 1.0),
                            gamma_prior: tuple[float, float] = (1.0, 1.0), n_iter: int = 1) -> tuple[float, float]:
    """Step 2 of the module docstring: (alpha, gamma) | S, N, K of one HDP node with ``n_states`` used states,
    ``m_total`` tables and rows of sizes ``lengths`` (> 0). alpha is resampled when ``sample_alpha`` and some row
    has data, then gamma when ``sample_gamma`` and ``m_total`` > 0; each is returned unchanged otherwise."""
    if sample_alpha and lengths.shape[0] > 0:
        alpha = resample_alpha(rng, alpha, int(m_total), lengths, alpha_prior, n_iter)
    if sample_gamma and m_total > 0:
        gamma = resample_gamma(rng, gamma, int(n_states), int(m_total), gamma_prior, n_iter)
    return float(alpha), float(gamma)


def beta_log_posterior(beta: float, n_wk: np.ndarray, n_k: np.ndarray, K: int, prior: tuple[float, float]) -> float:
    """log p(beta | z, w) up to a constant: log p(w | z, beta) + log Gamma(beta; shape, rate)."""
    if not beta > 0.0:
        return -np.inf
    shape, rate = prior
    return float(khdp.word_log_likelihood(n_wk, n_k, K, beta)) + (shape - 1.0) * np.log(beta) - rate * beta


def slice_sample(rng: np.random.Generator, x: float, logf, n_iter: int = 1, width: float = 1.0) -> float:
    """``n_iter`` univariate slice-sampling updates of x under the log density ``logf`` (Neal 2003, §4: stepping
    out, then shrinkage); each leaves exp(logf) invariant."""
    for _ in range(n_iter):
        y = logf(x) + np.log(rng.random())
        lo = x - width * rng.random()
        hi = lo + width
        while logf(lo) > y:
            lo -= width
        while logf(hi) > y:
            hi += width
        while True:
            x1 = lo + (hi - lo) * rng.random()
            if logf(x1) > y:
                x = x1
                break
            if x1 < x:
                lo = x1
            else:
                hi = x1
    return x


def resample_beta(rng: np.random.Generator, beta: float, n_wk: np.ndarray, n_k: np.ndarray, K: int,
                  prior: tuple[float, float], n_iter: int = 1, width: float = 1.0, jacobian: bool = True) -> float:
    """beta | z, w by slice sampling on x = log beta (:func:`slice_sample`).

    The topic-word concentration is resampled like alpha and gamma (Teh et al. 2006 resample the
    concentrations; Wallach, Mimno & McCallum 2009 show that the Dirichlet priors of a topic model
    matter and should be learnt): p(beta | z, w) ∝ Gamma(beta; shape, rate) prod_k DirMult(n_.k | beta),
    beta entering only the word term. The density of x carries the Jacobian beta; ``jacobian=False``
    drops it, for the tests' negative control only. O(V K) per density evaluation.
    """
    def logf(x):
        return beta_log_posterior(float(np.exp(x)), n_wk, n_k, K, prior) + (x if jacobian else 0.0)

    return float(np.exp(slice_sample(rng, float(np.log(beta)), logf, n_iter, width)))
