"""Latent semantic indexing by truncated SVD: the baseline projection of the classification experiment.

Deerwester, Dumais, Landauer, Furnas & Harshman (1990), "Indexing by latent
semantic analysis". The weighted document-term matrix X (D x V) is factorised
as X ≈ U_k S_k V_k^T by a truncated SVD (``scipy.sparse.linalg.svds``, ARPACK,
started from a seeded vector; scipy only, so the result does not depend on
whether scikit-learn is installed). A document x is projected to x V_k: for the
training documents that is U_k S_k, as scikit-learn's ``TruncatedSVD.transform``.

Weightings: ``"tfidf"`` (default): n_dw * idf_w with idf_w = ln((1 + D) / (1 + df_w)) + 1,
rows scaled to unit length (scikit-learn's ``TfidfVectorizer`` defaults);
``"count"``: n_dw; ``"binary"``: 1[n_dw > 0] (the word-occurrence features of
seed 000 §5.2).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import svds

from harmonium._validation import RANDOM_STATE, Interval, Options, validate_params
from harmonium.corpus.corpus import Corpus
from harmonium.errors import CorpusError, NotFittedError
from harmonium.parallel.seeds import check_random_state


class LSI:
    """Latent semantic indexing: documents projected on the top singular directions of the weighted counts.

    Parameters
    ----------
    n_components : int, default 10
        k, the dimension of the latent space.
    weighting : {"tfidf", "count", "binary"}, default "tfidf"
    random_state : int, Generator or None, default 0
        Seeds ARPACK's starting vector.

    Attributes
    ----------
    components_ : (k, V) array
        V_k^T, rows by decreasing singular value; each row's entry of largest
        magnitude is positive (a deterministic sign).
    singular_values_ : (k,) array
    idf_ : (V,) array or None
        The idf weights (``"tfidf"`` only).

    Examples
    --------
    >>> theta = LSI(16).fit_transform(corpus)  # doctest: +SKIP
    """

    def __init__(self, n_components: int = 10, *, weighting: str = "tfidf", random_state=0):
        self.n_components = n_components
        self.weighting = weighting
        self.random_state = random_state

    def __repr__(self) -> str:
        return f"LSI(n_components={self.n_components!r}, weighting={self.weighting!r})"

    def _weigh(self, corpus: Corpus) -> sp.csr_matrix:
        X = corpus.counts.astype(np.float64)
        if self.weighting == "binary":
            X.data[:] = 1.0
        elif self.weighting == "tfidf":
            X = sp.csr_matrix(X.multiply(self.idf_[None, :]))
            norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
            X = sp.csr_matrix(sp.diags(1.0 / np.where(norms > 0, norms, 1.0)) @ X)
        return X

    def fit(self, corpus: Corpus, y=None) -> LSI:
        """Learn the k singular directions of ``corpus``."""
        validate_params(
            "LSI", {"n_components": self.n_components, "weighting": self.weighting, "random_state": self.random_state},
            {"n_components": [Interval("int", 1, None)], "weighting": [Options(("tfidf", "count", "binary"))],
             "random_state": [RANDOM_STATE]},
        )
        if not isinstance(corpus, Corpus):
            raise CorpusError(f"LSI.fit expects a harmonium Corpus; got {type(corpus).__name__}.")
        D, V = corpus.counts.shape
        if self.n_components >= min(D, V):
            raise CorpusError(
                f"LSI.fit: n_components={self.n_components} must be below min(n_docs, n_words) = {min(D, V)}."
            )
        if self.weighting == "tfidf":
            df = np.bincount(corpus.counts.indices, minlength=V)
            self.idf_ = np.log((1.0 + D) / (1.0 + df)) + 1.0
        else:
            self.idf_ = None
        X = self._weigh(corpus)
        rng, _ = check_random_state(self.random_state, "LSI")
        v0 = rng.uniform(-1.0, 1.0, size=min(D, V))
        _, s, vt = svds(X, k=self.n_components, v0=v0)
        order = np.argsort(-s, kind="stable")
        s, vt = s[order], vt[order]
        signs = np.sign(vt[np.arange(vt.shape[0]), np.abs(vt).argmax(axis=1)])
        self.components_ = vt * signs[:, None]
        self.singular_values_ = s
        self.n_words_ = V
        self.vocabulary_ = corpus.vocabulary
        return self

    def transform(self, corpus: Corpus) -> np.ndarray:
        """(D, k) projections x V_k of the weighted documents (matched to the training vocabulary by term)."""
        if getattr(self, "components_", None) is None:
            raise NotFittedError(
                "This LSI instance is not fitted yet. Call 'fit' with a corpus before using this method."
            )
        if not isinstance(corpus, Corpus):
            raise CorpusError(f"LSI.transform expects a harmonium Corpus; got {type(corpus).__name__}.")
        corpus = corpus.match_vocabulary(self.vocabulary_, "LSI.transform")
        return np.asarray(self._weigh(corpus) @ self.components_.T)

    def fit_transform(self, corpus: Corpus, y=None) -> np.ndarray:
        return self.fit(corpus).transform(corpus)
