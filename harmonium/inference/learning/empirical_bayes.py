"""Empirical Bayes for a Bayesian EFH: Monte Carlo EM for the prior's mu and sigma (seed 000 §4).

E-step: impute W from its posterior under the current (mu, sigma) with the Langevin sampler
(:func:`harmonium.inference.mcmc.bayesian_efh.langevin.sample_posterior`), K draws W_k. M-step (eq. 23): the
data term does not depend on the hyperparameters, so

    mu_i    = (1 / JK) sum_j sum_k W_ij,k                                   (eq. 24)
    sigma_i = sqrt( (1 / (JK - 1)) sum_j sum_k (W_ij,k - mu_i)^2 )          (eq. 25)

(per wing, i over the wing's units). EM starts from the ML estimate W^MLE (eqs. 26-27): mu_i the
row mean of W^MLE, sigma_i its row standard deviation (ddof 1). Optionally the visible biases theta
("ML estimation for other model parameters ... roughly follows the same scheme", §4) take
``theta_steps`` gradient steps per M-step on (1/K) sum_k log p(X | W_k, theta), the log Z part by
brief sampling.

``fit_mean=False`` keeps mu fixed (e.g. at the §5.1 value 0) and estimates sigma alone, by the ML
variance about the known mean, sigma_i^2 = (1 / JK) sum_j sum_k (W_ij,k - mu_i)^2. Why it matters:
p(X | W) depends on W only through V = W W^T (seed 000 eq. 28), and with mu = 0 the prior is
invariant under W -> WQ as well, so the posterior of V does not depend on how W is rotated. A free
mu breaks that invariance: the M-step sets mu_i to the row mean of W, the next E-step pulls every
column towards mu, which spreads the data's dominant (Perron) direction of V over all J columns and
raises the row means again. On the §5.1 problem this feedback took mu from 0.014 to 0.09 in five
iterations and the V-hat error to 0.046 against 0.016 with the fixed prior
(benchmarks/harmoniums/README.md).

``min_scale`` floors sigma (default: the Langevin step size): with few data the EM fixed point can
collapse towards sigma = 0 (the posterior then concentrates on the prior mean, which re-estimates
the same prior), and the Euler step of eq. 13 is unstable on the prior term once eps > 2 sigma.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from harmonium.errors import InvalidParameterError
from harmonium.inference.mcmc.bayesian_efh import langevin as bl
from harmonium.models.undirected import bayesian_efh as befh
from harmonium.models.undirected.efh import Harmonium

__all__ = ["EMResult", "initial_hyperparameters", "m_step", "monte_carlo_em"]


class EMResult(NamedTuple):
    means: list          # mu per wing
    scales: list         # sigma per wing
    history: list        # [(mu list, sigma list)] after every M-step
    samples: bl.PosteriorSamples  # the last E-step's draws
    theta: dict          # visible biases after the last M-step


def initial_hyperparameters(W_ml) -> tuple[np.ndarray, np.ndarray]:
    """Seed 000 eqs. 26-27 from one wing's ML couplings (M, J), J >= 2."""
    W = np.asarray(W_ml, dtype=np.float64)
    if W.ndim != 2 or W.shape[1] < 2:
        raise InvalidParameterError(f"initial_hyperparameters: W^MLE must be (M, J) with J >= 2; got {W.shape}.")
    return W.mean(axis=1), W.std(axis=1, ddof=1)


def m_step(W_samples, min_scale: float = 0.0, mean=None) -> tuple[np.ndarray, np.ndarray]:
    """Seed 000 eqs. 24-25 from K draws of one wing's couplings, shape (K, M, J).

    ``mean``: a known mu (float or (M,)); then mu is returned unchanged and sigma is the ML scale
    about it, sqrt((1 / JK) sum_j sum_k (W_ij,k - mu_i)^2) (no degree of freedom spent on mu).
    """
    W = np.asarray(W_samples, dtype=np.float64)
    if W.ndim != 3 or W.shape[0] * W.shape[2] < 2:
        raise InvalidParameterError(f"m_step: need (K, M, J) draws with JK >= 2; got {W.shape}.")
    K, M, J = W.shape
    flat = np.moveaxis(W, 1, 0).reshape(M, K * J)
    if mean is None:
        mu = flat.mean(axis=1)
        sigma = np.sqrt(((flat - mu[:, None]) ** 2).sum(axis=1) / (K * J - 1))
    else:
        mu = np.broadcast_to(np.asarray(mean, dtype=np.float64), (M,)).copy()
        sigma = np.sqrt(((flat - mu[:, None]) ** 2).sum(axis=1) / (K * J))
    return mu, np.maximum(sigma, min_scale)


def _theta_step(rng, model: Harmonium, xs, W_draws: list, lr: float, n_gibbs: int) -> None:
    """One gradient step on theta of (1/K) sum_k log p(X | W_k, theta), log Z's part by brief sampling."""
    names = {f"v:{w}:bias" for w in range(len(model.wings))}
    view = Harmonium(model.wings, model.hidden, model.n_hidden, scale_hidden_bias=model.scale_hidden_bias,
                     fixed=set(model.params) - names, dtype=np.float64)
    view.params = model.params  # shared: the view only changes which statistics are computed
    grads = {}
    for Wk in W_draws:
        befh.set_couplings(view, Wk)
        pos = view.statistics(xs)
        neg_xs = xs
        for _ in range(n_gibbs):
            neg_xs, _ = view.gibbs_step(rng, neg_xs)
        neg = view.statistics(neg_xs)
        n = xs[0].shape[0]
        for w in range(len(model.wings)):
            k = f"v:{w}:bias"
            grads[k] = grads.get(k, 0.0) + (np.asarray(pos[k]) - np.asarray(neg[k])) / n / len(W_draws)
    for k, g in grads.items():
        model.params[k] = model.params[k] + lr * g


def monte_carlo_em(rng: np.random.Generator, model: Harmonium, xs, cfg: bl.LangevinConfig, *, n_em_iter: int = 5,
                   n_chains: int = 2, n_warmup: int = 100, n_samples: int = 20, thin: int = 5,
                   init_means=None, init_scales=None, min_scale: float | None = None, theta_steps: int = 0,
                   theta_learning_rate: float = 0.05, fit_mean: bool = True) -> EMResult:
    """Monte Carlo EM for (mu, sigma) of every wing's column prior (seed 000 eqs. 23-27).

    ``model`` holds W^MLE (the start, eqs. 26-27, unless ``init_means`` / ``init_scales`` are given)
    and theta. Each E-step warm-starts the chains at the previous draws' last positions.
    ``fit_mean=False``: mu stays at its starting value (``init_means``, or 0 when not given) and
    only sigma is estimated (see the module docstring for why).
    """
    if int(n_em_iter) < 1:
        raise InvalidParameterError(f"monte_carlo_em: 'n_em_iter' must be an int >= 1. Got {n_em_iter!r}.")
    if fit_mean not in (True, False):
        raise InvalidParameterError(f"monte_carlo_em: 'fit_mean' must be True or False. Got {fit_mean!r}.")
    model = befh.posterior_model(model)
    xs = befh.as_wings_f64(model, xs)
    if min_scale is None:
        min_scale = float(cfg.step_size)
    wings = range(len(model.wings))
    if init_means is None or init_scales is None:
        init = [initial_hyperparameters(model.params[f"W:{w}"]) for w in wings]
        means = (([m for m, _ in init] if fit_mean else [np.zeros(model.wings[w].size) for w in wings])
                 if init_means is None else list(init_means))
        scales = [np.maximum(s, min_scale) for _, s in init] if init_scales is None else list(init_scales)
    else:
        means, scales = list(init_means), list(init_scales)
    history = []
    starts = None
    res = None
    for _ in range(int(n_em_iter)):
        priors = [befh.GaussianColumnPrior(model.wings[w].size, means[w], scales[w]) for w in wings]
        res = bl.sample_posterior(rng, model, xs, priors, cfg, n_chains=n_chains, n_warmup=n_warmup,
                                  n_samples=n_samples, thin=thin, init_positions=starts)
        draws = res.draws.reshape(-1, res.draws.shape[-1])
        draws = draws[np.isfinite(draws).all(axis=1)]
        if draws.shape[0] < 2:
            raise InvalidParameterError("monte_carlo_em: the E-step chains diverged; lower the Langevin step_size.")
        starts = res.draws[:, -1]
        if not np.isfinite(starts).all():
            starts = None
        per_wing = [np.stack([befh.unpack(model, q)[f"W:{w}"] for q in draws]) for w in wings]
        new = [m_step(pw, min_scale, None if fit_mean else means[w]) for w, pw in enumerate(per_wing)]
        means = [m for m, _ in new]
        scales = [s for _, s in new]
        history.append(([m.copy() for m in means], [s.copy() for s in scales]))
        if theta_steps:
            sub = draws[rng.choice(draws.shape[0], size=min(5, draws.shape[0]), replace=False)]
            for _ in range(int(theta_steps)):
                _theta_step(rng, model, xs, list(sub), theta_learning_rate, cfg.n_gibbs)
        befh.set_couplings(model, draws.mean(axis=0))
    theta = {k: v.copy() for k, v in model.params.items() if k.startswith("v:")}
    return EMResult(means, scales, history, res, theta)
