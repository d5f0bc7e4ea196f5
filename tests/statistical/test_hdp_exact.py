"""Exactness of the HDP direct-assignment sampler (seed 002 §4) on enumerable targets.

1. Antoniak draws S ~ A[n, a] against |s(n, S)| a^S G(a)/G(a + n) (chi-square).
2. The exposed full conditional p(z_i | z_-i, tau) against brute force from the
   closed-form joint p(w, z | tau, alpha) (deterministic).
3. The whole iteration (z sweep with topic creation and removal, tables, tau):
   independent chains started from exact draws of p(z, tau | w) on a 5-token
   corpus, two iterations each, end in clusterings whose histogram passes a
   chi-square test against the enumerated p(z | w) (52 clusterings).
4. The concentration updates: alpha | m, n, gamma | K, m and the topic-word prior
   beta | z, w started from exact draws stay exact after one update (Kolmogorov-Smirnov).
5. Negative controls: a new-topic weight without its 1/V, tables drawn with
   alpha instead of alpha tau_k, an off-by-one Antoniak draw, and wrong
   auxiliary-variable probabilities fail the same tests.

Suite budget: each test uses alpha = 1e-4 (fixed seeds, no retries).
"""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit
from scipy import stats
from scipy.special import gammaln

from harmonium._kernels import hdp as khdp
from harmonium._kernels import hdp_split_merge as ksm
from harmonium.inference.mcmc.isbn import hdp as da
from harmonium.inference.mcmc.isbn import hyper
from harmonium.models.directed.hdp import (
    alpha_log_posterior,
    antoniak_pmf,
    gamma_log_posterior,
    word_log_likelihood,
)

from . import _hdp_tiny as T

ALPHA_TEST = 1e-4


def chi2_pvalue(counts, probs) -> float:
    """Chi-square p-value, cells with expected count < 5 pooled into one."""
    n = counts.sum()
    exp = probs * n
    small = exp < 5
    obs = np.append(counts[~small], counts[small].sum())
    ex = np.append(exp[~small], exp[small].sum())
    keep = ex > 0
    return float(stats.chisquare(obs[keep], ex[keep] * obs[keep].sum() / ex[keep].sum()).pvalue)


# -- 1. Antoniak ----------------------------------------------------------------------------
@njit
def _antoniak_many(rng, n, a, fn, out):
    for r in range(out.shape[0]):
        out[r] = fn(rng, n, a)


@njit
def broken_antoniak(rng, n, a):
    """Off-by-one: Bernoulli(a / (a + t)) for t = 1..n, the first customer need not open a table."""
    s = 0
    for t in range(1, n + 1):
        if rng.random() * (a + t) < a:
            s += 1
    return s


@pytest.mark.parametrize("fn, ok", [(khdp.antoniak, True), (broken_antoniak, False)])
@pytest.mark.parametrize("n, a", [(7, 0.6), (12, 3.5)])
def test_antoniak_against_stirling(fn, ok, n, a):
    rng = np.random.default_rng(20261121 + n)
    out = np.empty(100_000, dtype=np.int64)
    _antoniak_many(rng, n, a, fn, out)
    p = chi2_pvalue(np.bincount(out, minlength=n + 1)[: n + 1].astype(float), antoniak_pmf(n, a))
    assert (p > ALPHA_TEST) == ok, p


def test_antoniak_pmf_sums_to_one():
    for n, a in [(1, 0.3), (5, 2.0), (15, 0.05)]:
        assert np.isclose(antoniak_pmf(n, a).sum(), 1.0)


# -- 2. the full conditional ---------------------------------------------------------------------
def _log_joint_given_tau(z, tau_of_label, alpha):
    """log p(w, z | tau, alpha) with pi_j and phi integrated out; tau_of_label[k] for every label in z."""
    n_jk, n_wk = T.counts(z)
    at = alpha * np.asarray(tau_of_label)[: n_jk.shape[1]]
    n_j = n_jk.sum(axis=1)
    lp = np.sum(gammaln(alpha) - gammaln(alpha + n_j)) + np.sum(gammaln(n_jk + at) - gammaln(at))
    return lp + word_log_likelihood(n_wk, T.BETA)


def _brute_force_conditional(z, tau, i, alpha):
    K = tau.shape[0] - 1
    z = z.copy()
    alone = np.count_nonzero(z == z[i]) == 1
    old = int(z[i])
    logs = []
    for k in range(K + 1):
        zz = z.copy()
        tl = list(tau[:K]) + [tau[K]]
        if k == K or (alone and k == old):
            if alone and k == old:
                logs.append(-np.inf)
                continue
            tl[K] = tau[K] + (tau[old] if alone else 0.0)  # a fresh topic takes the whole unused mass
        zz[i] = k
        if alone and k != old:  # the old label disappears: relabel to keep labels 0..K'-1
            labels = {lab: j for j, lab in enumerate(sorted(set(zz.tolist())))}
            tl = [tl[lab] for lab in sorted(labels)]
            zz = np.array([labels[v] for v in zz.tolist()])
        logs.append(_log_joint_given_tau(zz, tl, alpha))
    logs = np.array(logs)
    p = np.exp(logs - logs.max())
    return p / p.sum()


def broken_conditional(state, tokens, model, i):
    """The new-topic weight alpha tau_u without the 1/V predictive of an empty topic."""
    p = da.conditional(state, tokens, model, i)
    K = state.n_topics
    q = p.copy()
    q[K] *= model.n_words
    return q / q.sum()


@pytest.mark.parametrize("conditional, ok", [(da.conditional, True), (broken_conditional, False)])
def test_conditional_matches_brute_force(conditional, ok):
    rng = np.random.default_rng(3)
    agree = []
    for s in (0, 7, 20, 33, 51):
        z = T.PARTITIONS[s]
        K = int(z.max()) + 1
        tau = rng.dirichlet(np.ones(K + 1))
        st = da.state_from_assignments(T.TOKENS, T.MODEL, z, tau, T.ALPHA, T.GAMMA)
        for i in range(T.N):
            agree.append(np.allclose(conditional(st, T.TOKENS, T.MODEL, i),
                                     _brute_force_conditional(z, tau, i, T.ALPHA), rtol=1e-10, atol=1e-12))
    assert all(agree) == ok


# -- 3. the whole iteration from exact draws -----------------------------------------------------
@njit
def _exact_start(rng, cum_p, part_of, mk_of, partitions, doc_ptr, words, gamma, z, m_k, tau, n_dk, n_wk, n_k):
    """One exact joint draw of (z, tables, tau) into the chain's arrays (counts filled); returns K."""
    s = np.searchsorted(cum_p, rng.random() * cum_p[-1], side="right")
    part = part_of[s]
    K = 0
    for i in range(z.shape[0]):
        z[i] = partitions[part, i]
        K = max(K, z[i] + 1)
    for k in range(K):
        m_k[k] = mk_of[s, k]
    tau[:] = 0.0
    khdp.sample_tau(rng, m_k, K, gamma, tau)
    khdp.count_assignments(doc_ptr, words, z, n_dk, n_wk, n_k)
    return K


@njit
def _run_chains(rng, n_iter, cum_p, part_of, mk_of, partitions, doc_ptr, words, alpha, gamma, beta,
                sweep_fn, tables_fn, codes, out):
    N = words.shape[0]
    D = doc_ptr.shape[0] - 1
    cap = 2 * N + 2
    n_dk = np.zeros((D, cap), np.int32)
    n_wk = np.zeros((3, cap), np.int32)
    n_k = np.zeros(cap, np.int32)
    tau = np.zeros(cap + 1)
    p = np.empty(cap + 1)
    remap = np.empty(cap, np.int64)
    m_k = np.zeros(cap, np.int64)
    z = np.empty(N, np.int32)
    relabel = np.empty(cap, np.int64)
    for c in range(out.shape[0]):
        K = _exact_start(rng, cum_p, part_of, mk_of, partitions, doc_ptr, words, gamma, z, m_k, tau, n_dk, n_wk, n_k)
        for _ in range(n_iter):
            K, _, _, _ = sweep_fn(rng, doc_ptr, words, z, n_dk, n_wk, n_k, tau, K, alpha, beta, gamma, p, 0)
            K = khdp.compact(z, n_dk, n_wk, n_k, tau, K, remap)
            tables_fn(rng, n_dk, K, alpha, tau, m_k)
            khdp.sample_tau(rng, m_k, K, gamma, tau)
        relabel[:] = -1
        nxt = 0
        code = 0
        for i in range(N):
            if relabel[z[i]] < 0:
                relabel[z[i]] = nxt
                nxt += 1
            code = code * N + relabel[z[i]]
        out[c] = codes[code]


@njit
def broken_sweep(rng, doc_ptr, words, z, n_dk, n_wk, n_k, tau, K, alpha, beta, gamma, p, i_start):
    """da_sweep with the new-topic weight alpha tau_u instead of alpha tau_u / V."""
    V = n_wk.shape[0]
    v_beta = V * beta
    d = 0
    while doc_ptr[d + 1] <= i_start:
        d += 1
    for i in range(i_start, words.shape[0]):
        while i >= doc_ptr[d + 1]:
            d += 1
        if i == doc_ptr[d] and K + (doc_ptr[d + 1] - doc_ptr[d]) >= n_k.shape[0]:
            return K, 0, 0, i  # the caller grows the arrays, as for da_sweep
        w = words[i]
        old = z[i]
        n_dk[d, old] -= 1
        n_wk[w, old] -= 1
        n_k[old] -= 1
        if n_k[old] == 0:
            tau[K] += tau[old]
            tau[old] = 0.0
        khdp.da_conditional(p, d, w, n_dk, n_wk, n_k, K, tau, alpha, beta, v_beta)
        p[K] *= V
        new = khdp.draw_unnormalised(rng, p, K + 1)
        if new == K:
            b = rng.beta(1.0, gamma)
            tau[K + 1] = (1.0 - b) * tau[K]
            tau[K] = b * tau[K]
            K += 1
        z[i] = new
        n_dk[d, new] += 1
        n_wk[w, new] += 1
        n_k[new] += 1
    return K, 0, 0, words.shape[0]


@njit
def broken_tables(rng, n_dk, K, alpha, tau, m_k):
    """Tables drawn with concentration alpha instead of alpha tau_k."""
    for k in range(K):
        m_k[k] = 0
    total = 0
    for d in range(n_dk.shape[0]):
        for k in range(K):
            if n_dk[d, k] > 0:
                m = khdp.antoniak(rng, n_dk[d, k], alpha)
                m_k[k] += m
                total += m
    return total


@pytest.fixture(scope="module")
def exact():
    part, mk, p = T.joint_states()
    return part, mk, np.cumsum(p), T.partition_posterior(), T.code_table()


@pytest.mark.parametrize("sweep, tables, ok", [
    (khdp.da_sweep, khdp.sample_tables, True),
    (khdp.da_sweep_sparse, khdp.sample_tables, True),
    (broken_sweep, khdp.sample_tables, False),
    (khdp.da_sweep, broken_tables, False),
])
def test_iteration_leaves_posterior_invariant(exact, sweep, tables, ok):
    part, mk, cum_p, target, codes = exact
    out = np.empty(200_000, dtype=np.int64)
    rng = np.random.default_rng(12345)
    _run_chains(rng, 2, cum_p, part, mk, T.PARTITIONS, T.TOKENS.doc_ptr, T.TOKENS.words, T.ALPHA, T.GAMMA,
                T.BETA, sweep, tables, codes, out)
    assert out.min() >= 0
    p = chi2_pvalue(np.bincount(out, minlength=target.shape[0]).astype(float), target)
    assert (p > ALPHA_TEST) == ok, p


# -- 4. concentrations ---------------------------------------------------------------------------
def _exact_draws(rng, logpdf, lo, hi, n):
    grid = np.linspace(lo, hi, 200_001)
    lp = logpdf(grid)
    w = np.exp(lp - lp.max())
    cdf = np.cumsum(w)
    cdf /= cdf[-1]
    return np.interp(rng.random(n), cdf, grid), (grid, cdf)


def broken_resample_alpha(rng, alpha, m_total, n, prior, n_iter=1):
    """s_j ~ Bernoulli(alpha / (n_j + alpha)) instead of n_j / (n_j + alpha)."""
    shape, rate = prior
    w = rng.beta(alpha + 1.0, n)
    s = rng.random(n.shape[0]) * (n + alpha) < alpha
    return float(rng.gamma(shape + m_total - np.count_nonzero(s), 1.0 / (rate - np.sum(np.log(w)))))


def broken_resample_gamma(rng, gamma, K, m_total, prior, n_iter=1):
    """The mixture weights of Escobar & West swapped."""
    shape, rate = prior
    eta = rng.beta(gamma + 1.0, m_total)
    r = rate - np.log(eta)
    odds = (shape + K - 1) / (m_total * r)
    k_shape = shape + K - 1 if rng.random() * (1.0 + odds) < odds else shape + K
    return float(rng.gamma(k_shape, 1.0 / r))


@pytest.mark.parametrize("update, ok", [(hyper.resample_alpha, True), (broken_resample_alpha, False)])
def test_alpha_update_is_exact(update, ok):
    rng = np.random.default_rng(77)
    n = np.array([3.0, 10.0, 1.0, 25.0])
    m_total, prior = 9, (2.0, 1.0)
    start, (grid, cdf) = _exact_draws(rng, lambda a: alpha_log_posterior(a, m_total, n, prior), 1e-6, 40.0, 20_000)
    after = np.array([update(rng, a, m_total, n, prior, 1) for a in start])
    p = stats.kstest(after, lambda x: np.interp(x, grid, cdf)).pvalue
    assert (p > ALPHA_TEST) == ok, p


@pytest.mark.parametrize("update, ok", [(hyper.resample_gamma, True), (broken_resample_gamma, False)])
def test_gamma_update_is_exact(update, ok):
    rng = np.random.default_rng(78)
    K, m_total, prior = 3, 12, (1.0, 0.5)
    start, (grid, cdf) = _exact_draws(rng, lambda g: gamma_log_posterior(g, K, m_total, prior), 1e-6, 40.0, 20_000)
    after = np.array([update(rng, g, K, m_total, prior, 1) for g in start])
    p = stats.kstest(after, lambda x: np.interp(x, grid, cdf)).pvalue
    assert (p > ALPHA_TEST) == ok, p


def _beta_log_posterior_by_hand(b, n_wk, prior):
    """log Gamma(b; shape, rate) + sum_k [lG(V b) - lG(n_k + V b) + sum_w lG(n_wk + b) - lG(b)], b an array."""
    V, K = n_wk.shape
    b = np.asarray(b)[:, None]
    n_k = n_wk.sum(axis=0)
    out = (prior[0] - 1.0) * np.log(b[:, 0]) - prior[1] * b[:, 0]
    out += np.sum(gammaln(V * b) - gammaln(n_k + V * b), axis=1)
    for w in range(V):
        out += np.sum(gammaln(n_wk[w] + b) - gammaln(b), axis=1)
    return out


@pytest.mark.parametrize("jacobian, ok", [(True, True), (False, False)])
def test_beta_update_is_exact(jacobian, ok):
    """beta | z, w by slice sampling on log beta, from exact draws (quadrature): one update stays exact.
    Control: the Jacobian beta of the log transform left out."""
    rng = np.random.default_rng(79)
    n_wk = np.array([[5, 0], [1, 3], [0, 7], [2, 0]], dtype=np.int32)
    n_k = n_wk.sum(axis=0).astype(np.int32)
    prior = (1.0, 1.0)
    start, (grid, cdf) = _exact_draws(rng, lambda b: _beta_log_posterior_by_hand(b, n_wk, prior), 1e-6, 30.0, 20_000)
    after = np.array([hyper.resample_beta(rng, b, n_wk, n_k, 2, prior, 1, jacobian=jacobian) for b in start])
    p = stats.kstest(after, lambda x: np.interp(x, grid, cdf)).pvalue
    assert (p > ALPHA_TEST) == ok, p


# -- 5. split-merge moves ------------------------------------------------------------------------
TAU_EDGES = np.array([0.0, 0.2, 0.4, 0.6, 0.8, 1.0])


@njit
def _run_split_merge_chains(rng, n_moves, n_launch, sequential, broken, cum_p, part_of, mk_of, partitions, doc_ptr,
                            words, alpha, gamma, beta, codes, edges, out_part, out_bin, n_words=3, unit=0, rho=0.5):
    """Chains from exact draws of p(z, tau | w), ``n_moves`` split-merge proposals each; the clustering and
    the bin of tau of token 0's topic at the end. ``unit``: 0 token proposals (``split_merge``), 1 document
    blocks (``split_merge_blocks``), 2 the two in turn, 3 the mixture of the two (``split_merge_mixed``, block
    path with probability ``rho``). Returns the numbers of accepted splits and merges."""
    N = words.shape[0]
    D = doc_ptr.shape[0] - 1
    V = n_words
    cap = N + 2
    n_dk = np.zeros((D, cap), np.int32)
    n_wk = np.zeros((V, cap), np.int32)
    n_k = np.zeros(cap, np.int32)
    tau = np.zeros(cap + 1)
    m_k = np.zeros(cap, np.int64)
    z = np.empty(N, np.int32)
    relabel = np.empty(cap, np.int64)
    doc_of = np.empty(N, np.int64)
    for d in range(D):
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            doc_of[i] = d
    S = np.empty(N, np.int64)
    side = np.empty(N, np.int64)
    target = np.empty(N, np.int64)
    ndx = np.zeros((D, 2), np.int64)
    nwx = np.zeros((V, 2), np.int64)
    docs = np.empty(D, np.int64)
    wlist = np.empty(V, np.int64)
    dmark = np.zeros(D, np.uint8)
    wmark = np.zeros(V, np.uint8)
    order = np.empty(N, np.int64)
    # zeros, not np.empty: the stale-index control (broken 4) reads entries of topics created after the last
    # build, and must read the same values in every process (np.empty's leftovers made it pass now and then)
    kstart = np.zeros(cap + 2, np.int64)
    bptr = np.empty(D + 1, np.int64)
    accepted = np.zeros(3, np.int64)
    for c in range(out_part.shape[0]):
        K = _exact_start(rng, cum_p, part_of, mk_of, partitions, doc_ptr, words, gamma, z, m_k, tau, n_dk, n_wk, n_k)
        ksm.build_topic_index(z, K, order, kstart)
        for mv in range(n_moves):
            if unit == 1 or (unit == 2 and mv % 2 == 1):
                K, outcome = ksm.split_merge_blocks(rng, doc_of, words, z, n_dk, n_wk, n_k, tau, K, alpha, beta,
                                                     gamma, n_launch, S, side, target, ndx, nwx, docs, wlist, dmark,
                                                     wmark, order, kstart, bptr, broken)
            elif unit == 3:
                K, outcome = ksm.split_merge_mixed(rng, doc_of, words, z, n_dk, n_wk, n_k, tau, K, alpha, beta,
                                                    gamma, n_launch, S, side, target, ndx, nwx, docs, wlist, dmark,
                                                    wmark, order, kstart, bptr, rho, broken)
            else:
                K, outcome = ksm.split_merge(rng, doc_of, words, z, n_dk, n_wk, n_k, tau, K, alpha, beta, gamma,
                                              n_launch, S, side, target, ndx, nwx, docs, wlist, dmark, wmark, order,
                                              kstart, sequential, broken)
            accepted[outcome] += 1
        relabel[:] = -1
        nxt = 0
        code = 0
        for i in range(N):
            if relabel[z[i]] < 0:
                relabel[z[i]] = nxt
                nxt += 1
            code = code * N + relabel[z[i]]
        out_part[c] = codes[code]
        out_bin[c] = np.searchsorted(edges, tau[z[0]], side="right") - 1
    return accepted[1], accepted[2]


def _exact_partition_and_tau_bin(tiny=T):
    """p(clustering, bin of tau of token 0's topic | w): tau_c ~ Beta(m_.c, m.. - m_.c + gamma) given (z, m)."""
    part, mk, p = tiny.joint_states()
    partitions, gamma = (T.PARTITIONS, T.GAMMA) if tiny is T else (tiny.partitions, tiny.gamma)
    cells = np.zeros((partitions.shape[0], TAU_EDGES.shape[0] - 1))
    for s in range(part.shape[0]):
        c0 = partitions[part[s], 0]
        a, b = mk[s, c0], mk[s].sum() - mk[s, c0] + gamma
        cells[part[s]] += p[s] * np.diff(stats.beta.cdf(TAU_EDGES, a, b))
    return cells


@pytest.mark.parametrize("sequential, n_launch, broken, ok", [
    (False, 2, 0, True), (False, 2, 1, False), (False, 2, 2, False),
    (True, 1, 0, True), (True, 0, 0, True), (True, 1, 3, False), (True, 1, 4, False)])
def test_split_merge_leaves_posterior_invariant(exact, sequential, n_launch, broken, ok):
    """Split-merge proposals alone, from exact draws of (z, tau): the joint of the clustering and of tau of
    token 0's topic stays p(z, tau | w), from a random launch state or a sequentially allocated one (Dahl
    2003). Controls: q left out of the ratio (1), the Jacobian left out (2), a merge launched from the
    current split (3), the topic index (build_topic_index) left stale after an accepted move (4)."""
    part, mk, cum_p, _, codes = exact
    n = 200_000
    out_part = np.empty(n, np.int64)
    out_bin = np.empty(n, np.int64)
    rng = np.random.default_rng(2024)
    _run_split_merge_chains(rng, 3, n_launch, sequential, broken, cum_p, part, mk, T.PARTITIONS, T.TOKENS.doc_ptr,
                            T.TOKENS.words,
                            T.ALPHA, T.GAMMA, T.BETA, codes, TAU_EDGES, out_part, out_bin)
    assert out_part.min() >= 0
    target = _exact_partition_and_tau_bin().ravel()
    observed = np.bincount(out_part * (TAU_EDGES.shape[0] - 1) + out_bin, minlength=target.shape[0]).astype(float)
    p = chi2_pvalue(observed, target / target.sum())
    assert (p > ALPHA_TEST) == ok, p


@pytest.fixture(scope="module")
def exact_blocks():
    B = T.BLOCKS
    part, mk, p = B.joint_states()
    return part, mk, np.cumsum(p), B.code_table(), _exact_partition_and_tau_bin(B).ravel()


@pytest.mark.parametrize("unit, n_launch, broken, ok", [
    (1, 2, 0, True), (1, 0, 0, True), (2, 2, 0, True), (1, 2, 1, False), (1, 0, 1, False), (1, 2, 2, False)])
def test_block_split_merge_leaves_posterior_invariant(exact_blocks, unit, n_launch, broken, ok):
    """Split-merge proposals whose unit is a document's block of the two topics' tokens
    (``split_merge_blocks``), alone (unit 1) or in turn with the token proposals (unit 2), from exact draws of
    (z, tau) on 3 documents of 3, 1 and 2 tokens (203 clusterings; the block of the document that holds neither
    i nor j moves as a whole): the joint of the clustering and of tau of token 0's topic stays p(z, tau | w).
    Controls: q scored as a product of independent token terms while the blocks are drawn by the exact block
    ratio (1), a merge's reverse q taken from the token scan with unaligned merges not rejected (2). (A block
    conditional that is itself a product of independent token terms, used for the draw and for q alike, is
    still an exact move, only a less efficient one, so it is no negative control: its p is 0.82.)"""
    B = T.BLOCKS
    part, mk, cum_p, codes, target = exact_blocks
    n = 200_000
    out_part = np.empty(n, np.int64)
    out_bin = np.empty(n, np.int64)
    rng = np.random.default_rng(2025)
    n_split, n_merge = _run_split_merge_chains(rng, 4, n_launch, False, broken, cum_p, part, mk, B.partitions,
                                               B.tokens.doc_ptr, B.tokens.words, B.alpha, B.gamma, B.beta, codes,
                                               TAU_EDGES, out_part, out_bin, B.V, unit)
    assert out_part.min() >= 0
    assert min(n_split, n_merge) > 0.01 * n  # the moves act: many splits and merges accepted
    observed = np.bincount(out_part * (TAU_EDGES.shape[0] - 1) + out_bin, minlength=target.shape[0]).astype(float)
    p = chi2_pvalue(observed, target / target.sum())
    assert (p > ALPHA_TEST) == ok, (p, n_split, n_merge)


@pytest.mark.parametrize("n_launch, rho, broken, ok", [
    (2, 0.5, 0, True), (0, 0.5, 0, True), (1, 0.8, 0, True), (2, 0.0, 0, True), (2, 0.5, 1, False),
    (0, 0.5, 1, False),
    (2, 0.5, 2, False)])
def test_mixed_split_merge_leaves_posterior_invariant(exact_blocks, n_launch, rho, broken, ok):
    """Split-merge proposals whose unit is a document's block drawn from a mixture (``split_merge_mixed``): as a
    whole by the exact block conditional with probability rho, else token by token, q summing both paths. From
    exact draws of (z, tau) on the 3-document BLOCKS corpus (203 clusterings) the joint of the clustering and of
    tau of token 0's topic stays p(z, tau | w), for rho = 1/2, 0.8 and 0 (token path only). Controls: q scored by
    the path actually taken instead of the mixture (1), the token path scored as independent token terms at the
    counts without the block (2)."""
    B = T.BLOCKS
    part, mk, cum_p, codes, target = exact_blocks
    n = 200_000
    out_part = np.empty(n, np.int64)
    out_bin = np.empty(n, np.int64)
    rng = np.random.default_rng(2026)
    n_split, n_merge = _run_split_merge_chains(rng, 4, n_launch, False, broken, cum_p, part, mk, B.partitions,
                                               B.tokens.doc_ptr, B.tokens.words, B.alpha, B.gamma, B.beta, codes,
                                               TAU_EDGES, out_part, out_bin, B.V, 3, rho)
    assert out_part.min() >= 0
    assert min(n_split, n_merge) > 0.01 * n  # the moves act: many splits and merges accepted
    observed = np.bincount(out_part * (TAU_EDGES.shape[0] - 1) + out_bin, minlength=target.shape[0]).astype(float)
    p = chi2_pvalue(observed, target / target.sum())
    assert (p > ALPHA_TEST) == ok, (p, n_split, n_merge)
