"""One held-out likelihood interface for every model: ``log_likelihood`` and ``perplexity``.

Directed models (LDA now, HDP and ISBN later) expose ``topic_word_`` (K, V)
and ``alpha_`` (K,); their per-document marginal likelihood
p(w_d | Phi, alpha), with theta_d integrated out, is estimated by one of

* ``"left_to_right"`` (default): :mod:`harmonium.evaluation.left_to_right`;
* ``"importance_prior"``, ``"importance_iterated"``, ``"annealed"``:
  :mod:`harmonium.evaluation.importance`;
* ``"exact"``: dynamic programming over topic counts, for small K and short
  documents only (it enumerates (N_d + 1)^(K-1) count vectors).

The hook for models whose likelihood comes from elsewhere, e.g. harmoniums,
whose log p(v_d) = -F(v_d) - log Z needs an AIS estimate of the partition
function Z: a model with a method

    log_likelihood_documents(corpus[, random_state=...]) -> LogLikelihoodResult
                                                          | (D,) array | (log_likelihood, std_error)

is dispatched to it under ``method="auto"`` (the default). Such a model owns
its estimator; note that an error in log Z is shared by all documents, so its
``std_error`` should say so (the per-document errors are not independent).

Perplexity is exp(- sum_d log p(w_d) / sum_d N_d) over whole held-out
documents, the same number for every model when every model is scored on the
same test documents (``harmonium.corpus.train_test_split`` with one seed).
Never the harmonic mean.
"""

from __future__ import annotations

import inspect
from typing import NamedTuple

import numpy as np

from harmonium._validation import Interval, Options, validate_params
from harmonium.corpus.corpus import Corpus
from harmonium.errors import CorpusError, InvalidParameterError
from harmonium.evaluation._heldout import (
    LogLikelihoodResult,
    check_corpus,
    exact_document_log_likelihood,
    topics_and_alpha,
)
from harmonium.evaluation.importance import importance_sampling
from harmonium.evaluation.left_to_right import left_to_right

METHODS = ("auto", "left_to_right", "importance_prior", "importance_iterated", "annealed", "exact")


class PerplexityResult(NamedTuple):
    """Held-out perplexity of whole test documents.

    Attributes
    ----------
    perplexity : float
        exp(- log_likelihood / n_tokens).
    log_likelihood : float
        sum_d log p(w_d).
    std_error : float
        Monte Carlo standard error of ``log_likelihood`` (documents independent).
    n_tokens, n_docs : int
        Tokens and non-empty documents scored.
    method : str
        How log p(w_d) was estimated: ``"left_to_right"``, ``"ReplicatedSoftmax.ais"``, ...
    per_document : LogLikelihoodResult
    estimator : str or None
        The class of the model scored (``"LDA"``, ``"HDP"``, ``"ReplicatedSoftmax"``); None for a
        bare (topic_word, alpha) pair or array.
    """

    perplexity: float
    log_likelihood: float
    std_error: float
    n_tokens: int
    n_docs: int
    method: str
    per_document: LogLikelihoodResult
    estimator: str | None = None

    @property
    def perplexity_interval(self) -> tuple[float, float]:
        """perplexity at log_likelihood ± 2 standard errors."""
        lo = np.exp(-(self.log_likelihood + 2 * self.std_error) / self.n_tokens)
        hi = np.exp(-(self.log_likelihood - 2 * self.std_error) / self.n_tokens)
        return float(lo), float(hi)


def exact_log_likelihood(model, corpus, *, alpha=None, max_states: int = 20_000_000) -> LogLikelihoodResult:
    """log p(w_d | Phi, alpha) exactly, for small K and short documents.

    sum_z prod_n phi_{z_n w_n} p(z | alpha) by dynamic programming over the
    topic-count vectors (see
    ``harmonium.evaluation._heldout.exact_document_log_likelihood``); each
    document costs O(N_d (N_d + 1)^(K-1) K).
    """
    phi, a = topics_and_alpha(model, alpha, "exact_log_likelihood")
    corpus = check_corpus(corpus, phi.shape[1], "exact_log_likelihood", getattr(model, "vocabulary_", None))
    ts = corpus.tokens()
    est = np.array([
        exact_document_log_likelihood(ts.words[ts.doc_ptr[d]:ts.doc_ptr[d + 1]], phi, a, max_states)
        for d in range(corpus.n_docs)
    ])
    return LogLikelihoodResult(est, np.zeros(corpus.n_docs), corpus.doc_lengths, "exact", 0)


def _takes(fn, name: str) -> bool:
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def _from_model_hook(model, corpus, random_state, options) -> LogLikelihoodResult:
    fn = model.log_likelihood_documents
    try:
        accepted = set(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        accepted = set()
    unknown = sorted(set(options) - accepted)
    if unknown:
        raise InvalidParameterError(
            f"log_likelihood: {type(model).__name__}.log_likelihood_documents takes no option {unknown[0]!r}; "
            f"it takes {sorted(accepted - {'corpus', 'self'})}."
        )
    kw = dict(options)
    if "random_state" in accepted:
        kw["random_state"] = random_state
    out = fn(corpus, **kw)
    if isinstance(out, LogLikelihoodResult):
        return out
    if isinstance(out, tuple) and len(out) == 2:
        ll, se = (np.asarray(v, dtype=np.float64) for v in out)
    else:
        ll = np.asarray(out, dtype=np.float64)
        se = np.full(ll.shape, np.nan)
    if ll.shape != (corpus.n_docs,) or se.shape != ll.shape:
        raise InvalidParameterError(
            f"{type(model).__name__}.log_likelihood_documents returned shape {ll.shape} for {corpus.n_docs} "
            "documents; it must return one log-likelihood per document."
        )
    return LogLikelihoodResult(ll, se, corpus.doc_lengths, f"{type(model).__name__}.log_likelihood_documents", 0)


def log_likelihood(
    model,
    corpus,
    *,
    method: str = "auto",
    n_particles: int = 20,
    random_state=0,
    alpha=None,
    n_jobs: int = 1,
    **options,
) -> LogLikelihoodResult:
    """Per-document held-out log-likelihoods log p(w_d | model) with standard errors.

    Parameters
    ----------
    model : fitted model, (topic_word, alpha) pair or (K, V) array
        Anything with ``topic_word_`` and ``alpha_`` (LDA, HDP, ...), or a model
        with ``log_likelihood_documents`` (harmoniums; module docstring).
    corpus : Corpus
        Whole test documents (not seen in training).
    method : {"auto", "left_to_right", "importance_prior", "importance_iterated", "annealed", "exact"}
        ``"auto"``: the model's ``log_likelihood_documents`` if it has one,
        else ``"left_to_right"``.
    n_particles : int, default 20
        Particles (left-to-right), samples (importance sampling) or annealing runs.
    random_state : int, Generator or None, default 0
    alpha : float or (K,) array, optional
        Overrides the model's ``alpha_``.
    n_jobs : int, default 1
    **options
        Passed on: ``combine``, ``resample`` (left-to-right); ``n_iter``
        (IS-IP); ``n_temperatures`` (annealed); ``max_states`` (exact); under
        ``"auto"`` to the model's ``log_likelihood_documents`` (e.g. ``ais="fast"``,
        ``progress=True``, ``n_runs`` and ``n_temperatures`` of the harmoniums' AIS:
        :meth:`~harmonium.estimators.efh.ReplicatedSoftmax.log_likelihood_documents`), which also gets
        ``n_particles`` and ``n_jobs`` when it takes them (HDP).

    Returns
    -------
    LogLikelihoodResult
        ``log_likelihood`` and ``std_error`` per document; ``.total``,
        ``.perplexity``.

    Examples
    --------
    >>> from harmonium.corpus import train_test_split
    >>> train, test = train_test_split(corpus, 0.1, random_state=0)  # doctest: +SKIP
    >>> lda = LDA(20, n_iter=200, random_state=0).fit(train)  # doctest: +SKIP
    >>> res = log_likelihood(lda, test, n_particles=10)  # doctest: +SKIP
    >>> res.perplexity, res.total_std_error  # doctest: +SKIP
    """
    validate_params(
        "log_likelihood", {"method": method, "n_particles": n_particles, "n_jobs": n_jobs},
        {"method": [Options(METHODS)], "n_particles": [Interval("int", 1, None)], "n_jobs": [Interval("int", 1, None)]},
    )
    if not isinstance(corpus, Corpus):
        raise CorpusError(f"log_likelihood expects a harmonium Corpus; got {type(corpus).__name__}.")
    has_topics = hasattr(model, "topic_word_") or isinstance(model, (tuple, np.ndarray))
    if method == "auto":
        if hasattr(model, "log_likelihood_documents"):
            # n_particles and n_jobs reach a hook that takes them (HDP's left-to-right); others must leave them be
            for name, value, default in (("n_particles", n_particles, 20), ("n_jobs", n_jobs, 1)):
                if value != default or _takes(model.log_likelihood_documents, name):
                    options = {name: value, **options}
            return _from_model_hook(model, corpus, random_state, options)
        method = "left_to_right"
    if not has_topics:
        raise InvalidParameterError(
            f"log_likelihood(method={method!r}) needs topics: {type(model).__name__} has no topic_word_. "
            "Models that estimate their own likelihood provide log_likelihood_documents; use method='auto'."
        )
    if method == "left_to_right":
        return left_to_right(model, corpus, n_particles=n_particles, alpha=alpha, random_state=random_state,
                             n_jobs=n_jobs, **options)
    if method == "exact":
        return exact_log_likelihood(model, corpus, alpha=alpha, **options)
    proposal = {"importance_prior": "prior", "importance_iterated": "iterated", "annealed": "annealed"}[method]
    return importance_sampling(model, corpus, proposal=proposal, n_samples=n_particles, alpha=alpha,
                               random_state=random_state, n_jobs=n_jobs, **options)


def perplexity(model, corpus, **kwargs) -> PerplexityResult:
    """Held-out perplexity exp(- sum_d log p(w_d) / sum_d N_d) of whole test documents.

    Takes the arguments of :func:`log_likelihood`. Score every model on the
    same test documents (one ``train_test_split`` seed) to compare them. Every
    estimator's ``.perplexity(X)`` returns this (the one yardstick), with the
    estimator's class in ``estimator``; document completion, a different
    number, is ``.completion_perplexity(X)`` on the topic models.

    For count models (LDA, HDP, Replicated Softmax) log p(w_d) is the
    probability of the document's word sequence, so their numbers compare
    with each other. Harmoniums of word occurrences (EFH, GB-EFH, the dual-wing
    harmonium) score the binary occurrence vector (and the density of the
    features) divided by the same token count: comparable within such a model
    family only.
    """
    if not isinstance(corpus, Corpus):
        raise CorpusError(f"perplexity expects a harmonium Corpus; got {type(corpus).__name__}.")
    res = log_likelihood(model, corpus, **kwargs)
    n = int(res.n_tokens.sum())
    if n == 0:
        raise CorpusError("the held-out corpus has no tokens; nothing to score.")
    return PerplexityResult(
        perplexity=res.perplexity,
        log_likelihood=res.total,
        std_error=res.total_std_error,
        n_tokens=n,
        n_docs=int(np.count_nonzero(res.n_tokens)),
        method=res.method,
        per_document=res,
        estimator=None if isinstance(model, (tuple, np.ndarray)) else type(model).__name__,
    )


__all__ = ["METHODS", "PerplexityResult", "exact_log_likelihood", "log_likelihood", "perplexity"]
