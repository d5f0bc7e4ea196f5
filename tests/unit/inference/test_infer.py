"""Inference on new documents: edge cases of the fixed-topics sampler."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from harmonium.corpus import Corpus
from harmonium.inference.mcmc.lda.infer import infer_fixed_topics


def test_word_with_zero_probability_under_every_topic_gives_valid_theta():
    # a foreign topic matrix may give a word probability 0 everywhere; the draw falls back to uniform
    phi_wk = np.array([[0.5, 0.5], [0.0, 0.0], [0.5, 0.5]])
    counts = sp.csr_matrix(np.array([[0, 3, 0], [1, 2, 1]]))
    theta = infer_fixed_topics(np.random.default_rng(0), Corpus(counts).tokens(), phi_wk, np.array([0.1, 0.1]), 10)
    assert np.isfinite(theta).all()
    np.testing.assert_allclose(theta.sum(axis=1), 1.0)
