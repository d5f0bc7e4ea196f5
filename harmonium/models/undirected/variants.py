"""The harmonium variants of the literature, built on :class:`~harmonium.models.undirected.efh.Harmonium`.

* :func:`rbm`: binary visible and hidden units (the restricted Boltzmann machine).
* :func:`gb_efh`: seed 000 eqs. 4-6, Bernoulli words and unit-variance Gaussian hidden units,
  lambda = 0: p(x, h) ~ exp{ theta^T x - h^T h / 2 + x^T W h }.
* :func:`dual_wing`: Xing, Yan & Hauptmann (2005), a word wing (binary or counts) and a
  Gaussian feature wing sharing one Gaussian hidden layer; :func:`multi_wing` any number of wings.
* :func:`replicated_softmax`: seed 001 eq. 5 (Salakhutdinov & Hinton 2009), word counts as D
  draws of one softmax, binary hidden units whose biases are scaled by D.
* :func:`rate_adapting_poisson`: Gehler, Holub & Welling (2006), Poisson counts with rates that
  adapt to the document length, binary (or binomial) hidden units.
"""

from __future__ import annotations

import numpy as np

from harmonium.models.undirected.efh import Harmonium, Wing
from harmonium.models.undirected.units import (
    BernoulliUnits,
    BinomialUnits,
    GaussianUnits,
    RatePoissonUnits,
    ReplicatedSoftmaxUnits,
    units_from_spec,
)

__all__ = ["dual_wing", "gb_efh", "multi_wing", "rate_adapting_poisson", "rbm", "replicated_softmax"]


def rbm(n_visible: int, n_hidden: int, **kwargs) -> Harmonium:
    """Bernoulli visible x Bernoulli hidden."""
    return Harmonium([Wing("words", BernoulliUnits(), n_visible)], BernoulliUnits(), n_hidden, **kwargs)


def gb_efh(n_visible: int, n_hidden: int, *, fit_hidden_bias: bool = False, **kwargs) -> Harmonium:
    """GB-EFH (seed 000 eqs. 4-6): x_i | h ~ Bernoulli(sigmoid(theta_i + W_i h)), h_j | x ~ N(x^T W_j, 1).

    lambda = 0 stays fixed (the seed's "vacuous" hidden biases) unless ``fit_hidden_bias``.
    """
    fixed = set(kwargs.pop("fixed", ()))
    if not fit_hidden_bias:
        fixed.add("h:bias")
    return Harmonium([Wing("words", BernoulliUnits(), n_visible)], GaussianUnits(1.0), n_hidden, fixed=fixed,
                     **kwargs)


def multi_wing(wings, hidden, n_hidden: int, **kwargs) -> Harmonium:
    """Any number of wings ``[(name, units, size), ...]`` sharing one hidden layer."""
    return Harmonium(wings, hidden, n_hidden, **kwargs)


def dual_wing(n_words: int, n_features: int, n_hidden: int, *, word_units="bernoulli", feature_units=None,
              hidden=None, **kwargs) -> Harmonium:
    """Dual-wing harmonium (Xing et al. 2005): words and real features share Gaussian topics h.

    ``word_units``: "bernoulli" (binary occurrence, as in the paper), "binomial", "poisson" or
    "replicated_softmax". ``feature_units``: default unit-variance Gaussians. ``hidden``:
    default unit-variance Gaussians with lambda = 0 fixed, as GB-EFH.

    With Gaussian features *and* Gaussian topics the joint is normalisable only while the
    precision matrix [[I / var_x, -U], [-U^T, I]] of (features, h) stays positive definite
    (||U||_2 < 1 / sd_x); learning must keep the coupling U small (small learning rates,
    weight decay).
    """
    feature_units = GaussianUnits(1.0) if feature_units is None else units_from_spec(feature_units)
    fixed = set(kwargs.pop("fixed", ()))
    if hidden is None:
        hidden = GaussianUnits(1.0)
        fixed.add("h:bias")
    return Harmonium([Wing("words", units_from_spec(word_units), n_words), Wing("features", feature_units, n_features)],
                     hidden, n_hidden, fixed=fixed, **kwargs)


def replicated_softmax(n_words: int, n_hidden: int, **kwargs) -> Harmonium:
    """Replicated Softmax (seed 001 eq. 5): E = -sum_jk W_jk h_j v_k - sum_k b_k v_k - D sum_j a_j h_j."""
    return Harmonium([Wing("words", ReplicatedSoftmaxUnits(), n_words)], BernoulliUnits(), n_hidden,
                     scale_hidden_bias=True, **kwargs)


def rate_adapting_poisson(n_words: int, n_hidden: int, *, hidden_trials: int = 1, **kwargs) -> Harmonium:
    """Rate-adapting Poisson model (Gehler et al. 2006): counts | h ~ Poisson(D softmax(b + W h)).

    Hidden units are Bernoulli (``hidden_trials=1``) or Binomial(hidden_trials). Likelihoods and
    partition functions are those of the model conditioned on D (see
    :class:`~harmonium.models.undirected.units.RatePoissonUnits`).
    """
    hidden = BernoulliUnits() if hidden_trials == 1 else BinomialUnits(hidden_trials)
    return Harmonium([Wing("words", RatePoissonUnits(), n_words)], hidden, n_hidden, **kwargs)


def random_init(rng: np.random.Generator, model: Harmonium, scale: float = 0.01) -> Harmonium:
    """W ~ N(0, scale^2) for every wing (in place); returns the model."""
    for k in model.params:
        if k.startswith("W:"):
            model.params[k] = (scale * rng.standard_normal(model.params[k].shape)).astype(model.dtype)
    return model
