"""Fit, hold out, score: the steps of ``harmonium fit`` and ``harmonium evaluate`` as library functions.

:func:`heldout_perplexity` scores any fitted document model on held-out
documents by the one yardstick (``measure="whole"``: per-word perplexity of
whole documents, :meth:`perplexity <harmonium.estimators._perplexity.WholeDocumentPerplexity.perplexity>`)
or by document completion (``measure="completion"``, topic models only), with
the estimation settings that apply to the model (left-to-right particles for
topic models, AIS runs and temperatures for harmoniums; see
:data:`~harmonium.estimators.registry.ESTIMATORS`).

:func:`fit_and_score` splits a corpus into training and test documents
(``train_test_split``, one seed), fits, scores the test documents and returns
a :class:`FitReport` (sizes, time, the last entries of the trace, the held-out
result).
"""

from __future__ import annotations

import inspect
from typing import NamedTuple

import numpy as np

from harmonium.corpus.splits import train_test_split
from harmonium.errors import InvalidParameterError
from harmonium.estimators.registry import ESTIMATORS, spec_of

__all__ = ["MEASURES", "FitReport", "fit_and_score", "heldout_perplexity"]

#: The held-out measures: whole documents (every model) and document completion (topic models).
MEASURES = ("whole", "completion")


class FitReport(NamedTuple):
    """What :func:`fit_and_score` did.

    Attributes
    ----------
    model : fitted estimator
    n_docs, n_words, n_tokens : int
        Of the training documents.
    seconds : float or None
        Training time from the trace (including a run resumed from).
    last : dict
        The last entry of every list of the model's ``trace_``.
    heldout : PerplexityResult, CompletionResult or None
        The test documents' result (None without ``test_size``).
    measure : str or None
        ``"whole"`` or ``"completion"`` (None without ``test_size``).
    resumed_from : int or None
        The checkpoint's iteration when the fit resumed from one.
    """

    model: object
    n_docs: int
    n_words: int
    n_tokens: int
    seconds: float | None
    last: dict
    heldout: object
    measure: str | None
    resumed_from: int | None


def heldout_perplexity(model, corpus, *, measure: str = "whole", n_particles: int = 20, ais_runs: int | None = None,
                       ais_temperatures: int | None = None, observed_fraction: float = 0.5, random_state=0):
    """Held-out perplexity of ``corpus`` under a fitted ``model``.

    Parameters
    ----------
    model : fitted LDA, HDP or harmonium
    corpus : Corpus
        Held-out documents (over the model's vocabulary, or matched to it by word).
    measure : {"whole", "completion"}, default "whole"
        ``"whole"``: ``model.perplexity`` (whole documents, the number every model reports);
        ``"completion"``: ``model.completion_perplexity`` (topic models).
    n_particles : int, default 20
        Left-to-right particles (topic models).
    ais_runs, ais_temperatures : int, optional
        AIS runs and temperatures of log Z (harmoniums); default: the model's ``n_ais_runs`` and
        ``n_temperatures``. Fewer are faster and biased low (benchmarks/RESULTS.md).
    observed_fraction : float, default 0.5
        Document completion: the part of each document's tokens that is observed.
    random_state : int, Generator or None, default 0

    Returns
    -------
    PerplexityResult (``measure="whole"``) or CompletionResult (``"completion"``)
    """
    if measure not in MEASURES:
        raise InvalidParameterError(f"The 'measure' parameter of heldout_perplexity must be one of "
                                    f"{', '.join(MEASURES)}. Got {measure!r}.")
    name = type(model).__name__
    if measure == "completion":
        if not hasattr(model, "completion_perplexity"):
            topic_models = [k for k, s in ESTIMATORS.items() if s.latent == "topics"]
            raise InvalidParameterError(f"measure='completion' (document completion) needs a topic model "
                                        f"({', '.join(topic_models)}); {name} has none: use measure='whole'.")
        return model.completion_perplexity(corpus, observed_fraction=observed_fraction, random_state=random_state)
    if not hasattr(model, "perplexity"):
        raise InvalidParameterError(f"{name} is not a document model: it has no held-out perplexity.")
    latent = spec_of(name).latent if any(s.cls == name for s in ESTIMATORS.values()) else None
    options = {}
    if latent == "topics":
        options["n_particles"] = n_particles
    elif latent == "hidden":
        options = {k: v for k, v in (("n_runs", ais_runs), ("n_temperatures", ais_temperatures)) if v is not None}
    return model.perplexity(corpus, random_state=random_state, **options)


def _takes(fn, name: str) -> bool:
    return name in inspect.signature(fn).parameters


def fit_and_score(model, corpus, *, test_size: float = 0.0, split_seed=0, resume: bool = False, callback=None,
                  client=None, n_shards: int | None = None, sync_every: int | None = None,
                  **score_options) -> FitReport:
    """Fit ``model`` on ``corpus`` (less ``test_size`` of its documents) and score the documents held out.

    Parameters
    ----------
    model : unfitted estimator
        Any estimator of :data:`~harmonium.estimators.registry.ESTIMATORS` fitted on a corpus.
    corpus : Corpus
        In memory or on disk (:func:`~harmonium.corpus.load_corpus` of an on-disk directory: with
        ``client`` and no split, the Dask workers read its files themselves).
    test_size : float, default 0.0
        Fraction of documents held out (``train_test_split(corpus, test_size, random_state=split_seed)``);
        0: none.
    split_seed : int, default 0
    resume, callback : passed to ``fit``
    client, n_shards, sync_every : passed to ``fit`` when given (the estimators that train on Dask)
    **score_options
        Of :func:`heldout_perplexity` (``measure``, ``n_particles``, ``ais_runs``, ``ais_temperatures``).

    Returns
    -------
    FitReport
    """
    if isinstance(test_size, bool) or not isinstance(test_size, (int, float)) or not 0.0 <= test_size < 1.0:
        raise InvalidParameterError(f"The 'test_size' parameter of fit_and_score must be a float in [0, 1). "
                                    f"Got {test_size!r}.")
    name = type(model).__name__
    fit_kw = {"resume": resume, "callback": callback}
    for key, value in (("client", client), ("n_shards", n_shards), ("sync_every", sync_every)):
        if value is not None:
            if not _takes(model.fit, key):
                takers = [k for k, s in ESTIMATORS.items() if s.cli and _takes(_fit_of(s), key)]
                raise InvalidParameterError(f"{key}= (a Dask cluster) is not taken by {name}.fit; the models "
                                            f"that train on Dask: {', '.join(takers)}.")
            fit_kw[key] = value
    if not resume:
        del fit_kw["resume"]
    test = None
    train = corpus
    if test_size > 0:
        train, test = train_test_split(corpus, test_size=test_size, random_state=split_seed)
    ondisk = isinstance(getattr(train.counts, "data", None), np.memmap)
    if not (ondisk and client is not None):  # the workers read an on-disk corpus as it is
        train = train.drop_empty()
    model.fit(train, **fit_kw)
    trace = getattr(model, "trace_", None) or {}
    last = {k: v[-1] for k, v in trace.items() if isinstance(v, list) and v}
    heldout = None
    if test is not None:
        heldout = heldout_perplexity(model, test, **score_options)
    return FitReport(model, train.n_docs, train.n_words, int(train.n_tokens), last.get("seconds"), last, heldout,
                     score_options.get("measure", "whole") if test is not None else None,
                     getattr(model, "resumed_from_", None))


def _fit_of(spec):
    import importlib

    return getattr(importlib.import_module(spec.module), spec.cls).fit
