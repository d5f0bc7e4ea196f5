"""Geweke (2004) joint-distribution test of the ISBN engine's infinite sampler (slow tier): HDP with random
effects (seed 002 §6) with alpha and gamma resampled, everything derived from the declaration.

Marginal-conditional simulator: alpha, gamma ~ Gamma(PRIOR); (z, tau) from the Chinese restaurant franchise
(tau | m ~ Dir(m, gamma)); psi_k ~ Dir(eta) per topic; w | z, psi: phi_{k,j} ~ Dir(beta psi_k) per document
version of each topic, w_i ~ phi_{z_i, j}. Successive-conditional simulator: one engine step (FFBS sweep,
tables, alpha, gamma, tau, psi) then w | z, psi. Both sample p(alpha, gamma, z, tau, psi, w); statistics must
agree in mean within MCSE. Negative control: tables of one customer per occupied cell in the alpha/gamma/tau
update.
"""

from __future__ import annotations

import numpy as np
import pytest

from harmonium.evaluation.diagnostics import mcse_mean
from harmonium.inference.mcmc.isbn import gibbs as ig
from harmonium.models.directed import isbn_examples as ex

from ._crf import crf_draw
from .test_isbn_random_effects import OneTablePerCell

LENGTHS = [4, 5, 3]
DOC = np.repeat(np.arange(len(LENGTHS)), LENGTHS)
V, BETA, ETA = 3, 2.0, 0.7
PRIOR = (3.0, 2.0)  # Gamma(shape, rate) of alpha and gamma
Z_LIMIT = 4.5


def _words(rng, z, psi):
    w = np.empty(z.shape[0], dtype=np.int64)
    for j in range(len(LENGTHS)):
        for k in np.unique(z[DOC == j]):
            sel = np.flatnonzero((DOC == j) & (z == k))
            phi = rng.dirichlet(np.maximum(BETA * psi[k], 1e-300))
            w[sel] = rng.choice(V, size=sel.size, p=phi)
    return w


def _stats(z, w, alpha, gamma, psi):
    K = np.unique(z).shape[0]
    largest = np.bincount(z).max() / z.shape[0]
    return np.array([K, largest, alpha, gamma, psi[z[0]][w[0]]])


def _forward(rng, n):
    out = np.empty((n, 5))
    for s in range(n):
        alpha, gamma = rng.gamma(PRIOR[0], 1 / PRIOR[1], 2)
        z, _ = crf_draw(rng, DOC.tolist(), alpha, gamma)
        psi = {k: rng.dirichlet(np.full(V, ETA)) for k in np.unique(z)}
        out[s] = _stats(z, _words(rng, z, psi), alpha, gamma, psi)
    return out


def _successive(rng, cls, n):
    net = ex.hdp_random_effects(V, beta=BETA, eta=ETA)
    alpha, gamma = rng.gamma(PRIOR[0], 1 / PRIOR[1], 2)
    z, tau = crf_draw(rng, DOC.tolist(), alpha, gamma)
    psi = {k: rng.dirichlet(np.full(V, ETA)) for k in np.unique(z)}
    w = _words(rng, z, psi)
    out = np.empty((n, 5))
    for s in range(n):
        labels = np.unique(z)
        e = cls(net, {"doc": DOC}, {"w": w}, init={"z": z}, tau={"z": tau}, sample_concentration=True,
                concentration_prior=PRIOR)
        e.alpha["z"], e.gamma["z"] = alpha, gamma
        e.obs["w"].psi = {(int(k),): psi[k] for k in labels}
        e.step(rng)
        st = e.lat["z"]
        z = st.z.copy()
        alpha, gamma = e.alpha["z"], e.gamma["z"]
        psi = {k: e.obs["w"].psi[(k,)] for k in np.unique(z)}
        relabel = {k: j for j, k in enumerate(np.unique(z))}  # the next engine sees labels 0..K-1
        tau = np.array([st.tau[k] for k in relabel] + [st.tau_u + sum(v for k, v in st.tau.items()
                                                                      if k not in relabel)])
        z = np.array([relabel[k] for k in z])
        psi = {relabel[k]: v for k, v in psi.items()}
        w = _words(rng, z, psi)
        out[s] = _stats(z, w, alpha, gamma, psi)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("cls, ok", [(ig.ISBNSampler, True), (OneTablePerCell, False)])
def test_geweke_hdp_random_effects_with_concentrations(cls, ok):
    rng = np.random.default_rng(2026)
    fwd = _forward(rng, 20_000)
    succ = _successive(rng, cls, 12_000)
    se_f = fwd.std(axis=0, ddof=1) / np.sqrt(fwd.shape[0])
    se_s = mcse_mean(succ[None, :, :])
    zscore = (fwd.mean(axis=0) - succ.mean(axis=0)) / np.sqrt(se_f**2 + se_s**2)
    assert bool(np.all(np.abs(zscore) < Z_LIMIT)) == ok, zscore
