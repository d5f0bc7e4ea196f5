"""Naive (uncollapsed) Gibbs sampling for LDA (seed 003, "(Naive) Gibbs Sampling").

The state holds the topic assignments z together with the topic proportions
Theta (D, K) and the topics B, stored word-major as ``phi_wk`` (V, K) like the
count table ``n_wk``. One ``kernel`` call is one full scan:

1. z | Theta, B: every token independently, p(z_i = k | Theta, B, w) ∝ theta_dk phi_kw;
2. Theta | z: every theta_d ~ Dir(alpha + n_d.);
3. B | z: every phi_k ~ Dir(beta + n_.k).

Each step draws exactly from a full conditional of p(z, Theta, B | w), so the
scan leaves that posterior invariant (tested exactly in
tests/statistical/test_lda_naive_exact.py). The lecture's point stands: the
three blocks are conditionally independent and parallelise trivially, but the
chain mixes more slowly than the collapsed sampler
(:mod:`harmonium.inference.mcmc.lda.collapsed_gibbs`). For threading,
:func:`sweep_z` does step 1 over a range of documents.

Dirichlet draws are normalised Gamma variates computed in log space (see
:mod:`harmonium._kernels.lda_naive`), so tiny shapes (alpha, beta << 1) give
exact zeros where the true value underflows, never NaN.

Seeded topics (``model.seeds``): step 3 draws phi_k ~ Dir(beta + delta_k. + n_.k),
by running the scan with delta in the count tables (steps 1 and 2 do not read
n_wk), as the collapsed samplers do.

``info.log_joint`` is the *collapsed* log joint log p(w, z | alpha, beta)
(Theta and B integrated out), the same quantity the collapsed sampler reports,
so traces of the two samplers are comparable. The complete-data log joint
log p(w, z, Theta, B) is available from :func:`complete_log_joint`.

State / init / kernel as in DESIGN.md. The kernel mutates the state's arrays
in place and returns the same (mutated) state object.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.special import gammaln

from harmonium._kernels import lda_naive
from harmonium.corpus.corpus import TokenStream
from harmonium.models.directed.lda import LDAModel, collapsed_log_joint, counts_from_assignments, seeded_counts


class NaiveGibbsState(NamedTuple):
    """Topic assignments, the count tables they imply, and the current Theta and B."""

    z: np.ndarray  # (N,) int32
    n_dk: np.ndarray  # (D, K) int32
    n_wk: np.ndarray  # (V, K) int32, word-major
    n_k: np.ndarray  # (K,) int32
    theta: np.ndarray  # (D, K) float64, rows sum to 1
    phi_wk: np.ndarray  # (V, K) float64, word-major: column k is topic k, sums to 1


class NaiveGibbsInfo(NamedTuple):
    """Per-scan diagnostics: collapsed log joint log p(w, z) (NaN when not computed) and changed z."""

    log_joint: float
    n_changed: int


def state_from_assignments(
    tokens: TokenStream, model: LDAModel, z, theta=None, phi_wk=None, rng: np.random.Generator | None = None
) -> NaiveGibbsState:
    """The state for assignments ``z`` (counts recomputed from scratch).

    ``theta`` / ``phi_wk`` are copied when given; when missing they are drawn
    from their full conditionals given ``z`` with ``rng`` (required then).
    """
    z = np.ascontiguousarray(z, dtype=np.int32)
    K, V = model.n_topics, model.n_words
    n_docs = tokens.doc_ptr.shape[0] - 1
    n_dk, n_wk, n_k = counts_from_assignments(tokens.doc_ptr, tokens.words, z, K, V)
    if theta is None:
        theta = np.empty((n_docs, K), dtype=np.float64)
        lda_naive.draw_theta(rng, n_dk, model.alpha, theta, 0, n_docs)
    else:
        theta = np.array(theta, dtype=np.float64, order="C")
    if phi_wk is None:
        phi_wk = np.empty((V, K), dtype=np.float64)
        with seeded_counts(n_wk, n_k, model.seeds):
            lda_naive.draw_phi(rng, n_wk, model.beta, phi_wk, np.empty(K), np.empty(K))
    else:
        phi_wk = np.array(phi_wk, dtype=np.float64, order="C")
    return NaiveGibbsState(z, n_dk, n_wk, n_k, theta, phi_wk)


def init(rng: np.random.Generator, tokens: TokenStream, model: LDAModel) -> NaiveGibbsState:
    """Uniform random z, then Theta | z and B | z drawn from their full conditionals."""
    z = rng.integers(0, model.n_topics, size=tokens.words.shape[0], dtype=np.int32)
    return state_from_assignments(tokens, model, z, rng=rng)


def _doc_of(tokens: TokenStream, i: int) -> int:
    return int(np.searchsorted(tokens.doc_ptr, i, side="right") - 1)


def z_conditional(state: NaiveGibbsState, tokens: TokenStream, model: LDAModel, i: int) -> np.ndarray:
    """Normalised full conditional p(z_i = . | Theta, B, w) ∝ theta_dk phi_kw of token ``i``.

    It does not depend on the other assignments. State left unchanged.
    """
    d = _doc_of(tokens, i)
    p = state.theta[d] * state.phi_wk[int(tokens.words[i])]
    return p / p.sum()


def theta_conditional(state: NaiveGibbsState, model: LDAModel, d: int) -> np.ndarray:
    """Parameters of the full conditional of theta_d: Dir(alpha + n_d.)."""
    return model.alpha + state.n_dk[d]


def phi_conditional(state: NaiveGibbsState, model: LDAModel, k: int) -> np.ndarray:
    """Parameters (V,) of the full conditional of topic k: Dir(beta + delta_.k + n_.k)."""
    out = model.beta + state.n_wk[:, k].astype(np.float64)
    if model.seeds is not None:
        mine = model.seeds.topics == k
        out[model.seeds.words[mine]] += model.seeds.counts[mine]
    return out


def complete_log_joint(state: NaiveGibbsState, tokens: TokenStream, model: LDAModel) -> float:
    """log p(w, z, Theta, B | alpha, beta), densities of Theta and B w.r.t. Lebesgue measure on the simplex.

    = sum_d log Dir(theta_d | alpha) + sum_k log Dir(phi_k | beta + delta_k.)
      + sum_dk n_dk log theta_dk + sum_wk n_wk log phi_kw.
    -inf where an entry of Theta or B underflowed to 0 (possible with tiny
    alpha or beta); use the collapsed ``info.log_joint`` for traces.
    """
    alpha, beta = model.alpha, model.beta
    theta, phi = state.theta, state.phi_wk
    V, K = phi.shape
    D = theta.shape[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        log_theta = np.log(theta)
        log_phi = np.log(phi)
        prior_theta = D * (gammaln(alpha.sum()) - gammaln(alpha).sum()) + ((alpha - 1.0) * log_theta).sum()
        if model.seeds is None:
            prior_phi = K * (gammaln(V * beta) - V * gammaln(beta)) + ((beta - 1.0) * log_phi).sum()
        else:  # phi_k ~ Dir(beta + delta_k.)
            b = beta + model.seeds.dense(V, K)
            prior_phi = (gammaln(b.sum(axis=0)) - gammaln(b).sum(axis=0)).sum() + ((b - 1.0) * log_phi).sum()
        lik = np.where(state.n_dk > 0, state.n_dk * log_theta, 0.0).sum()
        lik += np.where(state.n_wk > 0, state.n_wk * log_phi, 0.0).sum()
    return float(prior_theta + prior_phi + lik)


def sweep_z(
    rng: np.random.Generator, state: NaiveGibbsState, tokens: TokenStream, model: LDAModel, d_lo: int, d_hi: int
) -> int:
    """Step 1 only, over the documents d_lo..d_hi-1: z | Theta, B; returns the number of changed z.

    Mutates ``state.z`` and the count tables in place (see
    :func:`harmonium._kernels.lda_naive.sweep_z` for what a threaded driver may
    share).
    """
    p = np.empty(model.n_topics, dtype=np.float64)
    return int(lda_naive.sweep_z(rng, tokens.doc_ptr, tokens.words, state.z, state.n_dk, state.n_wk, state.n_k,
                                 state.theta, state.phi_wk, p, d_lo, d_hi))


def build_kernel(*, compute_log_joint: bool = True, scan=None):
    """A kernel doing one full scan: z | Theta, B, then Theta | z, then B | z.

    Parameters
    ----------
    compute_log_joint : bool
        Whether ``info.log_joint`` (collapsed, O(DK + VK)) is computed; NaN otherwise.
    scan : callable, optional
        A compiled scan with the signature of
        :func:`harmonium._kernels.lda_naive.naive_scan`, used instead of it
        (tests pass deliberately broken scans here).
    """
    fn = lda_naive.naive_scan if scan is None else scan

    def kernel(rng, state: NaiveGibbsState, tokens: TokenStream, model: LDAModel):
        K = model.n_topics
        p, colmax, colsum = np.empty(K), np.empty(K), np.empty(K)
        with seeded_counts(state.n_wk, state.n_k, model.seeds):
            n_changed = fn(rng, tokens.doc_ptr, tokens.words, state.z, state.n_dk, state.n_wk, state.n_k,
                           state.theta, state.phi_wk, model.alpha, model.beta, p, colmax, colsum)
        lj = collapsed_log_joint(state.n_dk, state.n_wk, state.n_k, model) if compute_log_joint else float("nan")
        return state, NaiveGibbsInfo(lj, int(n_changed))

    return kernel
