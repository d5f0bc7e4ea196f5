"""Metropolis-Hastings for a Bayesian EFH's couplings with partition-function ratios (seed 000 §3.1.1, §3.1.3).

A symmetric random-walk proposal W' = W + s xi is accepted with probability (seed 000 eq. 11)

    min(1, p(W') p*(X | W') / (p(W) p*(X | W)) * (Z(W) / Z(W'))^N ).

The intractable factor (Z(W) / Z(W'))^N is computed by ``ratio``:

* "exact": log Z by enumeration (tiny models);
* "is": the importance-sampling identity (eq. 12), Z(W)/Z(W') = < exp(x^T (V - V') x / 2) >_{p(x | W')}
  (any harmonium: log p*(x | W) - log p*(x | W')), with ``n_is_samples`` draws of p(x | W') from
  ``sampler`` (CFTP, exact enumeration, or Gibbs chains started at the data);
* "first_order": the Taylor expansion log Z(W) - log Z(W') ~ (W - W') . grad log Z(W') (eq. 20,
  written there with an extra eps^2 that the expansion itself does not produce), grad log Z by
  brief sampling (or exactly with ``exact_gradient``);
* "ignore": drop the factor (the tests' negative control: it samples p(W) p*(X | W), not the posterior).

Plugging a *noisy* estimate of the ratio into the MH acceptance does not leave the posterior
exactly invariant (Murray & Ghahramani 2004); :func:`log_ratio_estimates` measures the spread of
these estimates against that of the Langevin update (§3.1.3), which is the paper's argument for
Langevin.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from harmonium.errors import InvalidParameterError
from harmonium.inference.mcmc.bayesian_efh.langevin import exact_visible_sampler, log_partition_ratio_is
from harmonium.models.undirected import bayesian_efh as befh
from harmonium.models.undirected.efh import Harmonium

__all__ = ["MHInfo", "MHState", "build_kernel", "init", "log_ratio_estimates"]

RATIOS = ("exact", "is", "first_order", "ignore")


class MHState(NamedTuple):
    position: np.ndarray
    log_target: float  # log p(W) + log p*(X | W) (- N log Z(W) for ratio="exact")


class MHInfo(NamedTuple):
    acceptance_prob: float
    is_accepted: bool
    log_z_ratio: float  # the estimate of log Z(W) - log Z(W') used


def _partial(model, xs, priors, q):
    befh.set_couplings(model, q)
    W = befh.unpack(model, q)
    lp = sum(p.log_density(W[f"W:{w}"]) for w, p in enumerate(priors))
    return lp + befh.log_unnormalized_likelihood(model, xs)


def init(model: Harmonium, xs, priors, position=None, ratio: str = "is") -> MHState:
    model = befh.posterior_model(model)
    xs = befh.as_wings_f64(model, xs)
    q = befh.pack(model) if position is None else np.array(position, dtype=np.float64)
    lt = _partial(model, xs, priors, q)
    if ratio == "exact":
        lt -= xs[0].shape[0] * befh.visible_distribution(model)[2]
    return MHState(q, float(lt))


def log_z_ratio(rng, model: Harmonium, q_from, q_to, *, ratio: str, xs=None, n_is_samples: int = 1000,
                sampler: Callable | None = None, n_gibbs: int = 1) -> float:
    """An estimate of log Z(W) - log Z(W') (W = q_from, W' = q_to) by ``ratio`` ("is" or "first_order")."""
    if ratio == "is":
        befh.set_couplings(model, q_to)
        if sampler is None:
            xs_to = xs
            for _ in range(max(1, n_gibbs)):
                xs_to, _ = model.gibbs_step(rng, xs_to)
        else:
            xs_to = sampler(rng, model, n_is_samples)
        est, _ = log_partition_ratio_is(model, befh.unpack(model, q_from), xs_to)
        return est
    if ratio == "first_order":
        befh.set_couplings(model, q_to)
        if sampler is exact_visible_sampler:
            g, _ = befh.grad_log_partition_exact(model)
        else:
            g = befh.grad_log_partition_brief(rng, model, xs, n_gibbs)
        return float(np.dot(np.asarray(q_from) - np.asarray(q_to), g))
    raise InvalidParameterError(f"log_z_ratio: ratio must be 'is' or 'first_order'. Got {ratio!r}.")


def build_kernel(model: Harmonium, xs, priors, *, scale: float, ratio: str = "is", n_is_samples: int = 1000,
                 sampler: Callable | None = None, n_gibbs: int = 1) -> Callable:
    """Random-walk MH ``kernel(rng, state) -> (state, MHInfo)`` with the eq. 11 acceptance."""
    if ratio not in RATIOS:
        raise InvalidParameterError(f"bayesian_efh.mh.build_kernel: 'ratio' must be one of {RATIOS}. Got {ratio!r}.")
    if not (np.isfinite(scale) and scale > 0):
        raise InvalidParameterError(f"bayesian_efh.mh.build_kernel: 'scale' must be a float > 0. Got {scale!r}.")
    model = befh.posterior_model(model)
    xs = befh.as_wings_f64(model, xs)
    n = xs[0].shape[0]

    def kernel(rng: np.random.Generator, state: MHState):
        q1 = state.position + scale * rng.standard_normal(state.position.shape[0])
        lt1 = _partial(model, xs, priors, q1)
        if ratio == "exact":
            lt1 -= n * befh.visible_distribution(model)[2]
            dz = 0.0
            log_a = lt1 - state.log_target
        elif ratio == "ignore":
            dz = 0.0
            log_a = lt1 - state.log_target
        else:
            dz = log_z_ratio(rng, model, state.position, q1, ratio=ratio, xs=xs, n_is_samples=n_is_samples,
                             sampler=sampler, n_gibbs=n_gibbs)
            log_a = lt1 - state.log_target + n * dz
        acc = 1.0 if log_a >= 0 else float(np.exp(log_a)) if np.isfinite(log_a) else 0.0
        if rng.random() < acc:
            return MHState(q1, float(lt1)), MHInfo(acc, True, dz)
        return state, MHInfo(acc, False, dz)

    return kernel


def log_ratio_estimates(rng, model: Harmonium, xs, q, q_prime, *, n_repeats: int = 200, n_is_samples: int = 100,
                        sampler: Callable | None = None, n_gibbs: int = 1, step_size: float | None = None) -> dict:
    """Replicates of the three stochastic quantities §3.1.3 compares, at W = q, W' = q_prime:

    * "is": N (log Z(W) - log Z(W')) by eq. 12 (``n_is_samples`` draws of p(x | W') from ``sampler``);
    * "first_order": N (W - W') . grad log Z(W') (eq. 20), grad by brief sampling (l = ``n_gibbs``);
    * "langevin": the log Z part of the Langevin move (eq. 19), (eps^2 / 2) N grad log Z(W), one
      brief-sampling estimate per replicate, divided by eps (the standard deviation of the noise the
      move injects on purpose): the first coordinate per replicate in "langevin", and in
      "langevin_sd_per_coord" the per-coordinate standard deviation over replicates (averaged over
      coordinates) -- below 1 the estimation noise is smaller than the chain's own noise.

    The MH entries are log-acceptance-ratio terms: a standard deviation above ~1 makes the
    accept / reject decision noise. Each entry is an (n_repeats,) array.
    """
    model = befh.posterior_model(model)
    xs = befh.as_wings_f64(model, xs)
    n = xs[0].shape[0]
    eps = float(np.linalg.norm(np.asarray(q_prime) - np.asarray(q)) / np.sqrt(len(q))) if step_size is None \
        else float(step_size)
    out = {"is": np.empty(n_repeats), "first_order": np.empty(n_repeats), "langevin": np.empty(n_repeats)}
    d = np.asarray(q_prime) - np.asarray(q)
    drifts = np.empty((n_repeats, d.size))
    for r in range(n_repeats):
        out["is"][r] = n * log_z_ratio(rng, model, q, q_prime, ratio="is", xs=xs, n_is_samples=n_is_samples,
                                       sampler=sampler, n_gibbs=n_gibbs)
        befh.set_couplings(model, q_prime)
        g1 = befh.grad_log_partition_brief(rng, model, xs, n_gibbs)
        out["first_order"][r] = n * float(np.dot(-d, g1))
        befh.set_couplings(model, q)
        g0 = befh.grad_log_partition_brief(rng, model, xs, n_gibbs)
        drifts[r] = 0.5 * eps * n * g0
        out["langevin"][r] = drifts[r, 0]
    out["langevin_sd_per_coord"] = np.array([float(drifts.std(axis=0, ddof=1).mean())])
    return out
