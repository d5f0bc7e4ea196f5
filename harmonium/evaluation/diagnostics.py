"""Convergence diagnostics of MCMC draws: rank-normalised split R-hat, bulk and tail ESS, MCSE.

Vehtari, Gelman, Simpson, Carpenter & Bürkner (2021), "Rank-normalization, folding, and
localization: An improved R-hat for assessing convergence of MCMC", Bayesian Analysis 16(2):

* split chains: each chain's first and second halves count as two chains (the middle draw of an
  odd-length chain is dropped);
* rank normalisation: z = Phi^-1((r - 3/8) / (S + 1/4)), r the average rank among all S draws
  (eq. 14);
* R-hat = max(R-hat of the rank-normalised split chains, R-hat of the rank-normalised folded
  split chains |x - median|) (section 4.2), each from the classic
  sqrt(((n - 1) / n W + B / n) / W) (eqs. 3-4);
* ESS from the autocorrelations combined over chains, rho_t = 1 - (W - mean_m acov_m(t)) / var+
  (eq. 10), truncated by Geyer's initial positive sequence and made monotone (Geyer 1992), with
  the improved estimate tau = -1 + 2 sum rho_t + rho_{T+1} (eq. 11 and appendix) and the floor
  tau >= 1 / log10(S). Bulk ESS uses the rank-normalised split chains; tail ESS is the smaller ESS
  of the split indicators I(x <= q_0.05) and I(x <= q_0.95), q_p the (type 7) quantile of all
  draws; ``ess_mean`` uses the raw split draws;
* MCSE of the mean sd / sqrt(ess_mean); MCSE of the sd by the delta method from the ESS of the
  squared deviations, sqrt(Var((x - mean)^2) / ess) / (2 sd) with the plug-in (ddof = 0) moments;
  MCSE of a quantile as half the distance between the order statistics at the 16% and 84% points of
  Beta(ESS p + 1, ESS (1 - p) + 1) (section 4.4; ranks ceil-ed / floor-ed, 1-based as in ``posterior``).

Autocovariances are computed by FFT (zero-padded to a fast length >= 2n, biased estimator,
Geyer 1992). These are the definitions of the ``posterior`` R package and of ArviZ (``az.rhat``,
``az.ess`` bulk / tail / mean, ``az.mcse`` mean / sd / quantile), which
``tests/unit/evaluation/test_diagnostics_arviz.py`` holds them to (relative difference < 1e-10).
:func:`summary` uses ArviZ when it is installed (``method="auto"``) and these functions otherwise;
:func:`to_inference_data` hands draws to ArviZ's ``InferenceData`` (optional extra
``pip install harmonium[arviz]``). Draws are arrays of shape (n_chains, n_draws, *param_shape);
results have ``param_shape``.
"""

from __future__ import annotations

import numpy as np
from scipy import fft as sp_fft
from scipy import special, stats

from harmonium.errors import InvalidParameterError

__all__ = [
    "autocorrelation", "autocovariance", "ess", "ess_bulk", "ess_mean", "ess_tail", "mcse_mean", "mcse_quantile",
    "mcse_sd", "rank_normalize", "rhat", "split_chains", "summary", "to_inference_data",
]
ARVIZ_HINT = "pip install harmonium[arviz]"


def _as_draws(draws, owner: str, min_draws: int = 4) -> tuple[np.ndarray, tuple]:
    """(n_chains, n_draws, P) float array and param_shape; validated."""
    x = np.asarray(draws, dtype=np.float64)
    if x.ndim < 2:
        raise InvalidParameterError(
            f"The 'draws' parameter of {owner} must have shape (n_chains, n_draws, ...). Got shape {x.shape}."
        )
    if x.shape[1] < min_draws:
        raise InvalidParameterError(f"The 'draws' parameter of {owner} must hold at least {min_draws} draws per chain. "
                                    f"Got {x.shape[1]}.")
    return x.reshape(x.shape[0], x.shape[1], -1), x.shape[2:]


def split_chains(x: np.ndarray) -> np.ndarray:
    """(m, n, ...) -> (2m, n // 2, ...): first and last halves of each chain (middle draw dropped if n is odd)."""
    half = x.shape[1] // 2
    return np.concatenate([x[:, :half], x[:, x.shape[1] - half:]], axis=0)


def rank_normalize(x: np.ndarray) -> np.ndarray:
    """Normal scores of the pooled average ranks, per parameter (last axis), for x of shape (m, n, P)."""
    m, n, p = x.shape
    flat = x.reshape(m * n, p)
    r = stats.rankdata(flat, method="average", axis=0)
    z = special.ndtri((r - 0.375) / (m * n + 0.25))
    return z.reshape(m, n, p)


def autocovariance(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Biased autocovariance (divided by n) of x along ``axis``, by FFT, lags 0 .. n-1."""
    x = np.asarray(x, dtype=np.float64)
    x = np.moveaxis(x, axis, -1)
    n = x.shape[-1]
    size = sp_fft.next_fast_len(2 * n, real=True)
    centred = x - x.mean(axis=-1, keepdims=True)
    f = sp_fft.rfft(centred, n=size, axis=-1)
    acov = sp_fft.irfft(f * np.conjugate(f), n=size, axis=-1)[..., :n] / n
    return np.moveaxis(acov, -1, axis)


def autocorrelation(x, axis: int = -1) -> np.ndarray:
    """Autocorrelation (acov_t / acov_0) along ``axis``; NaN where a series is constant."""
    acov = autocovariance(x, axis=axis)
    a0 = np.take(acov, [0], axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        return acov / a0


def _ess_1(x: np.ndarray) -> float:
    """ESS of one parameter's (m, n) draws (chains as given, no splitting)."""
    m, n = x.shape
    if not np.all(np.isfinite(x)):
        return np.nan
    if np.ptp(x) < np.finfo(float).resolution * max(1.0, float(np.abs(x).max())):
        return float(m * n)
    acov = autocovariance(x, axis=1)
    chain_mean = x.mean(axis=1)
    mean_var = acov[:, 0].mean() * n / (n - 1.0)
    var_plus = mean_var * (n - 1.0) / n
    if m > 1:
        var_plus += chain_mean.var(ddof=1)
    rho = np.zeros(n)
    mean_acov = acov.mean(axis=0)
    rho_even = 1.0
    rho[0] = rho_even
    rho_odd = 1.0 - (mean_var - mean_acov[1]) / var_plus if n > 1 else 0.0
    if n > 1:
        rho[1] = rho_odd
    # Geyer's initial positive sequence
    t = 1
    while t < n - 3 and rho_even + rho_odd > 0.0:
        rho_even = 1.0 - (mean_var - mean_acov[t + 1]) / var_plus
        rho_odd = 1.0 - (mean_var - mean_acov[t + 2]) / var_plus
        if rho_even + rho_odd >= 0.0:
            rho[t + 1] = rho_even
            rho[t + 2] = rho_odd
        t += 2
    max_t = t - 2
    if rho_even > 0.0:  # improved estimate (antithetic chains)
        rho[max_t + 1] = rho_even
    # Geyer's initial monotone sequence
    t = 1
    while t <= max_t - 2:
        if rho[t + 1] + rho[t + 2] > rho[t - 1] + rho[t]:
            rho[t + 1] = (rho[t - 1] + rho[t]) / 2.0
            rho[t + 2] = rho[t + 1]
        t += 2
    size = m * n
    tau = -1.0 + 2.0 * rho[: max_t + 1].sum() + rho[max_t + 1: max_t + 2].sum()
    tau = max(tau, 1.0 / np.log10(size))
    return float(size / tau) if np.all(np.isfinite(rho)) else np.nan


def _per_param(fn, x: np.ndarray, shape: tuple) -> np.ndarray:
    return np.array([fn(x[:, :, k]) for k in range(x.shape[2])], dtype=np.float64).reshape(shape)


def ess(draws) -> np.ndarray:
    """ESS of the draws as given (chains not split, not rank-normalised): the classic estimate."""
    x, shape = _as_draws(draws, "ess")
    return _per_param(_ess_1, x, shape)


def ess_mean(draws) -> np.ndarray:
    """ESS for the mean: split chains, raw values."""
    x, shape = _as_draws(draws, "ess_mean")
    return _per_param(_ess_1, split_chains(x), shape)


def ess_bulk(draws) -> np.ndarray:
    """Bulk ESS: rank-normalised split chains."""
    x, shape = _as_draws(draws, "ess_bulk")
    return _per_param(_ess_1, rank_normalize(split_chains(x)), shape)


def _ess_quantile_1(x: np.ndarray, prob: float) -> float:
    """ESS of the indicator I(x <= q_prob) on split chains; x is one parameter's (m, n) unsplit draws."""
    indicator = (x <= np.quantile(x, prob)).astype(np.float64)
    return _ess_1(split_chains(indicator))


def ess_tail(draws) -> np.ndarray:
    """Tail ESS: min of the ESS of I(x <= q_0.05) and I(x <= q_0.95) on split chains."""
    x, shape = _as_draws(draws, "ess_tail")
    return _per_param(lambda v: min(_ess_quantile_1(v, 0.05), _ess_quantile_1(v, 0.95)), x, shape)


def _rhat_1(x: np.ndarray) -> float:
    m, n = x.shape
    if not np.all(np.isfinite(x)):
        return np.nan
    w = x.var(axis=1, ddof=1).mean()
    b = n * x.mean(axis=1).var(ddof=1)
    if w == 0.0:
        return np.nan
    return float(np.sqrt(((n - 1.0) / n * w + b / n) / w))


def rhat(draws) -> np.ndarray:
    """Rank-normalised split R-hat: max of the bulk and folded-tail versions (needs >= 2 split chains)."""
    x, shape = _as_draws(draws, "rhat")
    s = split_chains(x)
    bulk = rank_normalize(s)
    folded = rank_normalize(np.abs(s - np.median(s.reshape(-1, s.shape[2]), axis=0)))
    return np.maximum(_per_param(_rhat_1, bulk, shape), _per_param(_rhat_1, folded, shape))


def mcse_mean(draws) -> np.ndarray:
    """Monte Carlo standard error of the posterior mean: sd / sqrt(ess_mean)."""
    x, shape = _as_draws(draws, "mcse_mean")
    sd = x.reshape(-1, x.shape[2]).std(axis=0, ddof=1).reshape(shape)
    return sd / np.sqrt(ess_mean(draws))


def mcse_sd(draws) -> np.ndarray:
    """MCSE of the posterior sd by the delta method: sqrt(Var(c^2) / ESS(c^2)) / (2 sqrt(E c^2)), c = x - mean.

    The moments are plug-in (ddof = 0) and the ESS is that of the split squared deviations, as in
    ``posterior`` and ArviZ (``az.mcse(method="sd")``).
    """
    x, shape = _as_draws(draws, "mcse_sd")
    flat = x.reshape(-1, x.shape[2])
    centred = x - flat.mean(axis=0)
    sq = centred ** 2
    ess_sq = _per_param(_ess_1, split_chains(sq), (x.shape[2],))
    var = sq.reshape(-1, x.shape[2]).mean(axis=0)
    fourth = (sq ** 2).reshape(-1, x.shape[2]).mean(axis=0)
    var_of_var = np.maximum(fourth - var ** 2, 0.0) / ess_sq
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.sqrt(var_of_var / var / 4.0).reshape(shape)


def mcse_quantile(draws, prob: float) -> np.ndarray:
    """MCSE of the ``prob`` quantile from the ESS of the indicator I(x <= q_prob)."""
    if not 0.0 < prob < 1.0:
        raise InvalidParameterError(f"The 'prob' parameter of mcse_quantile must be a float > 0 and < 1. Got {prob!r}.")
    x, shape = _as_draws(draws, "mcse_quantile")

    def one(v):
        size_ess = _ess_quantile_1(v, prob)
        a = stats.beta.ppf([0.1586553, 0.8413447], size_ess * prob + 1, size_ess * (1 - prob) + 1)
        srt = np.sort(v.reshape(-1))
        size = srt.size
        # the order statistics of rank floor(a0 S) and ceil(a1 S), 1-based, clipped to the sample
        lo = srt[int(np.floor(np.nanmax([a[0] * size - 1.0, 0])))]
        hi = srt[int(np.ceil(np.nanmin([a[1] * size - 1.0, size - 1])))]
        return (hi - lo) / 2.0

    return _per_param(one, x, shape)


def _import_arviz(owner: str):
    """ArviZ, imported on first use; without it, one ImportError naming the optional extra."""
    try:
        import arviz
    except ImportError as exc:
        raise ImportError(f"{owner} needs ArviZ, which is harmonium's optional 'arviz' extra: {ARVIZ_HINT}.") from exc
    return arviz


def _arviz_available() -> bool:
    try:
        _import_arviz("summary")
    except ImportError:
        return False
    return True


def _arviz_diagnostics(x: np.ndarray, shape: tuple) -> dict:
    """mcse_mean, mcse_sd, ess_bulk, ess_tail, r_hat of (m, n, P) draws computed by ArviZ.

    ``az.mcse(method="sd")`` of ArviZ 0.23 fails under numpy >= 2.3 when numba is installed (it calls
    float() on a 1-element array), so the sd's MCSE takes ArviZ's ESS of the squared deviations into
    the same delta-method formula (:func:`mcse_sd`).
    """
    az = _import_arviz("summary")
    ds = az.convert_to_dataset(x, group="posterior")
    name = next(iter(ds.data_vars))

    def values(res):
        return np.asarray(res[name].values, dtype=np.float64).reshape(shape)

    flat = x.reshape(-1, x.shape[2])
    sq = (x - flat.mean(axis=0)) ** 2
    ess_sq = np.asarray(az.ess(az.convert_to_dataset(sq), method="mean")[name].values, dtype=np.float64)
    var = sq.reshape(-1, x.shape[2]).mean(axis=0)
    fourth = (sq ** 2).reshape(-1, x.shape[2]).mean(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        sd_mcse = np.sqrt(np.maximum(fourth - var ** 2, 0.0) / ess_sq / var / 4.0).reshape(shape)
    return {"mcse_mean": values(az.mcse(ds, method="mean")), "mcse_sd": sd_mcse,
            "ess_bulk": values(az.ess(ds, method="bulk")), "ess_tail": values(az.ess(ds, method="tail")),
            "r_hat": values(az.rhat(ds, method="rank"))}


def summary(draws, names=None, quantiles=(0.05, 0.5, 0.95), method: str = "auto") -> dict:
    """Per-parameter mean, sd, quantiles, mcse_mean, mcse_sd, ess_bulk, ess_tail, r_hat.

    Returns a dict of arrays of ``param_shape`` (plus ``"name"``, flat names such as ``x[0, 1]``
    unless ``names`` is given), in the order of the flattened parameters. Needs >= 4 draws per chain;
    R-hat needs >= 2 chains or >= 4 draws (split chains).

    ``method``: "auto" computes the MCSEs, ESSs and R-hat with ArviZ when it is installed and the
    draws have >= 2 chains, and with this module's functions otherwise; "arviz" insists on ArviZ
    (ImportError naming ``pip install harmonium[arviz]`` without it); "harmonium" always uses this
    module. The two agree to rounding (same definitions, see the module docstring), with one
    difference: for a single chain ArviZ reports R-hat as NaN (it asks for 2 chains), this module
    the split R-hat of its two halves (as the ``posterior`` package does).
    """
    if method not in ("auto", "arviz", "harmonium"):
        raise InvalidParameterError(f"The 'method' parameter of summary must be one of 'auto', 'arviz', 'harmonium'. "
                                    f"Got {method!r}.")
    x, shape = _as_draws(draws, "summary")
    flat = x.reshape(-1, x.shape[2])
    out = {}
    if names is None:
        names = ["x"] if shape == () else ["x[" + ", ".join(map(str, idx)) + "]" for idx in np.ndindex(*shape)]
    if len(names) != x.shape[2]:
        raise InvalidParameterError(f"The 'names' parameter of summary must hold {x.shape[2]} names. Got {len(names)}.")
    out["name"] = list(names)
    out["mean"] = flat.mean(axis=0).reshape(shape)
    out["sd"] = flat.std(axis=0, ddof=1).reshape(shape)
    for q in quantiles:
        out[f"q{100 * q:g}"] = np.quantile(flat, q, axis=0).reshape(shape)
    if method == "arviz" or (method == "auto" and x.shape[0] >= 2 and _arviz_available()):
        with np.errstate(invalid="ignore", divide="ignore"):  # constant draws: NaN R-hat, as ours
            out.update(_arviz_diagnostics(x, shape))
        return out
    out["mcse_mean"] = mcse_mean(draws)
    out["mcse_sd"] = mcse_sd(draws)
    out["ess_bulk"] = ess_bulk(draws)
    out["ess_tail"] = ess_tail(draws)
    out["r_hat"] = rhat(draws)
    return out


def to_inference_data(posterior: dict, sample_stats: dict | None = None, *, coords: dict | None = None,
                      dims: dict | None = None, attrs: dict | None = None, owner: str = "to_inference_data"):
    """An ArviZ ``InferenceData`` of draws (needs the optional extra: ``pip install harmonium[arviz]``).

    Parameters
    ----------
    posterior : dict of str -> array (n_chains, n_draws, *shape)
        The draws, one array a variable; every variable has the same chains and draws.
    sample_stats : dict of str -> array (n_chains, n_draws), optional
        Per-draw sampler statistics under ArviZ's names (``lp``, ``acceptance_rate``, ``diverging``,
        ``energy``, ``step_size``, ``tree_depth``, ``n_steps``).
    coords, dims : optional
        Dimension labels and names of the variables, as ``arviz.from_dict`` takes them.
    attrs : dict, optional
        Metadata, set on the InferenceData and on each of its groups.
    """
    if not isinstance(posterior, dict) or not posterior:
        raise InvalidParameterError(f"The 'posterior' parameter of {owner} must be a non-empty dict of arrays "
                                    f"(n_chains, n_draws, ...). Got {type(posterior).__name__}.")
    lead = None
    checked = {}
    for group, arrays in (("posterior", posterior), ("sample_stats", sample_stats or {})):
        for name, value in arrays.items():
            a = np.asarray(value)
            if a.ndim < 2 or (lead is not None and a.shape[:2] != lead):
                raise InvalidParameterError(
                    f"{group}[{name!r}] passed to {owner} must have shape (n_chains, n_draws, ...) "
                    f"{'= ' + str(lead) + ' ...' if lead else ''}. Got shape {a.shape}.")
            lead = a.shape[:2] if lead is None else lead
            checked.setdefault(group, {})[name] = a
    az = _import_arviz(owner)
    attrs = dict(attrs or {})
    return az.from_dict(posterior=checked["posterior"], sample_stats=checked.get("sample_stats"), coords=coords,
                        dims=dims, attrs=dict(attrs), posterior_attrs=dict(attrs), sample_stats_attrs=dict(attrs))


def format_summary(table: dict, digits: int = 3) -> str:
    """A plain-text table of :func:`summary`'s output, one row per parameter."""
    cols = [k for k in table if k != "name"]
    rows = [["name"] + cols]
    for i, name in enumerate(table["name"]):
        rows.append([name] + [f"{np.ravel(table[c])[i]:.{digits}g}" for c in cols])
    widths = [max(len(r[j]) for r in rows) for j in range(len(rows[0]))]
    return "\n".join("  ".join(v.rjust(w) for v, w in zip(r, widths, strict=True)) for r in rows)
