"""Latent Dirichlet allocation declared on the generic CAVI engine (the reference VB path).

Seed 003/004 LDA with a Dirichlet prior on the topics (Blei, Ng & Jordan 2003,
sec. 5.4 "smoothing"): theta_d ~ Dir(alpha) for every document d,
phi_k ~ Dir(eta) for every topic k, z_dn ~ Cat(theta_d), w_dn ~ Cat(phi_{z_dn}).
As a :class:`~harmonium.models.conjugate.Model`::

    Global("theta", Dirichlet(alpha), size=D)            # q(theta_d) = Dir(alpha~_d)
    Global("phi",   Dirichlet(eta),   size=K)            # q(phi_k)   = Dir(beta~_k)
    Gate("z", parent="theta", groups=doc_of_token)        # q(z_dn)    = Cat(gamma~_dn)
    Observed("w", Categorical, params="phi", gate="z", data=words, fixed={"n_categories": V})

The engine (:mod:`harmonium.inference.vi.cavi`) then runs exactly seed 004
eqs. 4-6: alpha~_dk = alpha_k + sum_n gamma~_dnk,
beta~_kw = eta_w + sum_dn 1(w_dn = w) gamma~_dnk and
gamma~_dnk ∝ exp(psi(alpha~_dk) + psi(beta~_{k w_dn}) - psi(sum_w beta~_kw)).

This is the generic, token-level reference implementation; the production LDA
variational Bayes is :mod:`harmonium.inference.vi.lda_vb` (numba, counts).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from harmonium.errors import InvalidParameterError
from harmonium.expfam.categorical import Categorical
from harmonium.expfam.dirichlet import Dirichlet
from harmonium.models.conjugate import Gate, Global, Model, Observed, positive_parameter

__all__ = ["THETA", "PHI", "Z", "W", "lda_cavi_model", "tokens_of", "variational_parameters"]

THETA, PHI, Z, W = "theta", "phi", "z", "w"


def tokens_of(docs: Sequence, n_words: int) -> tuple[np.ndarray, np.ndarray]:
    """``(words, doc_of_token)`` from a list of word-id arrays, checked against the vocabulary size.

    Raises
    ------
    InvalidParameterError
        For a document that is not a 1-d integer sequence, or a word id outside [0, n_words).
    """
    words, owners = [], []
    for d, doc in enumerate(docs):
        arr = np.asarray(doc)
        if arr.size == 0:
            arr = arr.astype(np.int64).reshape(0)
        if arr.ndim != 1 or not np.issubdtype(arr.dtype, np.integer):
            raise InvalidParameterError(
                f"Document {d} must be a 1-d sequence of integer word ids (lda_cavi_model). "
                f"Got dtype {arr.dtype}, shape {arr.shape}."
            )
        if arr.size and (arr.min() < 0 or arr.max() >= n_words):
            bad = int(arr[(arr < 0) | (arr >= n_words)][0])
            raise InvalidParameterError(
                f"word id {bad} outside [0, {n_words}) (the vocabulary size) in document {d} (lda_cavi_model)."
            )
        words.append(arr.astype(np.int64))
        owners.append(np.full(arr.size, d, dtype=np.int64))
    if not words or sum(w.size for w in words) == 0:
        raise InvalidParameterError("lda_cavi_model needs at least one document with at least one token.")
    return np.concatenate(words), np.concatenate(owners)


def lda_cavi_model(docs: Sequence, n_topics: int, n_words: int, alpha=0.1, eta=0.01) -> Model:
    """LDA over token lists as a conjugate-exponential :class:`Model` for the CAVI engine.

    Parameters
    ----------
    docs : sequence of 1-d int arrays
        Word ids of each document (token lists; empty documents are allowed).
    n_topics : int
        K.
    n_words : int
        V, the vocabulary size.
    alpha : float or array (K,)
        Dirichlet prior of each theta_d (seed 004's alpha).
    eta : float or array (V,)
        Dirichlet prior of each topic phi_k (seed 004's beta).

    Returns
    -------
    Model
        Variables ``"theta"`` (batch D), ``"phi"`` (batch K), gate ``"z"``, observed ``"w"``.
    """
    for name, value in (("n_topics", n_topics), ("n_words", n_words)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
            raise InvalidParameterError(f"The {name!r} parameter of lda_cavi_model must be an int >= 1. Got {value!r}.")
    K, V = int(n_topics), int(n_words)
    words, owners = tokens_of(docs, V)
    D = len(docs)
    return Model([
        Global(THETA, Dirichlet(positive_parameter("lda_cavi_model", "alpha", alpha, (K,))), size=D),
        Global(PHI, Dirichlet(positive_parameter("lda_cavi_model", "eta", eta, (V,))), size=K),
        Gate(Z, parent=THETA, groups=owners),
        Observed(W, Categorical, params=PHI, gate=Z, data=words, fixed={"n_categories": V}),
    ])


def variational_parameters(posteriors: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Seed 004's ``(gamma~, alpha~, beta~)`` from the engine's posteriors.

    Returns
    -------
    gamma : (N, K) responsibilities of the tokens, in document order
    alpha_tilde : (D, K) parameters of q(theta_d)
    beta_tilde : (K, V) parameters of q(phi_k)
    """
    return posteriors[Z].probs, posteriors[THETA].alpha, posteriors[PHI].alpha
