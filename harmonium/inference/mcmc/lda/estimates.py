"""Estimates of Theta and B from an LDA chain: burn-in, thinning, Rao-Blackwellised averages.

Seed 003 ("Collapsed Gibbs Sampling") estimates the parameters from the
retained samples through their conditional posteriors: given z,
p(theta_d | z) = Dir(alpha + n_d.) and p(phi_k | z, w) = Dir(beta + n_.k).
Averaging the conditional means over the samples retained after ``burn_in``
(every ``thin``-th sweep) is the Rao-Blackwellised estimator (Casella &
Robert 1996), whose variance is never larger than that of averaging the raw
draws:

    phi_hat_kw   = 1/S sum_s (n_wk^(s) + beta) / (n_k^(s) + V beta)
                   (seeded topics: beta + delta_kw over V beta + Delta_k)
    theta_hat_dk = 1/S sum_s (n_dk^(s) + alpha_k) / (N_d + sum alpha)

The sums are float64 for phi (V x K) and float32 for theta (D x K, the
larger one for corpora of many documents).
"""

from __future__ import annotations

import numpy as np

from harmonium._kernels import lda_stats
from harmonium.models.directed.lda import seeded_counts


def keep_sample(iteration: int, burn_in: int, thin: int) -> bool:
    """Whether sweep ``iteration`` (1-based) is retained: after ``burn_in``, every ``thin``-th."""
    return iteration > burn_in and (iteration - burn_in) % thin == 0


class ChainAverage:
    """Running Rao-Blackwellised sums of phi and theta over retained samples."""

    def __init__(self, n_docs: int, n_words: int, n_topics: int):
        self.phi_wk_sum = np.zeros((n_words, n_topics), dtype=np.float64)
        self.theta_sum = np.zeros((n_docs, n_topics), dtype=np.float32)
        self.n_samples = 0

    def add(self, n_dk, n_wk, n_k, alpha, beta: float, seeds=None) -> None:
        """Add the conditional posterior means of one retained sample.

        With ``seeds`` (seeded topics) phi's mean is (n_wk + delta + beta) / (n_k + Delta + V beta):
        delta is added to ``n_wk`` and ``n_k`` for the accumulation and removed again.
        """
        with seeded_counts(n_wk, n_k, seeds):
            lda_stats.accumulate_phi(self.phi_wk_sum, n_wk, n_k, float(beta))
        lda_stats.accumulate_theta(self.theta_sum, n_dk, alpha)
        self.n_samples += 1

    def topic_word(self) -> np.ndarray:
        """phi_hat as a (K, V) array with rows summing to one."""
        phi = (self.phi_wk_sum / self.n_samples).T
        return phi / phi.sum(axis=1, keepdims=True)

    def doc_topic(self, *, in_place: bool = False) -> np.ndarray:
        """theta_hat as a (D, K) float32 array with rows summing to one.

        ``in_place=True`` normalises the running sum itself (no D x K copy; the
        accumulator is spent afterwards).
        """
        theta = self.theta_sum if in_place else self.theta_sum.copy()
        theta /= theta.sum(axis=1, keepdims=True)
        return theta

    def to_arrays(self) -> dict:
        return {"rb_phi_wk_sum": self.phi_wk_sum, "rb_theta_sum": self.theta_sum}

    @classmethod
    def from_arrays(cls, arrays: dict, n_samples: int) -> ChainAverage:
        out = cls.__new__(cls)
        out.phi_wk_sum = np.array(arrays["rb_phi_wk_sum"], dtype=np.float64)
        out.theta_sum = np.array(arrays["rb_theta_sum"], dtype=np.float32)
        out.n_samples = int(n_samples)
        return out
