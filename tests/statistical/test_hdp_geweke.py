"""Geweke (2004) joint-distribution test of the HDP direct-assignment sampler (slow tier).

Marginal-conditional simulator: (z, tau) from the HDP prior by the Chinese
restaurant franchise (tau | m ~ Dir(m, gamma)), then w | z (phi_k ~ Dir(beta)
fresh, w_i ~ phi_{z_i}). Successive-conditional simulator: alternate one
iteration of the sampler (z, tau | w) with w | z. Both sample p(z, tau, w), so
test statistics must agree in mean; the successive chain's error is its MCSE
(batch ESS, harmonium.evaluation.diagnostics). A sweep with a wrong new-topic
weight must fail the same test.
"""

from __future__ import annotations

import numpy as np
import pytest

from harmonium.corpus.corpus import TokenStream
from harmonium.evaluation.diagnostics import mcse_mean
from harmonium.inference.mcmc.isbn import hdp as da
from harmonium.models.directed.hdp import HDPModel

from ._crf import crf_draw
from .test_hdp_exact import broken_sweep

LENGTHS = [4, 6, 3]
V, ALPHA, GAMMA, BETA = 4, 1.5, 1.2, 0.6
Z_LIMIT = 4.5  # per statistic; 4 statistics x 2 tails: false-alarm rate < 1e-4
DOCS = np.repeat(np.arange(len(LENGTHS)), LENGTHS).tolist()


def _words(rng, z):
    phi = rng.dirichlet(np.full(V, BETA), size=int(z.max()) + 1)
    u = rng.random(z.shape[0])[:, None]
    return (u > np.cumsum(phi[z], axis=1)).sum(axis=1).clip(0, V - 1)


def _stats(z, w, tau_u):
    K = int(np.unique(z).shape[0])
    largest = np.bincount(z).max() / z.shape[0]
    pair = np.zeros((V, int(z.max()) + 1))
    np.add.at(pair, (w, z), 1)
    return np.array([K, largest, np.sum(pair**2) / z.shape[0], tau_u])


DOC_PTR = np.concatenate([[0], np.cumsum(LENGTHS)]).astype(np.int64)


def _successive(rng, make_kernel, n_steps):
    model = HDPModel(BETA, V)
    z, tau = crf_draw(rng, DOCS, ALPHA, GAMMA)
    w = _words(rng, z)
    out = np.empty((n_steps, 4))
    for s in range(n_steps):
        tokens = TokenStream(DOC_PTR, w.astype(np.int32))
        # labels are 0..K-1, all used, aligned with tau (the CRF and the kernel's compaction both ensure it);
        # a fresh kernel each step: its caches are keyed by the token stream, whose words change
        st = da.state_from_assignments(tokens, model, z, tau, ALPHA, GAMMA)
        st, _ = make_kernel()(rng, st, tokens, model)
        z = st.z.astype(np.int64)
        tau = st.tau[: st.n_topics + 1].copy()
        w = _words(rng, z)
        out[s] = _stats(z, w, tau[-1])
    return out


def _forward(rng, n):
    out = np.empty((n, 4))
    for s in range(n):
        z, tau = crf_draw(rng, DOCS, ALPHA, GAMMA)
        out[s] = _stats(z, _words(rng, z), tau[-1])
    return out


@pytest.mark.slow
@pytest.mark.parametrize("sweep, ok", [(None, True), (broken_sweep, False)])
def test_geweke_joint_distribution(sweep, ok):
    rng = np.random.default_rng(2024)
    fwd = _forward(rng, 20_000)
    def make_kernel():
        return da.build_kernel(compute_log_joint=False, sweep=sweep)

    succ = _successive(rng, make_kernel, 30_000)
    se_f = fwd.std(axis=0, ddof=1) / np.sqrt(fwd.shape[0])
    se_s = mcse_mean(succ[None, :, :])
    zscore = (fwd.mean(axis=0) - succ.mean(axis=0)) / np.sqrt(se_f**2 + se_s**2)
    assert bool(np.all(np.abs(zscore) < Z_LIMIT)) == ok, zscore
