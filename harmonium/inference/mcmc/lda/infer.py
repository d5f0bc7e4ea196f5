"""Inference of topic proportions for new documents with the topics fixed (``LDA.transform``).

Gibbs sampling of the new tokens' assignments from

    p(z_i = k | z_-i, w, phi) ∝ (n_dk^-i + alpha_k) phi_kw

(seed 003's collapsed conditional with B known; theta_d integrated out),
started by a sequential draw in which each token sees only the tokens before
it. The returned estimate is the posterior mean of theta_d averaged over the
second half of the sweeps (Rao-Blackwellised):
theta_dk = (mean n_dk + alpha_k) / (N_d + sum alpha). Documents are
independent given phi, so blocks of documents run on separate threads, each
with its own child Generator: the result depends on the seed and the number
of threads only. Each draw costs O(log K + k_d): see
:mod:`harmonium._kernels.lda_infer`. No D x K count table is kept: each
document's counts are rebuilt from z when a sweep reaches it.
"""

from __future__ import annotations

import numpy as np

from harmonium._kernels import lda_infer
from harmonium.corpus.corpus import TokenStream
from harmonium.parallel.threads import child_generators, partition_documents, run_blocks


def infer_fixed_topics(
    rng: np.random.Generator,
    tokens: TokenStream,
    phi_wk: np.ndarray,
    alpha: np.ndarray,
    n_iter: int,
    *,
    n_threads: int = 1,
    sweep=None,
) -> np.ndarray:
    """Posterior-mean theta (D, K) of the documents in ``tokens`` given topics ``phi_wk`` (V, K).

    Parameters
    ----------
    rng : Generator
    tokens : TokenStream
    phi_wk : (V, K) float64 array
        Word-major topic-word probabilities (phi_kw at [w, k]); any layout: a fitted model's
        ``topic_word_.T`` (a view) is read without a copy. Only the rows of the words in ``tokens`` are
        copied, into the (rows, K) tables the sweeps read, so that transforming a few documents does not
        cost a (V, K) copy of the model.
    alpha : (K,) float64 array
    n_iter : int
        Sweeps after the sequential initialisation; the second half is averaged.
    n_threads : int
        Document blocks sampled in parallel (1: the caller's ``rng`` is used directly).
    sweep : callable, optional
        A sweep with the signature of :func:`harmonium._kernels.lda_infer.fixed_topics_sweep_sparse`
        (against a D x K count table), used instead of the default
        :func:`~harmonium._kernels.lda_infer.fixed_topics_sweep_rows`, which rebuilds each document's
        counts from z (same draws, no D x K table); tests pass deliberately broken sweeps here.
    """
    phi_wk = np.asarray(phi_wk, dtype=np.float64)
    alpha = np.ascontiguousarray(alpha, dtype=np.float64)
    n_docs = tokens.doc_ptr.shape[0] - 1
    K = alpha.shape[0]
    # the documents' distinct words, renumbered 0..n_rows-1: the kernels read phi and the prior tables by
    # that number (the same values as phi_wk[w], so the same draws as with the whole table)
    rows, local = np.unique(tokens.words, return_inverse=True)
    words = local.astype(np.int32).reshape(-1)
    if rows.shape[0] and int(rows[-1]) >= phi_wk.shape[0]:
        raise IndexError(f"word id {int(rows[-1])} is outside phi_wk's {phi_wk.shape[0]} rows")
    phi_rows = np.ascontiguousarray(phi_wk[rows])  # a gather from any layout (np.take would copy phi_wk whole)
    a_cum = np.empty((rows.shape[0], K), dtype=np.float64)
    lda_infer.word_prior_tables(phi_rows, alpha, a_cum)
    z = np.zeros(tokens.words.shape[0], dtype=np.int32)
    # the sums of n_dk over the kept sweeps, then theta in place: the only D x K array (no count table)
    total = np.zeros((n_docs, K), dtype=np.float64)
    n_dk = None if sweep is None else np.zeros((n_docs, K), dtype=np.int32)
    keep_from = n_iter // 2
    n_kept = n_iter - keep_from

    def work(block_rng, lo, hi):
        dtop = np.empty(K, dtype=np.int32)
        rbuf = np.empty(K, dtype=np.float64)
        in_doc = np.zeros(K, dtype=np.uint8)
        if sweep is None:
            drow = np.zeros(K, dtype=np.int32)
            args = (tokens.doc_ptr, words, z, phi_rows, a_cum, lo, hi)
            lda_infer.fixed_topics_sweep_rows(block_rng, *args, True, dtop, rbuf, in_doc, drow, total, False)
            for it in range(n_iter):
                lda_infer.fixed_topics_sweep_rows(block_rng, *args, False, dtop, rbuf, in_doc, drow, total,
                                                  it >= keep_from)
            return
        args = (tokens.doc_ptr, words, z, n_dk, phi_rows, a_cum, lo, hi)
        sweep(block_rng, *args, True, dtop, rbuf, in_doc)
        for it in range(n_iter):
            sweep(block_rng, *args, False, dtop, rbuf, in_doc)
            if it >= keep_from:
                lda_infer.accumulate_rows(total, n_dk, lo, hi)

    parts = partition_documents(tokens.doc_ptr, n_threads)
    rngs = [rng] if len(parts) == 1 else child_generators(rng, len(parts))
    run_blocks(work, [(rngs[p], lo, hi) for p, (lo, hi) in enumerate(parts)])
    total /= n_kept  # (mean n_dk + alpha) / its row sum, written over the sums: the same operations as
    total += alpha[None, :]  # num = total / n_kept + alpha; num / num.sum(axis=1), without their temporaries
    total /= total.sum(axis=1, keepdims=True)
    return total
