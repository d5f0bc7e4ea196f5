"""``harmonium.sample``: MCMC on any log density with diagnostics, in one call.

Runs ``harmonium.inference.mcmc.sample.sample`` (several chains, adaptive warm-up, compiled
when the log density is a numba function) and summarises the draws with
:func:`harmonium.evaluation.diagnostics.summary` (mean, sd, quantiles, MCSE, bulk and tail ESS,
rank-normalised split R-hat).

Example::

    import numpy as np, numba, harmonium

    @numba.njit
    def logp(x):
        return -0.5 * np.sum(x * x)

    @numba.njit
    def grad(x):
        return -x

    fit = harmonium.sample(logp, np.zeros(3), grad=grad, random_state=0)
    fit.draws.shape          # (4, 1000, 3): chain, draw, parameter
    print(fit)               # the summary table
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from harmonium.evaluation.diagnostics import format_summary, summary
from harmonium.inference.mcmc.sample import SampleResult
from harmonium.inference.mcmc.sample import sample as _sample
from harmonium.parallel.seeds import check_random_state

__all__ = ["SamplingResult", "sample"]


@dataclass
class SamplingResult:
    """Draws, per-draw sampler statistics and their summary.

    Attributes
    ----------
    draws : ndarray, shape (n_chains, n_draws) + param_shape
    stats : dict of (n_chains, n_draws) arrays
        ``acceptance_prob``, ``is_divergent``, ``energy``, ``n_steps``, ``tree_depth``,
        ``logdensity``, ``step_size``, ...
    summary : dict
        From ``harmonium.evaluation.diagnostics.summary``: split R-hat, bulk and tail ESS, MCSE.
    result : SampleResult
        The sampler's ``harmonium.inference.mcmc.sample.SampleResult`` (adapted step sizes and
        masses, compile and sampling seconds).
    seed_ : int or None
        The integer seed that reproduces the run (None when a Generator was passed).
    """

    draws: np.ndarray
    stats: dict
    summary: dict
    result: SampleResult = field(repr=False)
    seed_: int | None = None

    @property
    def n_divergent(self) -> int:
        """Divergent transitions among the kept draws."""
        return int(np.nansum(self.stats["is_divergent"]))

    def __str__(self) -> str:
        head = (f"{self.result.kernel} ({self.result.backend}): {self.draws.shape[0]} chains x {self.draws.shape[1]} "
                f"draws after {self.result.n_warmup} warm-up; {self.n_divergent} divergent")
        return head + "\n" + format_summary(self.summary)


def sample(logdensity: Callable | None, init_position, *, random_state=None, names=None, **kwargs) -> SamplingResult:
    """Sample ``logdensity`` with several chains and summarise the draws.

    ``random_state`` (int, Generator or None; None draws a fresh seed, kept in ``seed_``) seeds
    the chains; ``names`` labels the flattened parameters in the summary. Every other keyword
    (``kernel``, ``n_chains``, ``n_warmup``, ``n_draws``, ``grad``, ``value_and_grad``, ``data``,
    ``step_size``, ``target_accept``, ...) is that of ``harmonium.inference.mcmc.sample.sample``.
    """
    rng, seed = check_random_state(random_state, "sample")
    result = _sample(rng, logdensity, init_position, **kwargs)
    table = summary(result.draws, names=names) if result.draws.shape[1] >= 4 else {}
    return SamplingResult(result.draws, result.stats, table, result, seed)
