"""Numbers about quality: held-out likelihood and perplexity, topic quality, latent-projection classification
and retrieval."""

from harmonium.evaluation._heldout import LogLikelihoodResult
from harmonium.evaluation.classification import (
    LogisticRegression,
    accuracy_table,
    latent_classification,
    nearest_neighbour_predict,
)
from harmonium.evaluation.coherence import CoherenceResult, coherence, relevance, top_relevant_words, topic_diversity
from harmonium.evaluation.completion import (
    CompletionResult,
    completion_perplexity,
    document_completion,
    held_out_log_likelihood,
)
from harmonium.evaluation.importance import importance_sampling
from harmonium.evaluation.left_to_right import left_to_right
from harmonium.evaluation.likelihood import PerplexityResult, exact_log_likelihood, log_likelihood, perplexity
from harmonium.evaluation.lsi import LSI
from harmonium.evaluation.retrieval import RECALL_LEVELS, RetrievalResult, retrieval_precision

__all__ = [
    "CoherenceResult",
    "CompletionResult",
    "LSI",
    "LogLikelihoodResult",
    "LogisticRegression",
    "PerplexityResult",
    "RECALL_LEVELS",
    "RetrievalResult",
    "accuracy_table",
    "coherence",
    "completion_perplexity",
    "document_completion",
    "exact_log_likelihood",
    "held_out_log_likelihood",
    "importance_sampling",
    "latent_classification",
    "left_to_right",
    "log_likelihood",
    "nearest_neighbour_predict",
    "perplexity",
    "relevance",
    "retrieval_precision",
    "top_relevant_words",
    "topic_diversity",
]
