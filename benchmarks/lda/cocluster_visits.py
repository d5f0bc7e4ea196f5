"""Could a co-clustered layout spare the 2-thread sweep its second visit to each document? (issue 21)

The word-partitioned sweep (``parallel_gibbs``) visits a document once for each word block holding one of its
tokens, and skips a cell with no tokens. A layout whose shards and blocks were co-clustered, so that a shard's
documents draw their words mostly from one block, would leave some documents with tokens in one block only,
and those would be visited once. This script measures how many, on the benchmark's training split of CORPUS:

* ``library``: the library's layout (contiguous shards of equal tokens, blocks balanced per round);
* iterations of a balanced co-clustering: the second singular vectors of the degree-normalised document-word
  matrix, then alternating updates (a document's score: its share of tokens in block 1; a word's: its share of
  tokens in shard 1), each side split at its token-weighted median.

Prints the share of documents with tokens in one block only, and the four cells' token counts.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/lda/cocluster_visits.py debian 10     # corpus, iterations

2026-11-29 (twelfth session): results/cocluster-visits.txt; README "Threads: the barrier's wait is CPU, not steal".
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import svds

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks: _common

import _common as C  # noqa: E402

from harmonium.parallel.threads import partition_documents, partition_words  # noqa: E402


def main(argv) -> None:
    corpus, iterations = argv[0], int(argv[1])
    tokens = C.load_data(corpus, None).train.tokens()
    dp, w = tokens.doc_ptr, tokens.words
    D, V = len(dp) - 1, int(w.max()) + 1
    doc = np.repeat(np.arange(D), np.diff(dp))
    n_d = np.diff(dp)

    def stats(shard_of_doc, block_of):
        in_1 = np.bincount(doc, weights=block_of[w], minlength=D)
        single = float(((in_1 == 0) | (in_1 == n_d)).mean())
        cells = np.bincount(shard_of_doc[doc] * 2 + block_of[w], minlength=4)
        return f"one-block documents {single * 100:.1f}%; cells (shard, block) 00 01 10 11: {cells.tolist()}"

    parts = partition_documents(dp, 2)
    shard = np.zeros(D, np.int64)
    shard[parts[1][0]:] = 1
    print(f"{corpus}: {D} documents, {len(w)} tokens")
    print("library:", stats(shard, partition_words(dp, w, parts, V).astype(np.int64)))
    X = sp.csr_matrix((np.ones(len(w)), (doc, w)), shape=(D, V))
    n_w = np.asarray(X.sum(0)).ravel()
    Xn = sp.diags(1 / np.sqrt(n_d + 1.0)) @ X @ sp.diags(1 / np.sqrt(n_w + 1.0))
    u, s, vt = svds(Xn, k=2, random_state=0)
    second = int(np.argmin(s))
    d_score, w_score = u[:, second], vt[second]

    def median_split(score, weight):
        o = np.argsort(score, kind="stable")
        c = np.cumsum(weight[o])
        side = np.zeros(len(score), np.int64)
        side[o[c > c[-1] / 2]] = 1
        return side

    for it in range(iterations):
        block, shard = median_split(w_score, n_w), median_split(d_score, n_d)
        print(f"iteration {it}:", stats(shard, block))
        d_score = (X @ block) / np.maximum(n_d, 1)
        w_score = (X.T @ shard) / np.maximum(n_w, 1)


if __name__ == "__main__":
    main(sys.argv[1:])
