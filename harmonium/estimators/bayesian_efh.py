"""``BayesianEFH``: the Bayesian exponential family harmonium (seed 000).

The couplings W of every wing get the column-iid Gaussian prior of seed 000 eq. 7; theta is
estimated by maximum likelihood (contrastive divergence, as the other harmonium estimators) and
lambda = 0; the posterior over W (eq. 9) is sampled by the Langevin algorithm with brief sampling
(eqs. 13-17, §3.2), optionally Metropolis-adjusted or on mini-batches (SGLD); the prior's mean and
scale can be estimated by Monte Carlo EM (empirical Bayes, eqs. 23-27). ``transform`` is the
predictive posterior mean E[h | x, X] = (1/m) sum_k E[h | x, W_k] (eq. 22) and
:meth:`BayesianEFH.log_prob_hidden` the predictive density p(h | x, X) (eq. 21).

Architectures: the default is Bayesian GB-EFH (binary words, unit-variance Gaussian topics);
``wings=[("words", "bernoulli"), ("features", "gaussian")]`` gives the Bayesian dual-wing harmonium
(each wing its own prior); any EFH wings/hidden units work.

Pieces: :mod:`harmonium.models.undirected.bayesian_efh` (prior, gradient terms),
:mod:`harmonium.inference.mcmc.bayesian_efh.langevin` (the sampler),
``harmonium.inference.learning.empirical_bayes``.
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

from harmonium._progress import progress_bar
from harmonium._validation import NONE, InstanceOf, Interval, Options
from harmonium.errors import InvalidParameterError
from harmonium.estimators._base import register
from harmonium.estimators.efh import _COMMON_CONSTRAINTS, _HarmoniumEstimator
from harmonium.inference.learning.empirical_bayes import monte_carlo_em
from harmonium.inference.mcmc.bayesian_efh import langevin as bl
from harmonium.models.undirected import bayesian_efh as befh
from harmonium.models.undirected.units import units_from_spec
from harmonium.parallel.seeds import generator_from_state

__all__ = ["BayesianEFH"]

_ARRAYLIKE = InstanceOf((int, float, list, tuple, np.ndarray), "a float or a list of floats")


def _v_diagnostics(draws, model, max_entries: int = 500) -> dict:
    """Split R-hat and bulk ESS of the identifiable V = W W^T of the first wing (upper triangle,
    at most ``max_entries`` entries): p(x | W) depends on W only through V (seed 000 eq. 28), so W's
    own coordinates wander along rotations and their R-hat says nothing about convergence."""
    from harmonium.evaluation.diagnostics import ess_bulk, rhat

    n_c, n_s, _ = draws.shape
    shape = model.params["W:0"].shape
    size = int(np.prod(shape))
    W = draws[..., :size].reshape(n_c, n_s, *shape)
    iu = np.triu_indices(shape[0])
    pick = np.linspace(0, iu[0].size - 1, min(max_entries, iu[0].size)).astype(int)
    V = np.einsum("csmj,csmj->csm", W[:, :, iu[0][pick]], W[:, :, iu[1][pick]])
    r, e = rhat(V), ess_bulk(V)
    return {"max_rhat": float(np.nanmax(r)), "min_ess_bulk": float(np.nanmin(e))}


@register
class BayesianEFH(_HarmoniumEstimator):
    """Bayesian EFH (seed 000): a Gaussian prior on W, its posterior sampled by Langevin MCMC.

    Parameters
    ----------
    n_hidden, wings : int, list of (name, unit type); default 10, ``[("words", "bernoulli")]``
        J hidden units (topics) and the visible wings, as :class:`~harmonium.estimators.efh.EFH`; the
        default is the Bayesian GB-EFH; with ``("features", "gaussian")`` added, the Bayesian dual-wing harmonium.
    hidden : unit type, default "gaussian"
        Unit-variance Gaussian topics with lambda = 0 fixed (seed 000 §2).
    prior_mean, prior_scale : float or list (one per wing of floats or per-unit lists), default 0.0, 0.1
        mu and sigma of W_j ~ N(mu, diag(sigma^2)) (eq. 7; seed 000 §5.1 uses 0 and 0.1).
    prior_covariance : (M, M) array-like, optional
        A full covariance for the first wing's columns instead of ``prior_scale``.
    empirical_bayes : {False, True, "scale"}, default False
        Estimate mu and sigma by Monte Carlo EM (eqs. 23-27) started from the ML couplings; "scale":
        keep mu at ``prior_mean`` and estimate sigma alone, started from ``prior_scale`` (a free mu
        breaks the rotation invariance of the posterior of W W^T and can run away; see
        ``harmonium.inference.learning.empirical_bayes``).
    n_em_iter : int, default 5
    sampler : {"langevin", "mala", "sgld"}, default "langevin"
        The paper's unadjusted Langevin chain (eq. 13); Metropolis-adjusted with the log Z ratio
        by importance sampling (eq. 12) from ``n_is_gibbs`` Gibbs sweeps; or stochastic-gradient
        Langevin on ``posterior_batch_size`` rows per step.
    step_size : float, default 0.01
        eps of eq. 13 (too large: the chain diverges; too small: long burn-in, seed 000 §5.1). The
        largest stable eps is set by the stiffest row of W, whose curvature is about
        N p_i (1 - p_i) ||W^T x||^2 (p_i the rate of unit i); the prior-dominated directions then have
        an integrated autocorrelation time of about 4 sigma^2 / eps^2 steps, so take eps near 3/4 of
        the value that diverges.
    n_gibbs_brief : int, default 1
        l, the brief-sampling Gibbs sweeps per gradient (§3.2; the paper uses 1).
    n_chains, n_warmup, n_samples, thin : int
        Chains from different starts, burn-in steps, stored draws per chain, steps between draws.
        The defaults are a first look; converged chains in the sense of Vehtari et al. (2021,
        Bayesian Analysis 16(2): split R-hat <= 1.01 and bulk ESS >= 400, from >= 4 chains), read
        from ``diagnostics_``, took 4 chains x (2,000 + 8,000) steps at eps = 0.03 on seed 000's
        §5.1 problem (benchmarks/harmoniums/README.md).
    chain_init : {"ml", "prior"}, default "ml"
        Start each chain at W^MLE plus prior-scale noise, or at a prior draw.
    posterior_batch_size : int, default 100
        SGLD mini-batch size.
    n_is_gibbs : int, default 20
        MALA: Gibbs sweeps from the data that give the samples of eq. 12.
    standardize_features : bool, default True
        Standardise Gaussian feature wings (as DualWingHarmonium).
    learning, n_gibbs, mean_field, batch_size, n_iter, learning_rate, lr_schedule, lr_decay, momentum,
    weight_decay, init_scale, dtype, n_ais_runs, n_temperatures, evaluate_every, checkpoint_path,
    checkpoint_every, random_state
        The maximum-likelihood stage (theta and the starting W by CD), as :class:`~harmonium.estimators.efh.EFH`.

    Attributes
    ----------
    W_samples_ : list of ndarray
        Per wing, the stored posterior draws of W, shape (n_chains * n_samples, n_w, J).
    W_ml_ : list of ndarray
        The ML (CD) couplings.
    model_ : Harmonium
        theta (ML) with W at the posterior mean (used by ``score`` / ``log_partition``: a plug-in).
    prior_means_, prior_scales_ : list of ndarray
        The prior used (given or estimated by empirical Bayes).
    diagnostics_ : dict
        max split R-hat and min bulk ESS over (up to 500) entries of the first wing's V = W W^T (W
        itself is identified only up to W -> WQ, seed 000 eq. 28), acceptance rates, seconds.
    trace_ : dict
        CD monitoring plus "W_trace" (chains x steps of W_11, for burn-in plots).
    """

    _parameter_constraints = {
        **_COMMON_CONSTRAINTS,
        "wings": [NONE, InstanceOf((list, tuple), "a list of wings")],
        "hidden": [InstanceOf((str, dict), "a unit type")],
        "prior_mean": [_ARRAYLIKE], "prior_scale": [_ARRAYLIKE],
        "prior_covariance": [InstanceOf((list, tuple, np.ndarray), "an (M, M) array"), NONE],
        "empirical_bayes": [Options((False, True, "scale"))],
        "n_em_iter": [Interval("int", 1, None)],
        "sampler": [Options(("langevin", "mala", "sgld"))],
        "step_size": [Interval("real", 0, None, "neither")],
        "n_gibbs_brief": [Interval("int", 1, None)],
        "n_chains": [Interval("int", 1, None)],
        "n_warmup": [Interval("int", 0, None)],
        "n_samples": [Interval("int", 1, None)],
        "thin": [Interval("int", 1, None)],
        "chain_init": [Options(("ml", "prior"))],
        "posterior_batch_size": [Interval("int", 1, None)],
        "n_is_gibbs": [Interval("int", 1, None)],
        "standardize_features": [Options((False, True))],
    }

    def __init__(self, n_hidden: int = 10, *, wings=None, hidden="gaussian", prior_mean=0.0, prior_scale=0.1,
                 prior_covariance=None, empirical_bayes: bool = False, n_em_iter: int = 5, sampler: str = "langevin",
                 step_size: float = 0.01, n_gibbs_brief: int = 1, n_chains: int = 3, n_warmup: int = 200,
                 n_samples: int = 100, thin: int = 2, chain_init: str = "ml", posterior_batch_size: int = 100,
                 n_is_gibbs: int = 20, standardize_features: bool = True, learning: str = "cd", n_gibbs: int = 1,
                 mean_field: bool = False, batch_size: int = 100, n_iter: int = 20, learning_rate: float = 0.01,
                 lr_schedule: str = "constant", lr_decay: float = 0.95, momentum: float = 0.0,
                 weight_decay: float = 0.0, init_scale: float = 0.01, dtype: str = "float64", n_ais_runs: int = 100,
                 n_temperatures: int = 14_500, evaluate_every: int = 1, checkpoint_path=None,
                 checkpoint_every: int = 5, random_state=None):
        self._set_common(locals())

    # -- architecture ---------------------------------------------------------------------
    def _architecture(self):
        hidden = units_from_spec(self.hidden, type(self).__name__)
        fixed = {"h:bias"}  # lambda = 0 (seed 000 §2)
        return self._wing_specs(), hidden, False, fixed

    def _priors(self, model) -> list:
        where = type(self).__name__
        n_w = len(model.wings)

        def per_wing(value, name):
            if isinstance(value, (int, float)):
                return [float(value)] * n_w
            value = list(np.asarray(value, dtype=object)) if not isinstance(value, list) else value
            if len(value) == n_w and n_w > 1:
                return value
            if n_w == 1:
                return [value]
            raise InvalidParameterError(f"The '{name}' parameter of {where} must be a float or one entry per wing "
                                        f"({n_w}). Got {len(value)} entries.")

        means, scales = per_wing(self.prior_mean, "prior_mean"), per_wing(self.prior_scale, "prior_scale")
        priors = []
        for w, wing in enumerate(model.wings):
            cov = None
            if w == 0 and self.prior_covariance is not None:
                cov = np.asarray(self.prior_covariance, dtype=np.float64)
            try:
                priors.append(befh.GaussianColumnPrior(wing.size, np.asarray(means[w], dtype=np.float64),
                                                       np.asarray(scales[w], dtype=np.float64), cov))
            except (InvalidParameterError, ValueError) as exc:
                raise InvalidParameterError(f"{where}: the prior of wing {wing.name!r} ({wing.size} units): {exc}. "
                                            "Give prior_mean / prior_scale as floats or per-unit lists.") from exc
        return priors

    def _langevin_config(self) -> bl.LangevinConfig:
        if self.sampler == "mala":
            return bl.LangevinConfig(step_size=self.step_size, n_gibbs=self.n_gibbs_brief, adjust="is",
                                     n_is_gibbs=self.n_is_gibbs)
        if self.sampler == "sgld":
            return bl.LangevinConfig(step_size=self.step_size, n_gibbs=self.n_gibbs_brief,
                                     batch_size=self.posterior_batch_size)
        return bl.LangevinConfig(step_size=self.step_size, n_gibbs=self.n_gibbs_brief)

    def _fitted_priors(self, rng, ml, xs, cfg) -> list:
        """The priors of W, as given or by Monte Carlo EM; sets ``prior_means_`` and ``prior_scales_``."""
        name = type(self).__name__
        priors = self._priors(ml)
        if self.empirical_bayes:
            given = {}
            if self.empirical_bayes == "scale":
                given = {"init_means": [p.mean for p in priors], "init_scales": [p.scale for p in priors],
                         "fit_mean": False}
            em = monte_carlo_em(rng, ml, xs, cfg, n_em_iter=self.n_em_iter, n_chains=min(2, self.n_chains),
                                n_warmup=max(1, self.n_warmup // 2), n_samples=max(2, self.n_samples // 5),
                                thin=self.thin, **given)
            priors = [befh.GaussianColumnPrior(w.size, m, s) for w, m, s in zip(ml.wings, em.means, em.scales,
                                                                                 strict=True)]
            self.em_history_ = em.history
        smallest = min(float(p.scale.min()) for p in priors)
        if self.step_size >= 2.0 * smallest:
            raise InvalidParameterError(
                f"{name}: step_size={self.step_size:g} must be below 2 x the smallest prior scale ({smallest:.3g}): "
                "the Euler step of eq. 13 is unstable on the prior term alone beyond it. Lower step_size "
                "or raise prior_scale.")
        self.prior_means_ = [p.mean for p in priors]
        self.prior_scales_ = [p.scale for p in priors]
        return priors

    def _chain_starts(self, rng, ml, priors) -> np.ndarray:
        """(n_chains, size of W) starting points: prior draws, or the ML weights plus prior-scaled noise."""
        q_ml = befh.pack(ml)
        starts = np.empty((self.n_chains, q_ml.size))
        for c in range(self.n_chains):
            if self.chain_init == "prior":
                starts[c] = np.concatenate([p.sample(rng, self.n_hidden).ravel() for p in priors])
            else:
                noise = np.concatenate([(p.scale[:, None] * rng.standard_normal((p.n_visible, self.n_hidden))).ravel()
                                        for p in priors])
                starts[c] = q_ml + noise
        return starts

    # -- fitting ----------------------------------------------------------------------------
    def fit(self, X, y=None, *, features=None, callback=None, progress=None):
        """theta (and the starting W) by CD, then the posterior of W by Langevin MCMC.

        Parameters
        ----------
        X : Corpus, sparse matrix or array of counts; or a tuple of per-wing arrays
        features : array, optional
            The feature wing(s) of a dual-wing model.
        callback : callable, optional
            ``callback(chain, step, state, info)`` after every Langevin step.
        progress : bool, callable or None, default None
            A progress bar over the Langevin steps of all chains, with the time left, on stderr
            (None: when stderr is a terminal; :func:`harmonium._progress.progress_bar`). The fast
            setting for a first look: fewer ``n_chains``, ``n_warmup`` and ``n_samples``.
        """
        self._validate_params()
        super().fit(X, features=features)
        name = type(self).__name__
        xs, lengths, _ = self._coerce(X, features, f"{name}.fit", fitting=False)
        rng = generator_from_state(self.rng_state_)
        ml = befh.posterior_model(self.model_)
        self.W_ml_ = [np.array(ml.params[k]) for k in befh.coupling_names(ml)]
        cfg = self._langevin_config()
        priors = self._fitted_priors(rng, ml, xs, cfg)
        starts = self._chain_starts(rng, ml, priors)
        bar = progress_bar(progress, self.n_chains * (self.n_warmup + self.n_samples * self.thin),
                           f"{name} posterior ({self.n_chains} chains)")

        def on_step(chain, step, state, info):
            bar.update()
            if callback is not None:
                callback(chain, step, state, info)

        with bar:
            res = bl.sample_posterior(rng, ml, xs, priors, cfg, n_chains=self.n_chains, n_warmup=self.n_warmup,
                                      n_samples=self.n_samples, thin=self.thin, init_positions=starts,
                                      lengths=lengths, callback=on_step if (bar.enabled or callback) else None)
        if res.n_divergent:
            raise InvalidParameterError(f"{name}.fit: {res.n_divergent} Langevin chain(s) diverged (W became "
                                        f"non-finite); lower step_size (now {self.step_size:g}).")
        draws = res.draws.reshape(-1, res.draws.shape[-1])
        self.W_samples_ = [np.stack([befh.unpack(ml, q)[k] for q in draws]) for k in befh.coupling_names(ml)]
        diag = _v_diagnostics(res.draws, ml) if self.n_samples >= 4 else {}
        self.diagnostics_ = {"max_rhat": diag.get("max_rhat", float("nan")),
                             "min_ess_bulk": diag.get("min_ess_bulk", float("nan")),
                             "acceptance": res.acceptance.tolist(), "seconds": res.seconds}
        post = ml.with_params({k: W.mean(axis=0) for k, W in zip(befh.coupling_names(ml), self.W_samples_,
                                                                  strict=True)})
        self.model_ = post
        self.trace_ = dict(self.trace_ or {})
        self.trace_["W_trace"] = res.trace.tolist()
        self.rng_state_ = rng.bit_generator.state
        self._log_partition_cache = {}
        return self

    def to_inference_data(self):
        """The stored posterior draws of W as an ArviZ ``InferenceData`` (``pip install harmonium[arviz]``).

        ``posterior`` holds one variable ``W_<wing>`` per wing, shape (chain, draw, visible, hidden)
        with dims ``<wing>_visible`` and ``hidden``; ``attrs`` record the sampler and step size. W is
        identified only up to rotations of the hidden space (seed 000 eq. 28): judge convergence on
        functions of W W^T (as ``diagnostics_`` does), not on W's own coordinates.
        """
        from harmonium.evaluation.diagnostics import to_inference_data

        self._check_fitted()
        wings = [w[0] for w in self._architecture()[0]]
        posterior, dims = {}, {}
        for wing, Ws in zip(wings, self.W_samples_, strict=True):
            name = f"W_{wing}"
            posterior[name] = Ws.reshape(self.n_chains, -1, *Ws.shape[1:])
            dims[name] = [f"{wing}_visible", "hidden"]
        attrs = {"inference_library": "harmonium", "estimator": type(self).__name__, "sampler": self.sampler,
                 "step_size": float(self.step_size), "n_warmup": int(self.n_warmup), "thin": int(self.thin)}
        return to_inference_data(posterior, dims=dims, attrs=attrs, owner=f"{type(self).__name__}.to_inference_data")

    def partial_fit(self, X, y=None, **kwargs):
        raise InvalidParameterError("BayesianEFH has no partial_fit; fit it (use sampler='sgld' for large corpora).")

    # -- the predictive posterior ----------------------------------------------------------
    def _sample_models(self):
        for k in range(self.W_samples_[0].shape[0]):
            yield self.model_.with_params({f"W:{w}": Ws[k] for w, Ws in enumerate(self.W_samples_)})

    def transform_samples(self, X, *, features=None) -> np.ndarray:
        """E[h | x, W_k] for every stored draw, shape (m, D, J)."""
        self._check_fitted()
        xs, lengths, _ = self._coerce(X, features, f"{type(self).__name__}.transform", fitting=False)
        return np.stack([np.asarray(m.mean_h(xs, lengths), dtype=np.float64) for m in self._sample_models()])

    def transform(self, X, *, features=None) -> np.ndarray:
        """The predictive posterior mean E[h | x, X] = (1/m) sum_k E[h | x, W_k] (seed 000 eq. 22)."""
        return self.transform_samples(X, features=features).mean(axis=0)

    def log_prob_hidden(self, X, h, *, features=None) -> np.ndarray:
        """log p(h | x, X) = log (1/m) sum_k p(h | x, W_k) (seed 000 eq. 21), one value per row of ``h`` (D, J)."""
        self._check_fitted()
        xs, lengths, _ = self._coerce(X, features, f"{type(self).__name__}.log_prob_hidden", fitting=False)
        h = np.asarray(h, dtype=np.float64)
        if h.shape != (xs[0].shape[0], self.n_hidden):
            raise InvalidParameterError(f"log_prob_hidden: h must have shape ({xs[0].shape[0]}, {self.n_hidden}); "
                                        f"got {h.shape}.")
        logs = np.stack([np.asarray(m.p_h_given_x(xs, lengths).log_prob(h)).reshape(h.shape).sum(axis=1)
                         for m in self._sample_models()])
        return logsumexp(logs, axis=0) - np.log(logs.shape[0])

    # -- persistence ---------------------------------------------------------------------------
    def _json_params(self) -> dict:
        out = super()._json_params()
        for k in ("prior_mean", "prior_scale", "prior_covariance"):
            v = out.get(k)
            if isinstance(v, np.ndarray):
                out[k] = v.tolist()
            elif isinstance(v, (list, tuple)):
                out[k] = [np.asarray(e).tolist() for e in v]
        return out

    def _state_for_file(self):
        arrays, extra = super()._state_for_file()
        for w, Ws in enumerate(self.W_samples_):
            arrays[f"W_samples.{w}"] = Ws
            arrays[f"W_ml.{w}"] = self.W_ml_[w]
            arrays[f"prior_mean.{w}"] = self.prior_means_[w]
            arrays[f"prior_scale.{w}"] = self.prior_scales_[w]
        extra["diagnostics_"] = self.diagnostics_
        return arrays, extra

    def _restore_from_file(self, arrays, manifest):
        super()._restore_from_file(arrays, manifest)
        n_w = len(self.model_.wings)
        self.W_samples_ = [np.asarray(arrays[f"W_samples.{w}"], dtype=np.float64) for w in range(n_w)]
        self.W_ml_ = [np.asarray(arrays[f"W_ml.{w}"], dtype=np.float64) for w in range(n_w)]
        self.prior_means_ = [np.asarray(arrays[f"prior_mean.{w}"]) for w in range(n_w)]
        self.prior_scales_ = [np.asarray(arrays[f"prior_scale.{w}"]) for w in range(n_w)]
        for w, Ws in enumerate(self.W_samples_):
            if Ws.ndim != 3 or Ws.shape[1:] != self.model_.params[f"W:{w}"].shape:
                raise ValueError(f"W_samples.{w} has shape {Ws.shape}")
        self.diagnostics_ = (manifest.get("extra") or {}).get("diagnostics_", {})
