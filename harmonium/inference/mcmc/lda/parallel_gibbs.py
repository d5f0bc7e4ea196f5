"""Approximate distributed collapsed Gibbs sampling for LDA (AD-LDA; Newman et al. 2009).

Seed 003 ("Approximate Collapsed Gibbs Sampling") observes that when each
z_i is drawn given *estimates* of Theta and B from the previous step instead
of the exact current counts, the draws become conditionally independent and
"easily parallelized". AD-LDA applies this at the level of document blocks:

1. split the documents into P blocks of about equal token count;
2. each worker p sweeps its block with an exact collapsed sampler against its
   own copy of the word-topic counts n_wk^(p), n_k^(p) (stale with respect to
   the other blocks for the rest of the sweep; the document-topic counts n_dk
   of its block are exact, since a document lives on one worker);
3. the changes are merged: n_wk <- n_wk + sum_p (n_wk^(p) - n_wk), computed as the moves of
   worker p's tokens from their old to their new topics (no copy of the starting n_wk is kept).

Workers are threads running the numba sweeps with the GIL released. Each
worker gets a child Generator seeded from the main stream at every sweep, so
the same seed and the same number of threads give identical results whatever
the scheduling. With one thread the kernel *is* the exact serial sampler.
The approximation's effect on held-out perplexity is measured in
tests/integration and benchmarks/RESULTS.md.
"""

from __future__ import annotations

from harmonium._kernels.lda_gibbs import apply_moves
from harmonium.corpus.corpus import TokenStream
from harmonium.inference.mcmc.lda.collapsed_gibbs import (
    SAMPLERS,
    CollapsedGibbsInfo,
    CollapsedGibbsState,
    SweepCache,
    check_sampler,
)
from harmonium.inference.mcmc.lda.collapsed_gibbs import build_kernel as build_serial_kernel
from harmonium.models.directed.lda import LDAModel, collapsed_log_joint
from harmonium.parallel.threads import child_generators, partition_documents, run_blocks


def build_kernel(*, sampler: str = "sparse", n_threads: int = 2, compute_log_joint: bool = True):
    """An AD-LDA sweep over ``n_threads`` document blocks, each with the exact ``sampler``.

    Mutates the state's arrays in place. ``n_threads == 1`` returns the serial
    exact kernel of :mod:`harmonium.inference.mcmc.lda.collapsed_gibbs`.
    """
    check_sampler(sampler)
    if n_threads == 1:
        return build_serial_kernel(sampler=sampler, compute_log_joint=compute_log_joint)
    cache = SweepCache(SAMPLERS[sampler])

    def kernel(rng, state: CollapsedGibbsState, tokens: TokenStream, model: LDAModel):
        parts = partition_documents(tokens.doc_ptr, n_threads)
        rngs = child_generators(rng, len(parts))
        # worker 0 works on the shared tables, the others on private copies taken before any worker starts;
        # their changes are merged from their tokens' old and new topics (no copy of the starting tables)
        locals_ = [state] + [
            CollapsedGibbsState(state.z, state.n_dk, state.n_wk.copy(), state.n_k.copy()) for _ in parts[1:]
        ]
        first = int(tokens.doc_ptr[parts[1][0]]) if len(parts) > 1 else 0
        z_before = state.z[first:].copy()
        sweeps = [cache.get(model, tokens, part=p) for p in range(len(parts))]
        for p, sw in enumerate(sweeps):  # sweeps that copy z (warp) take it before any worker writes
            if hasattr(sw, "prepare"):
                sw.prepare(locals_[p])
        n_changed = sum(run_blocks(lambda p, lo, hi: sweeps[p](rngs[p], locals_[p], lo, hi),
                                   [(p, lo, hi) for p, (lo, hi) in enumerate(parts)]))
        locals_.clear()  # the private copies go before the merge
        for lo, hi in parts[1:]:
            i, j = int(tokens.doc_ptr[lo]), int(tokens.doc_ptr[hi])
            apply_moves(tokens.words[i:j], z_before[i - first:j - first], state.z[i:j], state.n_wk, state.n_k)
        lj = collapsed_log_joint(state.n_dk, state.n_wk, state.n_k, model) if compute_log_joint else float("nan")
        return state, CollapsedGibbsInfo(lj, int(n_changed))

    return kernel
