"""Harmonium estimators: ``EFH``, ``GBEFH``, ``DualWingHarmonium``, ``ReplicatedSoftmax``, ``RatePoisson``.

Each is a constructor (its hyperparameters and defaults) and an architecture (its wings and hidden
units: :mod:`harmonium.models.undirected.efh`, :mod:`harmonium.models.undirected.variants`) on the
shared shell :class:`~harmonium.estimators._harmonium_base._HarmoniumEstimator`, which turns data into
wings, learns by CD / PCD and scores by AIS (see that module).
"""

from __future__ import annotations

import inspect

from harmonium._validation import NONE, InstanceOf, Interval, Options
from harmonium.errors import InvalidParameterError
from harmonium.estimators._base import register
from harmonium.estimators._harmonium_base import _COMMON_CONSTRAINTS, _TRAINING_CONSTRAINTS, _HarmoniumEstimator
from harmonium.models.undirected.units import (
    BernoulliUnits,
    GaussianUnits,
    RatePoissonUnits,
    ReplicatedSoftmaxUnits,
    Units,
    units_from_spec,
)

__all__ = ["EFH", "GBEFH", "DualWingHarmonium", "RatePoisson", "ReplicatedSoftmax"]


#: The constructor parameters every named harmonium has after its own, in order, with their defaults (a
#: variant changes some defaults): the one list of them.
_SHARED_PARAMS = {
    "learning": "pcd", "n_gibbs": 1, "mean_field": False, "batch_size": 100, "n_iter": 20, "learning_rate": 0.05,
    "lr_schedule": "constant", "lr_decay": 0.95, "momentum": 0.0, "weight_decay": 0.0, "init_scale": 0.01,
    "dtype": "float32", "n_ais_runs": 100, "n_temperatures": 14_500, "evaluate_every": 1,
    "validation_fraction": 0.0, "validation_every": 1, "patience": None, "validation_ais": (5, 200),
    "sparsity_target": None, "sparsity_cost": 0.0, "sparsity_decay": 0.9, "fast_learning_rate": 0.0,
    "fast_decay": 0.95, "checkpoint_path": None, "checkpoint_every": 5, "random_state": None,
}


def _constructor(n_hidden: int, own: dict | None = None, **defaults):
    """``__init__(self, n_hidden=n_hidden, *, **own, **shared)`` that stores its arguments unchanged.

    ``own`` are the variant's parameters (before the shared ones), ``defaults`` replace shared
    defaults. The signature is a real one (``inspect.signature``, ``get_params``, ``help``, Sphinx).
    """
    unknown = sorted(set(defaults) - set(_SHARED_PARAMS))
    if unknown:
        raise TypeError(f"_constructor: {unknown} are not shared harmonium parameters")
    kind = inspect.Parameter.KEYWORD_ONLY
    sig = inspect.Signature([
        inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD),
        inspect.Parameter("n_hidden", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=n_hidden),
        *(inspect.Parameter(k, kind, default=v) for k, v in {**(own or {}), **_SHARED_PARAMS, **defaults}.items()),
    ])

    def __init__(self, *args, **kwargs):
        bound = sig.bind(self, *args, **kwargs)
        bound.apply_defaults()
        self._store_params(bound.arguments)

    __init__.__signature__ = sig
    return __init__


def _units_spec_constraint():
    return [InstanceOf((str, dict, Units), "a unit type (name, spec dict or Units)")]


@register
class EFH(_HarmoniumEstimator):
    """A general exponential family harmonium (seed 000 §2) learned by contrastive divergence.

    Parameters
    ----------
    n_hidden : int, default 50
        F, the number of hidden units (topics).
    wings : list of (name, unit type), optional
        The visible wings; unit types are names ("bernoulli", "binomial", "poisson",
        "gaussian", "softmax", "replicated_softmax", "rate_poisson"), spec dicts
        (``{"type": "binomial", "n_trials": 5}``) or a ``harmonium.models.undirected.units.Units``.
        Default: one binary word wing ``[("words", "bernoulli")]`` (an RBM with ``hidden="bernoulli"``).
    hidden : unit type, default "bernoulli"
    scale_hidden_bias : bool, default False
        Multiply the hidden biases by the document length (Replicated Softmax).
    learning : {"pcd", "cd"}, default "pcd"
        Persistent CD (Tieleman 2008) or CD-k (seed 000 §3.2 "brief sampling").
    n_gibbs : int or (int, int), default 1
        k: Gibbs sweeps per update; a pair ``(start, end)`` raises k from start to end in equal
        stages over the ``n_iter`` epochs (the Replicated Softmax paper's CD 1 -> 5,
        Salakhutdinov & Hinton 2009 §4; ``gibbs_schedule``).
    mean_field : bool, default False
        Reconstruct with E[x | h] instead of sampling the visible units.
    batch_size : int, default 100
    n_iter : int, default 20
        Epochs.
    learning_rate : float, default 0.05
    lr_schedule : {"constant", "exponential", "inverse", "linear"}, default "constant"
    lr_decay : float, default 0.95
        Per-epoch factor of the exponential schedule.
    momentum : float, default 0.0
        Final momentum (0.5 for the first epochs, Hinton 2010 §9).
    weight_decay : float, default 0.0
        L2 penalty on W.
    init_scale : float, default 0.01
        Standard deviation of the initial W; visible biases start at the base rates.
    dtype : {"float32", "float64"}, default "float32"
        Of parameters and products during learning (AIS always accumulates in float64).
    n_ais_runs : int, default 100
    n_temperatures : int, default 14500
        AIS settings of ``log_partition``, ``score`` and ``log_likelihood_documents``.
    evaluate_every : int, default 1
        Epochs between monitoring entries in ``trace_`` (0: only at the end): the reconstruction
        error and, for binary wings, the pseudo-log-likelihood on the first 1,000 documents.
    validation_fraction : float in [0, 1), default 0.0
        Hold out this share of the training rows (drawn from the seed) for validation; or pass
        ``fit(X, validation=...)``. With validation data the held-out log-likelihood per word
        (AIS) is tracked, ``patience`` stops the fit, the best parameters are restored (early
        stopping, Prechelt 1998; ``harmonium.inference.learning.early_stopping``).
    validation_every : int, default 1
        Epochs between validation scores.
    patience : int or None, default None
        Validation scores without improvement before stopping; None: train ``n_iter`` epochs
        (the best parameters are still restored).
    validation_ais : (int, int), default (5, 200)
        AIS runs and temperatures of the validation score (cheap; a fixed AIS seed, so that the
        epochs are compared under common random numbers, and a biased-low but steady estimate).
    fast_learning_rate, fast_decay : float, default 0.0, 0.95
        Fast PCD (Tieleman & Hinton 2009; ``learning="pcd"``): the persistent chains run under
        the parameters plus fast parameters that follow the CD gradient at ``fast_learning_rate``
        and decay by ``fast_decay`` every update. 0: plain PCD.
    sparsity_target, sparsity_cost, sparsity_decay : float or None, float, float; default None, 0.0, 0.9
        Target mean activity p of the binary hidden units, weight c and decay lambda of the
        running activity estimate: each update also descends c sum_j CE(p, q_j) (Hinton 2010,
        "A practical guide to training RBMs", §11; ``harmonium.inference.learning.cd``).
    checkpoint_path : path, optional
    checkpoint_every : int, default 5
    random_state : int, Generator or None

    Attributes
    ----------
    model_ : Harmonium
        The learned model (parameters in ``model_.params``).
    components_, intercept_visible_, intercept_hidden_ : ndarray
        scikit-learn's names for W^T, theta and lambda of the first wing.
    base_rates_ : list of ndarray
        Per-wing data means (the AIS base-rate model).
    vocabulary_, n_iter_, seed_, trace_, resumed_from_
        The training vocabulary, the epochs run, the seed, the monitoring trace, and the epoch of the
        checkpoint ``fit(resume=True)`` resumed from (None for a fresh run).

    Examples
    --------
    >>> from harmonium.datasets import load_debian
    >>> corpus = load_debian(n_docs=2000)
    >>> rbm = EFH(n_hidden=20, n_iter=5, random_state=0).fit(corpus)
    >>> rbm.transform(corpus).shape[1]
    20
    >>> rbm.score(corpus[:100])  # mean log p(x) per document, log Z by AIS  # doctest: +SKIP
    """

    _parameter_constraints = {**_COMMON_CONSTRAINTS, **_TRAINING_CONSTRAINTS,
                              "wings": [NONE, InstanceOf((list, tuple), "a list of wings")],
                              "hidden": _units_spec_constraint(), "scale_hidden_bias": [Options((False, True))]}

    __init__ = _constructor(50, {"wings": None, "hidden": "bernoulli", "scale_hidden_bias": False})

    def _architecture(self):
        where = type(self).__name__
        out = self._wing_specs()
        for _, u in out[1:]:
            if u.needs_lengths:
                raise InvalidParameterError(f"{where}: only the first wing may be replicated softmax / rate Poisson.")
        return out, units_from_spec(self.hidden, where), bool(self.scale_hidden_bias), set()


@register
class GBEFH(_HarmoniumEstimator):
    """GB-EFH (seed 000 eqs. 4-6): binary word occurrences, unit-variance Gaussian topics, lambda = 0.

    x_i | h ~ Bernoulli(sigmoid(theta_i + W_i h)), h_j | x ~ N(sum_i x_i W_ij, 1);
    ``transform`` returns E[h | x] = W^T x (seed 000 eq. 22). Parameters as :class:`EFH`
    (``fit_hidden_bias=True`` learns lambda as well).
    """

    _parameter_constraints = {**_COMMON_CONSTRAINTS, **_TRAINING_CONSTRAINTS,
                              "fit_hidden_bias": [Options((False, True))]}

    __init__ = _constructor(50, {"fit_hidden_bias": False}, learning_rate=0.01)

    def _architecture(self):
        fixed = set() if self.fit_hidden_bias else {"h:bias"}
        return [("words", BernoulliUnits())], GaussianUnits(1.0), False, fixed


@register
class DualWingHarmonium(_HarmoniumEstimator):
    """The dual-wing harmonium (Xing, Yan & Hauptmann 2005): words and real features share Gaussian topics.

    Word wing ``word_units`` ("bernoulli": binary occurrences as in the paper, or "binomial",
    "poisson", "replicated_softmax"), feature wing of unit-variance Gaussians (standardised
    columns by default), hidden units N(x^T W + z^T U, 1) with lambda = 0. ``fit(corpus)`` takes
    the Corpus's ``features``; or ``fit(X, features=Z)``.

    With Gaussian features and Gaussian topics the joint is normalisable only while the
    feature coupling stays below 1 in spectral norm; keep ``learning_rate`` small or use
    ``weight_decay`` (a model that drifts out shows up as NaN in ``trace_``).
    """

    _parameter_constraints = {**_COMMON_CONSTRAINTS, **_TRAINING_CONSTRAINTS,
                              "word_units": _units_spec_constraint(),
                              "standardize_features": [Options((False, True))]}

    __init__ = _constructor(20, {"word_units": "bernoulli", "standardize_features": True}, learning_rate=0.005,
                            weight_decay=0.001)

    def _architecture(self):
        words = units_from_spec(self.word_units, type(self).__name__)
        return [("words", words), ("features", GaussianUnits(1.0))], GaussianUnits(1.0), False, {"h:bias"}


@register
class ReplicatedSoftmax(_HarmoniumEstimator):
    """Replicated Softmax (Salakhutdinov & Hinton 2009; seed 001 eq. 5), an undirected topic model of counts.

    Each document's D words are D draws of one softmax over the vocabulary, sharing weights;
    binary topic units; the hidden biases are scaled by D. Learned by CD-k
    (``learning="cd"``, ``n_gibbs`` as the paper's CD1..CD5) with momentum and weight decay.
    The defaults (CD-1, learning rate 0.003, momentum 0.9, weight decay 0.001, 20 epochs) gave
    the best held-out perplexity of the few settings tried on Debian (2,000 words, K = 50);
    longer CD-1 runs raised the reconstruction quality but *lowered* the likelihood there
    (perplexity 752 after 20 epochs, 2,793 after 60; persistent CD 1,021), so monitor the AIS
    likelihood, not the reconstruction error.
    The paper's protocol (CD 1 -> 5 over the run, many more updates) with early stopping is
    ``n_gibbs=(1, 5), n_iter=200, learning_rate=0.003, validation_every=4, patience=6`` with
    ``fit(X, validation=...)`` (or ``validation_fraction``): on a 10,000-document Debian subset it
    gave perplexity 679 against 914 for 20 epochs of CD-1 at lr 0.01, the earlier benchmark
    setting (three seeds; LDA-50: 499; benchmarks/harmoniums/README.md, issue 17).
    :meth:`perplexity` is the paper's per-word held-out perplexity of whole documents with log Z
    per document length by AIS, the number every estimator's ``perplexity`` reports.

    Long documents: the hidden biases enter as D c, so one CD update moves a document's hidden
    input through c by about ``learning_rate`` D^2 / ``batch_size``. A few training documents far
    longer than the rest (on Debian one of 4,351 tokens among documents of 68 on average) then
    drive every hidden unit into saturation and the model stays at the unigram; train on
    :func:`harmonium.corpus.split_long_documents` of the corpus (e.g. pieces of at most 100
    tokens) and score the test documents whole (benchmarks/harmoniums/README.md, issue 17).
    """

    __init__ = _constructor(50, learning="cd", learning_rate=0.003, momentum=0.9, weight_decay=0.001)

    def _architecture(self):
        return [("words", ReplicatedSoftmaxUnits())], BernoulliUnits(), True, set()


@register
class RatePoisson(_HarmoniumEstimator):
    """The rate-adapting Poisson model (Gehler, Holub & Welling 2006).

    Counts given the topics are Poisson with rates D softmax(b + W h), which adapt to the
    document length D; topics are binary (``hidden_trials=1``) or binomial. Learned by CD with
    Poisson reconstructions as in the paper. Likelihoods (``score``, ``perplexity``) are those
    of the proper model conditioned on D (counts multinomial given D and h, hidden biases not
    scaled), whose conditional p(h | x) is the RAP's.
    """

    _parameter_constraints = {**_COMMON_CONSTRAINTS, **_TRAINING_CONSTRAINTS,
                              "hidden_trials": [Interval("int", 1, None)]}

    __init__ = _constructor(50, {"hidden_trials": 1}, learning="cd", learning_rate=0.001, momentum=0.9,
                            weight_decay=0.001)

    def _architecture(self):
        from harmonium.models.undirected.units import BinomialUnits

        hidden = BernoulliUnits() if self.hidden_trials == 1 else BinomialUnits(self.hidden_trials)
        return [("words", RatePoissonUnits())], hidden, False, set()
