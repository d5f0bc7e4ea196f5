"""Exactness of the word-by-word F+LDA sweep (``sampler="fplus"``) and of ``sampler="auto"``'s mix of sweeps.

The compiled sweep, started from exact draws of the enumerated posterior pi, ends one sweep later in
states whose histogram passes a chi-square test against pi. So does ``auto``'s sweep when its rule picks
F+LDA and SparseLDA sweeps in turn. Negative control: an F+ tree descent that ignores the removed token's
pending change to its topic's leaf (the token's own count left in the alpha term) fails the same test.

Suite budget: each chi-square uses alpha = 1e-4 (fixed seed, no retries).
"""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit
from scipy import stats

from harmonium._kernels import lda_fplus
from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs
from harmonium.inference.mcmc.lda import fplus

from ._lda_tiny import MODEL, TOKENS, exact_posterior, one_sweep_from_exact

ALPHA = 1e-4
N_CHAINS = 200_000
SEED = 20261127
D = TOKENS.doc_ptr.shape[0] - 1


@pytest.fixture(scope="module")
def pi():
    return exact_posterior()


def _pvalue(hist, pi):
    return stats.chisquare(hist, pi * hist.sum()).pvalue


def _kernel(sweep):
    def kernel(rng, state, tokens, model):
        sweep(rng, state, 0, D)
        return state, None

    return kernel


@njit
def stale_pick(f, T, log_t, u, leaf, delta):
    """Broken: the descent reads the tree as it was before the token was removed (delta ignored)."""
    return lda_fplus.tree_pick(f, T, log_t, u, leaf, 0.0)


# the state without n_dk is the default path (LDA's serial sampler); with the table: slow tier
@pytest.mark.parametrize("doc_counts", [pytest.param(True, marks=pytest.mark.slow), False])
def test_kernel_visits_states_with_posterior_frequencies(pi, doc_counts):
    assert (pi * N_CHAINS).min() >= 5
    hist = one_sweep_from_exact(np.random.default_rng(SEED), pi, N_CHAINS, sampler="fplus", doc_counts=doc_counts)
    assert _pvalue(hist, pi) > ALPHA


@pytest.mark.slow  # each sweep's exactness is tested in the default tier (here and test_lda_collapsed_exact.py)
def test_auto_mixing_fplus_and_sparse_sweeps_visits_states_with_posterior_frequencies(pi, monkeypatch):
    sweep = cgs.SAMPLERS["auto"](MODEL, TOKENS)
    assert isinstance(sweep, fplus.AutoSweep)
    flips = iter(np.random.default_rng(1).integers(0, 2, size=N_CHAINS).astype(bool).tolist())
    monkeypatch.setattr(fplus, "fplus_is_cheaper", lambda kw, kd, *rest: next(flips))
    hist = one_sweep_from_exact(np.random.default_rng(SEED + 1), pi, N_CHAINS, kernel=_kernel(sweep),
                                doc_counts=False)
    assert 0.45 < sweep.choices.count("fplus") / N_CHAINS < 0.55
    assert _pvalue(hist, pi) > ALPHA


def test_negative_control_stale_tree_fails(pi):
    sweep = fplus.make_sweep(MODEL, TOKENS, pick=stale_pick)
    hist = one_sweep_from_exact(np.random.default_rng(SEED), pi, N_CHAINS, kernel=_kernel(sweep))
    assert _pvalue(hist, pi) < ALPHA
