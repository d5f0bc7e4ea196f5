"""Collapsed Gibbs sampling for LDA (seed 003, "Collapsed Gibbs Sampling").

theta and phi are integrated out and each token's topic is drawn from

    p(z_i = k | z_-i, w) ∝ (n_dk^-i + alpha_k) (n_wk^-i + beta) / (n_k^-i + V beta)

in a systematic scan over all tokens (one ``kernel`` call = one sweep). Five
exact ways to make that draw are offered (:data:`SAMPLERS`): the plain O(K)
reference, SparseLDA buckets (O(k_d + k_w)), word-by-word F+LDA (O(k_d + log K),
the tokens visited word by word), alias tables with Metropolis-Hastings (O(1))
and WarpLDA-style word-major / document-major Metropolis-Hastings passes (O(1),
no tables). Each leaves the collapsed
posterior p(z | w) invariant, tested exactly in tests/statistical/
(test_lda_collapsed_exact.py, test_lda_fplus_exact.py, test_lda_alias_mh_exact.py,
test_lda_warp_exact.py).

Seeded topics (``model.seeds``, an asymmetric topic-word prior beta + delta
with integer delta; :mod:`harmonium.models.directed.lda`): every sweep runs
with delta added to n_wk and n_k for its duration (:class:`SweepCache` wraps
each sampler in :func:`~harmonium.models.directed.lda.seeded_counts`), so the
three samplers draw from the seeded conditional with their kernels unchanged
and the state never holds delta. Tested in tests/statistical/test_lda_seeded_exact.py.

State / init / kernel as in DESIGN.md. The kernel mutates the state's arrays
in place and returns the same (mutated) state object.

Document counts (issue 21): the serial SparseLDA sweep rebuilds each
document's row of n_dk from z when it reaches the document (MALLET's
``sampleTopicsForOneDoc``), so a state made with ``doc_counts=False`` holds
no D x K table (``n_dk`` is None); whatever else reads the document counts
(log joint, theta sums, alpha's optimiser) takes them from z one document at
a time. :func:`needs_doc_counts` says which samplers need the table.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from harmonium._kernels import lda_gibbs, lda_sparse
from harmonium.corpus.corpus import TokenStream
from harmonium.errors import InvalidParameterError
from harmonium.models.directed.lda import (
    LDAModel,
    add_seed_counts,
    collapsed_log_joint,
    counts_from_assignments,
    doc_count_dtype,
    doc_topic_row,
    seeded_counts,
)


class CollapsedGibbsState(NamedTuple):
    """Topic assignment of every token and the count tables it implies."""

    z: np.ndarray  # (N,) int32
    n_dk: np.ndarray | None  # (D, K) int16 or int32; None: each document's row is rebuilt from z
    n_wk: np.ndarray  # (V, K) int32
    n_k: np.ndarray  # (K,) int32


class CollapsedGibbsInfo(NamedTuple):
    """Per-sweep diagnostics: collapsed log joint (NaN when not computed) and changed assignments."""

    log_joint: float
    n_changed: int


def state_from_assignments(tokens: TokenStream, model: LDAModel, z, *, doc_counts: bool = True
                           ) -> CollapsedGibbsState:
    """The state for given assignments ``z`` (counts recomputed from scratch).

    ``doc_counts=False`` leaves ``n_dk`` None (for the samplers :func:`needs_doc_counts` clears).
    """
    z = np.ascontiguousarray(z, dtype=np.int32)
    n_dk, n_wk, n_k = counts_from_assignments(tokens.doc_ptr, tokens.words, z, model.n_topics, model.n_words,
                                              doc_counts=doc_counts)
    return CollapsedGibbsState(z, n_dk, n_wk, n_k)


def init(rng: np.random.Generator, tokens: TokenStream, model: LDAModel, *, doc_counts: bool = True
         ) -> CollapsedGibbsState:
    """Assign every token a topic uniformly at random (``doc_counts`` as in :func:`state_from_assignments`)."""
    z = rng.integers(0, model.n_topics, size=tokens.words.shape[0], dtype=np.int32)
    return state_from_assignments(tokens, model, z, doc_counts=doc_counts)


def log_joint(state: CollapsedGibbsState, tokens: TokenStream, model: LDAModel) -> float:
    """log p(w, z) of the state, with or without its n_dk table (models.directed.lda.collapsed_log_joint)."""
    return collapsed_log_joint(state.n_dk, state.n_wk, state.n_k, model, doc_ptr=tokens.doc_ptr, z=state.z)


def conditional(state: CollapsedGibbsState, tokens: TokenStream, model: LDAModel, i: int) -> np.ndarray:
    """Normalised full conditional p(z_i = . | z_-i, w) of token ``i`` (state left unchanged).

    Exposed separately from the draw so that tests can build the exact
    transition matrix on tiny corpora.
    """
    d = int(np.searchsorted(tokens.doc_ptr, i, side="right") - 1)
    w = int(tokens.words[i])
    k_old = int(state.z[i])
    if state.n_dk is None:  # the document's row only, as the sweep has it
        n_dk = doc_topic_row(tokens.doc_ptr, state.z, d, model.n_topics)[None, :]
        d_row = 0
    else:
        n_dk = state.n_dk.copy()
        d_row = d
    n_wk = state.n_wk.copy()
    n_k = state.n_k.copy()
    n_dk[d_row, k_old] -= 1
    n_wk[w, k_old] -= 1
    n_k[k_old] -= 1
    add_seed_counts(n_wk, n_k, model.seeds)
    p = np.empty(model.n_topics)
    lda_gibbs.collapsed_conditional(
        p, d_row, w, n_dk, n_wk, n_k, model.alpha, model.beta, model.beta * model.n_words
    )
    return p / p.sum()


def plain_sweep(model: LDAModel, tokens: TokenStream, *, compiled=None):
    """The O(K) reference sweep: ``sweep(rng, state, d_lo, d_hi) -> n_changed``.

    ``compiled`` replaces :func:`harmonium._kernels.lda_gibbs.collapsed_sweep`
    (same signature); tests pass deliberately broken sweeps here.
    """
    fn = lda_gibbs.collapsed_sweep if compiled is None else compiled
    p = np.empty(model.n_topics, dtype=np.float64)

    def sweep(rng, state: CollapsedGibbsState, d_lo: int, d_hi: int) -> int:
        return fn(rng, tokens.doc_ptr, tokens.words, state.z, state.n_dk, state.n_wk, state.n_k,
                  model.alpha, model.beta, p, d_lo, d_hi)

    return sweep


def sparse_sweep(model: LDAModel, tokens: TokenStream, *, word_lists=None):
    """The SparseLDA bucket sweep (:mod:`harmonium._kernels.lda_sparse`), O(k_d + k_w) a token.

    The word lists outlive a sweep: each sweep starts with
    :func:`harmonium._kernels.lda_sparse.refresh_word_lists`, which keeps (re-sorted) every list that
    still matches the state's n_wk and rebuilds the others, the same lists as a full rebuild at the cost
    of the lists. ``word_lists`` replaces it with a builder of the signature of
    :func:`~harmonium._kernels.lda_sparse.build_word_lists`, run every sweep; tests pass a deliberately
    broken builder here.
    """
    K, V = model.n_topics, model.n_words
    freq = word_slots(model, tokens)
    row_sums = np.bincount(tokens.words, minlength=V).astype(np.int64)  # n_wk's row totals (seeds add more)
    wptr = np.zeros(V + 1, dtype=np.int64)
    np.cumsum(np.minimum(freq, K), out=wptr[1:])
    wtop = np.empty(int(wptr[-1]), dtype=np.int64)  # packed (count, topic) entries
    wlen = np.zeros(V, dtype=np.int32)  # all lists empty: the first refresh builds them
    c, qcoef, qbuf = (np.empty(K) for _ in range(3))
    dtop = np.empty(K, dtype=np.int32)
    in_doc = np.zeros(K, dtype=np.uint8)
    drow = np.zeros(K, dtype=doc_count_dtype(tokens.doc_ptr))  # the document's counts when the state has no n_dk

    def sweep(rng, state: CollapsedGibbsState, d_lo: int, d_hi: int) -> int:
        if word_lists is None:
            lda_sparse.refresh_word_lists(state.n_wk, row_sums, wptr, wtop, wlen)
        else:
            word_lists(state.n_wk, wptr, wtop, wlen)
        return lda_sparse.sparse_sweep(
            rng, tokens.doc_ptr, tokens.words, state.z, state.n_dk, state.n_wk, state.n_k,
            model.alpha, model.beta, d_lo, d_hi, wptr, wtop, wlen, c, qcoef, qbuf, dtop, in_doc, drow,
        )

    sweep.doc_row = drow  # tests break the zero-on-exit contract through it (negative control)
    return sweep


def word_slots(model: LDAModel, tokens: TokenStream) -> np.ndarray:
    """Upper bound (before the cap at K) on the non-zero topics of each word's row of n_wk during a sweep:
    its frequency, plus the topics it seeds (delta is in the tables while a sweep runs)."""
    freq = np.bincount(tokens.words, minlength=model.n_words)
    if model.seeds is not None:
        freq = freq + model.seeds.per_word(model.n_words)
    return freq


def with_seeds(sweep, seeds):
    """``sweep`` run with the seed pseudo-counts in the state's n_wk and n_k (unchanged if ``seeds`` is None)."""
    if seeds is None:
        return sweep

    def seeded(rng, state, d_lo: int, d_hi: int) -> int:
        with seeded_counts(state.n_wk, state.n_k, seeds):
            return sweep(rng, state, d_lo, d_hi)

    return seeded


def alias_mh_sweep(model: LDAModel, tokens: TokenStream):
    """The alias-table Metropolis-Hastings sweep (LightLDA style), O(1) a token."""
    from harmonium.inference.mcmc.lda import alias_mh

    return alias_mh.make_sweep(model, tokens)


def warp_sweep(model: LDAModel, tokens: TokenStream):
    """The WarpLDA-style word-pass / document-pass MH sweep (exact), O(1) a token."""
    from harmonium.inference.mcmc.lda import warp as lda_warp

    return lda_warp.make_sweep(model, tokens)


def fplus_sweep(model: LDAModel, tokens: TokenStream):
    """The word-by-word F+LDA sweep (Yu et al. 2015), O(k_d + log K) a token."""
    from harmonium.inference.mcmc.lda import fplus

    return fplus.make_sweep(model, tokens)


def auto_sweep(model: LDAModel, tokens: TokenStream):
    """``sampler="auto"``: each sweep an F+LDA or a SparseLDA sweep, whichever is predicted cheaper for the state
    (:class:`~harmonium.inference.mcmc.lda.fplus.AutoSweep`).

    It never runs the warp sweep. Warp reached a held-out perplexity first only at K = 3000 on short documents
    (PyPI summaries, 6.3 tokens a document) when it was measured against SparseLDA alone, before F+LDA. Measured
    again against both on the AMD EPYC VM (2026-11-29), F+LDA reached that cell's target first (9.6 against
    15.1 CPU s) and SparseLDA reached Debian's at K = 3000 first (6.1 against 15.2 s), so no measured cell has
    warp first (benchmarks/lda/warp_crossover.md, "Re-measured with F+LDA").
    """
    from harmonium.inference.mcmc.lda import fplus

    return fplus.AutoSweep(model, tokens, sparse_sweep(model, tokens))


#: Exact collapsed samplers, by name: each maps (model, tokens) to
#: ``sweep(rng, state, d_lo, d_hi) -> n_changed`` over a range of documents.
#: "auto" is not a sampler of its own: it runs SparseLDA's or F+LDA's sweep, sweep by sweep (:func:`auto_sweep`).
SAMPLERS = {"plain": plain_sweep, "sparse": sparse_sweep, "alias_mh": alias_mh_sweep, "warp": warp_sweep,
            "fplus": fplus_sweep, "auto": auto_sweep}


#: Concrete samplers whose serial sweep keeps no D x K n_dk (each document's row is rebuilt from z).
DOC_COUNT_FREE = frozenset({"sparse", "fplus"})


def resolve_sampler(sampler: str) -> str:
    """``sampler``, or for "auto" the family it runs: "sparse" (each sweep SparseLDA's or F+LDA's,
    :func:`auto_sweep`)."""
    return "sparse" if sampler == "auto" else sampler


def needs_doc_counts(sampler: str, model: LDAModel, tokens: TokenStream) -> bool:
    """Whether the serial sweep of ``sampler`` ("auto" resolved by :func:`resolve_sampler`) needs n_dk in the state.

    ``model`` and ``tokens`` are the estimator's arguments to this hook; no sampler's need depends on them."""
    return resolve_sampler(sampler) not in DOC_COUNT_FREE


def check_sampler(sampler) -> str:
    """``sampler`` if it names an entry of :data:`SAMPLERS`; else one error listing the choices."""
    if not isinstance(sampler, str) or sampler not in SAMPLERS:
        raise InvalidParameterError(
            f"The 'sampler' parameter must be one of {sorted(SAMPLERS)}. Got {sampler!r}.")
    return sampler


class SweepCache:
    """The sweeps made by ``factory(model, tokens)`` for the latest (model, tokens), reused across calls.

    Building a sweep allocates its scratch (O(N + V) for the sparse and alias
    samplers); a kernel called once per sweep should not pay that each time.
    Only the latest pair is kept: a new model (e.g. after a hyperparameter
    update) replaces it. ``get(..., part=p)`` keeps one sweep per worker.
    Sweeps of a seeded model come wrapped by :func:`with_seeds`: each worker
    adds delta to the tables it sweeps and removes it after, so merging the
    workers' changes never counts delta.
    """

    def __init__(self, factory):
        self.factory = factory
        self.key = None
        self.sweeps: dict = {}

    def get(self, model, tokens, part: int = 0):
        key = (id(model), id(tokens))
        if key != self.key:
            self.key, self.sweeps = key, {}
        if part not in self.sweeps:
            self.sweeps[part] = with_seeds(self.factory(model, tokens), model.seeds)
        return self.sweeps[part]


def build_kernel(*, sampler: str = "sparse", compute_log_joint: bool = True, sweep=None):
    """A kernel doing one systematic-scan sweep over all documents.

    Parameters
    ----------
    sampler : {"sparse", "fplus", "warp", "alias_mh", "plain", "auto"}
        Which exact sampler draws each z_i (see :data:`SAMPLERS`); "auto"
        picks sweep by sweep between F+LDA and SparseLDA (:func:`auto_sweep`).
    compute_log_joint : bool
        Whether ``info.log_joint`` is computed (O(DK + VK)); NaN otherwise.
    sweep : callable, optional
        A compiled sweep with the signature of
        :func:`harmonium._kernels.lda_gibbs.collapsed_sweep`, used instead of
        ``sampler`` (tests pass deliberately broken sweeps here).
    """
    if sweep is None:
        check_sampler(sampler)
    sweeps = SweepCache(lambda model, tokens: plain_sweep(model, tokens, compiled=sweep)
                        if sweep is not None else SAMPLERS[sampler](model, tokens))

    def kernel(rng, state: CollapsedGibbsState, tokens: TokenStream, model: LDAModel):
        if state.n_dk is None and (sweep is not None or needs_doc_counts(sampler, model, tokens)):
            raise InvalidParameterError(
                f"The collapsed Gibbs sampler {sampler!r} needs the state's n_dk table, but this state has none "
                "(made with doc_counts=False); make it with init(..., doc_counts=True).")
        n_changed = sweeps.get(model, tokens)(rng, state, 0, tokens.doc_ptr.shape[0] - 1)
        lj = log_joint(state, tokens, model) if compute_log_joint else float("nan")
        return state, CollapsedGibbsInfo(lj, int(n_changed))

    return kernel
