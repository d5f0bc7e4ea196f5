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

Storage (issue 21): neither sum is a dense array. The phi sum is float32;
a cell whose count has been zero in every retained sample holds a value
shared by its whole topic (the sum of beta / (n_k + V beta)), so only the
cells that have held a count are stored (:class:`SparsePhiSum`), and the
stored values go through the float operations of the dense accumulator,
which makes phi_hat bit-identical to it. The theta sum: since N_d does not
change between samples,

    theta_hat_dk ∝ sum_s alpha_k^(s) / (N_d + A^(s))  +  sum_s n_dk^(s) / (N_d + A^(s))

(A = sum_k alpha_k). The second term is non-zero only on the topics a
document has held in some retained sample and is kept sparse (per document,
a list of (topic, float32 sum)); the first needs only the samples' alpha
vectors (one row while alpha is fixed). The dense D x K theta_hat is made
on request (:meth:`ChainAverage.doc_topic`), once, by the estimator's
``doc_topic_``.
"""

from __future__ import annotations

import numpy as np

from harmonium._kernels import lda_stats
from harmonium.models.directed.lda import seeded_counts

#: ``burn_in=None`` averages the last ``n_iter // DEFAULT_WINDOW_DIVISOR`` sweeps: the last tenth. Measured (issue 21,
#: benchmarks/lda/README.md "The default estimate"): averaging the second half lagged the chain on runs
#: that stop while it still moves (PyPI K = 100 at 40 sweeps: 1967-1988 against the last state's 1915),
#: while the last tenth is the last state there and 3.5-6.4 perplexity better than it once the chain
#: has slowed (Debian K = 100 at 150-250 sweeps, three seeds).
DEFAULT_WINDOW_DIVISOR = 10


def default_burn_in(n_iter: int, thin: int) -> int:
    """``burn_in=None``: average the last tenth of the ``n_iter`` sweeps (every ``thin``-th), ending on the last.

    The window holds ``max(1, (n_iter // 10) // thin)`` samples and is placed so that sweep ``n_iter`` is
    one of them (:func:`keep_sample` keeps ``burn_in + thin``, ``burn_in + 2 thin``, ...); a run too short
    for two samples keeps its last state alone.
    """
    n_kept = max(1, (n_iter // DEFAULT_WINDOW_DIVISOR) // thin)
    return max(0, n_iter - n_kept * thin)


def keep_sample(iteration: int, burn_in: int, thin: int) -> bool:
    """Whether sweep ``iteration`` (1-based) is retained: after ``burn_in``, every ``thin``-th."""
    return iteration > burn_in and (iteration - burn_in) % thin == 0


def _topic_dtype(n_topics: int) -> np.dtype:
    return np.dtype(np.int16) if n_topics <= 2**15 else np.dtype(np.int32)


class SparseThetaSum:
    """sum_s (n_dk^(s) + alpha^(s)) / (N_d + A^(s)) over samples s, stored without a D x K array.

    ``ptr`` (D + 1), ``top`` and ``val`` hold, per document, the topics it has
    held (in increasing order) and the float32 sums of n_dk / (N_d + A) (CSR layout); ``alphas``
    (U, K) and ``weights`` (U,) the distinct alpha vectors of the samples and
    how many samples had each. ``doc_len`` is N_d.
    """

    def __init__(self, n_docs: int, n_topics: int):
        self.n_topics = int(n_topics)
        self.ptr = np.zeros(n_docs + 1, dtype=np.int64)
        self.top = np.zeros(0, dtype=_topic_dtype(n_topics))
        self.val = np.zeros(0, dtype=np.float32)
        self.alphas = np.zeros((0, n_topics))
        self.weights = np.zeros(0)
        self.doc_len = None

    def add(self, n_dk, alpha, *, doc_ptr=None, z=None) -> None:
        """Add one sample's (n_dk + alpha) / (N_d + A); the arrays are replaced, never grown in place.

        ``n_dk`` None: each document's counts are rebuilt from the token stream's ``doc_ptr`` and the
        assignments ``z`` (bit-identical sums, no D x K table).
        """
        alpha = np.asarray(alpha, dtype=np.float64)
        if self.doc_len is None:
            if n_dk is None:
                self.doc_len = np.diff(doc_ptr).astype(np.int64)
            else:
                self.doc_len = np.empty(n_dk.shape[0], dtype=np.int64)
                lda_stats.doc_lengths(n_dk, self.doc_len)
        inv_len = 1.0 / (self.doc_len + alpha.sum())
        new_ptr = np.empty_like(self.ptr)
        # room for every topic a document could add (at most min(N_d, K)); the unused tail is cut off
        room = self.top.shape[0] + int(np.minimum(self.doc_len, self.n_topics).sum())
        new_top = np.empty(room, dtype=self.top.dtype)
        new_val = np.empty(room, dtype=np.float32)
        if n_dk is None:
            row = np.zeros(self.n_topics, dtype=np.int64)
            n = lda_stats.sparse_theta_add_assignments(doc_ptr, z, row, inv_len, self.ptr, self.top, self.val,
                                                       new_ptr, new_top, new_val)
        else:
            n = lda_stats.sparse_theta_add(n_dk, inv_len, self.ptr, self.top, self.val, new_ptr, new_top, new_val)
        self.ptr = self.top = self.val = None  # the old arrays go before the new ones are trimmed
        new_top.resize(n, refcheck=False)  # shrinks the block in place (realloc): no second copy
        new_val.resize(n, refcheck=False)
        self.ptr, self.top, self.val = new_ptr, new_top, new_val
        same = np.flatnonzero((self.alphas == alpha).all(axis=1))
        if same.size:
            self.weights[same[0]] += 1.0
        else:
            self.alphas = np.vstack([self.alphas, alpha[None, :]])
            self.weights = np.append(self.weights, 1.0)

    def dense(self) -> np.ndarray:
        """theta_hat as a (D, K) float32 array with rows summing to one."""
        out = np.empty((self.ptr.shape[0] - 1, self.n_topics), dtype=np.float32)
        doc_len = self.doc_len if self.doc_len is not None else np.zeros(out.shape[0], dtype=np.int64)
        lda_stats.sparse_theta_dense(self.ptr, self.top, self.val, doc_len, self.alphas, self.weights, out)
        return out

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.ptr, self.top, self.val, self.alphas, self.weights)) + (
            0 if self.doc_len is None else self.doc_len.nbytes)

    def to_arrays(self, prefix: str) -> dict:
        return {f"{prefix}_ptr": self.ptr, f"{prefix}_top": self.top, f"{prefix}_val": self.val,
                f"{prefix}_alphas": self.alphas, f"{prefix}_weights": self.weights,
                f"{prefix}_doc_len": self.doc_len if self.doc_len is not None else np.zeros(0, dtype=np.int64)}

    @classmethod
    def from_arrays(cls, arrays: dict, prefix: str) -> SparseThetaSum:
        out = cls.__new__(cls)
        out.alphas = np.array(arrays[f"{prefix}_alphas"], dtype=np.float64)
        out.n_topics = out.alphas.shape[1]
        out.ptr = np.array(arrays[f"{prefix}_ptr"], dtype=np.int64)
        out.top = np.array(arrays[f"{prefix}_top"], dtype=_topic_dtype(out.n_topics))
        out.val = np.array(arrays[f"{prefix}_val"], dtype=np.float32)
        out.weights = np.array(arrays[f"{prefix}_weights"], dtype=np.float64)
        doc_len = np.array(arrays[f"{prefix}_doc_len"], dtype=np.int64)
        out.doc_len = doc_len if doc_len.shape[0] == out.ptr.shape[0] - 1 else None
        return out

    @classmethod
    def from_dense(cls, theta_sum) -> SparseThetaSum:
        """Migration of a dense sum (checkpoints written before issue 21): every entry stored, alphas inside."""
        out = cls(*theta_sum.shape)
        out.ptr, out.top, out.val = _every_cell(theta_sum, out.top.dtype)
        return out  # doc_len stays None: the next add() takes N_d from its n_dk


def _every_cell(dense, top_dtype) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(ptr, top, val) of the sparse rows that store every cell of a dense (rows, K) sum (the migrations)."""
    n_rows, K = dense.shape
    return (np.arange(0, n_rows * K + 1, K, dtype=np.int64), np.tile(np.arange(K, dtype=top_dtype), n_rows),
            np.ascontiguousarray(dense, dtype=np.float32).reshape(-1).copy())


class SparsePhiSum:
    """sum_s (n_wk^(s) + beta) / (n_k^(s) + V beta) over samples s, in float32, bit-identical to the dense sum
    of :func:`harmonium._kernels.lda_stats.accumulate_phi`, without a V x K array.

    A cell (w, k) whose count has been zero in every sample so far holds the topic's background
    ``bg[k]`` (the float32 sum of beta / (n_k^(s) + V beta), built by the same operations); only the
    cells that have held a count are stored, per word in increasing topic order (CSR: ``ptr`` (V + 1),
    ``top``, ``val``). At K = 1000 on Debian that is 3.3 M cells after 3 samples instead of 18.6 M.
    """

    def __init__(self, n_words: int, n_topics: int):
        self.shape = (int(n_words), int(n_topics))
        self.ptr = np.zeros(n_words + 1, dtype=np.int64)
        self.top = np.zeros(0, dtype=_topic_dtype(n_topics))
        self.val = np.zeros(0, dtype=np.float32)
        self.bg = np.zeros(n_topics, dtype=np.float32)

    def add(self, n_wk, n_k, beta: float) -> None:
        """Add one sample's (n_wk + beta) / (n_k + V beta) (``n_wk``, ``n_k`` with any seed counts in them)."""
        V, K = self.shape
        # room for every cell a word could add: at most its count, at most K per word (unused tail cut off)
        room = self.top.shape[0] + int(min(V * K, int(np.asarray(n_k).sum(dtype=np.int64))))
        new_ptr = np.empty_like(self.ptr)
        new_top = np.empty(room, dtype=self.top.dtype)
        new_val = np.empty(room, dtype=np.float32)
        n = lda_stats.sparse_phi_add(n_wk, n_k, float(beta), self.bg, self.ptr, self.top, self.val,
                                     new_ptr, new_top, new_val)
        self.ptr = self.top = self.val = None  # the old arrays go before the new ones are trimmed
        new_top.resize(n, refcheck=False)
        new_val.resize(n, refcheck=False)
        self.ptr, self.top, self.val = new_ptr, new_top, new_val

    def dense(self) -> np.ndarray:
        """The (V, K) float32 sums, as the dense accumulator would hold them."""
        out = np.empty(self.shape, dtype=np.float32)
        lda_stats.sparse_phi_dense(self.bg, self.ptr, self.top, self.val, out)
        return out

    def topic_word(self) -> np.ndarray:
        """phi_hat (K, V) float64, rows summing to one; bit-identical to normalising the dense sums."""
        V, K = self.shape
        out = np.empty((K, V))
        lda_stats.sparse_phi_topic_word(self.bg, self.ptr, self.top, self.val, out)
        return out

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.ptr, self.top, self.val, self.bg))

    def to_arrays(self, prefix: str) -> dict:
        return {f"{prefix}_ptr": self.ptr, f"{prefix}_top": self.top, f"{prefix}_val": self.val,
                f"{prefix}_bg": self.bg}

    @classmethod
    def from_arrays(cls, arrays: dict, prefix: str) -> SparsePhiSum:
        out = cls.__new__(cls)
        out.bg = np.array(arrays[f"{prefix}_bg"], dtype=np.float32)
        out.ptr = np.array(arrays[f"{prefix}_ptr"], dtype=np.int64)
        out.shape = (out.ptr.shape[0] - 1, out.bg.shape[0])
        out.top = np.array(arrays[f"{prefix}_top"], dtype=_topic_dtype(out.shape[1]))
        out.val = np.array(arrays[f"{prefix}_val"], dtype=np.float32)
        return out

    @classmethod
    def from_dense(cls, phi_wk_sum) -> SparsePhiSum:
        """Migration of a dense (V, K) sum (checkpoints written before the sparse sums): every cell stored."""
        out = cls(*phi_wk_sum.shape)
        out.ptr, out.top, out.val = _every_cell(phi_wk_sum, out.top.dtype)
        return out


class ChainAverage:
    """Running Rao-Blackwellised sums of phi and theta over retained samples, both sparse."""

    def __init__(self, n_docs: int, n_words: int, n_topics: int):
        self.phi = SparsePhiSum(n_words, n_topics)
        self.theta = SparseThetaSum(n_docs, n_topics)
        self.n_samples = 0

    @property
    def phi_wk_sum(self) -> np.ndarray:
        """The (V, K) float32 phi sums as a dense array (made on each access; the fit never does)."""
        return self.phi.dense()

    def add(self, n_dk, n_wk, n_k, alpha, beta: float, seeds=None, *, doc_ptr=None, z=None) -> None:
        """Add the conditional posterior means of one retained sample.

        With ``seeds`` (seeded topics) phi's mean is (n_wk + delta + beta) / (n_k + Delta + V beta):
        delta is added to ``n_wk`` and ``n_k`` for the accumulation and removed again. ``n_dk`` None:
        theta's counts come from ``doc_ptr`` and ``z`` (:meth:`SparseThetaSum.add`).
        """
        with seeded_counts(n_wk, n_k, seeds):
            self.phi.add(n_wk, n_k, beta)
        self.theta.add(n_dk, alpha, doc_ptr=doc_ptr, z=z)
        self.n_samples += 1

    def topic_word(self) -> np.ndarray:
        """phi_hat as a (K, V) float64 array with rows summing to one (no V x K temporaries)."""
        return self.phi.topic_word()

    def doc_topic(self, *, in_place: bool = False) -> np.ndarray:
        """theta_hat as a (D, K) float32 array with rows summing to one (made from the sparse sums).

        ``in_place`` is accepted for compatibility; the sums are left as they are.
        """
        return self.theta.dense()

    def to_arrays(self) -> dict:
        return {**self.phi.to_arrays("rb_phi"), **self.theta.to_arrays("rb_theta")}

    @classmethod
    def from_arrays(cls, arrays: dict, n_samples: int) -> ChainAverage:
        out = cls.__new__(cls)
        if "rb_phi_wk_sum" in arrays:  # a checkpoint written before the sparse phi sums
            out.phi = SparsePhiSum.from_dense(arrays["rb_phi_wk_sum"])
        else:
            out.phi = SparsePhiSum.from_arrays(arrays, "rb_phi")
        if "rb_theta_sum" in arrays:  # a checkpoint written before the sparse sums
            out.theta = SparseThetaSum.from_dense(arrays["rb_theta_sum"])
        else:
            out.theta = SparseThetaSum.from_arrays(arrays, "rb_theta")
        out.n_samples = int(n_samples)
        return out


def final_state_theta(n_dk, alpha, *, doc_ptr=None, z=None) -> SparseThetaSum:
    """theta's source from one state, when no sample was retained: (n_dk + alpha) / (N_d + A), kept sparse.

    The dense float32 array is made only when asked (:meth:`SparseThetaSum.dense`); no D x K float64
    temporaries (the dense fallback used to cost more memory than averaging did). ``n_dk`` None: the
    counts come from ``doc_ptr`` and ``z``.
    """
    n_docs = n_dk.shape[0] if n_dk is not None else doc_ptr.shape[0] - 1
    theta = SparseThetaSum(n_docs, np.asarray(alpha).shape[0])
    theta.add(n_dk, alpha, doc_ptr=doc_ptr, z=z)
    return theta


class WordCounts:
    """The non-zero cells of n_wk (V, K) in CSR form: ``ptr`` (V + 1), topics ``top`` (increasing per
    word), counts ``cnt``. The fit keeps this instead of the dense table while it makes the (K, V)
    ``topic_word_`` from the final state (at K = 1000 on Debian: ~10 MiB instead of 70.9)."""

    def __init__(self, n_wk):
        V, K = n_wk.shape
        self.shape = (V, K)
        self.ptr = np.empty(V + 1, dtype=np.int64)
        lda_stats.row_nonzeros(n_wk, self.ptr)
        self.top = np.empty(int(self.ptr[-1]), dtype=_topic_dtype(K))
        self.cnt = np.empty(int(self.ptr[-1]), dtype=n_wk.dtype)
        lda_stats.sparse_rows(n_wk, self.ptr, self.top, self.cnt)

    def at(self, words, topics) -> np.ndarray:
        """n_wk[words, topics] (float64), looked up in the stored cells."""
        out = np.zeros(len(words))
        for j, (w, k) in enumerate(zip(words, topics, strict=True)):
            lo, hi = self.ptr[w], self.ptr[w + 1]
            i = lo + int(np.searchsorted(self.top[lo:hi], k))
            if i < hi and self.top[i] == k:
                out[j] = self.cnt[i]
        return out


def final_state_topic_word(n_wk, n_k, beta: float, seeds=None) -> np.ndarray:
    """E[phi | z, w] (K, V) float64 from one state, (n_wk + delta + beta) / (n_k + Delta + V beta),
    written straight into its output (no V x K temporaries). ``n_wk`` is the dense (V, K) table or its
    :class:`WordCounts` (the same values, bit for bit)."""
    V, K = n_wk.shape
    den = np.asarray(n_k, dtype=np.float64) + V * float(beta)
    if seeds is not None:
        den = den + seeds.topic_totals(K)
    phi = np.empty((K, V))
    if isinstance(n_wk, WordCounts):
        lda_stats.topic_word_from_sparse_counts(n_wk.ptr, n_wk.top, n_wk.cnt, den, float(beta), phi)
    else:
        lda_stats.topic_word_from_counts(n_wk, den, float(beta), phi)
    if seeds is not None:
        t, w = seeds.topics, seeds.words
        n = n_wk.at(w, t) if isinstance(n_wk, WordCounts) else n_wk[w, t]
        phi[t, w] = (n + float(beta) + seeds.counts) / den[t]
    return phi
