"""The left-to-right particle estimate of log p(w_d | Phi, alpha) for LDA-type models (numba).

Wallach, Murray, Salakhutdinov & Mimno (2009), "Evaluation methods for topic
models", ICML, Algorithm 3. With theta_d integrated out, token n of document d
is predicted from the assignments of the tokens before it:

    p_n^(r) = sum_k phi_{k w_n} (N_k^{<n,(r)} + alpha_k) / (n - 1 + sum_k alpha_k)

(1-based n). Particle r first resamples z_1 .. z_{n-1} in turn from
p(z_m = k | z_{<n, -m}, w) ∝ (N_k^{<n,-m} + alpha_k) phi_{k w_m} (one Gibbs sweep
that leaves p(z_{<n} | w_{<n}) invariant), then computes p_n^(r), then draws
z_n ∝ (N_k^{<n} + alpha_k) phi_{k w_n}. Particles are independent.

Read as annealed importance sampling over the growing sequence of targets
p(z_{<=n}, w_{<=n}), the cumulative weight W^(r) = prod_n p_n^(r) of each
particle is an unbiased estimate of p(w_d) (with or without the resampling
sweep, which only lowers the variance). The kernel records per document

* ``log_w[d, r] = sum_n log p_n^(r)``: the particles' log weights;
* ``log_pos[d] = sum_n log mean_r p_n^(r)``: the combination printed in
  Algorithm 3 (averages taken position by position);
* ``g[d, r] = sum_n p_n^(r) / mean_r p_n^(r)``: the derivative of ``log_pos``
  with respect to particle r's contributions (its delta-method variance).

A document costs O(R N_d^2 K). Functions mutate their array arguments in place.
"""

from __future__ import annotations

import math

from numba import njit

from harmonium._kernels.categorical import draw_from_cumulative as _invert


@njit(cache=True, nogil=True)
def _safe_log(x):
    return math.log(x) if x > 0.0 else -math.inf


@njit(cache=True, nogil=True)
def left_to_right_documents(rng, doc_ptr, words, phi_wk, alpha, d_lo, d_hi, resample, z, n_k, p, cum,
                            log_w, log_pos, g):
    """Run the R particles of Algorithm 3 over documents d_lo .. d_hi - 1.

    Parameters
    ----------
    rng : numpy Generator
    doc_ptr, words : the token stream (int64 (D+1,), int32 (N,))
    phi_wk : (V, K) float64
        phi_{k w} at [w, k].
    alpha : (K,) float64
    d_lo, d_hi : int
    resample : bool
        Resample the earlier positions before each prediction (Algorithm 3);
        False gives plain sequential importance sampling.
    z : (R, max N_d) int32, n_k : (R, K) int32, p : (R,) float64, cum : (K,) float64
        Scratch.
    log_w : (D, R) float64, log_pos : (D,) float64, g : (D, R) float64
        Outputs (rows d_lo .. d_hi - 1 are written).
    """
    R = p.shape[0]
    K = alpha.shape[0]
    a_sum = 0.0
    for k in range(K):
        a_sum += alpha[k]
    for d in range(d_lo, d_hi):
        start = doc_ptr[d]
        length = doc_ptr[d + 1] - start
        for r in range(R):
            for k in range(K):
                n_k[r, k] = 0
            log_w[d, r] = 0.0
            g[d, r] = 0.0
        lp = 0.0
        for n in range(length):
            w = words[start + n]
            mean = 0.0
            for r in range(R):
                if resample:
                    for m in range(n):
                        wm = words[start + m]
                        old = z[r, m]
                        n_k[r, old] -= 1
                        total = 0.0
                        for k in range(K):
                            total += (n_k[r, k] + alpha[k]) * phi_wk[wm, k]
                            cum[k] = total
                        new = _invert(rng, cum, total, K)
                        z[r, m] = new
                        n_k[r, new] += 1
                total = 0.0
                for k in range(K):
                    total += (n_k[r, k] + alpha[k]) * phi_wk[w, k]
                    cum[k] = total
                p[r] = total / (n + a_sum)
                new = _invert(rng, cum, total, K)
                z[r, n] = new
                n_k[r, new] += 1
                mean += p[r]
            mean /= R
            lp += _safe_log(mean)
            for r in range(R):
                log_w[d, r] += _safe_log(p[r])
                if mean > 0.0:
                    g[d, r] += p[r] / mean
        log_pos[d] = lp
