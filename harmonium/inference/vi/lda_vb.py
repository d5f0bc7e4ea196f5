"""Variational inference for LDA: batch VB, online VB and CVB0 (seed 004; seed 003 "VB").

Model: :mod:`harmonium.models.directed.lda` (alpha vector, symmetric beta,
called eta in Hoffman et al.). Variational families:

* **Batch VB** (Blei et al. 2003; seed 004 eqs. 4-6; Hoffman et al. 2010
  Algorithm 1). q(theta_d) = Dir(gamma_d), q(phi_k) = Dir(lambda_k),
  q(z_dn) = Cat(phi_dn). One iteration is an E-step over every document
  (:func:`harmonium._kernels.lda_vb.vb_estep`) and the M-step
  lambda_kw = beta + sum_d n_dw phi_dwk (eq. 5). As in Algorithm 1, each
  E-step starts gamma afresh; that lets documents change topics between
  iterations and reaches better optima on real data, but the ELBO is then
  not monotone. ``warm_start=True`` continues from the previous gamma: pure
  coordinate ascent, whose ELBO never decreases (tested).
* **Online VB** (Hoffman et al. 2010 Algorithm 2). For mini-batch t of size S
  from a corpus of D documents: E-step on the batch, then
  lambda <- (1 - rho_t) lambda + rho_t (beta + (D / S) sstats) with
  rho_t = (tau0 + t)^(-kappa), t = 1, 2, ... (Hoffman et al. count t from 0
  and need tau0 > 0; counting from 1 keeps rho_t <= 1 for every tau0 >= 0,
  as scikit-learn does).
* **CVB0** (Asuncion et al. 2009 eq. 7; the zeroth-order form of the
  collapsed VB of Teh et al. 2007). theta and phi are integrated out; each
  token keeps gamma_ij and the expected counts n_dk, n_wk, n_k are updated in
  place (:func:`harmonium._kernels.lda_vb.cvb0_sweep`). ``LDA(cvb0_dtype="uint8" | "uint16")``
  stores gamma in fixed point instead (:class:`CVB0QState`, :func:`build_cvb0q_kernel`): each
  entry's q_j sums exactly to S, the counts are integers in units of 1/S that always equal the
  sums of the stored values, and n_dk is rebuilt per document, never stored (issue 21: a quarter
  of gamma's memory with uint8).

Seeded topics (``model.seeds``): the prior of phi_k is Dir(beta + delta_k.)
with delta non-zero on seed words only (:mod:`harmonium.models.directed.lda`).
Batch VB's M-step is lambda = beta + delta + sstats, online VB's target
beta + delta + D/S sstats, and the ELBO's topic terms use beta + delta
(Hoffman et al. 2010 eq. 3 with an asymmetric eta). CVB0's expected counts
n_wk, n_k carry delta and Delta_k from initialisation on (the state holds
prior plus data: its sweep then uses (n_wk + delta + beta) / (n_k + Delta + V beta)
with the kernel unchanged, and lambda = n_wk + beta).

Each algorithm follows DESIGN.md: a state (NamedTuple), ``init`` and
``build_kernel``; ``kernel(rng, state, data, model) -> (state, info)`` where
``data`` is a :class:`VBData` (the CSR arrays of a corpus or a mini-batch).
Threads split the documents into contiguous blocks (:mod:`harmonium.parallel.threads`);
each block accumulates its own statistics and the blocks are summed in a
fixed order, so the result depends on the number of threads only.
"""

from __future__ import annotations

import mmap
from typing import NamedTuple

import numpy as np

from harmonium._kernels import lda_vb as kv
from harmonium.models.directed.lda import LDAModel, SeedPrior, add_seed_counts
from harmonium.models.directed.lda_hyper import dirichlet_from_mean_log, symmetric_dirichlet_from_log_sum
from harmonium.parallel.threads import partition_documents, run_blocks


class VBData(NamedTuple):
    """CSR counts of a corpus (or a mini-batch): int32/int64 ``indptr``, ``indices`` and int32 ``data``."""

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    n_words: int

    @property
    def n_docs(self) -> int:
        return self.indptr.shape[0] - 1

    @classmethod
    def from_corpus(cls, corpus) -> VBData:
        m = corpus.counts
        return cls(m.indptr, m.indices, m.data, corpus.n_words)


class BatchVBState(NamedTuple):
    lam_wk: np.ndarray  # (V, K) float64, lambda^T
    gamma: np.ndarray  # (D, K) float64


class OnlineVBState(NamedTuple):
    """lambda = c * u_wk + b, so that a step touches only the batch's rows (see build_online_kernel)."""

    u_wk: np.ndarray  # (V, K) float64
    c: float
    b: float
    usum: np.ndarray  # (K,) column sums of u_wk
    t: int  # mini-batches seen so far; the next step uses rho_{t+1}


class CVB0State(NamedTuple):
    gamma: np.ndarray  # (nnz, K) float32, responsibilities of each (document, word) entry
    n_dk: np.ndarray  # (D, K) float32 expected counts (float64 n_wk, n_k: they sum over many more entries)
    n_wk: np.ndarray  # (V, K) float64
    n_k: np.ndarray  # (K,) float64


class CVB0QState(NamedTuple):
    """CVB0 with quantised responsibilities (:func:`cvb0q_init`): gamma_jk = q_jk / S, S = the dtype's maximum.

    The counts are int64 in units of 1 / S and equal sum_j c_j q_j exactly (plus S delta for seeds);
    n_dk is not stored (rebuilt per document from q).
    """

    q: np.ndarray  # (nnz, K) uint8 or uint16, each row sums to S
    n_wk: np.ndarray  # (V, K) int64, units of 1 / S
    n_k: np.ndarray  # (K,) int64, units of 1 / S


class VBInfo(NamedTuple):
    mean_doc_iter: float  # inner E-step iterations per document (VB); 0 for CVB0
    change: float  # CVB0: mean |gamma change| per entry; VB: mean |lambda change| / mean lambda
    rho: float  # online step size (1 for batch algorithms)


# -- shared pieces ---------------------------------------------------------------------------
def _blocks(data: VBData, n_threads: int) -> list[tuple[int, int]]:
    return partition_documents(np.asarray(data.indptr, dtype=np.int64), n_threads)


def exp_elog_beta(lam_wk: np.ndarray) -> np.ndarray:
    """exp(E_q[log phi_kw]) word-major, from lambda (V, K)."""
    out = np.empty_like(lam_wk)
    kv.exp_elog_beta_wordmajor(lam_wk, out)
    return out


def elog_beta(lam_wk: np.ndarray) -> np.ndarray:
    """E_q[log phi_kw] = psi(lambda_kw) - psi(sum_w lambda_kw), word-major (no exp/log round trip)."""
    from scipy.special import digamma

    return digamma(lam_wk) - digamma(lam_wk.sum(axis=0))


def initial_gamma(data: VBData, alpha: np.ndarray) -> np.ndarray:
    """gamma_dk = alpha_k + N_d / K, the usual neutral start of the E-step."""
    lengths = np.add.reduceat(data.data, data.indptr[:-1]) if data.data.size else np.zeros(data.n_docs)
    lengths = np.where(np.diff(data.indptr) > 0, lengths, 0).astype(np.float64)
    return alpha[None, :] + lengths[:, None] / alpha.shape[0]


def e_step(data: VBData, eb_wk: np.ndarray, alpha: np.ndarray, gamma: np.ndarray, *, max_iter: int, tol: float,
           collect: bool, n_threads: int = 1):
    """Run the E-step on every document of ``data``; ``gamma`` (D, K) is updated in place.

    Returns ``(sstats_wk or None, total inner iterations)``.
    """
    V, K = eb_wk.shape
    blocks = _blocks(data, n_threads)
    stats = [np.zeros((V, K)) if collect else np.zeros((1, K)) for _ in blocks]

    def work(lo, hi, out):
        return kv.vb_estep(data.indptr, data.indices, data.data, lo, hi, 0, eb_wk, alpha, gamma, out,
                           max_iter, tol, collect)

    iters = run_blocks(work, [(lo, hi, stats[i]) for i, (lo, hi) in enumerate(blocks)])
    if not collect:
        return None, int(sum(iters))
    total = stats[0]
    for s in stats[1:]:
        total += s
    return total, int(sum(iters))


def elbo_global(lam_wk: np.ndarray, beta: float, seeds: SeedPrior | None = None) -> float:
    """Topic terms of the ELBO: sum_k E_q[log p(phi_k | beta + delta_k.)] + H[q(phi_k)] (Hoffman et al. 2010 eq. 3)."""
    from scipy.special import gammaln

    V, K = lam_wk.shape
    elog = elog_beta(lam_wk)
    total = float(((beta - lam_wk) * elog).sum() + gammaln(lam_wk).sum() - gammaln(lam_wk.sum(axis=0)).sum())
    total += K * (float(gammaln(V * beta)) - V * float(gammaln(beta)))
    if seeds is not None:  # beta -> beta + delta on the seeded entries, V beta -> V beta + Delta_k
        bd = beta + seeds.counts
        total += float((seeds.counts * elog[seeds.words, seeds.topics]).sum()
                       - (gammaln(bd) - gammaln(beta)).sum())
        total += float((gammaln(V * beta + seeds.topic_totals(K)) - gammaln(V * beta)).sum())
    return total


def elbo_documents(data: VBData, lam_wk: np.ndarray, alpha: np.ndarray, gamma: np.ndarray,
                   n_threads: int = 1) -> float:
    """Document terms of the ELBO with phi optimal given (gamma, lambda)."""
    elog = elog_beta(lam_wk)
    parts = run_blocks(
        lambda lo, hi: kv.vb_doc_bound(data.indptr, data.indices, data.data, lo, hi, 0, elog, alpha, gamma),
        _blocks(data, n_threads),
    )
    return float(sum(parts))


def elbo(data: VBData, lam_wk: np.ndarray, gamma: np.ndarray, model: LDAModel, n_threads: int = 1) -> float:
    """The ELBO L(gamma, lambda) <= log p(w | alpha, beta) of batch VB (phi at its optimum)."""
    return elbo_documents(data, lam_wk, model.alpha, gamma, n_threads) + elbo_global(lam_wk, model.beta, model.seeds)


def mean_log_theta(gamma: np.ndarray) -> np.ndarray:
    """(1/D) sum_d E_q[log theta_dk] from gamma (D, K)."""
    from scipy.special import digamma

    return (digamma(gamma) - digamma(gamma.sum(axis=1, keepdims=True))).mean(axis=0)


def update_hyperparameters(lam_wk: np.ndarray, gamma: np.ndarray, model: LDAModel) -> LDAModel:
    """Empirical Bayes for (alpha, beta): maximise the ELBO's alpha and beta terms given q."""
    from harmonium.models.directed.lda import make_model

    V, K = lam_wk.shape
    alpha = dirichlet_from_mean_log(mean_log_theta(gamma), model.alpha) if gamma.shape[0] else model.alpha
    log_sum = float(elog_beta(lam_wk).sum())
    beta = symmetric_dirichlet_from_log_sum(log_sum, K, V, model.beta)
    return make_model(K, V, alpha, beta, model.seeds)


def random_lambda(rng: np.random.Generator, n_words: int, n_topics: int) -> np.ndarray:
    """lambda ~ Gamma(100, 1/100) entrywise (Hoffman et al. 2010's initialisation), word-major."""
    return rng.gamma(100.0, 0.01, size=(n_words, n_topics))


# -- batch VB --------------------------------------------------------------------------------
def _with_seeds(lam_wk: np.ndarray, model: LDAModel) -> np.ndarray:
    """The initial lambda plus delta (in place): seeded topics start where their prior puts them, so the
    first E-step already sees the seeds (random lambda alone would let it settle topics without them)."""
    if model.seeds is not None:
        lam_wk[model.seeds.words, model.seeds.topics] += model.seeds.counts
    return lam_wk


def batch_init(rng: np.random.Generator, data: VBData, model: LDAModel) -> BatchVBState:
    lam = _with_seeds(random_lambda(rng, data.n_words, model.n_topics), model)
    return BatchVBState(lam, initial_gamma(data, model.alpha))


def build_batch_kernel(*, max_doc_iter: int = 100, doc_tol: float = 1e-3, n_threads: int = 1,
                       warm_start: bool = False):
    """One batch VB iteration: E-step on all documents, then lambda = beta + delta + sstats.

    gamma restarts from alpha + N_d / K each iteration unless ``warm_start``
    (see the module docstring). ``state.gamma`` is overwritten in place.
    """

    def kernel(rng, state: BatchVBState, data: VBData, model: LDAModel):
        eb = exp_elog_beta(state.lam_wk)
        if not warm_start:
            state.gamma[...] = initial_gamma(data, model.alpha)
        sstats, iters = e_step(data, eb, model.alpha, state.gamma, max_iter=max_doc_iter, tol=doc_tol,
                               collect=True, n_threads=n_threads)
        lam = sstats
        lam += model.beta
        if model.seeds is not None:
            lam[model.seeds.words, model.seeds.topics] += model.seeds.counts
        change = float(np.abs(lam - state.lam_wk).mean() / state.lam_wk.mean())
        return BatchVBState(lam, state.gamma), VBInfo(iters / max(data.n_docs, 1), change, 1.0)

    return kernel


# -- online VB -------------------------------------------------------------------------------
def online_init(rng: np.random.Generator, n_words: int, model: LDAModel) -> OnlineVBState:
    u = _with_seeds(random_lambda(rng, n_words, model.n_topics), model)
    return OnlineVBState(u, 1.0, 0.0, u.sum(axis=0), 0)


def online_state_from_lambda(lam_wk: np.ndarray, t: int) -> OnlineVBState:
    """The online state whose lambda is ``lam_wk`` (taken over, not copied), after ``t`` mini-batches."""
    return OnlineVBState(lam_wk, 1.0, 0.0, lam_wk.sum(axis=0), int(t))


def online_lambda(state: OnlineVBState, *, in_place: bool = False) -> np.ndarray:
    """lambda = c u + b as a (V, K) array; ``in_place`` writes it into ``state.u_wk`` (the state is then spent)."""
    if in_place:
        u = state.u_wk
        u *= state.c
        u += state.b
        return u
    return state.c * state.u_wk + state.b


def online_fold(state: OnlineVBState) -> OnlineVBState:
    """The same state with c = 1 and b = 0, so that ``u_wk`` is lambda itself (in place on ``u_wk``)."""
    u = online_lambda(state, in_place=True)
    return OnlineVBState(u, 1.0, 0.0, u.sum(axis=0), state.t)


def online_shift_beta(state: OnlineVBState, delta: float) -> OnlineVBState:
    """Add ``delta`` to every lambda_kw (the M-step's response to a new beta)."""
    return state._replace(b=state.b + delta)


def step_size(t: int, tau0: float, kappa: float) -> float:
    """rho_t = (tau0 + t)^(-kappa) for the t-th mini-batch, t >= 1 (Hoffman et al. 2010 eq. 7)."""
    return float((tau0 + t) ** (-kappa))


def local_batch(data: VBData) -> tuple[np.ndarray, VBData]:
    """The batch's distinct word ids, and the batch with its word ids renumbered 0..n_ids-1."""
    ids, local = np.unique(data.indices, return_inverse=True)
    return ids, VBData(data.indptr, local.astype(np.int32), data.data, ids.shape[0])


def build_online_kernel(*, total_docs: int, tau0: float = 10.0, kappa: float = 0.7, max_doc_iter: int = 100,
                        doc_tol: float = 1e-3, n_threads: int = 1, return_gamma: bool = False):
    """One online VB step on a mini-batch ``data`` of a corpus of ``total_docs`` documents.

    lambda is kept as c u + b (scalars c, b; ``u`` updated in place) so that
    the step lambda <- (1 - rho) lambda + rho (beta + D/S sstats) touches only
    the rows of the words in the batch: c <- (1 - rho) c,
    b <- (1 - rho) b + rho beta, u[batch words] += rho D/S sstats / c. A step
    costs O(batch entries x K) instead of O(V K), and no (V, K) temporary is
    made. The column sums sum_w lambda_kw (for E log phi) are kept alongside.
    With ``return_gamma`` the info is ``(VBInfo, gamma)``.
    """

    def kernel(rng, state: OnlineVBState, data: VBData, model: LDAModel):
        from scipy.special import digamma

        ids, local = local_batch(data)
        V = state.u_wk.shape[0]
        colsum = state.c * state.usum + V * state.b
        lam_rows = state.c * state.u_wk[ids] + state.b
        eb = np.exp(digamma(lam_rows) - digamma(colsum))
        gamma = initial_gamma(local, model.alpha)
        sstats, iters = e_step(local, eb, model.alpha, gamma, max_iter=max_doc_iter, tol=doc_tol, collect=True,
                               n_threads=n_threads)
        t = state.t + 1
        rho = step_size(t, tau0, kappa)
        scale = total_docs / max(data.n_docs, 1)
        u, c, usum = state.u_wk, (1.0 - rho) * state.c, state.usum
        if c < 1e-100:  # fold the scale into u (rho = 1 makes c zero: the old lambda is forgotten)
            u *= c
            c = 1.0
            usum = u.sum(axis=0)
        sstats *= rho * scale / c
        u[ids] += sstats
        usum = usum + sstats.sum(axis=0)
        if t % 1024 == 0:  # re-add the column sums exactly now and then
            usum = u.sum(axis=0)
        b = (1.0 - rho) * state.b + rho * model.beta
        if model.seeds is not None:  # the target's delta, on the seeded entries only
            sd = model.seeds
            u[sd.words, sd.topics] += rho * sd.counts / c
            usum = usum + rho * sd.topic_totals(usum.shape[0]) / c
        change = float(np.abs(c * u[ids] + b - lam_rows).mean() / lam_rows.mean())
        info = VBInfo(iters / max(data.n_docs, 1), change, rho)
        new_state = OnlineVBState(u, c, b, usum, t)
        return new_state, ((info, gamma) if return_gamma else info)

    return kernel


def batch_bound(data: VBData, state: OnlineVBState, gamma: np.ndarray, alpha: np.ndarray) -> float:
    """Document terms of the ELBO for one mini-batch (rows of the batch's words only): the online monitor."""
    from scipy.special import digamma

    ids, local = local_batch(data)
    V = state.u_wk.shape[0]
    elog = digamma(state.c * state.u_wk[ids] + state.b) - digamma(state.c * state.usum + V * state.b)
    return float(kv.vb_doc_bound(local.indptr, local.indices, local.data, 0, local.n_docs, 0, elog, alpha, gamma))


# -- CVB0 ------------------------------------------------------------------------------------
def _sweep_blocks(sweep, state, data: VBData, n_threads: int) -> float:
    """One CVB0 sweep ``sweep(lo, hi, n_wk, n_k) -> mean change`` over the documents' thread blocks.

    One block sweeps the state's own counts. Several run on private copies of (n_wk, n_k) and
    their deltas are summed (approximate, as AD-LDA is for Gibbs: Newman et al. 2009); the
    change is the blocks' mean weighted by their entries.
    """
    blocks = _blocks(data, n_threads)
    if len(blocks) == 1:
        return sweep(0, data.n_docs, state.n_wk, state.n_k)
    copies = [(state.n_wk.copy(), state.n_k.copy()) for _ in blocks]
    changes = run_blocks(sweep, [(lo, hi, *copies[i]) for i, (lo, hi) in enumerate(blocks)])
    base_wk, base_k = state.n_wk.copy(), state.n_k.copy()
    for wk, k in copies:
        state.n_wk[...] += wk - base_wk
        state.n_k[...] += k - base_k
    nnz = [int(data.indptr[hi] - data.indptr[lo]) for lo, hi in blocks]
    return sum(c * n for c, n in zip(changes, nnz, strict=True)) / max(sum(nnz), 1)


def cvb0_state_from_gamma(data: VBData, gamma: np.ndarray, n_topics: int,
                          seeds: SeedPrior | None = None) -> CVB0State:
    """Expected counts n_dk, n_wk, n_k of entry responsibilities ``gamma`` (nnz, K), plus the seed
    pseudo-counts delta in n_wk and Delta in n_k when ``seeds`` are given (see the module docstring)."""
    n_dk = np.zeros((data.n_docs, n_topics), dtype=np.float32)  # D x K: the largest table after gamma
    n_wk = np.zeros((data.n_words, n_topics))
    n_k = np.zeros(n_topics)
    kv.cvb0_counts(data.indptr, data.indices, data.data, gamma, n_dk, n_wk, n_k)
    add_seed_counts(n_wk, n_k, seeds)
    return CVB0State(gamma, n_dk, n_wk, n_k)


def cvb0_init(rng: np.random.Generator, data: VBData, model: LDAModel) -> CVB0State:
    """Random responsibilities (normalised uniform draws, float32) and their expected counts."""
    g = rng.random((data.indices.shape[0], model.n_topics), dtype=np.float32) + np.float32(1e-3)
    g /= g.sum(axis=1, keepdims=True)
    return cvb0_state_from_gamma(data, g, model.n_topics, model.seeds)


def build_cvb0_kernel(*, n_threads: int = 1):
    """One CVB0 sweep. With several threads each block updates a private copy of n_wk and n_k
    (approximate, as AD-LDA is for Gibbs: Newman et al. 2009) and the deltas are summed."""

    def kernel(rng, state: CVB0State, data: VBData, model: LDAModel):
        V = data.n_words
        args = (data.indptr, data.indices, data.data)
        change = _sweep_blocks(
            lambda lo, hi, wk, k: kv.cvb0_sweep(*args, lo, hi, state.gamma, state.n_dk, wk, k, model.alpha,
                                                model.beta, V * model.beta), state, data, n_threads)
        return state, VBInfo(0.0, float(change), 1.0)

    return kernel


def cvb0_theta_phi(state: CVB0State, model: LDAModel) -> tuple[np.ndarray, np.ndarray]:
    """Point estimates theta (D, K) float32 and phi (K, V) from the expected counts (posterior-mean form)."""
    theta = state.n_dk + model.alpha.astype(np.float32)
    theta /= theta.sum(axis=1, keepdims=True, dtype=np.float64).astype(np.float32)
    phi = (state.n_wk + model.beta) / (state.n_k + state.n_wk.shape[0] * model.beta)
    return theta, np.ascontiguousarray(phi.T)


def cvb0_log_likelihood(data: VBData, state: CVB0State, model: LDAModel, n_threads: int = 1) -> float:
    """CVB0's monitor, sum_{d,w} n_dw log sum_k theta_dk phi_kw at the point estimates of
    :func:`cvb0_theta_phi`, with theta's rows made on the fly (no D x K array)."""
    phi_wk = (state.n_wk + model.beta) / (state.n_k + state.n_wk.shape[0] * model.beta)
    parts = run_blocks(
        lambda lo, hi: kv.cvb0_log_likelihood(data.indptr, data.indices, data.data, lo, hi, state.n_dk,
                                              model.alpha, phi_wk),
        _blocks(data, n_threads),
    )
    return float(sum(parts))


def cvb0_theta_in_place(state: CVB0State, model: LDAModel) -> np.ndarray:
    """theta (D, K) float32 of :func:`cvb0_theta_phi`, written over ``state.n_dk`` (the state is spent)."""
    theta = state.n_dk
    theta += model.alpha.astype(theta.dtype)
    theta /= theta.sum(axis=1, keepdims=True, dtype=np.float64).astype(theta.dtype)
    return theta


def point_log_likelihood(data: VBData, theta: np.ndarray, phi_wk: np.ndarray, n_threads: int = 1) -> float:
    """sum_{d,w} n_dw log sum_k theta_dk phi_kw (training fit at point estimates; CVB0's monitor)."""
    parts = run_blocks(
        lambda lo, hi: kv.point_log_likelihood(data.indptr, data.indices, data.data, lo, hi, theta, phi_wk),
        _blocks(data, n_threads),
    )
    return float(sum(parts))


# -- CVB0 with quantised responsibilities (issue 21) -------------------------------------------
CVB0_GAMMA_DTYPES = ("float32", "uint16", "uint8")
_INIT_CHUNK = 1 << 15  # entries drawn at a time by cvb0q_init (no nnz x K float temporary)


def quant_scale(dtype) -> int:
    """S, the fixed-point scale of quantised responsibilities: the largest value of the unsigned dtype."""
    return int(np.iinfo(dtype).max)


def anonymous_array(shape: tuple[int, ...], dtype) -> np.ndarray:
    """A zeroed array in its own anonymous memory map, so that :func:`release_entries` can hand its
    pages back to the system while it is still referenced (the largest CVB0 array)."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape)) * dtype.itemsize
    if n == 0:
        return np.zeros(shape, dtype)
    # private: MADV_DONTNEED then frees the pages (a shared map would only unmap them, keeping the memory)
    buf = mmap.mmap(-1, n, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    return np.frombuffer(buf, dtype=dtype).reshape(shape)


def release_entries(arr: np.ndarray, stop_row: int) -> None:
    """Give back the whole pages of rows 0..stop_row-1 of an :func:`anonymous_array` (their contents
    become zeros); a no-op for other arrays."""
    base = arr.base
    while base is not None and not isinstance(base, mmap.mmap):
        base = base.obj if isinstance(base, memoryview) else getattr(base, "base", None)
    if base is None or not hasattr(mmap, "MADV_DONTNEED"):
        return
    nbytes = (stop_row * arr.strides[0]) // mmap.PAGESIZE * mmap.PAGESIZE
    if nbytes > 0:
        base.madvise(mmap.MADV_DONTNEED, 0, nbytes)


def quantise_rows(p: np.ndarray, scale: int, dtype) -> np.ndarray:
    """Cumulative rounding of the rows of p (non-negative, any positive sums) to integers summing to
    ``scale``: q_k = round(S P_k) - round(S P_{k-1}), P the running sum of the normalised row, the last
    topic taking the rest (as :func:`harmonium._kernels.lda_vb.cvb0q_sweep` rounds)."""
    cum = np.cumsum(p * (scale / p.sum(axis=1, keepdims=True)), axis=1)
    cur = np.floor(cum + 0.5).astype(np.int64)
    cur[:, -1] = scale
    return np.diff(cur, axis=1, prepend=0).astype(dtype)


def cvb0q_state_from_q(data: VBData, q: np.ndarray, n_topics: int, seeds: SeedPrior | None = None) -> CVB0QState:
    """Integer counts n_wk, n_k (units of 1 / S) of the stored responsibilities ``q``, plus S delta for seeds."""
    n_wk = np.zeros((data.n_words, n_topics), dtype=np.int64)
    n_k = np.zeros(n_topics, dtype=np.int64)
    kv.cvb0q_counts(data.indptr, data.indices, data.data, q, n_wk, n_k)
    if seeds is not None:
        scale = quant_scale(q.dtype)
        add_seed_counts(n_wk, n_k, seeds._replace(counts=seeds.counts.astype(np.int64) * scale))
    return CVB0QState(q, n_wk, n_k)


def cvb0q_init(rng: np.random.Generator, data: VBData, model: LDAModel, dtype="uint8") -> CVB0QState:
    """Random responsibilities as :func:`cvb0_init` draws them (uniform + 1e-3, normalised), stored in
    fixed point by :func:`quantise_rows`, drawn a chunk of entries at a time."""
    dtype = np.dtype(dtype)
    scale = quant_scale(dtype)
    nnz, K = data.indices.shape[0], model.n_topics
    q = anonymous_array((nnz, K), dtype)
    for lo in range(0, nnz, _INIT_CHUNK):
        hi = min(lo + _INIT_CHUNK, nnz)
        g = rng.random((hi - lo, K), dtype=np.float32) + np.float32(1e-3)
        q[lo:hi] = quantise_rows(g.astype(np.float64), scale, dtype)
    return cvb0q_state_from_q(data, q, K, model.seeds)


def build_cvb0q_kernel(*, n_threads: int = 1, dither: bool = False):
    """One CVB0 sweep over quantised responsibilities (:func:`harmonium._kernels.lda_vb.cvb0q_sweep`).
    With several threads each block updates a private copy of n_wk and n_k and the integer deltas
    are summed (approximate, as for :func:`build_cvb0_kernel`; the counts stay the sums of q).

    ``dither``: entry j rounds from the offset frac(salt + j G) (G the golden ratio's fraction, salt
    drawn from ``rng`` each sweep) instead of 1/2. With the fixed offset a change smaller than half a
    step 1/S is rounded away at every sweep; measured on Debian (K = 100, 50 iterations, 2 seeds),
    uint8 reached held-out perplexity 957-964 with the fixed offset and 945-958 with dithering, float32
    CVB0 948-953 (benchmarks/lda/memory.md)."""

    def kernel(rng, state: CVB0QState, data: VBData, model: LDAModel):
        V = data.n_words
        scale = quant_scale(state.q.dtype)
        salt = float(rng.random()) if dither else -1.0
        args = (data.indptr, data.indices, data.data)
        change = _sweep_blocks(
            lambda lo, hi, wk, k: kv.cvb0q_sweep(*args, lo, hi, state.q, wk, k, model.alpha, model.beta,
                                                 V * model.beta, scale, salt), state, data, n_threads)
        return state, VBInfo(0.0, float(change), 1.0)

    return kernel


def cvb0q_lambda(state: CVB0QState, model: LDAModel) -> np.ndarray:
    """lambda (V, K) = n_wk + beta in counts (n_wk carries the seed pseudo-counts)."""
    return state.n_wk / quant_scale(state.q.dtype) + model.beta


def cvb0q_phi_wk(state: CVB0QState, model: LDAModel) -> np.ndarray:
    """phi word-major (V, K): (n_wk + beta) / (n_k + V beta)."""
    scale = quant_scale(state.q.dtype)
    return (state.n_wk / scale + model.beta) / (state.n_k / scale + state.n_wk.shape[0] * model.beta)


def cvb0q_doc_counts(data: VBData, state: CVB0QState) -> np.ndarray:
    """n_dk (D, K) float32 rebuilt from q (only for hyperparameter optimisation: it is D x K)."""
    out = np.empty((data.n_docs, state.n_k.shape[0]), dtype=np.float32)
    kv.cvb0q_doc_topic(data.indptr, data.indices, data.data, 0, data.n_docs, state.q,
                       quant_scale(state.q.dtype), np.zeros(state.n_k.shape[0]), out, False)
    return out


def cvb0q_log_likelihood(data: VBData, state: CVB0QState, model: LDAModel, n_threads: int = 1) -> float:
    """:func:`cvb0_log_likelihood` of the quantised state (n_dk rebuilt per document)."""
    phi_wk = cvb0q_phi_wk(state, model)
    scale = quant_scale(state.q.dtype)
    parts = run_blocks(
        lambda lo, hi: kv.cvb0q_log_likelihood(data.indptr, data.indices, data.data, lo, hi, state.q, scale,
                                               model.alpha, phi_wk),
        _blocks(data, n_threads),
    )
    return float(sum(parts))


_THETA_BLOCK = 1 << 14  # documents per block of cvb0q_theta_release


def cvb0q_theta_release(data: VBData, state: CVB0QState, model: LDAModel) -> np.ndarray:
    """theta (D, K) float32, (n_dk + alpha) / (N_d + sum alpha), written a block of documents at a time;
    the pages of q behind each block are given back (:func:`release_entries`), so that theta and q are
    never both whole in memory. The state is spent: q reads as zeros afterwards."""
    scale = quant_scale(state.q.dtype)
    theta = np.empty((data.n_docs, model.n_topics), dtype=np.float32)
    for lo in range(0, data.n_docs, _THETA_BLOCK):
        hi = min(lo + _THETA_BLOCK, data.n_docs)
        kv.cvb0q_doc_topic(data.indptr, data.indices, data.data, lo, hi, state.q, scale, model.alpha, theta, True)
        release_entries(state.q, int(data.indptr[hi]))
    return theta
