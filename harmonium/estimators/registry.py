"""The one table of estimators: :data:`ESTIMATORS`, short name -> :class:`EstimatorSpec`.

Everything that lists estimators reads it: ``harmonium.load`` and the lazy
attributes of :mod:`harmonium.estimators` (``LAZY_ESTIMATORS``, derived here),
the command line's ``harmonium fit --model`` choices and their size option, and
the tests that run every model through ``fit``, ``transform``, ``perplexity``
and the CLI. A new estimator is one row here.

This module imports no estimator: a class is imported when :func:`estimator_class`
asks for it.
"""

from __future__ import annotations

import importlib
import inspect
from typing import NamedTuple

from harmonium.errors import InvalidParameterError

__all__ = ["ESTIMATORS", "LAZY_ESTIMATORS", "EstimatorSpec", "estimator_class", "estimator_params", "make_estimator",
           "spec_of"]


class EstimatorSpec(NamedTuple):
    """One estimator.

    Attributes
    ----------
    cls : str
        Class name (as written in model files).
    module : str
        Module that defines (and registers) the class.
    size : str or None
        The constructor argument that sets the number of topics or hidden units
        (``harmonium fit -k/--n-topics/--n-hidden``); None for models without one.
    latent : {"topics", "hidden", None}
        What ``transform`` returns per document: topic proportions (LDA, HDP:
        ``top_words``, document completion) or hidden-unit means (harmoniums:
        the top words of a unit are those of its word distribution). None:
        not a document model (HCRF).
    cli : bool
        Fitted by ``harmonium fit --model NAME`` (an unsupervised fit of a
        corpus with the ``callback(iteration, n_iter, info)`` contract).
    summary : str
        One line for help texts.
    """

    cls: str
    module: str
    size: str | None
    latent: str | None
    cli: bool
    summary: str


_EFH = "harmonium.estimators.efh"

#: Short name -> spec. The order is the order of the CLI's help.
ESTIMATORS: dict[str, EstimatorSpec] = {
    "lda": EstimatorSpec("LDA", "harmonium.estimators.lda", "n_topics", "topics", True,
                         "latent Dirichlet allocation (Gibbs samplers or variational inference)"),
    "hdp": EstimatorSpec("HDP", "harmonium.estimators.hdp", "initial_topics", "topics", True,
                         "hierarchical Dirichlet process topic model (the number of topics inferred)"),
    "rsm": EstimatorSpec("ReplicatedSoftmax", _EFH, "n_hidden", "hidden", True,
                         "Replicated Softmax, an undirected topic model of counts"),
    "efh": EstimatorSpec("EFH", _EFH, "n_hidden", "hidden", True,
                         "exponential family harmonium (default: an RBM of word occurrences)"),
    "gbefh": EstimatorSpec("GBEFH", _EFH, "n_hidden", "hidden", True,
                           "harmonium of binary word occurrences with Gaussian topics"),
    "dwh": EstimatorSpec("DualWingHarmonium", _EFH, "n_hidden", "hidden", True,
                         "dual-wing harmonium: words and the documents' numeric features"),
    "rap": EstimatorSpec("RatePoisson", _EFH, "n_hidden", "hidden", True,
                         "rate-adapting Poisson model of counts"),
    "bayesian-efh": EstimatorSpec("BayesianEFH", "harmonium.estimators.bayesian_efh", "n_hidden", "hidden", False,
                                  "Bayesian EFH: the posterior of the weights by Langevin MCMC"),
    "hcrf": EstimatorSpec("HCRF", "harmonium.estimators.hcrf", None, None, False,
                          "hidden conditional random field (sequences, supervised)"),
}

#: Class name -> module for the estimators imported on first use (all but LDA, which is imported eagerly).
LAZY_ESTIMATORS: dict[str, str] = {s.cls: s.module for s in ESTIMATORS.values() if s.cls != "LDA"}


def spec_of(name: str) -> EstimatorSpec:
    """The spec of a short name (``"rsm"``) or a class name (``"ReplicatedSoftmax"``)."""
    if name in ESTIMATORS:
        return ESTIMATORS[name]
    for spec in ESTIMATORS.values():
        if spec.cls == name:
            return spec
    raise InvalidParameterError(f"Unknown model {name!r}; the models are: {', '.join(ESTIMATORS)}.")


def estimator_class(name: str) -> type:
    """The estimator class of a short or class name, imported on first use."""
    spec = spec_of(name)
    return getattr(importlib.import_module(spec.module), spec.cls)


def estimator_params(name: str) -> list[str]:
    """The constructor arguments of an estimator (its hyperparameters)."""
    cls = estimator_class(name)
    return [p.name for p in inspect.signature(cls.__init__).parameters.values()
            if p.name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]


def make_estimator(name: str, **params):
    """An unfitted estimator of model ``name`` with ``params``.

    Unknown parameter names are one error listing the estimator's parameters;
    the values are checked by the estimator's declarative validation in ``fit``.
    """
    cls = estimator_class(name)
    valid = estimator_params(name)
    unknown = [k for k in params if k not in valid]
    if unknown:
        raise InvalidParameterError(f"{cls.__name__} has no parameter {unknown[0]!r}; its parameters are: "
                                    f"{', '.join(valid)}.")
    return cls(**params)
