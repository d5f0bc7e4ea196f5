"""Numbers about quality: held-out likelihood and perplexity, diagnostics."""

from harmonium.evaluation.perplexity import (
    CompletionResult,
    completion_perplexity,
    document_completion,
    held_out_log_likelihood,
)

__all__ = ["CompletionResult", "completion_perplexity", "document_completion", "held_out_log_likelihood"]
