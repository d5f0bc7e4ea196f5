"""Exactness of every LDA Gibbs sampler under a seeded (asymmetric) topic-word prior.

Seeded topics give topic k the prior Dir(beta + delta_k.), delta a matrix of
integer pseudo-counts on seed words (harmonium.models.directed.lda). On the
enumerable corpus of ``_lda_tiny`` (2 documents x 3 tokens, K = 2, 64 states)
with delta_{a,0} = 1 and delta_{b,1} = 2, the target

    pi(z) ∝ prod_d [...] prod_k Gamma(sum_w B_kw) / Gamma(n_k + sum_w B_kw) prod_w Gamma(n_wk + B_kw) / Gamma(B_kw)

with B_kw = beta + delta_kw is enumerated here from its own gammaln
expression (not from the library's log joint). Then:

1. deterministic: the exposed collapsed conditional is the posterior's, and
   the sweep matrix built from it leaves pi invariant;
2. stochastic: each real kernel (plain, sparse, alias_mh, fplus and auto, LDA's default, through
   ``build_kernel``; parallel_gibbs with one thread is that kernel), started
   from exact draws of pi, ends one sweep later in states whose histogram
   passes a chi-square test; the naive sampler, started from exact draws of
   p(z, Theta, B | w), passes it after two scans;
3. negative controls: the same kernels ignoring delta (the symmetric prior),
   and a sweep that adds delta to n_wk but forgets Delta_k in n_k, fail.

Suite budget: alpha = 1e-4 per chi-square; fixed seeds, no retries.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from scipy.special import gammaln

from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs
from harmonium.inference.mcmc.lda import naive_gibbs as ngs
from harmonium.inference.mcmc.lda import parallel_gibbs as pgs
from harmonium.models.directed.lda import SeedPrior, collapsed_log_joint, make_model

from ._lda_tiny import MODEL as SYMMETRIC
from ._lda_tiny import STATES, TOKENS, K, N, state_index

ALPHA = 1e-4
N_CHAINS = 40_000  # min expected count 5.8; the controls fail with p < 1e-100 at 25k
SEEDS = SeedPrior(np.array([0, 1], dtype=np.int32), np.array([0, 1], dtype=np.int32),
                  np.array([1, 2], dtype=np.int32))
MODEL = make_model(K, SYMMETRIC.n_words, SYMMETRIC.alpha, SYMMETRIC.beta, SEEDS)
V = MODEL.n_words
D = TOKENS.doc_ptr.shape[0] - 1
B = np.full((V, K), MODEL.beta)
B[SEEDS.words, SEEDS.topics] += SEEDS.counts  # the asymmetric prior, word-major
TEMPLATES = [cgs.state_from_assignments(TOKENS, MODEL, z) for z in STATES]
WEIGHTS = K ** np.arange(N - 1, -1, -1)


def _log_joint(st) -> float:
    a = MODEL.alpha
    docs = (gammaln(a.sum()) - gammaln(st.n_dk.sum(axis=1) + a.sum())
            + (gammaln(st.n_dk + a) - gammaln(a)).sum(axis=1)).sum()
    topics = (gammaln(B.sum(axis=0)) - gammaln(st.n_k + B.sum(axis=0))
              + (gammaln(st.n_wk + B) - gammaln(B)).sum(axis=0)).sum()
    return float(docs + topics)


@pytest.fixture(scope="module")
def pi():
    logp = np.array([_log_joint(st) for st in TEMPLATES])
    p = np.exp(logp - logp.max())
    return p / p.sum()


def _pvalue(hist, pi):
    return stats.chisquare(hist, pi * hist.sum()).pvalue


def test_target_differs_from_the_symmetric_posterior(pi):
    # the controls below are only meaningful if delta moves the posterior
    logp = np.array([collapsed_log_joint(*st[1:], SYMMETRIC) for st in TEMPLATES])
    sym = np.exp(logp - logp.max())
    assert 0.5 * np.abs(sym / sym.sum() - pi).sum() > 0.05
    assert (pi * N_CHAINS).min() >= 5  # chi-square validity


def test_log_joint_is_the_asymmetric_dirichlet_expression():
    for st in TEMPLATES[::7]:
        assert collapsed_log_joint(st.n_dk, st.n_wk, st.n_k, MODEL) == pytest.approx(_log_joint(st), rel=1e-12)


def test_exposed_conditional_is_the_posterior_conditional(pi):
    for s in (0, 13, 42, 63):
        z = STATES[s]
        st = cgs.state_from_assignments(TOKENS, MODEL, z)
        for i in range(N):
            joint = []
            for k in range(K):
                z2 = z.copy()
                z2[i] = k
                joint.append(pi[state_index(z2)])
            np.testing.assert_allclose(cgs.conditional(st, TOKENS, MODEL, i), np.array(joint) / sum(joint),
                                       rtol=1e-12)


def _sweep_matrix(model) -> np.ndarray:
    P = np.eye(len(STATES))
    for i in range(N):
        Pi = np.zeros_like(P)
        for s, z in enumerate(STATES):
            q = cgs.conditional(TEMPLATES[s], TOKENS, model, i)
            for k in range(K):
                z2 = z.copy()
                z2[i] = k
                Pi[s, state_index(z2)] += q[k]
        P = P @ Pi
    return P


def test_sweep_leaves_posterior_invariant_and_symmetric_sweep_does_not(pi):
    np.testing.assert_allclose(pi @ _sweep_matrix(MODEL), pi, atol=1e-12)
    assert np.abs(pi @ _sweep_matrix(SYMMETRIC) - pi).max() > 1e-3


def _one_sweep(kernel, model, seed: int, pi) -> np.ndarray:
    rng = np.random.default_rng(seed)
    hist = np.zeros(len(STATES), dtype=np.int64)
    for s in rng.choice(len(STATES), size=N_CHAINS, p=pi):
        st = cgs.CollapsedGibbsState(*(a.copy() for a in TEMPLATES[s]))
        st, _ = kernel(rng, st, TOKENS, model)
        hist[int(st.z @ WEIGHTS)] += 1
        # the state never holds delta: its tables are the counts of z
        assert st.n_k.sum() == N
    return hist


KERNELS = {
    "plain": lambda: cgs.build_kernel(sampler="plain", compute_log_joint=False),
    "sparse": lambda: cgs.build_kernel(sampler="sparse", compute_log_joint=False),
    "alias_mh": lambda: cgs.build_kernel(sampler="alias_mh", compute_log_joint=False),
    "fplus": lambda: cgs.build_kernel(sampler="fplus", compute_log_joint=False),
    # LDA's default: F+LDA or SparseLDA sweep by sweep (here the cost rule picks F+LDA)
    "auto": lambda: cgs.build_kernel(sampler="auto", compute_log_joint=False),
    "parallel_gibbs_1_thread": lambda: pgs.build_kernel(sampler="sparse", n_threads=1, compute_log_joint=False),
}


@pytest.mark.parametrize("name", list(KERNELS))
def test_kernel_visits_states_with_posterior_frequencies(pi, name):
    assert _pvalue(_one_sweep(KERNELS[name](), MODEL, 20261201, pi), pi) > ALPHA


@pytest.mark.parametrize("name", ["plain", "sparse", "alias_mh", "fplus", "auto"])
def test_negative_control_kernel_ignoring_delta_fails(pi, name):
    # the same kernel given the model without its seeds samples the symmetric posterior
    assert _pvalue(_one_sweep(KERNELS[name](), SYMMETRIC, 20261201, pi), pi) < ALPHA


def test_negative_control_delta_without_topic_totals_fails(pi):
    # delta in n_wk but not Delta_k in n_k: the conditional's denominator misses the seed mass
    def kernel(rng, state, tokens, model):
        sweep = cgs.plain_sweep(model, tokens)
        state.n_wk[SEEDS.words, SEEDS.topics] += SEEDS.counts
        sweep(rng, state, 0, D)
        state.n_wk[SEEDS.words, SEEDS.topics] -= SEEDS.counts
        return state, None

    assert _pvalue(_one_sweep(kernel, MODEL, 20261201, pi), pi) < ALPHA


# -- naive Gibbs: z, Theta, B in turn ----------------------------------------------------------
def _naive_hist(model, seed: int, pi, n_scans: int = 2) -> np.ndarray:
    """Chains from exact draws of p(z, Theta, B | w) (B | z ~ Dir(beta + delta + n)); z histogram after n_scans."""
    rng = np.random.default_rng(seed)
    kernel = ngs.build_kernel(compute_log_joint=False)
    hist = np.zeros(len(STATES), dtype=np.int64)
    for s in rng.choice(len(STATES), size=N_CHAINS, p=pi):
        t = TEMPLATES[s]
        theta = np.array([rng.dirichlet(MODEL.alpha + t.n_dk[d]) for d in range(D)])
        phi_wk = np.array([rng.dirichlet(B[:, k] + t.n_wk[:, k]) for k in range(K)]).T.copy()
        st = ngs.NaiveGibbsState(t.z.copy(), t.n_dk.copy(), t.n_wk.copy(), t.n_k.copy(), theta, phi_wk)
        for _ in range(n_scans):
            st, _ = kernel(rng, st, TOKENS, model)
        hist[int(st.z @ WEIGHTS)] += 1
    return hist


def test_naive_phi_conditional_is_the_seeded_dirichlet():
    st = ngs.state_from_assignments(TOKENS, MODEL, STATES[21], rng=np.random.default_rng(0))
    for k in range(K):
        np.testing.assert_allclose(ngs.phi_conditional(st, MODEL, k), B[:, k] + st.n_wk[:, k])


def test_naive_kernel_visits_states_with_posterior_frequencies(pi):
    assert _pvalue(_naive_hist(MODEL, 20261202, pi), pi) > ALPHA


def test_negative_control_naive_kernel_ignoring_delta_fails(pi):
    # B drawn from Dir(beta + n) at the first scan: the second scan's z is drawn from the wrong topics
    assert _pvalue(_naive_hist(SYMMETRIC, 20261202, pi), pi) < ALPHA
