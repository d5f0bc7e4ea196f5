"""Parity of the annealed importance sampling kernel with a plain-numpy reference.

Both consume the same uniforms from the same Generator in the same order.
This file also runs under NUMBA_DISABLE_JIT=1.
"""

from __future__ import annotations

import numpy as np
import pytest

from harmonium._kernels import importance as ais_kernels
from tests.kernels.test_left_to_right_parity import _draw, _problem


def reference_ais(rng, doc_ptr, words, log_phi_wk, alpha, taus, S):
    D = len(doc_ptr) - 1
    K = len(alpha)
    out = np.zeros((D, S))
    for d in range(D):
        toks = words[doc_ptr[d]:doc_ptr[d + 1]]
        for s in range(S):
            n_k = np.zeros(K)
            z = []
            for _ in toks:
                new = _draw(rng, n_k + alpha)
                z.append(new)
                n_k[new] += 1
            lw = 0.0
            T = len(taus) - 1
            for t in range(1, T + 1):
                lw += (taus[t] - taus[t - 1]) * sum(log_phi_wk[w, k] for w, k in zip(toks, z, strict=True))
                if t == T:
                    break
                for n, w in enumerate(toks):
                    n_k[z[n]] -= 1
                    new = _draw(rng, (n_k + alpha) * np.exp(taus[t] * log_phi_wk[w]))
                    z[n] = new
                    n_k[new] += 1
            out[d, s] = lw
    return out



@pytest.mark.parametrize("seed", [0, 1])
def test_ais_kernel_matches_reference(seed):
    tokens, phi_wk, alpha = _problem(seed)
    S, K = 3, len(alpha)
    D = len(tokens.doc_ptr) - 1
    with np.errstate(divide="ignore"):
        log_phi_wk = np.log(phi_wk)
    taus = np.linspace(0, 1, 5) ** 2
    out = np.zeros((D, S))
    ais_kernels.ais_documents(
        np.random.default_rng(seed), tokens.doc_ptr, tokens.words, log_phi_wk, alpha, taus, 0, D,
        np.zeros(30, np.int32), np.zeros(K, np.int32), np.zeros(K), out,
    )
    ref = reference_ais(np.random.default_rng(seed), tokens.doc_ptr, tokens.words, log_phi_wk, alpha, taus, S)
    np.testing.assert_allclose(out, ref, rtol=1e-12)
