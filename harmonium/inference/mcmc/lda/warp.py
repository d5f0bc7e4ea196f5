"""WarpLDA-style Metropolis-Hastings for collapsed LDA (exact), O(1) a token, no tables.

Chen, Li, Zhu & Chen 2016, "WarpLDA: a Cache Efficient O(1) Algorithm for
Latent Dirichlet Allocation" (PVLDB 9(10)), §4. A sweep is a word pass (the
tokens grouped by word, each moved by ``mh_steps`` MH steps with the doc
proposal) and then a document pass (the tokens in document order, each moved
with the word proposal). With the counts of token i removed,

    p(k)      ∝ (n_dk + alpha_k)(n_wk + beta) / (n_k + V beta),
    q_doc(k)  ∝ n_dk + alpha_k     (topic of a random other token of d, or alpha),
    q_word(k) ∝ n_wk + beta        (topic of a random other token of w, or uniform),

    word pass: A = min(1, (n_wt + beta)(n_s + V beta) / ((n_ws + beta)(n_t + V beta))),
    doc pass:  A = min(1, (n_dt + alpha_t)(n_s + V beta) / ((n_ds + alpha_s)(n_t + V beta))).

Unlike WarpLDA's delayed update (counts frozen during a pass, proposals drawn
a pass ahead), every step reads the current counts and draws its proposal
from the current topics of the other tokens, so every step is reversible
with respect to p(z_i | z_-i, w) and the sweep leaves p(z | w) invariant
(tests/statistical/test_lda_warp_exact.py; the frozen-count twin fails the
same test). Details in :mod:`harmonium._kernels.lda_warp`.

:class:`WarpSweep` plugs into
:data:`collapsed_gibbs.SAMPLERS <harmonium.inference.mcmc.lda.collapsed_gibbs.SAMPLERS>` as ``"warp"``.
:func:`doc_proposal`, :func:`word_proposal` and the two acceptance functions
expose what the kernel evaluates (the same compiled functions) so tests can
build exact transition matrices.
"""

from __future__ import annotations

import numpy as np

from harmonium._kernels import lda_warp as kern
from harmonium._kernels.token_order import stable_order
from harmonium.corpus.corpus import TokenStream
from harmonium.errors import InvalidParameterError
from harmonium.models.directed.lda import LDAModel, counts_without_token


def word_major_index(tokens: TokenStream, n_words: int):
    """(perm, wpos, wptr, wword, wdoc): the word-major order of the tokens.

    Position p of the word-major order holds token ``perm[p]`` (tokens of
    word w at ``wptr[w]:wptr[w + 1]``, in document order); ``wpos`` is the
    inverse permutation, ``wword`` and ``wdoc`` the word and document of
    each position.
    """
    words = tokens.words
    N = words.shape[0]
    V = int(n_words)
    perm = stable_order(words, V, np.int64)
    wpos = np.empty(N, dtype=np.int64)
    wpos[perm] = np.arange(N, dtype=np.int64)
    wptr = np.zeros(V + 1, dtype=np.int64)
    np.cumsum(np.bincount(words, minlength=V), out=wptr[1:])
    doc_of = np.repeat(np.arange(tokens.doc_ptr.shape[0] - 1, dtype=np.int32), np.diff(tokens.doc_ptr))
    return perm, wpos, wptr, np.ascontiguousarray(words[perm]), np.ascontiguousarray(doc_of[perm])


class WarpSweep:
    """The word-pass / document-pass sweep ``sweep(rng, state, d_lo, d_hi) -> n_changed``.

    Scratch (the word-major index and the word-major copy of z, O(N)) is
    allocated once. The word-major copy is gathered from ``state.z`` at the
    start of each sweep, so a sweep depends on (rng, z) only: checkpoints
    need nothing else. Under AD-LDA threads (:mod:`~harmonium.inference.mcmc.lda.parallel_gibbs`) the
    kernel calls :meth:`prepare` for every worker before any starts, so that
    each worker's copy holds the other blocks' topics as of the start of the
    sweep, matching its private n_wk. ``compiled`` replaces
    :func:`harmonium._kernels.lda_warp.warp_sweep` (same signature); tests
    pass deliberately broken sweeps here. Mutates the state's arrays in place.
    """

    def __init__(self, model: LDAModel, tokens: TokenStream, *, mh_steps: int = 2, compiled=None):
        if isinstance(mh_steps, bool) or not isinstance(mh_steps, (int, np.integer)) or mh_steps < 1:
            raise InvalidParameterError(
                f"The 'mh_steps' parameter of the warp sampler must be an int >= 1. Got {mh_steps!r}.")
        self.mh_steps = int(mh_steps)
        self.fn = kern.warp_sweep if compiled is None else compiled
        self.tokens = tokens
        K, V = model.n_topics, model.n_words
        if tokens.words.shape[0] and int(tokens.words.max()) >= V:
            raise InvalidParameterError(f"word id {int(tokens.words.max())} >= vocabulary size {V} (warp sampler).")
        self.perm, self.wpos, self.wptr, self.wword, self.wdoc = word_major_index(tokens, V)
        N = tokens.words.shape[0]
        self.z_w = np.empty(N, dtype=np.int32)
        self.z0 = np.empty(N, dtype=np.int32)
        self.alpha = np.ascontiguousarray(model.alpha, dtype=np.float64)
        self.beta = float(model.beta)
        self.alpha_prob = np.empty(K, dtype=np.float64)
        self.alpha_alias, self.small, self.large = (np.empty(K, dtype=np.int32) for _ in range(3))
        self._own: dict = {}
        self._prepared = False

    def own_positions(self, d_lo: int, d_hi: int) -> np.ndarray:
        """Word-major positions of the tokens of documents d_lo..d_hi-1, ascending (cached per range)."""
        key = (d_lo, d_hi)
        if key not in self._own:
            self._own = {key: np.flatnonzero((self.wdoc >= d_lo) & (self.wdoc < d_hi)).astype(np.int64)}
        return self._own[key]

    def prepare(self, state) -> None:
        """Gather the word-major copy of ``state.z`` now (before worker threads start)."""
        kern.gather(self.perm, state.z, self.z_w)
        self._prepared = True

    def __call__(self, rng, state, d_lo: int, d_hi: int) -> int:
        n_tokens = self.tokens.words.shape[0]
        if int(state.n_k.sum()) != n_tokens:
            raise InvalidParameterError(
                f"sampler='warp' draws its proposals from token topics, so it needs count tables that are the "
                f"counts of z; these hold {int(state.n_k.sum())} topic counts for {n_tokens} tokens "
                "(pseudo-counts?). Use sampler='sparse'.")
        if not self._prepared:
            kern.gather(self.perm, state.z, self.z_w)
        self._prepared = False
        d_lo, d_hi = int(d_lo), int(d_hi)
        return int(self.fn(rng, self.tokens.doc_ptr, self.tokens.words, state.z, state.n_dk, state.n_wk,
                           state.n_k, self.alpha, self.beta, d_lo, d_hi, self.mh_steps, self.perm, self.wpos,
                           self.wptr, self.wword, self.wdoc, self.own_positions(d_lo, d_hi), self.z_w, self.z0,
                           self.alpha_prob, self.alpha_alias, self.small, self.large))


def make_sweep(model: LDAModel, tokens: TokenStream, *, mh_steps: int = 2, compiled=None) -> WarpSweep:
    """The registry's factory: ``WarpSweep(model, tokens, ...)``."""
    return WarpSweep(model, tokens, mh_steps=mh_steps, compiled=compiled)


# ---- the formulas, for exact transition matrices on tiny corpora --------------------------------


def doc_proposal(state, tokens: TokenStream, model: LDAModel, i: int) -> np.ndarray:
    """Normalised q_doc(.) of token i as the kernel draws it: topics of the OTHER tokens of d, plus alpha."""
    d = int(np.searchsorted(tokens.doc_ptr, i, side="right") - 1)
    others = np.delete(state.z[tokens.doc_ptr[d]:tokens.doc_ptr[d + 1]], i - tokens.doc_ptr[d])
    q = np.bincount(others, minlength=model.n_topics) + np.asarray(model.alpha, dtype=np.float64)
    return q / q.sum()


def word_proposal(state, tokens: TokenStream, model: LDAModel, i: int) -> np.ndarray:
    """Normalised q_word(.) of token i as the kernel draws it: topics of the OTHER tokens of w, plus beta."""
    same = np.flatnonzero(tokens.words == tokens.words[i])
    others = state.z[same[same != i]]
    q = np.bincount(others, minlength=model.n_topics) + float(model.beta)
    return q / q.sum()


def _prob(num_den) -> float:
    num, den = num_den
    return 1.0 if num >= den else float(num / den)


def doc_move_acceptance(state, tokens: TokenStream, model: LDAModel, i: int, t: int) -> float:
    """A(s -> t) of the word pass, from the kernel's :func:`~harmonium._kernels.lda_warp.doc_move_ratio`."""
    _, w, s, _, n_wk, n_k = counts_without_token(state, tokens, i)
    return _prob(kern.doc_move_ratio(w, s, t, n_wk, n_k, float(model.beta), model.beta * model.n_words))


def word_move_acceptance(state, tokens: TokenStream, model: LDAModel, i: int, t: int) -> float:
    """A(s -> t) of the document pass, from the kernel's :func:`~harmonium._kernels.lda_warp.word_move_ratio`."""
    d, _, s, n_dk, _, n_k = counts_without_token(state, tokens, i)
    alpha = np.ascontiguousarray(model.alpha, dtype=np.float64)
    return _prob(kern.word_move_ratio(d, s, t, n_dk, n_k, alpha, model.beta * model.n_words))


def sweep_order(tokens: TokenStream) -> list[tuple[str, int]]:
    """The order of the steps of one sweep (mh_steps = 1): ("doc", i) in word-major order, then ("word", i)."""
    perm = word_major_index(tokens, int(tokens.words.max()) + 1)[0]
    return [("doc", int(i)) for i in perm] + [("word", i) for i in range(tokens.words.shape[0])]
