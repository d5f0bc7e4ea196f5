"""An enumerable HDP posterior: 2 documents, 5 tokens, 3 words (52 clusterings of the tokens).

The joint p(z, m | w) over clusterings z (unlabelled topics) and table counts m is
enumerated from the closed form of :mod:`harmonium.models.directed.hdp`
(Chinese restaurant franchise times the Dirichlet-multinomial word likelihood).
"""

from __future__ import annotations

import itertools

import numpy as np
import scipy.sparse as sp

from harmonium.corpus import Corpus
from harmonium.models.directed.hdp import HDPModel, crf_log_prior, word_log_likelihood

# documents: [w0, w0, w1] and [w1, w2]
COUNTS = sp.csr_matrix(np.array([[2, 1, 0], [0, 1, 1]]))
CORPUS = Corpus(COUNTS, ["a", "b", "c"])
TOKENS = CORPUS.tokens()
N = int(TOKENS.words.shape[0])
DOC_OF = np.repeat(np.arange(CORPUS.n_docs), np.diff(TOKENS.doc_ptr))
ALPHA, GAMMA, BETA = 1.3, 0.9, 0.5
MODEL = HDPModel(BETA, 3)


def set_partitions(n: int) -> np.ndarray:
    """All restricted-growth strings of length n (canonical labellings of the set partitions)."""
    out = []

    def rec(prefix, k):
        if len(prefix) == n:
            out.append(list(prefix))
            return
        for v in range(k + 1):
            rec(prefix + [v], max(k, v + 1))

    rec([], 0)
    return np.array(out, dtype=np.int32)


PARTITIONS = set_partitions(N)  # (52, N)


def canonical_code(z) -> int:
    """Base-N code of the restricted-growth relabelling of z."""
    seen: dict[int, int] = {}
    code = 0
    for v in z:
        if int(v) not in seen:
            seen[int(v)] = len(seen)
        code = code * N + seen[int(v)]
    return code


def code_table() -> np.ndarray:
    """code -> partition index (or -1)."""
    table = np.full(N**N, -1, dtype=np.int64)
    for s, z in enumerate(PARTITIONS):
        table[canonical_code(z)] = s
    return table


def counts(z):
    K = int(z.max()) + 1
    n_jk = np.zeros((CORPUS.n_docs, K), dtype=np.int64)
    n_wk = np.zeros((3, K), dtype=np.int64)
    for i, k in enumerate(z):
        n_jk[DOC_OF[i], k] += 1
        n_wk[TOKENS.words[i], k] += 1
    return n_jk, n_wk


def joint_states(alpha=ALPHA, gamma=GAMMA, beta=BETA):
    """Every (clustering, table counts) pair: partition index, m_.k (padded to N) and probability."""
    part, mk, logw = [], [], []
    for s, z in enumerate(PARTITIONS):
        n_jk, n_wk = counts(z)
        lw = word_log_likelihood(n_wk, beta)
        cells = [(j, k) for j in range(n_jk.shape[0]) for k in range(n_jk.shape[1]) if n_jk[j, k] > 0]
        for ms in itertools.product(*[range(1, n_jk[j, k] + 1) for j, k in cells]):
            m_jk = np.zeros_like(n_jk)
            for (j, k), m in zip(cells, ms, strict=True):
                m_jk[j, k] = m
            part.append(s)
            row = np.zeros(N, dtype=np.int64)
            row[: n_jk.shape[1]] = m_jk.sum(axis=0)
            mk.append(row)
            logw.append(crf_log_prior(n_jk, m_jk, alpha, gamma) + lw)
    logw = np.array(logw)
    p = np.exp(logw - logw.max())
    return np.array(part, dtype=np.int64), np.array(mk), p / p.sum()


def partition_posterior(alpha=ALPHA, gamma=GAMMA, beta=BETA) -> np.ndarray:
    """p(z | w) over the 52 clusterings."""
    part, _, p = joint_states(alpha, gamma, beta)
    return np.bincount(part, weights=p, minlength=PARTITIONS.shape[0])
