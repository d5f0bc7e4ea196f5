"""Direct-assignment Gibbs sampling for the HDP topic model (Teh et al. 2006 §5.3; seed 002 §4).

The state is (z, tau, alpha, gamma): every token's topic, the global topic
weights tau = (tau_1..tau_K, tau_u) and the two concentrations. One
``kernel`` call is one iteration:

1. a systematic sweep z_i | z_-i, tau (seed 002 eq. 1-2), creating a topic from
   the tau_u mass and dropping emptied topics (:func:`harmonium._kernels.hdp.da_sweep`);
2. table counts m_dk ~ A[n_dk, alpha tau_k] (seed 002 §4);
3. if requested, alpha | m, n by the auxiliary variables of Teh et al. (2006,
   appendix A) and gamma | K, m by Escobar & West (1995, §6), tau integrated out;
4. tau ~ D[m_.1, ..., m_.K, gamma] (seed 002 eq. 3 with one level).
5. if requested, the topic-word prior beta | z, w by slice sampling.

Steps 2-5 are the engine package's shared hyperparameter updates,
:mod:`harmonium.inference.mcmc.isbn.hyper`.

Between 1 and 2, optionally, split-merge moves (:func:`split_merge`): Metropolis-Hastings
proposals that split one topic in two or merge two (Jain & Neal 2004), which the one-token
moves of step 1 do only through long chains of improbable states. Without them a chain started
with too many topics keeps most of them for thousands of iterations
(benchmarks/isbn/README.md, "HDP on planted topics").

Steps 2-4 are a data augmentation with m: each leaves p(z, tau, alpha, gamma | w)
invariant, which tests/statistical/test_hdp_exact.py checks exactly on a
corpus small enough to enumerate every clustering of its tokens.

State / init / kernel as in DESIGN.md. The count tables have spare columns
(the capacity); they grow when a sweep needs more, which does not change the
chain (same seed, same draws).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from harmonium._kernels import hdp as khdp
from harmonium._kernels import hdp_split_merge as ksm
from harmonium.corpus.corpus import TokenStream
from harmonium.errors import InvalidParameterError
from harmonium.inference.mcmc.isbn import hyper
from harmonium.models.directed.hdp import HDPModel
from harmonium.models.directed.lda import doc_count_dtype


class DirectAssignmentState(NamedTuple):
    """Topic of every token, the counts it implies (first ``n_topics`` columns used) and the global weights."""

    z: np.ndarray  # (N,) int32, values < n_topics
    n_dk: np.ndarray  # (D, capacity)
    n_wk: np.ndarray  # (V, capacity) int32
    n_k: np.ndarray  # (capacity,) int32
    tau: np.ndarray  # (capacity + 1,) float64; tau[n_topics] = tau_u
    n_topics: int
    alpha: float
    gamma: float
    beta: float | None = None  # the topic-word prior when it is resampled; None: ``model.beta``

    @property
    def capacity(self) -> int:
        return self.n_k.shape[0]


class DirectAssignmentInfo(NamedTuple):
    """Per-iteration diagnostics. ``log_likelihood`` = log p(w | z, beta); ``log_joint`` adds
    log p(z | tau, alpha) (both NaN when not computed)."""

    log_likelihood: float
    log_joint: float
    n_topics: int
    n_tables: int
    n_changed: int
    n_new: int
    n_split: int = 0
    n_merge: int = 0


def _alloc(tokens: TokenStream, model: HDPModel, capacity: int):
    n_docs = tokens.doc_ptr.shape[0] - 1
    n_dk = np.zeros((n_docs, capacity), dtype=doc_count_dtype(tokens.doc_ptr))
    n_wk = np.zeros((model.n_words, capacity), dtype=np.int32)
    n_k = np.zeros(capacity, dtype=np.int32)
    tau = np.zeros(capacity + 1, dtype=np.float64)
    return n_dk, n_wk, n_k, tau


def state_from_assignments(tokens: TokenStream, model: HDPModel, z, tau, alpha: float, gamma: float,
                           *, capacity: int | None = None) -> DirectAssignmentState:
    """The state for assignments ``z`` (labels 0..K-1, all used) and weights ``tau`` (K + 1 entries)."""
    z = np.ascontiguousarray(z, dtype=np.int32)
    tau = np.asarray(tau, dtype=np.float64)
    K = tau.shape[0] - 1
    cap = max(2 * K, 8) if capacity is None else max(int(capacity), K + 1)
    n_dk, n_wk, n_k, tau_full = _alloc(tokens, model, cap)
    khdp.count_assignments(tokens.doc_ptr, tokens.words, z, n_dk, n_wk, n_k)
    tau_full[: K + 1] = tau
    return DirectAssignmentState(z, n_dk, n_wk, n_k, tau_full, K, float(alpha), float(gamma))


def init(rng: np.random.Generator, tokens: TokenStream, model: HDPModel, *, n_topics: int = 1,
         alpha: float = 1.0, gamma: float = 1.0) -> DirectAssignmentState:
    """Topics uniformly at random among ``n_topics``; empty ones dropped; tau drawn given the tables."""
    N = tokens.words.shape[0]
    z = rng.integers(0, n_topics, size=N, dtype=np.int32)
    used = np.unique(z)
    z = np.searchsorted(used, z).astype(np.int32)
    K = used.shape[0]
    state = state_from_assignments(tokens, model, z, np.full(K + 1, 1.0 / (K + 1)), alpha, gamma)
    m_k = np.zeros(state.capacity, dtype=np.int64)
    hyper.dense_tables(rng, state.n_dk, K, state.alpha, state.tau, m_k)
    hyper.draw_tau(rng, m_k[:K], state.gamma, state.tau)
    return state


def conditional(state: DirectAssignmentState, tokens: TokenStream, model: HDPModel, i: int) -> np.ndarray:
    """Normalised p(z_i = . | z_-i, tau) over the K used topics and a new one (last entry); state unchanged.

    If token i is alone in its topic, that topic is empty without it: its
    weight moves to the new-topic entry, as in the sweep.
    """
    d = int(np.searchsorted(tokens.doc_ptr, i, side="right") - 1)
    w = int(tokens.words[i])
    K = state.n_topics
    n_dk = state.n_dk.copy()
    n_wk = state.n_wk.copy()
    n_k = state.n_k.copy()
    tau = state.tau.copy()
    khdp.remove_token(d, w, int(state.z[i]), n_dk, n_wk, n_k, tau, K)
    p = np.empty(K + 1)
    beta = current_beta(state, model)
    khdp.da_conditional(p, d, w, n_dk, n_wk, n_k, K, tau, state.alpha, beta, beta * model.n_words)
    return p / p.sum()


def grow(state: DirectAssignmentState, capacity: int) -> DirectAssignmentState:
    """The same state with count tables of ``capacity`` columns."""
    n_docs, old = state.n_dk.shape
    n_dk = np.zeros((n_docs, capacity), dtype=state.n_dk.dtype)
    n_dk[:, :old] = state.n_dk
    n_wk = np.zeros((state.n_wk.shape[0], capacity), dtype=np.int32)
    n_wk[:, :old] = state.n_wk
    n_k = np.zeros(capacity, dtype=np.int32)
    n_k[:old] = state.n_k
    tau = np.zeros(capacity + 1)
    tau[: old + 1] = state.tau
    return state._replace(n_dk=n_dk, n_wk=n_wk, n_k=n_k, tau=tau)


class SweepOutcome(NamedTuple):
    """What the z part of an iteration (``build_kernel(...).sweep``) returns: the state (topics compacted to
    0..K-1), moves, and ``remap``: for every topic column before compaction its column after it, or -1 if it
    emptied (columns at or past the old K are topics the sweep created, in order of creation)."""

    state: DirectAssignmentState
    n_changed: int
    n_new: int
    n_split: int
    n_merge: int
    remap: np.ndarray


#: Exact z sweeps by name, all with the signature of :func:`harmonium._kernels.hdp.da_sweep`.
SAMPLERS = {"sparse": khdp.da_sweep_sparse, "plain": khdp.da_sweep}


class SplitMergeScratch(NamedTuple):
    """Work arrays of :func:`harmonium._kernels.hdp.split_merge` for one token stream (zero where it needs)."""

    doc_of: np.ndarray
    S: np.ndarray
    side: np.ndarray
    target: np.ndarray
    ndx: np.ndarray
    nwx: np.ndarray
    docs: np.ndarray
    wlist: np.ndarray
    dmark: np.ndarray
    wmark: np.ndarray
    order: np.ndarray
    bptr: np.ndarray

    @classmethod
    def for_tokens(cls, tokens: TokenStream, n_words: int) -> SplitMergeScratch:
        N = tokens.words.shape[0]
        D = tokens.doc_ptr.shape[0] - 1
        doc_of = np.repeat(np.arange(D, dtype=np.int64), np.diff(tokens.doc_ptr))
        return cls(doc_of, np.empty(N, np.int64), np.empty(N, np.int64), np.empty(N, np.int64),
                   np.zeros((D, 2), np.int64), np.zeros((n_words, 2), np.int64), np.empty(D, np.int64),
                   np.empty(n_words, np.int64), np.zeros(D, np.uint8), np.zeros(n_words, np.uint8),
                   np.empty(N, np.int64), np.empty(D + 1, np.int64))


def current_beta(state: DirectAssignmentState, model: HDPModel) -> float:
    """The topic-word prior of ``state``: ``state.beta`` when it is resampled, else ``model.beta``."""
    return model.beta if state.beta is None else float(state.beta)


#: The units a split-merge proposal moves: one token, one document's block of the two topics' tokens, the one
#: then the other in turn (proposal 0 by token, 1 by document, ...), or a document's block drawn from a mixture
#: of the two (as a whole with probability ``MIXED_RHO``, else token by token).
SPLIT_MERGE_UNITS = ("token", "document", "alternate", "mixed")

#: The probability that a block of a "mixed" split-merge scan moves as a whole
#: (:func:`harmonium._kernels.hdp.split_merge_mixed`).
MIXED_RHO = 0.5


def split_merge(rng: np.random.Generator, state: DirectAssignmentState, tokens: TokenStream, model: HDPModel,
                n_proposals: int, n_launch: int = 3, *, sequential: bool = False, unit: str = "token",
                scratch: SplitMergeScratch | None = None, growth: float = 1.5,
                broken: int = 0) -> tuple[DirectAssignmentState, int, int]:
    """``n_proposals`` Metropolis-Hastings split-merge moves on (z, tau) (Jain & Neal 2004); see
    :func:`harmonium._kernels.hdp.split_merge` for the target, the proposal and the acceptance ratio.

    ``unit``: "token" (:func:`~harmonium._kernels.hdp.split_merge`), "document" (each document's share of the
    two topics moves as one block, :func:`~harmonium._kernels.hdp.split_merge_blocks`; its merges need no
    token-by-token reverse split), "alternate" (token, document, token, ... within the call) or "mixed" (each
    document's block moves as a whole with probability ``MIXED_RHO``, else token by token, and q sums both
    paths, :func:`~harmonium._kernels.hdp.split_merge_mixed`; its merges need no block-aligned pair).
    ``sequential`` applies to the token proposals only.

    ``sequential``: draw the launch state by sequential allocation (Dahl 2003, 2005) before the
    ``n_launch`` restricted scans, rather than at random. Each move leaves p(z, tau | w, alpha, gamma)
    invariant (tests/statistical/test_hdp_exact.py). The tokens are grouped by topic once here (O(N)),
    so a proposal costs O(tokens of its topics). The state is grown before a proposal when no column is
    free, which does not change the chain. Returns (state, splits accepted, merges accepted). Corpora of
    fewer than 2 tokens are left unchanged.
    """
    if unit not in SPLIT_MERGE_UNITS:
        raise InvalidParameterError(f"The 'unit' argument of split_merge must be one of {SPLIT_MERGE_UNITS}. "
                                    f"Got {unit!r}.")
    if tokens.words.shape[0] < 2 or n_proposals <= 0:
        return state, 0, 0
    sc = SplitMergeScratch.for_tokens(tokens, model.n_words) if scratch is None else scratch
    K = state.n_topics
    n_split = n_merge = 0
    kstart = np.empty(state.capacity + 2, np.int64)
    ksm.build_topic_index(state.z, K, sc.order, kstart)
    for p in range(n_proposals):
        if K + 1 > state.capacity:
            state = grow(state, max(state.capacity + 1, int(state.capacity * growth)))
            kstart = np.concatenate([kstart[:K + 1], np.zeros(state.capacity + 1 - K, np.int64)])
        beta = current_beta(state, model)
        args = (rng, sc.doc_of, tokens.words, state.z, state.n_dk, state.n_wk, state.n_k, state.tau, K, state.alpha,
                beta, state.gamma, int(n_launch), sc.S, sc.side, sc.target, sc.ndx, sc.nwx, sc.docs, sc.wlist,
                sc.dmark, sc.wmark, sc.order, kstart)
        if unit == "document" or (unit == "alternate" and p % 2 == 1):
            K, outcome = ksm.split_merge_blocks(*args, sc.bptr, int(broken))
        elif unit == "mixed":
            K, outcome = ksm.split_merge_mixed(*args, sc.bptr, MIXED_RHO, int(broken))
        else:
            K, outcome = ksm.split_merge(*args, bool(sequential), int(broken))
        n_split += outcome == 1
        n_merge += outcome == 2
    return state._replace(n_topics=int(K)), n_split, n_merge


def build_kernel(*, sampler: str = "sparse", sample_alpha: bool = False, sample_gamma: bool = False,
                 concentration_iter: int = 1, compute_log_joint: bool = True, growth: float = 1.5,
                 split_merge_proposals: int = 0, split_merge_launch: int = 3,
                 split_merge_sequential: bool = False, split_merge_unit: str = "token", sample_beta: bool = False,
                 beta_prior: tuple[float, float] = (1.0, 1.0), sweep=None, tables=None):
    """A kernel doing one iteration (module docstring); ``kernel(rng, state, tokens, model) -> (state, info)``.

    Its two halves are ``kernel.sweep(rng, state, tokens, model) -> SweepOutcome`` (step 1 and the
    split-merge moves) and ``kernel.update(rng, state, tokens, model) -> (state, m..)`` (steps 2-5); the
    kernel is the one after the other (the engine adapter of :mod:`harmonium.inference.mcmc.isbn.engine`
    calls them as ``sweep`` and ``update_tau``).

    Parameters
    ----------
    sampler : {"sparse", "plain"}
        How z_i is drawn, both exact: SparseLDA-style buckets, O(k_w + k_d) a
        token (:func:`~harmonium._kernels.hdp.da_sparse_sweep`), or the plain O(K) sweep.
    sample_alpha, sample_gamma : bool
        Resample the concentrations from their conditionals (``concentration_iter`` rounds each).
    compute_log_joint : bool
        Compute ``info.log_likelihood`` and ``info.log_joint`` (O(DK + VK)); NaN otherwise.
    growth : float
        Factor by which the capacity grows when a sweep runs out of columns.
    split_merge_proposals, split_merge_launch : int
        After the sweep, this many split-merge proposals (:func:`split_merge`, exact
        Metropolis-Hastings moves on (z, tau)), each from a launch state improved by
        ``split_merge_launch`` restricted Gibbs scans. 0 proposals: the plain Gibbs sampler.
    split_merge_sequential : bool
        Draw each launch state by sequential allocation (Dahl 2003, 2005) rather than at random.
    split_merge_unit : {"token", "document", "alternate", "mixed"}
        What a proposal's restricted scans move (:func:`split_merge`): single tokens, each document's block of
        the two topics' tokens, the one then the other in turn, or each document's block as a whole or token by
        token at random (a mixture; q sums both paths).
    sample_beta, beta_prior : bool, (shape, rate)
        Resample the topic-word prior beta | z, w (:func:`~harmonium.inference.mcmc.isbn.hyper.resample_beta`) each
        iteration, under a Gamma(shape, rate) prior, starting from ``model.beta``; the value is kept in ``state.beta``.
    sweep, tables : callable, optional
        Replace :func:`harmonium._kernels.hdp.da_sweep` / ``sample_tables``
        (same signatures); tests pass deliberately broken kernels here.
    """
    if split_merge_unit not in SPLIT_MERGE_UNITS:
        raise InvalidParameterError(f"The 'split_merge_unit' argument of build_kernel must be one of "
                                    f"{SPLIT_MERGE_UNITS}. Got {split_merge_unit!r}.")
    sweep_fn = SAMPLERS[sampler] if sweep is None else sweep
    sparse = sweep is None and sampler == "sparse"
    tables_fn = hyper.dense_tables if tables is None else tables
    cache = {}

    def lengths_of(tokens: TokenStream) -> np.ndarray:
        key = id(tokens)
        if cache.get("key") != key:
            lengths = np.diff(tokens.doc_ptr).astype(np.float64)
            cache.update(key=key, lengths=lengths[lengths > 0])
        return cache["lengths"]

    def sweep(rng, state: DirectAssignmentState, tokens: TokenStream, model: HDPModel) -> SweepOutcome:
        """Step 1 (and the split-merge moves): the z sweep, compaction of the emptied topics, split-merge."""
        beta = current_beta(state, model)
        key = id(tokens)
        lengths_of(tokens)
        N = tokens.words.shape[0]
        K = state.n_topics
        i = 0
        n_changed = n_new = 0
        lists = None
        if sparse:
            if cache.get("wptr_key") != key:
                wptr = np.zeros(model.n_words + 1, dtype=np.int64)
                np.cumsum(np.bincount(tokens.words, minlength=model.n_words), out=wptr[1:])
                cache.update(wptr_key=key, wptr=wptr, wtop=np.empty(max(N, 1), dtype=np.int32),
                             wlen=np.zeros(model.n_words, dtype=np.int64))
            lists = (cache["wptr"], cache["wtop"], cache["wlen"])
            # built once per sweep and kept across capacity growth: the chain does not depend on the capacity
            khdp.build_word_lists(state.n_wk, K, *lists)
        carry_f, carry_i = np.zeros(2), np.zeros(2, dtype=np.int64)
        dtop = np.zeros(0, dtype=np.int32)
        while True:
            if sparse:
                cap1 = state.capacity + 1
                # the document's topic list survives a capacity growth: the sweep resumes where it stopped
                dtop = np.concatenate([dtop, np.zeros(cap1 - dtop.shape[0], dtype=np.int32)])
                scratch = (np.zeros(cap1), np.zeros(cap1), np.zeros(cap1), dtop, np.zeros(cap1, dtype=np.uint8))
                K, nc, nn, i = khdp.da_sparse_sweep(rng, tokens.doc_ptr, tokens.words, state.z, state.n_dk,
                                                    state.n_wk, state.n_k, state.tau, K, state.alpha, beta,
                                                    state.gamma, i, *lists, *scratch, carry_f, carry_i)
            else:
                p = np.empty(state.capacity + 1)
                K, nc, nn, i = sweep_fn(rng, tokens.doc_ptr, tokens.words, state.z, state.n_dk, state.n_wk,
                                        state.n_k, state.tau, K, state.alpha, beta, state.gamma, p, i)
            n_changed += nc
            n_new += nn
            if i >= N:
                break
            state = grow(state, max(state.capacity + 1, int(state.capacity * growth)))
        remap = np.empty(K, dtype=np.int64)
        K = int(khdp.compact(state.z, state.n_dk, state.n_wk, state.n_k, state.tau, K, remap))
        n_split = n_merge = 0
        if split_merge_proposals > 0:
            if cache.get("sm_key") != key:
                cache.update(sm_key=key, sm=SplitMergeScratch.for_tokens(tokens, model.n_words))
            state, n_split, n_merge = split_merge(rng, state._replace(n_topics=K), tokens, model,
                                                  split_merge_proposals, split_merge_launch,
                                                  sequential=split_merge_sequential, unit=split_merge_unit,
                                                  scratch=cache["sm"],
                                                  growth=growth)
            K = state.n_topics
        return SweepOutcome(state._replace(n_topics=K), int(n_changed), int(n_new), int(n_split), int(n_merge),
                            remap)

    def update(rng, state: DirectAssignmentState, tokens: TokenStream, model: HDPModel):
        """Steps 2-5: tables, concentrations, tau, beta (:mod:`~harmonium.inference.mcmc.isbn.hyper`);
        returns (state, m..)."""
        K = state.n_topics
        m_k = np.zeros(max(K, 1), dtype=np.int64)
        m_total = int(tables_fn(rng, state.n_dk, K, state.alpha, state.tau, m_k))
        _, alpha, gamma = hyper.global_step(rng, m_k[:K], m_total, lengths_of(tokens), state.alpha, state.gamma,
                                            sample_alpha=sample_alpha, sample_gamma=sample_gamma,
                                            alpha_prior=model.alpha_prior, gamma_prior=model.gamma_prior,
                                            n_iter=concentration_iter, tau_out=state.tau)
        state = state._replace(alpha=alpha, gamma=gamma)
        if sample_beta:
            beta = hyper.resample_beta(rng, current_beta(state, model), state.n_wk, state.n_k, K, beta_prior,
                                       concentration_iter)
            state = state._replace(beta=beta)
        return state, m_total

    def kernel(rng, state: DirectAssignmentState, tokens: TokenStream, model: HDPModel):
        out = sweep(rng, state, tokens, model)
        state, m_total = update(rng, out.state, tokens, model)
        K = state.n_topics
        if compute_log_joint:
            beta = current_beta(state, model)
            ll = float(khdp.word_log_likelihood(state.n_wk, state.n_k, K, beta))
            lj = ll + float(khdp.assignment_log_prior(tokens.doc_ptr, state.n_dk, K, state.alpha, state.tau))
        else:
            ll = lj = float("nan")
        return state, DirectAssignmentInfo(ll, lj, K, m_total, out.n_changed, out.n_new, out.n_split, out.n_merge)

    kernel.sweep, kernel.update = sweep, update
    return kernel


def topic_word(state: DirectAssignmentState, model: HDPModel) -> np.ndarray:
    """E[phi | z, w] of the used topics: (K, V), phi_kw = (n_wk + beta) / (n_k + V beta)."""
    K = state.n_topics
    V = model.n_words
    beta = current_beta(state, model)
    return ((state.n_wk[:, :K].T + beta) / (state.n_k[:K, None] + V * beta)).astype(np.float64)


def doc_topic(state: DirectAssignmentState) -> np.ndarray:
    """E[pi_j | z, tau] over the K used topics and the new-topic mass (last column): (D, K + 1).

    (n_jk + alpha tau_k) / (n_j + alpha) (seed 002 footnote 2).
    """
    K = state.n_topics
    num = state.n_dk[:, :K].astype(np.float64) + state.alpha * state.tau[None, :K]
    num = np.concatenate([num, np.full((num.shape[0], 1), state.alpha * state.tau[K])], axis=1)
    return num / num.sum(axis=1, keepdims=True)
