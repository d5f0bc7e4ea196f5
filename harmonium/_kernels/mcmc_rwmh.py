"""Random-walk Metropolis chains (numba): joint random walk and componentwise Metropolis-within-Gibbs.

* ``RWMH`` (Metropolis et al. 1953; Roberts, Gelman & Gilks 1997 for the 0.234 target): propose
  x' = x + s * sd * xi with xi ~ N(0, I), accept with min(1, pi(x') / pi(x)).
* ``MWG``: one sweep updates each coordinate i in turn by x_i' = x_i + s_i xi (Metropolis within
  Gibbs; each single-site update leaves pi invariant, so does the sweep).

Warm-up adapts log s by Robbins-Monro toward ``target_accept`` (Andrieu & Thoms 2008, eq. 6);
for RWMH the per-coordinate ``sd`` is also re-estimated at the end of each slow window (Stan's
schedule, :func:`mcmc_adapt.window_schedule`) and the Robbins-Monro gain restarts. Adaptation stops
after the last warm-up iteration, so the kept draws come from one fixed kernel (exactly invariant).
Random numbers per RWMH iteration: d normals then one uniform; per MWG sweep, for each coordinate
one normal then one uniform. Numpy twins: :mod:`harmonium.inference.mcmc.rwmh` and
:mod:`harmonium.inference.mcmc.gibbs`; the whole chain's, with the same arguments, is
:func:`harmonium.inference.mcmc.warmup.rw_chain`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, types

from harmonium._kernels import mcmc_adapt as adapt
from harmonium._kernels.mcmc_common import (
    ACCEPT,
    ACCEPTED,
    N_STATS,
    LazyKernel,
    chain_signature,
    copy_into,
    fill_stats,
    logdensity_signature,
)

RWMH, MWG = 0, 1


@njit(cache=True, nogil=True)
def _accept_prob(lp_new, lp):
    """min(1, exp(lp_new - lp)); a proposal with a non-finite log density is never taken."""
    if not math.isfinite(lp_new):
        return 0.0
    log_ratio = lp_new - lp
    return 1.0 if log_ratio >= 0.0 else math.exp(log_ratio)


@njit(cache=True, nogil=True)
def rwmh_step(rng, logdensity, data, q, lp, scale, sd, prop, stats):
    """One random-walk MH transition; ``q`` updated in place when accepted; returns the new log pi."""
    for j in range(q.shape[0]):
        prop[j] = q[j] + scale * sd[j] * rng.standard_normal()
    lp1 = logdensity(prop, *data)
    accept_prob = _accept_prob(lp1, lp)
    accepted = rng.random() < accept_prob
    if accepted:
        copy_into(q, prop)
        lp = lp1
    fill_stats(stats, accept_prob, accepted, False, np.nan, 0.0, np.nan, lp, scale)
    return lp


@njit(cache=True, nogil=True)
def mwg_sweep(rng, logdensity, data, q, lp, scales, accept_probs, stats):
    """One systematic sweep of single-coordinate random-walk updates; returns the new log pi.

    ``accept_probs[i]`` receives coordinate i's acceptance probability (used for adaptation).
    """
    n_acc = 0.0
    for i in range(q.shape[0]):
        old = q[i]
        q[i] = old + scales[i] * rng.standard_normal()
        lp1 = logdensity(q, *data)
        a = _accept_prob(lp1, lp)
        accept_probs[i] = a
        if rng.random() < a:
            lp = lp1
            n_acc += 1.0
        else:
            q[i] = old
    d = q.shape[0]
    s = 0.0
    for i in range(d):
        s += accept_probs[i]
    fill_stats(stats, s / d, True, False, np.nan, 0.0, np.nan, lp, np.nan)
    stats[ACCEPTED] = n_acc / d  # the fraction of coordinates moved
    return lp


def _rw_chain(rng, logdensity, data, x0, kind, n_warmup, n_draws, scale, target_accept, adapt_scale,
              in_window, window_end, sd, draws, stats, out_scale):
    """``sd``: RWMH per-coordinate proposal sd (updated at window ends); MWG per-coordinate scales.

    ``out_scale[0]`` receives the final RWMH scale (NaN for MWG, whose final scales are left in ``sd``).
    """
    d = x0.shape[0]
    q = x0.copy()
    lp = logdensity(q, *data)
    prop = np.empty(d)
    row = np.empty(N_STATS)
    accept_probs = np.empty(d)
    mean = np.zeros(d)
    m2 = np.zeros(d)
    count = np.zeros(1)
    var = np.empty(d)
    log_scale = math.log(scale)
    t_rm = 1.0
    for t in range(n_warmup + n_draws):
        if t >= n_warmup:
            row = stats[t - n_warmup]
        if kind == RWMH:
            lp = rwmh_step(rng, logdensity, data, q, lp, scale, sd, prop, row)
        else:
            lp = mwg_sweep(rng, logdensity, data, q, lp, sd, accept_probs, row)
        if t < n_warmup:
            if adapt_scale:
                if kind == RWMH:
                    log_scale = adapt.rm_update(log_scale, row[ACCEPT], target_accept, t_rm)
                    scale = math.exp(log_scale)
                else:
                    for i in range(d):
                        sd[i] = math.exp(adapt.rm_update(math.log(sd[i]), accept_probs[i], target_accept, t_rm))
                t_rm += 1.0
            if kind == RWMH:
                if in_window[t]:
                    adapt.welford_update(mean, m2, count, q)
                if window_end[t]:
                    adapt.welford_variance(m2, count, var)
                    adapt.welford_reset(mean, m2, count)
                    for j in range(d):
                        sd[j] = math.sqrt(var[j])
                    t_rm = 1.0
        else:
            copy_into(draws[t - n_warmup], q)
    out_scale[0] = scale if kind == RWMH else np.nan
    return 0 if math.isfinite(lp) else 1


def _signature(dtypes):
    return chain_signature(logdensity_signature(dtypes), dtypes, (types.float64, types.float64, types.boolean))


rw_chain = LazyKernel(_rw_chain, _signature)
