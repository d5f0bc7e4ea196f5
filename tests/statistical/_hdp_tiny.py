"""Enumerable HDP posteriors: tiny corpora whose every clustering of the tokens can be listed.

The joint p(z, m | w) over clusterings z (unlabelled topics) and table counts m is
enumerated from the closed form of :mod:`harmonium.models.directed.hdp`
(Chinese restaurant franchise times the Dirichlet-multinomial word likelihood).

The module-level names are the 2-document, 5-token, 3-word corpus (52 clusterings) that most
tests use; :class:`TinyHDP` builds the same objects for any small count matrix (``BLOCKS``: 3
documents of 1-3 tokens, 203 clusterings, for the split-merge moves whose unit is a document's block).
"""

from __future__ import annotations

import itertools

import numpy as np
import scipy.sparse as sp

from harmonium.corpus import Corpus
from harmonium.models.directed.hdp import HDPModel, crf_log_prior, word_log_likelihood

ALPHA, GAMMA, BETA = 1.3, 0.9, 0.5


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


class TinyHDP:
    """An enumerable HDP posterior for the documents-by-words count matrix ``counts``."""

    def __init__(self, counts, alpha=ALPHA, gamma=GAMMA, beta=BETA):
        counts = np.asarray(counts)
        self.V = counts.shape[1]
        self.corpus = Corpus(sp.csr_matrix(counts), [f"w{v}" for v in range(self.V)])
        self.tokens = self.corpus.tokens()
        self.N = int(self.tokens.words.shape[0])
        self.doc_of = np.repeat(np.arange(self.corpus.n_docs), np.diff(self.tokens.doc_ptr))
        self.alpha, self.gamma, self.beta = alpha, gamma, beta
        self.model = HDPModel(beta, self.V)
        self.partitions = set_partitions(self.N)

    def canonical_code(self, z) -> int:
        """Base-N code of the restricted-growth relabelling of z."""
        seen: dict[int, int] = {}
        code = 0
        for v in z:
            if int(v) not in seen:
                seen[int(v)] = len(seen)
            code = code * self.N + seen[int(v)]
        return code

    def code_table(self) -> np.ndarray:
        """code -> partition index (or -1)."""
        table = np.full(self.N**self.N, -1, dtype=np.int64)
        for s, z in enumerate(self.partitions):
            table[self.canonical_code(z)] = s
        return table

    def counts(self, z):
        K = int(z.max()) + 1
        n_jk = np.zeros((self.corpus.n_docs, K), dtype=np.int64)
        n_wk = np.zeros((self.V, K), dtype=np.int64)
        for i, k in enumerate(z):
            n_jk[self.doc_of[i], k] += 1
            n_wk[self.tokens.words[i], k] += 1
        return n_jk, n_wk

    def joint_states(self, alpha=None, gamma=None, beta=None):
        """Every (clustering, table counts) pair: partition index, m_.k (padded to N) and probability."""
        alpha = self.alpha if alpha is None else alpha
        gamma = self.gamma if gamma is None else gamma
        beta = self.beta if beta is None else beta
        part, mk, logw = [], [], []
        for s, z in enumerate(self.partitions):
            n_jk, n_wk = self.counts(z)
            lw = word_log_likelihood(n_wk, beta)
            cells = [(j, k) for j in range(n_jk.shape[0]) for k in range(n_jk.shape[1]) if n_jk[j, k] > 0]
            for ms in itertools.product(*[range(1, n_jk[j, k] + 1) for j, k in cells]):
                m_jk = np.zeros_like(n_jk)
                for (j, k), m in zip(cells, ms, strict=True):
                    m_jk[j, k] = m
                part.append(s)
                row = np.zeros(self.N, dtype=np.int64)
                row[: n_jk.shape[1]] = m_jk.sum(axis=0)
                mk.append(row)
                logw.append(crf_log_prior(n_jk, m_jk, alpha, gamma) + lw)
        logw = np.array(logw)
        p = np.exp(logw - logw.max())
        return np.array(part, dtype=np.int64), np.array(mk), p / p.sum()

    def partition_posterior(self, alpha=None, gamma=None, beta=None) -> np.ndarray:
        """p(z | w) over the clusterings."""
        part, _, p = self.joint_states(alpha, gamma, beta)
        return np.bincount(part, weights=p, minlength=self.partitions.shape[0])


# documents: [w0, w0, w1] and [w1, w2]
COUNTS = np.array([[2, 1, 0], [0, 1, 1]])
_DEFAULT = TinyHDP(COUNTS)
CORPUS = _DEFAULT.corpus
TOKENS = _DEFAULT.tokens
N = _DEFAULT.N
DOC_OF = _DEFAULT.doc_of
MODEL = _DEFAULT.model
PARTITIONS = _DEFAULT.partitions  # (52, N)
canonical_code = _DEFAULT.canonical_code
code_table = _DEFAULT.code_table
counts = _DEFAULT.counts
joint_states = _DEFAULT.joint_states
partition_posterior = _DEFAULT.partition_posterior

# documents: [w0, w0, w0], [w1] and [w0, w1] (203 clusterings): blocks of 1, 2 and 3 tokens, a repeated word
BLOCKS = TinyHDP(np.array([[3, 0, 0], [0, 1, 0], [1, 1, 0]]))
