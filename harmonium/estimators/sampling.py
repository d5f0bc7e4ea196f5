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
    idata = fit.to_inference_data()   # ArviZ InferenceData (pip install harmonium[arviz])

The summary's MCSE, ESS and R-hat are ArviZ's when ArviZ is installed and
:mod:`harmonium.evaluation.diagnostics`' otherwise (the same definitions).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from harmonium._version import __version__
from harmonium.errors import InvalidParameterError
from harmonium.evaluation.diagnostics import format_summary, summary, to_inference_data
from harmonium.inference.mcmc.sample import SampleResult
from harmonium.inference.mcmc.sample import sample as _sample
from harmonium.parallel.seeds import check_random_state

__all__ = ["SamplingResult", "sample"]

# our per-draw statistics -> ArviZ's sample_stats names
_STAT_NAMES = {"logdensity": "lp", "acceptance_prob": "acceptance_rate", "is_divergent": "diverging",
               "energy": "energy", "n_steps": "n_steps", "tree_depth": "tree_depth", "step_size": "step_size"}


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
    names : list of str or None
        The flat parameter names given to :func:`sample` (None: one array variable ``x``).
    """

    draws: np.ndarray
    stats: dict
    summary: dict
    result: SampleResult = field(repr=False)
    seed_: int | None = None
    names: list | None = None

    def to_inference_data(self):
        """The draws and sampler statistics as an ArviZ ``InferenceData`` (``pip install harmonium[arviz]``).

        ``posterior`` holds one variable per name given to :func:`sample` (shape (chain, draw)), or
        one variable ``x`` of shape ``(chain, draw, *param_shape)``; ``sample_stats`` holds the per-draw
        statistics under ArviZ's names (``lp``, ``acceptance_rate``, ``diverging``, ``energy``,
        ``n_steps``, ``tree_depth``, ``step_size``), leaving out those the kernel does not have
        (all NaN); ``attrs`` name the kernel, backend, warm-up length and seed.
        """
        n_chains, n_draws = self.draws.shape[:2]
        if self.names is not None:
            flat = self.draws.reshape(n_chains, n_draws, -1)
            if len(self.names) != flat.shape[2]:
                raise InvalidParameterError(f"The 'names' given to sample must hold {flat.shape[2]} names (one per "
                                            f"flattened parameter). Got {len(self.names)}.")
            posterior = {name: flat[:, :, k] for k, name in enumerate(self.names)}
        else:
            posterior = {"x": self.draws}
        stats = {}
        for ours, theirs in _STAT_NAMES.items():
            v = self.stats.get(ours)
            if v is None or np.all(np.isnan(v)):
                continue
            stats[theirs] = v.astype(bool) if theirs == "diverging" else (
                v.astype(np.int64) if theirs in ("n_steps", "tree_depth") else v)
        attrs = {"inference_library": "harmonium", "inference_library_version": __version__,
                 "kernel": self.result.kernel, "backend": self.result.backend, "n_warmup": self.result.n_warmup}
        if self.seed_ is not None:
            attrs["seed"] = self.seed_
        return to_inference_data(posterior, stats, attrs=attrs, owner="SamplingResult.to_inference_data")

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
    return SamplingResult(result.draws, result.stats, table, result, seed, None if names is None else list(names))
