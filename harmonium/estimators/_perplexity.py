"""The one yardstick every document model shares: ``.perplexity(X)``, held-out per-word perplexity of whole documents.

A mixin, so that LDA, HDP and every harmonium return the same
:class:`~harmonium.evaluation.PerplexityResult` as
:func:`harmonium.evaluation.perplexity` (left-to-right for the topic models,
log Z by AIS for harmoniums), with the estimator's class in ``estimator``.
Document completion (a different number: a part of each document predicts the
rest) is ``completion_perplexity`` on the topic models.
"""

from __future__ import annotations

from harmonium.estimators._base import as_corpus


class WholeDocumentPerplexity:
    """Mixin of the document estimators: :meth:`perplexity`."""

    def perplexity(self, X, *, random_state=0, **options):
        """Held-out per-word perplexity of whole documents: exp(- sum_d log p(w_d) / sum_d N_d).

        The number :func:`harmonium.evaluation.perplexity` computes for this model,
        the same for every estimator (Wallach et al. 2009): log p(w_d) by
        left-to-right particles for LDA and HDP (HDP over its used topics plus
        the new-topic pool), by -F(v_d) - log Z with log Z by AIS for harmoniums
        (Salakhutdinov & Murray 2008). Score all models on the same test
        documents to compare them. Never the harmonic mean.

        Parameters
        ----------
        X : Corpus or document-term count matrix
            Whole held-out documents (matched to the model's vocabulary by word).
        random_state : int, Generator or None, default 0
        **options
            Of :func:`harmonium.evaluation.log_likelihood`: ``n_particles``
            (default 20), ``method``, ``n_jobs`` for the topic models;
            ``n_runs``, ``n_temperatures`` of the AIS estimate of log Z (default:
            the estimator's ``n_ais_runs`` and ``n_temperatures``) and
            ``features`` for harmoniums.

        Returns
        -------
        PerplexityResult
            ``perplexity``, ``log_likelihood``, ``std_error``, ``n_tokens``,
            ``n_docs``, ``method``, ``estimator``.
        """
        from harmonium.evaluation.likelihood import perplexity

        self._check_is_fitted()
        where = f"{type(self).__name__}.perplexity"
        corpus = as_corpus(X, where, getattr(self, "vocabulary_", None))
        return perplexity(self, corpus, random_state=random_state, **options)
