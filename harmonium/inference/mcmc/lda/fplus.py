"""Word-by-word F+LDA sweeps (Yu et al. 2015) for collapsed Gibbs LDA, and the cost rule of ``sampler="auto"``.

:class:`FPlusSweep` plugs into :data:`collapsed_gibbs.SAMPLERS
<harmonium.inference.mcmc.lda.collapsed_gibbs.SAMPLERS>` as ``"fplus"``: an exact Gibbs sweep (every
token drawn from its full conditional; the kernel is :mod:`harmonium._kernels.lda_fplus`) whose scan
visits the tokens word by word. It costs O(k_d + log K) a token where SparseLDA costs O(k_w + k_d).

:class:`AutoSweep` is what ``sampler="auto"`` runs (:func:`~harmonium.inference.mcmc.lda.
collapsed_gibbs.auto_sweep`): each sweep is an F+LDA sweep while the state's word
lists are long against its document lists, or its documents short (SparseLDA sets each document up once a
visit; :func:`fplus_is_cheaper`), and a SparseLDA sweep where they are not. Both sweeps leave the collapsed
posterior invariant, so any sequence of them does. The choice is a function of the state at the start of the
sweep, so the same seed gives the same chain, and a run resumed from a checkpoint makes the choices of the
uninterrupted one.
"""

from __future__ import annotations

import numpy as np

from harmonium._kernels import lda_fplus as kern
from harmonium._kernels import lda_warp
from harmonium._kernels.token_order import stable_order
from harmonium.corpus.corpus import TokenStream
from harmonium.errors import InvalidParameterError
from harmonium.models.directed.lda import LDAModel

#: :func:`fplus_is_cheaper`'s cost model, in nanoseconds a token, fitted by least squares to the CPU seconds of the two
#: sweeps run on the same states (benchmarks/lda/fplus_crossover.py: before each sweep of a SparseLDA chain from a
#: random start, one sweep of each on copies; Debian K = 10, 20, 100, 1000, PyPI K = 20, 100, 1000, debian-long
#: K = 100, 1000; 232 sweeps in results/fplus-crossover-prefetch.jsonl):
#:
#: * a SparseLDA draw: SPARSE_NS + SPARSE_NS_PER_WORD_TOPIC k_w + SPARSE_NS_PER_DOCUMENT v / N, where v / N is
#:   the document visits a token (D / N on one thread, P D / N for the word-partitioned sweep: each visit sets
#:   the document's row, topic list and q coefficients up and restores them);
#: * an F+LDA draw: FPLUS_NS + FPLUS_NS_PER_DOC_TOPIC k_d + FPLUS_NS_PER_TREE_LEVEL log2 K (the tree's descent);
#:
#: k_w, k_d: the token-weighted mean numbers of non-zero topics of the token's word and document. Fitted: 63.4,
#: 2.06, 219.8; 34.1, 2.09, 13.2. On the records this rule spends 112.8 CPU s, the rule before it (70 + 1.6 k_w
#: against 150 + 3 k_d: no per-document term, no K) 119.9 and the cheaper sweep of each state 111.8; fitted on
#: the other corpora, it spends no more than the old rule on any held-out cell, and less on five of the nine
#: (benchmarks/lda/README.md, "auto's rule with a per-document term").
SPARSE_NS = 63.0
SPARSE_NS_PER_WORD_TOPIC = 2.1
SPARSE_NS_PER_DOCUMENT = 220.0
FPLUS_NS = 34.0
FPLUS_NS_PER_DOC_TOPIC = 2.1
FPLUS_NS_PER_TREE_LEVEL = 13.0
#: The rule's statistics are read on the tokens of every ``max(1, N // SAMPLE_TOKENS)``-th document.
SAMPLE_TOKENS = 4096


def fplus_is_cheaper(mean_word_topics: float, mean_doc_topics: float, visits_per_token: float, n_topics: int) -> bool:
    """Whether an F+LDA sweep is predicted to cost less than a SparseLDA sweep, from the token-weighted mean
    numbers of non-zero topics of the tokens' words (k_w) and documents (k_d), the SparseLDA sweep's
    document visits a token (D / N on one thread) and K (the cost model above)."""
    sparse = (SPARSE_NS + SPARSE_NS_PER_WORD_TOPIC * mean_word_topics
              + SPARSE_NS_PER_DOCUMENT * visits_per_token)
    fplus = FPLUS_NS + FPLUS_NS_PER_DOC_TOPIC * mean_doc_topics + FPLUS_NS_PER_TREE_LEVEL * np.log2(max(n_topics, 2))
    return bool(fplus < sparse)


class FPlusSweep:
    """The word-by-word F+LDA sweep ``sweep(rng, state, d_lo, d_hi) -> n_changed``.

    Per document range (one, the whole corpus, for the serial kernel; one per worker under AD-LDA), the
    word-major order of its tokens and the documents' list capacities are computed once and cached. Each
    sweep gathers the range's z in that order, rebuilds the documents' (count, topic) lists from z, runs
    the kernel and scatters z back, so a sweep depends on (rng, z, n_wk, n_k) only: checkpoints need
    nothing else. A state's n_dk table, when it has one, is kept in step. ``pick`` replaces
    :func:`harmonium._kernels.lda_fplus.tree_pick` (tests pass a broken one). Mutates the state in place.
    """

    def __init__(self, model: LDAModel, tokens: TokenStream, *, pick=None, array=None):
        """``array(shape, dtype, fill)`` makes the scratch arrays (default numpy's; the word-partitioned sweep
        passes :func:`~harmonium.parallel.threads.worker_array`, which puts each on cache lines of its own)."""
        if array is None:
            def array(shape, dtype=np.float64, fill=None):
                return np.empty(shape, dtype) if fill is None else np.full(shape, fill, dtype)
        K, V = model.n_topics, model.n_words
        if tokens.words.shape[0] and int(tokens.words.max()) >= V:
            raise InvalidParameterError(f"word id {int(tokens.words.max())} >= vocabulary size {V} (fplus sampler).")
        self.tokens, self.K, self.V = tokens, K, V
        self.pick = pick  # None: the kernel's own tree_pick (a function argument would defeat numba's cache)
        self.alpha = np.ascontiguousarray(model.alpha, dtype=np.float64)
        self.beta = float(model.beta)
        T, _ = kern.tree_size(K)
        self.f = array(2 * T, np.float64, 0.0)
        self.c, self.buf = array(K), array(K)
        self.row = array(K, np.int32, 0)
        self._index: dict = {}

    def index(self, d_lo: int, d_hi: int):
        """(perm, wptr, wdoc, z_w, dptr, dlist, dlen, doc_ptr) of documents d_lo..d_hi-1 (cached for the last
        range; ``doc_ptr`` is the range's document pointer, counted from its first token).

        O(N) memory: int32 positions, documents and topics; the packed document lists in int32 when every
        count fits beside the topic bits, else int64.
        """
        key = (d_lo, d_hi)
        if key not in self._index:
            ptr = self.tokens.doc_ptr
            i0, i1 = int(ptr[d_lo]), int(ptr[d_hi])
            words = self.tokens.words[i0:i1]
            pos_dtype = np.int32 if i1 < 2**31 else np.int64
            perm = stable_order(words, self.V, pos_dtype)
            perm += pos_dtype(i0)
            wptr = np.zeros(self.V + 1, dtype=np.int64)
            np.cumsum(np.bincount(words, minlength=self.V), out=wptr[1:])
            lens = np.diff(ptr[d_lo:d_hi + 1])
            # documents numbered from 0 within the range
            wdoc = np.repeat(np.arange(d_hi - d_lo, dtype=np.int32), lens)[perm - i0]
            dptr = np.zeros(d_hi - d_lo + 1, dtype=np.int64)
            np.cumsum(np.minimum(lens, self.K), out=dptr[1:])
            longest = int(lens.max()) if lens.shape[0] else 0
            packed = np.int32 if (longest + 1) << int(kern.topic_bits(self.K)) < 2**31 else np.int64
            self._index = {key: (perm, wptr, np.ascontiguousarray(wdoc), np.empty(i1 - i0, dtype=np.int32), dptr,
                                 np.empty(int(dptr[-1]), dtype=packed), np.zeros(d_hi - d_lo, dtype=np.int32),
                                 ptr[d_lo:d_hi + 1] - i0)}
        return self._index[key]

    def release(self) -> None:
        """Free the cached word-major index and document lists (O(N)); the next sweep makes them again."""
        self._index = {}

    def doc_lists(self, z, d_lo: int, d_hi: int):
        """The range's documents' (count, topic) lists built from ``z``: (dptr, dlist, dlen)."""
        _, _, _, _, dptr, dlist, dlen, doc_ptr = self.index(d_lo, d_hi)
        i0 = int(self.tokens.doc_ptr[d_lo])
        kern.build_doc_lists(doc_ptr, z[i0:i0 + int(doc_ptr[-1])], self.K, dptr, dlist, dlen, self.row)
        return dptr, dlist, dlen

    def __call__(self, rng, state, d_lo: int, d_hi: int) -> int:
        d_lo, d_hi = int(d_lo), int(d_hi)
        perm, wptr, wdoc, z_w, dptr, dlist, dlen, _ = self.index(d_lo, d_hi)
        self.doc_lists(state.z, d_lo, d_hi)
        lda_warp.gather(perm, state.z, z_w)
        n_dk = None if state.n_dk is None else state.n_dk[d_lo:d_hi]
        n_changed = kern.fplus_sweep(rng, wptr, wdoc, z_w, n_dk, state.n_wk, state.n_k, self.alpha, self.beta,
                                     dptr, dlist, dlen, self.c, self.buf, self.f, self.pick, None)
        kern.scatter(perm, z_w, state.z)
        return int(n_changed)


def make_sweep(model: LDAModel, tokens: TokenStream, *, pick=None) -> FPlusSweep:
    """The registry's factory: ``FPlusSweep(model, tokens, ...)``."""
    return FPlusSweep(model, tokens, pick=pick)


class AutoSweep:
    """``sampler="auto"``'s sweep where it picks "sparse": an F+LDA sweep when :func:`fplus_is_cheaper` holds
    for the state at the start of the sweep, else a SparseLDA sweep.

    The statistics are read on a fixed sample of documents (:data:`SAMPLE_TOKENS`; O(sample x K) a sweep,
    no lists built). ``choices`` records the sweeps run ("fplus" or "sparse"), one a call.
    """

    def __init__(self, model: LDAModel, tokens: TokenStream, sparse, fplus: FPlusSweep | None = None):
        self.tokens = tokens
        self.sparse = sparse
        self.fplus = FPlusSweep(model, tokens) if fplus is None else fplus
        self.row = np.zeros(model.n_topics, dtype=np.int32)
        self.n_topics = model.n_topics
        #: how many times the SparseLDA sweep visits each document (1; P for the word-partitioned sweep)
        self.doc_visits = 1
        self.choices: list = []
        self._doc_ptr: dict = {}

    def mean_list_lengths(self, state, d_lo: int, d_hi: int) -> tuple:
        """(mean k_w, mean k_d) over the tokens of the sampled documents of d_lo..d_hi-1 in ``state``."""
        ptr = self.tokens.doc_ptr
        i0, i1 = int(ptr[d_lo]), int(ptr[d_hi])
        if (d_lo, d_hi) not in self._doc_ptr:  # the range's document pointer from its first token, made once
            self._doc_ptr = {(d_lo, d_hi): ptr[d_lo:d_hi + 1] - i0}
        stride = max(1, (i1 - i0) // SAMPLE_TOKENS)
        return kern.sampled_list_lengths(self._doc_ptr[(d_lo, d_hi)], self.tokens.words[i0:i1], state.z[i0:i1],
                                         state.n_wk, stride, self.row)

    def choose(self, state, d_lo: int, d_hi: int):
        """The sweep to run on ``state`` (F+LDA when :func:`fplus_is_cheaper`, else SparseLDA), recorded in
        :attr:`choices`; choosing SparseLDA releases the F+LDA sweep's O(N) arrays."""
        ptr = self.tokens.doc_ptr
        n_tokens = max(1, int(ptr[d_hi]) - int(ptr[d_lo]))
        use_fplus = fplus_is_cheaper(*self.mean_list_lengths(state, int(d_lo), int(d_hi)),
                                     self.doc_visits * (int(d_hi) - int(d_lo)) / n_tokens, self.n_topics)
        self.choices.append("fplus" if use_fplus else "sparse")
        if not use_fplus:
            self.fplus.release()  # its O(N) arrays would otherwise be held to the end of the fit, whose peak they raise
        return self.fplus if use_fplus else self.sparse

    def __call__(self, rng, state, d_lo: int, d_hi: int) -> int:
        return self.choose(state, d_lo, d_hi)(rng, state, d_lo, d_hi)
