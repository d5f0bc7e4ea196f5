"""Importance-sampling estimators of log p(w_d | Phi, alpha) (Wallach et al. 2009, §4).

Wallach, Murray, Salakhutdinov & Mimno (2009), "Evaluation methods for topic
models", ICML. Every estimator here averages unbiased weights of p(w_d), so
mean(weights) is unbiased for p(w_d) and log mean(weights) is a stochastic lower
bound on log p(w_d) that tightens as the number of samples S grows:

``"prior"`` (§4.1, "IS from the prior")
    theta^(s) ~ Dir(alpha), weight p(w_d | theta^(s), Phi) = prod_n theta^(s) . phi_{:, w_n}.
    Simple, and hopeless on long documents: the weights' variance grows
    exponentially with N_d.
``"iterated"`` (§4.1, q from iterated pseudo-counts, "IS-IP")
    A factorised proposal q(z) = prod_n q_n(z_n), with the fixed point
    q_n(k) ∝ (alpha_k + sum_{n' != n} q_{n'}(k)) phi_{k w_n} found by iteration;
    z^(s) ~ q and the weight p(w_d, z^(s) | Phi, alpha) / q(z^(s)).
``"annealed"`` (§4.2, AIS; Neal 2001)
    See :mod:`harmonium._kernels.importance`.

The proposal correction (dividing by q) is what makes the weights unbiased;
the tests check that leaving it out is detected. Never the harmonic mean.
"""

from __future__ import annotations

import numpy as np

from harmonium._kernels import importance as _ais
from harmonium._validation import RANDOM_STATE, Interval, Options, validate_params
from harmonium.corpus.corpus import Corpus
from harmonium.evaluation._heldout import (
    LogLikelihoodResult,
    check_corpus,
    log_doc_prior,
    log_mean_exp,
    topics_and_alpha,
)
from harmonium.parallel.seeds import check_random_state
from harmonium.parallel.threads import child_generators, partition_documents, run_blocks

PROPOSALS = ("prior", "iterated", "annealed")


def _safe_log(x: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.log(x)


def _nonempty_docs(counts):
    """``(d, word ids, counts)`` of each document of the CSR ``counts`` with at least one word, in order."""
    for d in range(counts.shape[0]):
        lo, hi = counts.indptr[d], counts.indptr[d + 1]
        if lo < hi:
            yield d, counts.indices[lo:hi], counts.data[lo:hi]


def prior_log_weights(rng: np.random.Generator, counts, phi: np.ndarray, alpha: np.ndarray,
                      n_samples: int) -> np.ndarray:
    """(D, S) log weights log p(w_d | theta^(s), Phi) with theta^(s) ~ Dir(alpha)."""
    out = np.zeros((counts.shape[0], n_samples))
    for d, words, n_w in _nonempty_docs(counts):
        theta = rng.dirichlet(alpha, size=n_samples)
        out[d] = _safe_log(theta @ phi[:, words]) @ n_w.astype(np.float64)
    return out


def iterated_pseudo_counts(phi_w: np.ndarray, n_w: np.ndarray, alpha: np.ndarray, *, n_iter: int = 100,
                           tol: float = 1e-10) -> np.ndarray:
    """The IS-IP proposal of one document: q_j(k) per distinct word j, (J, K).

    Fixed point of q_j(k) ∝ (alpha_k + N_k - q_j(k)) phi_{k w_j} with
    N_k = sum_j n_j q_j(k): each token's pseudo-counts are the expected counts
    of the other tokens. Started from q_j(k) ∝ alpha_k phi_{k w_j}.

    Parameters
    ----------
    phi_w : (K, J) array
        phi_{k w_j} for the document's distinct words.
    n_w : (J,) array
        Their counts.
    alpha : (K,) array
    """
    q = alpha[:, None] * phi_w
    q = (q / np.maximum(q.sum(axis=0, keepdims=True), np.finfo(float).tiny)).T
    for _ in range(n_iter):
        n_k = n_w @ q
        new = (alpha[None, :] + n_k[None, :] - q) * phi_w.T
        new /= np.maximum(new.sum(axis=1, keepdims=True), np.finfo(float).tiny)
        change = np.abs(new - q).max()
        q = new
        if change < tol:
            break
    return q


def iterated_log_weights(rng: np.random.Generator, counts, phi: np.ndarray, alpha: np.ndarray, n_samples: int,
                         *, n_iter: int = 100) -> np.ndarray:
    """(D, S) log weights log p(w_d, z^(s)) - log q(z^(s)) with z^(s) drawn from the IS-IP proposal.

    The weight depends on z only through m_jk, the number of tokens of
    distinct word j assigned to topic k, so z is drawn as one multinomial per
    distinct word (the sequence's probability under q is still prod_n q_n(z_n)).
    """
    out = np.zeros((counts.shape[0], n_samples))
    for d, words, n_w in _nonempty_docs(counts):
        n_w = n_w.astype(np.int64)
        phi_w = phi[:, words]
        if np.any(phi_w.sum(axis=0) <= 0.0):  # a word no topic can emit: p(w_d) = 0
            out[d] = -np.inf
            continue
        q = iterated_pseudo_counts(phi_w, n_w.astype(np.float64), alpha, n_iter=n_iter)
        m = rng.multinomial(n_w, q, size=(n_samples, words.shape[0]))  # (S, J, K)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(q > 0, _safe_log(phi_w.T) - _safe_log(q), 0.0)  # log phi - log q, (J, K)
        out[d] = log_doc_prior(m.sum(axis=1).astype(np.float64), alpha) + np.einsum("sjk,jk->s", m, ratio)
    return out


def annealed_log_weights(rng: np.random.Generator, corpus: Corpus, phi: np.ndarray, alpha: np.ndarray,
                         n_samples: int, taus: np.ndarray, *, n_threads: int = 1, kernel=None) -> np.ndarray:
    """(D, S) log weights of S annealed importance sampling runs per document (see the kernel)."""
    fn = _ais.ais_documents if kernel is None else kernel
    tokens = corpus.tokens()
    with np.errstate(divide="ignore"):
        log_phi_wk = np.ascontiguousarray(np.log(phi.T))
    n_docs = corpus.n_docs
    K = alpha.shape[0]
    longest = int(corpus.doc_lengths.max()) if n_docs else 0
    out = np.zeros((n_docs, n_samples))

    def work(block_rng, lo, hi):
        fn(block_rng, tokens.doc_ptr, tokens.words, log_phi_wk, alpha, taus, lo, hi,
           np.zeros(max(longest, 1), dtype=np.int32), np.zeros(K, dtype=np.int32), np.zeros(K), out)

    parts = partition_documents(tokens.doc_ptr, n_threads)
    rngs = [rng] if len(parts) == 1 else child_generators(rng, len(parts))
    run_blocks(work, [(rngs[i], lo, hi) for i, (lo, hi) in enumerate(parts)])
    return out


def annealing_schedule(n_temperatures: int, power: float = 2.0) -> np.ndarray:
    """tau_t = (t / T)^power, t = 0 .. T: small steps where p(w | z)^tau changes fastest (near 0)."""
    return (np.arange(n_temperatures + 1) / n_temperatures) ** power


def importance_sampling(
    model,
    corpus,
    *,
    proposal: str = "iterated",
    n_samples: int = 100,
    n_iter: int = 100,
    n_temperatures: int = 100,
    alpha=None,
    random_state=0,
    n_jobs: int = 1,
) -> LogLikelihoodResult:
    """Importance-sampling estimates of log p(w_d | Phi, alpha) for every document of ``corpus``.

    Parameters
    ----------
    model : object with ``topic_word_`` and ``alpha_``, or (topic_word, alpha), or a (K, V) array
    corpus : Corpus
        Test documents over the model's vocabulary (matched by term if the model has ``vocabulary_``).
    proposal : {"prior", "iterated", "annealed"}, default "iterated"
        IS from the prior, IS with the iterated pseudo-count proposal, or
        annealed importance sampling (module docstring).
    n_samples : int, default 100
        S, samples (annealing runs) per document.
    n_iter : int, default 100
        Fixed-point iterations of the IS-IP proposal (``"iterated"``).
    n_temperatures : int, default 100
        T of the annealing schedule tau_t = (t / T)^2 (``"annealed"``).
    alpha : float or (K,) array, optional
        Overrides the model's ``alpha_``.
    random_state : int, Generator or None, default 0
    n_jobs : int, default 1
        Threads for ``"annealed"``.

    Returns
    -------
    LogLikelihoodResult
        ``std_error`` is the delta-method sd(w) / (sqrt(S) mean(w)).
    """
    validate_params(
        "importance_sampling",
        {"proposal": proposal, "n_samples": n_samples, "n_iter": n_iter, "n_temperatures": n_temperatures,
         "random_state": random_state, "n_jobs": n_jobs},
        {"proposal": [Options(PROPOSALS)], "n_samples": [Interval("int", 1, None)],
         "n_iter": [Interval("int", 0, None)], "n_temperatures": [Interval("int", 1, None)],
         "random_state": [RANDOM_STATE], "n_jobs": [Interval("int", 1, None)]},
    )
    phi, a = topics_and_alpha(model, alpha, "importance_sampling")
    corpus = check_corpus(corpus, phi.shape[1], "importance_sampling", getattr(model, "vocabulary_", None))
    rng, _ = check_random_state(random_state, "importance_sampling")
    if proposal == "prior":
        log_w = prior_log_weights(rng, corpus.counts, phi, a, n_samples)
    elif proposal == "iterated":
        log_w = iterated_log_weights(rng, corpus.counts, phi, a, n_samples, n_iter=n_iter)
    else:
        log_w = annealed_log_weights(rng, corpus, phi, a, n_samples, annealing_schedule(n_temperatures),
                                     n_threads=n_jobs)
    est, se = log_mean_exp(log_w)
    n_tokens = corpus.doc_lengths
    empty = n_tokens == 0
    est[empty], se[empty] = 0.0, 0.0
    return LogLikelihoodResult(est, se, n_tokens, f"importance/{proposal}", int(n_samples))
