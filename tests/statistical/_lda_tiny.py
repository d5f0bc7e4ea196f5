"""An enumerable LDA posterior: 2 documents x 3 tokens, K = 2 (2**6 = 64 states)."""

from __future__ import annotations

import itertools

import numpy as np
import scipy.sparse as sp

from harmonium.corpus import Corpus
from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs
from harmonium.models.directed.lda import collapsed_log_joint, make_model

# documents: [w0, w1, w1] and [w0, w2, w2]
COUNTS = sp.csr_matrix(np.array([[1, 2, 0], [1, 0, 2]]))
CORPUS = Corpus(COUNTS, ["a", "b", "c"])
TOKENS = CORPUS.tokens()
MODEL = make_model(2, 3, [0.3, 0.8], 0.4)
N = TOKENS.words.shape[0]
K = MODEL.n_topics
STATES = np.array(list(itertools.product(range(K), repeat=N)), dtype=np.int32)


def state_index(z) -> int:
    idx = 0
    for v in z:
        idx = idx * K + int(v)
    return idx


def exact_posterior() -> np.ndarray:
    """pi(z) = p(z | w) by enumeration of the collapsed joint."""
    logp = np.array(
        [collapsed_log_joint(*cgs.state_from_assignments(TOKENS, MODEL, z)[1:], MODEL) for z in STATES]
    )
    p = np.exp(logp - logp.max())
    return p / p.sum()


def sweep_matrix(conditional) -> np.ndarray:
    """Transition matrix of one systematic sweep built from a full-conditional function.

    ``conditional(state, tokens, model, i)`` returns the normalised
    distribution of z_i; the sweep updates tokens 0..N-1 in order.
    """
    S = STATES.shape[0]
    P = np.eye(S)
    for i in range(N):
        Pi = np.zeros((S, S))
        for s, z in enumerate(STATES):
            st = cgs.state_from_assignments(TOKENS, MODEL, z)
            q = conditional(st, TOKENS, MODEL, i)
            for k in range(K):
                z2 = z.copy()
                z2[i] = k
                Pi[s, state_index(z2)] += q[k]
        P = P @ Pi
    return P


def one_sweep_from_exact(rng, pi, n_chains, sweep=None, sampler="plain", kernel=None, doc_counts=True) -> np.ndarray:
    """Histogram of states after one sweep of the real kernel from n_chains exact draws of pi.

    If the kernel leaves pi invariant the end states are iid draws from pi. ``doc_counts=False`` starts
    from states without the n_dk table (the sparse sweep rebuilds each document's row from z).
    """
    if kernel is None:
        kernel = cgs.build_kernel(sampler=sampler, compute_log_joint=False, sweep=sweep)
    starts = rng.choice(STATES.shape[0], size=n_chains, p=pi)
    hist = np.zeros(STATES.shape[0], dtype=np.int64)
    templates = [cgs.state_from_assignments(TOKENS, MODEL, z, doc_counts=doc_counts) for z in STATES]
    weights = K ** np.arange(N - 1, -1, -1)
    for s in starts:
        st = cgs.CollapsedGibbsState(*(None if a is None else a.copy() for a in templates[s]))
        st, _ = kernel(rng, st, TOKENS, MODEL)
        hist[int(st.z @ weights)] += 1
    return hist
