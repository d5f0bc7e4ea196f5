"""Parity of the left-to-right kernel with a plain-numpy reference.

Both sides consume the same uniforms from the same Generator in the same
order, so with equal seeds every particle's path, and hence every output,
agrees. This file also runs under NUMBA_DISABLE_JIT=1.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from harmonium._kernels import left_to_right as ltr_kernels
from harmonium.corpus import Corpus


def _draw(rng, weights):
    u = rng.random()
    total = weights.sum()
    if total <= 0:
        return min(int(u * len(weights)), len(weights) - 1)
    c = np.cumsum(weights)
    return min(int(np.searchsorted(c, u * c[-1], side="right")), len(weights) - 1)


def reference_left_to_right(rng, doc_ptr, words, phi_wk, alpha, R, resample):
    """Algorithm 3 of Wallach et al. (2009), particle-major within each position, in plain numpy."""
    D = len(doc_ptr) - 1
    K = len(alpha)
    log_w, log_pos, g = np.zeros((D, R)), np.zeros(D), np.zeros((D, R))
    for d in range(D):
        toks = words[doc_ptr[d]:doc_ptr[d + 1]]
        z = [[] for _ in range(R)]
        n_k = np.zeros((R, K))
        for n, w in enumerate(toks):
            p = np.zeros(R)
            for r in range(R):
                if resample:
                    for m in range(n):
                        n_k[r, z[r][m]] -= 1
                        new = _draw(rng, (n_k[r] + alpha) * phi_wk[toks[m]])
                        z[r][m] = new
                        n_k[r, new] += 1
                weights = (n_k[r] + alpha) * phi_wk[w]
                p[r] = weights.sum() / (n + alpha.sum())
                new = _draw(rng, weights)
                z[r].append(new)
                n_k[r, new] += 1
            mean = p.mean()
            log_pos[d] += math.log(mean) if mean > 0 else -math.inf
            with np.errstate(divide="ignore"):
                log_w[d] += np.log(p)
            if mean > 0:
                g[d] += p / mean
    return log_w, log_pos, g


def _problem(seed, D=5, V=8, K=3):
    rng = np.random.default_rng(seed)
    X = rng.poisson(0.7, size=(D, V))
    X[0] = 0  # an empty document
    counts = sp.csr_matrix(X)
    tokens = Corpus(counts).tokens()
    phi = rng.dirichlet(np.ones(V), size=K)
    phi[0, 1] = 0.0  # a word topic 0 cannot emit
    phi /= phi.sum(1, keepdims=True)
    return tokens, np.ascontiguousarray(phi.T), rng.uniform(0.1, 1.0, K)


@pytest.mark.parametrize("resample", [True, False])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_left_to_right_kernel_matches_reference(seed, resample):
    tokens, phi_wk, alpha = _problem(seed)
    R, K = 4, len(alpha)
    D = len(tokens.doc_ptr) - 1
    longest = int(np.diff(tokens.doc_ptr).max())
    log_w, log_pos, g = np.zeros((D, R)), np.zeros(D), np.zeros((D, R))
    ltr_kernels.left_to_right_documents(
        np.random.default_rng(seed), tokens.doc_ptr, tokens.words, phi_wk, alpha, 0, D, resample,
        np.zeros((R, longest), np.int32), np.zeros((R, K), np.int32), np.zeros(R), np.zeros(K), log_w, log_pos, g,
    )
    ref = reference_left_to_right(np.random.default_rng(seed), tokens.doc_ptr, tokens.words, phi_wk, alpha, R,
                                  resample)
    np.testing.assert_allclose(log_w, ref[0], rtol=1e-12)
    np.testing.assert_allclose(log_pos, ref[1], rtol=1e-12)
    np.testing.assert_allclose(g, ref[2], rtol=1e-12)


def test_left_to_right_kernel_writes_only_its_block():
    tokens, phi_wk, alpha = _problem(3)
    R, K = 2, len(alpha)
    D = len(tokens.doc_ptr) - 1
    log_w, log_pos, g = np.full((D, R), 7.0), np.full(D, 7.0), np.full((D, R), 7.0)
    ltr_kernels.left_to_right_documents(
        np.random.default_rng(0), tokens.doc_ptr, tokens.words, phi_wk, alpha, 1, 3, True,
        np.zeros((R, 20), np.int32), np.zeros((R, K), np.int32), np.zeros(R), np.zeros(K), log_w, log_pos, g,
    )
    assert np.all(log_pos[[0, 3, 4]] == 7.0) and np.all(log_w[[0, 3, 4]] == 7.0)
    assert np.all(log_pos[1:3] != 7.0)
