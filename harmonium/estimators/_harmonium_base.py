"""The shell every harmonium estimator shares (``_HarmoniumEstimator``): data, CD / PCD fitting, likelihoods, files.

The named estimators built on it (``EFH``, ``GBEFH``, ``DualWingHarmonium``, ``ReplicatedSoftmax``,
``RatePoisson``) are in :mod:`harmonium.estimators.efh`, each one a constructor and an architecture;
``BayesianEFH`` is in :mod:`harmonium.estimators.bayesian_efh`.

Models: :mod:`harmonium.models.undirected.efh` and :mod:`harmonium.models.undirected.variants`.
Learning: contrastive divergence / persistent CD, ``harmonium.inference.learning.cd``.
Likelihoods: partition functions by annealed importance sampling,
:mod:`harmonium.evaluation.partition`; ``log_likelihood_documents`` is the hook through which
:func:`harmonium.evaluation.log_likelihood` and :func:`harmonium.evaluation.perplexity` score
harmoniums on the same split as LDA.

Data: the first ("words") wing comes from a Corpus, a sparse matrix or a dense array of counts;
binary (Bernoulli) word wings use occurrence (count > 0). Further wings (the dual-wing
harmonium's features) come from ``features=`` or the Corpus's ``features``.
"""

from __future__ import annotations

import numbers
import time

import numpy as np
import scipy.sparse as sp

from harmonium._validation import NONE, Interval, Options
from harmonium.corpus.corpus import fingerprint_arrays
from harmonium.errors import CorpusError, InvalidParameterError, NotFittedError
from harmonium.estimators._base import FIT_LOOP_CONSTRAINTS, BaseEstimator, as_corpus
from harmonium.estimators._perplexity import WholeDocumentPerplexity
from harmonium.evaluation._heldout import LogLikelihoodResult
from harmonium.evaluation.partition import (
    AIS_SETTINGS,
    PartitionEstimate,
    ais_log_partition,
    base_rate_model,
    data_means,
    exact_log_partition,
    harmonium_log_likelihood,
    interpolate_log_partition,
    length_grid,
)
from harmonium.inference.learning import cd
from harmonium.inference.learning.early_stopping import EarlyStopping
from harmonium.inference.learning.schedules import SCHEDULES, gibbs_schedule, make_schedule, momentum_schedule
from harmonium.models.undirected.efh import Harmonium, Wing
from harmonium.models.undirected.units import (
    BernoulliUnits,
    GaussianUnits,
    Units,
    units_from_spec,
)
from harmonium.parallel.seeds import check_random_state, generator_from_state


class _IntPair:
    """A pair (a, b) of ints with ``low <= a`` and ``a <= b`` (``ordered``) or ``b >= low_b``: a constraint."""

    def __init__(self, text: str, low: int, low_b: int | None = None, ordered: bool = True):
        self.text, self.low, self.low_b, self.ordered = text, low, low_b, ordered

    def accepts(self, value) -> bool:
        if not (isinstance(value, (tuple, list)) and len(value) == 2
                and all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in value)):
            return False
        a, b = value
        return a >= self.low and (b >= a if self.ordered else b >= (self.low_b or self.low))

    def describe(self) -> str:
        return self.text


_COMMON_CONSTRAINTS = {
    "n_hidden": [Interval("int", 1, None)],
    "learning": [Options(("cd", "pcd"))],
    "n_gibbs": [Interval("int", 1, None),
                _IntPair("a pair (start, end) of ints with 1 <= start <= end (CD-k with k rising from start to end)",
                         1)],
    "mean_field": [Options((False, True))],
    "batch_size": [Interval("int", 1, None)],
    "n_iter": [Interval("int", 1, None)],
    "learning_rate": [Interval("real", 0, None, "neither")],
    "lr_schedule": [Options(SCHEDULES)],
    "lr_decay": [Interval("real", 0, 1, "right")],
    "momentum": [Interval("real", 0, 1, "left")],
    "weight_decay": [Interval("real", 0, None, "left")],
    "init_scale": [Interval("real", 0, None, "left")],
    "dtype": [Options(("float32", "float64"))],
    "n_ais_runs": [Interval("int", 2, None)],
    "n_temperatures": [Interval("int", 1, None)],
    "evaluate_every": [Interval("int", 0, None)],
    **FIT_LOOP_CONSTRAINTS,
}
# the training options of issue 17 (CD-k schedules are in n_gibbs above); estimators built on this shell that
# predate them (BayesianEFH) leave them out of their constructors and train with _TRAINING_DEFAULTS
_TRAINING_CONSTRAINTS = {
    "validation_fraction": [Interval("real", 0, 1, "left")],
    "validation_every": [Interval("int", 1, None)],
    "patience": [NONE, Interval("int", 1, None)],
    "validation_ais": [_IntPair("a pair (n_runs >= 2, n_temperatures >= 2) of ints", 2, 2, ordered=False)],
    "sparsity_target": [NONE, Interval("real", 0, 1, "neither")],
    "sparsity_cost": [Interval("real", 0, None, "left")],
    "sparsity_decay": [Interval("real", 0, 1, "left")],
    "fast_learning_rate": [Interval("real", 0, None, "left")],
    "fast_decay": [Interval("real", 0, 1, "left")],
}
_TRAINING_DEFAULTS = {"validation_fraction": 0.0, "validation_every": 1, "patience": None, "validation_ais": [5, 200],
                      "sparsity_target": None, "sparsity_cost": 0.0, "sparsity_decay": 0.9,
                      "fast_learning_rate": 0.0, "fast_decay": 0.95}
_MONITOR_ROWS = 1000


def _plain_number(x):
    return x.item() if isinstance(x, np.generic) else x


def _array_name(key: str) -> str:
    return key.replace(":", ".")


def _param_key(name: str) -> str:
    return name.replace(".", ":")


_TRACE_KEYS = ("epoch", "seconds", "learning_rate", "n_gibbs", "reconstruction_error", "pseudo_log_likelihood",
               "mean_abs_update", "validation_loglik")


def _evaluator(xs, lengths, binary: bool, stopper: EarlyStopping | None = None):
    """The trace row of an epoch, on the first ``_MONITOR_ROWS`` rows: reconstruction error, pseudo-likelihood."""
    rows = np.arange(min(_MONITOR_ROWS, xs[0].shape[0]))
    monitor = tuple(x[rows] for x in xs)
    monitor_len = None if lengths is None else lengths[rows]

    def evaluate(it, st, info):
        pl = float("nan")
        if binary:
            pl = float(cd.pseudo_log_likelihood(np.random.default_rng(it), st.model, monitor).mean())
        val = float("nan")
        if stopper is not None and it % stopper.every == 0:
            val = stopper.last_score
        return {"epoch": it, "learning_rate": info.learning_rate, "n_gibbs": int(getattr(info, "n_gibbs", 1)),
                "reconstruction_error": cd.reconstruction_error(st.model, monitor, monitor_len),
                "pseudo_log_likelihood": pl, "mean_abs_update": info.mean_abs_update, "validation_loglik": val}

    return evaluate


def _snapshotter(stopper: EarlyStopping | None = None):
    """``snapshot(state)``: a CD / PCD state as checkpoint arrays (parameters ``p.*``, velocities ``vel.*``, the
    PCD chains, the running hidden activity) and, with early stopping, the best parameters ``best.*`` and the
    stopper's scalars."""

    def snapshot(st) -> tuple[dict, dict]:
        arrays = {f"p.{_array_name(k)}": v for k, v in st.model.params.items()}
        arrays.update({f"vel.{_array_name(k)}": v for k, v in st.velocity.items()})
        if st.chains is not None:
            arrays["chains"] = st.chains
        if st.hidden_q is not None:
            arrays["hidden_q"] = st.hidden_q
        if st.fast is not None:
            arrays.update({f"fast.{_array_name(k)}": v for k, v in st.fast.items()})
        extra = {"n_updates": int(st.n_updates)}
        if stopper is not None:
            arrays.update({f"best.{_array_name(k)}": v for k, v in (stopper.best_params or {}).items()})
            extra["early_stopping"] = stopper.extra()
        return arrays, extra

    return snapshot


_snapshot = _snapshotter()


def _state_from_checkpoint(ckpt, model0) -> cd.CDState:
    """The CD / PCD state :func:`_snapshotter` saved."""
    model = model0.with_params({_param_key(k[2:]): v for k, v in ckpt.arrays.items() if k.startswith("p.")})
    velocity = {_param_key(k[4:]): np.array(v) for k, v in ckpt.arrays.items() if k.startswith("vel.")}
    chains = np.array(ckpt.arrays["chains"]) if "chains" in ckpt.arrays else None
    hidden_q = np.array(ckpt.arrays["hidden_q"]) if "hidden_q" in ckpt.arrays else None
    fast = {_param_key(k[5:]): np.array(v) for k, v in ckpt.arrays.items() if k.startswith("fast.")} or None
    return cd.CDState(model, velocity, chains, int(ckpt.extra["n_updates"]), int(ckpt.iteration), hidden_q, fast)


def _user_or_stopper(callback, stopping: dict):
    """The recorder's callback: the user's ``callback`` says stop, or the early stopper in ``stopping`` (set
    once the validation data are known) has stopped."""

    def stop(it, n, info):
        user = bool(callback(it, n, info)) if callback is not None else False
        return user or (stopping.get("stopper") is not None and stopping["stopper"].stop)

    return stop


def _validation_rows(n: int, fraction: float, seed) -> np.ndarray:
    """The sorted rows held out by ``validation_fraction``: a permutation drawn from the fit's seed (0 for a
    Generator ``random_state``), apart from the training stream, so that a resumed fit holds out the same rows."""
    n_val = int(np.ceil(fraction * n))
    if n_val < 1 or n_val >= n:
        raise CorpusError(f"validation_fraction={fraction} of {n} documents leaves {n_val} for validation and "
                          f"{n - n_val} for training; each needs at least one.")
    rng = np.random.default_rng(np.random.SeedSequence([0 if seed is None else int(seed), 0x5EED]))
    return np.sort(rng.permutation(n)[:n_val])


class _HarmoniumEstimator(WholeDocumentPerplexity, BaseEstimator):
    """Shared machinery: data coercion, CD / PCD fitting, transform, AIS likelihoods, files."""

    _fitted_attribute = "n_iter_"
    _parameter_constraints = {**_COMMON_CONSTRAINTS, **_TRAINING_CONSTRAINTS}
    _checkpoint_data = "data"
    _resume_missing = _TRAINING_DEFAULTS  # checkpoints written before these options existed

    # -- subclass hooks ---------------------------------------------------------------
    def _architecture(self) -> tuple[list, Units, bool, set]:
        """([(name, Units)] per wing, hidden Units, scale_hidden_bias, fixed parameter names)."""
        raise NotImplementedError

    def _wing_specs(self) -> list:
        """[(name, Units)] of the ``wings`` parameter (default: one binary word wing), each pair checked."""
        where = type(self).__name__
        out = []
        for i, w in enumerate(self.wings if self.wings is not None else [("words", "bernoulli")]):
            if not isinstance(w, (tuple, list)) or len(w) != 2:
                raise InvalidParameterError(f"The 'wings' parameter of {where} must be a list of (name, unit type) "
                                            f"pairs. Got {w!r} at position {i}.")
            out.append((str(w[0]), units_from_spec(w[1], where)))
        return out

    def _opt(self, name: str):
        """A training option of issue 17, or its default where the constructor has none (BayesianEFH)."""
        return getattr(self, name, _TRAINING_DEFAULTS[name])

    def _set_common(self, loc: dict) -> None:
        """:meth:`_store_params` (the name BayesianEFH's constructor calls)."""
        self._store_params(loc)

    # -- data ----------------------------------------------------------------------------
    def _wing_units(self) -> list:
        return self._architecture()[0]

    def _coerce(self, X, features, where: str, fitting: bool):
        """(xs, lengths, vocabulary): the wings' data in the model's units and dtype."""
        wings = self._wing_units()
        dtype = np.dtype(self.dtype)
        # a list or tuple holds the wings' arrays; a list of plain rows of numbers is one count matrix
        if isinstance(X, (tuple, list)) and (len(wings) > 1 or any(sp.issparse(a) or hasattr(a, "__array__")
                                                                   or hasattr(a, "counts") for a in X)):
            if len(X) != len(wings):
                raise InvalidParameterError(f"{where}: got {len(X)} arrays for {len(wings)} wings "
                                            f"({[n for n, _ in wings]}).")
            first, rest = X[0], list(X[1:])
        else:
            first, rest = X, None
        vocab = None if fitting else getattr(self, "vocabulary_", None)
        corpus = as_corpus(first, where, vocab)
        if rest is None:
            if len(wings) > 1:
                extra = features if features is not None else corpus.features
                if extra is None:
                    raise CorpusError(f"{where}: the {type(self).__name__} has a feature wing "
                                      f"{wings[1][0]!r}; pass features= or a Corpus with features.")
                rest = list(extra) if isinstance(extra, (tuple, list)) else [extra]
            else:
                rest = []
        elif features is not None:
            raise InvalidParameterError(f"{where}: pass the feature wings either in X or as features=, not both.")
        if len(rest) != len(wings) - 1:
            raise InvalidParameterError(f"{where}: expected {len(wings) - 1} feature arrays; got {len(rest)}.")
        counts = corpus.counts
        xs = []
        for w, (name, units) in enumerate(wings):
            if w == 0:
                x = counts
                if isinstance(units, BernoulliUnits):
                    x = sp.csr_matrix((np.ones(x.nnz), x.indices.copy(), x.indptr.copy()), shape=x.shape)
                    x.eliminate_zeros()
                x = sp.csr_matrix(x, dtype=np.float64)
            else:
                x = rest[w - 1]
                if sp.issparse(x) and isinstance(units, GaussianUnits):
                    x = x.toarray()
                x = np.asarray(x, dtype=np.float64) if not sp.issparse(x) else sp.csr_matrix(x, dtype=np.float64)
                if x.ndim == 1:
                    x = x[:, None]
                if x.shape[0] != counts.shape[0]:
                    raise CorpusError(f"{where}: wing {name!r} has {x.shape[0]} rows for {counts.shape[0]} documents.")
            x = units.check_data(x, f"{where} (wing {name!r})")
            if isinstance(units, GaussianUnits) and getattr(self, "standardize_features", False):
                if fitting:
                    mu = x.mean(axis=0)
                    sd = x.std(axis=0)
                    sd[sd == 0] = 1.0
                    self._feature_stats = getattr(self, "_feature_stats", {})
                    self._feature_stats[w] = (mu, sd)
                mu, sd = self._feature_stats[w]
                x = (x - mu) / sd
            if not fitting:
                size = self.model_.wings[w].size
                if x.shape[1] != size:
                    raise CorpusError(f"{where}: wing {name!r} has {size} units; got {x.shape[1]} columns.")
            xs.append(x.astype(dtype) if sp.issparse(x) else np.ascontiguousarray(x, dtype=dtype))
        xs = tuple(xs)
        lengths = None
        if any(u.needs_lengths for _, u in wings):
            lengths = np.asarray(xs[0].sum(axis=1), dtype=np.float64).ravel()
        return xs, lengths, corpus

    # -- model construction ---------------------------------------------------------------
    def _new_model(self, xs) -> Harmonium:
        wings, hidden, scale, fixed = self._architecture()
        return Harmonium([Wing(n, u, x.shape[1]) for (n, u), x in zip(wings, xs, strict=True)], hidden, self.n_hidden,
                         scale_hidden_bias=scale, fixed=fixed, dtype=np.dtype(self.dtype))

    def _initial_model(self, rng, xs, means) -> Harmonium:
        model = self._new_model(xs)
        # base-rate visible biases (Hinton 2010 §8), small random couplings
        init = base_rate_model(model, means=means, n_rows=xs[0].shape[0])
        for k, v in init.params.items():
            if k.startswith("v:"):
                model.params[k] = v.astype(model.dtype)
        for w in range(len(model.wings)):
            shape = model.params[f"W:{w}"].shape
            model.params[f"W:{w}"] = (self.init_scale * rng.standard_normal(shape)).astype(model.dtype)
        return model

    def _config(self) -> cd.CDConfig:
        return cd.CDConfig(
            batch_size=self.batch_size, persistent=self.learning == "pcd",
            n_gibbs=(int(self.n_gibbs) if isinstance(self.n_gibbs, numbers.Integral)
                     else gibbs_schedule(self.n_gibbs, self.n_iter, owner=type(self).__name__)),
            sparsity_target=self._opt("sparsity_target"), sparsity_cost=self._opt("sparsity_cost"),
            sparsity_decay=self._opt("sparsity_decay"), fast_learning_rate=self._opt("fast_learning_rate"),
            fast_decay=self._opt("fast_decay"),
            mean_field=self.mean_field,
            learning_rate=make_schedule(self.lr_schedule, self.learning_rate, decay=self.lr_decay,
                                        tau=max(1.0, self.n_iter / 10), n_epochs=self.n_iter),
            momentum=momentum_schedule(self.momentum, initial=min(self.momentum, 0.5), warmup=min(5, self.n_iter // 4)),
            weight_decay=self.weight_decay,
        )

    # -- fitting ----------------------------------------------------------------------------
    def fit(self, X, y=None, *, features=None, validation=None, validation_features=None, resume: bool = False,
            callback=None, client=None, n_shards=None):
        """Learn the harmonium by CD-k or PCD over ``n_iter`` epochs.

        Parameters
        ----------
        X : Corpus, sparse matrix or array of counts (D, V); or a tuple of per-wing arrays
        y : ignored
        features : array (D, P) or tuple of arrays, optional
            The feature wings (default: the Corpus's ``features``).
        validation : same forms as ``X``, optional
            Held-out documents (or ``validation_fraction`` > 0 holds out training rows): every
            ``validation_every`` epochs their log-likelihood per word (per document for models
            without lengths) is estimated, log Z by AIS with ``validation_ais`` (n_runs,
            n_temperatures) and a fixed AIS seed, so that the epochs are compared under common
            random numbers; ``patience`` scores without improvement stop the fit, and the
            parameters of the best score are restored at the end (``best_iteration_``,
            ``best_validation_score_``; the scores are the ``validation_loglik`` column of ``trace_``).
        validation_features : array or tuple of arrays, optional
            The feature wings of ``validation`` (as ``features``).
        resume : bool, default False
            Continue from ``checkpoint_path`` (same data and settings); bit-identical to an
            uninterrupted run, early stopping included.
        callback : callable, optional
            ``callback(epoch, n_iter, info)`` after every epoch; return True to stop.
        client : distributed.Client, optional
            Train by data-parallel CD / PCD on this Dask cluster (docs/guides/scale-out.md;
            one-wing models: EFH with one wing, GBEFH, ReplicatedSoftmax, RatePoisson). ``X`` may
            then be the path of an on-disk corpus, which the workers read themselves (an
            in-memory corpus is written to a temporary directory the workers must be able to
            read). Each of the P shards contributes ceil(batch_size / P) rows to every update:
            the workers return sum_b [S(x_b) - S(x~_b)] over their rows, the driver adds them in
            shard order and applies momentum and weight decay to the merged gradient exactly as
            in one process. What differs from ``client=None, n_shards=None`` (one process): a
            mini-batch is P blocks of rows, each drawn from one shard's own random order per
            epoch (not one permutation of the whole corpus), so an epoch has
            ceil(max_p D_p / ceil(batch_size / P)) updates and its last ones may be smaller;
            PCD keeps ceil(batch_size / P) persistent chains on each shard's worker (P sets in
            place of one set of ``batch_size``); the random streams are per local step (a seed
            from the driver's Generator each) and the shards' statistics are added in float64
            (each shard's sum sent in ``dtype``; one process adds them in ``dtype``), so the two
            runs are statistically, not bitwise, alike. Every update is a round trip to the
            workers: use a large ``batch_size`` on a cluster. A run depends on the seed and the number of shards only:
            ``client=None, n_shards=P`` runs the same local steps in this process, and a cluster
            run reproduces it bit for bit. A lost worker is recovered from the last checkpoint
            (``checkpoint_path``; the PCD chains are checkpointed too); ``dask_stats_`` records
            the bytes moved and seconds per epoch, peak memory per worker and recoveries.
        n_shards : int, optional
            Shards of the corpus (default: the cluster's workers).
        """
        self._validate_fit(resume)
        self._check_training_options(validation)
        if client is not None or n_shards is not None:
            from harmonium.estimators import _efh_dask

            return _efh_dask.fit(self, X, client, n_shards=n_shards, features=features, resume=resume,
                                 callback=callback, validation=validation)
        xs, lengths, corpus = self._training_rows(X, features)
        stopping: dict = {}
        rec = self._recorder(_TRACE_KEYS, resume=resume, callback=_user_or_stopper(callback, stopping),
                             fingerprint=fingerprint_arrays(xs))
        self.vocabulary_ = corpus.vocabulary
        xs, lengths, val = self._held_out_rows(xs, lengths, rec.seed)
        model0 = self._new_model(xs)
        means = data_means(model0, xs)
        if validation is not None:
            self.model_ = model0  # the wing sizes the validation data are checked against
            val = self._coerce(validation, validation_features, f"{type(self).__name__}.fit (validation)",
                               fitting=False)[:2]
        stopper = stopping["stopper"] = None if val is None else EarlyStopping(
            self._validation_score(*val, means, int(xs[0].shape[0])), every=self._opt("validation_every"),
            patience=self._opt("patience"))
        cfg = self._config()
        state = self._start_state(rec, cfg, model0, xs, means, stopper)
        binary = all(isinstance(u, BernoulliUnits) for _, u in self._wing_units())
        step = None if stopper is None else (lambda it, st, info: stopper.update(it, st.model))
        state, last_it = rec.drive(cd.build_kernel(cfg), state, cd.TrainingData(xs, lengths), None,
                                   evaluate=_evaluator(xs, lengths, binary, stopper), snapshot=_snapshotter(stopper),
                                   step=step, n_iter=rec.start if stopper is not None and stopper.stop else None)
        self._restore_best(state, stopper)
        self._finish_fit(rec, last_it)
        return self

    def _training_rows(self, X, features):
        """(xs, lengths, corpus) of the training data, refusing no documents and empty documents."""
        name = type(self).__name__
        xs, lengths, corpus = self._coerce(X, features, f"{name}.fit", fitting=True)
        if xs[0].shape[0] == 0:
            raise CorpusError(f"{name}.fit got no documents.")
        if lengths is not None and np.any(lengths == 0):
            d = int(np.flatnonzero(lengths == 0)[0])
            raise CorpusError(f"document {d} is empty ({name}.fit); drop empty documents with corpus.drop_empty().")
        return xs, lengths, corpus

    def _held_out_rows(self, xs, lengths, seed):
        """(training xs, lengths, validation (xs, lengths) or None): ``validation_fraction`` of the rows held out."""
        if self._opt("validation_fraction") <= 0:
            return xs, lengths, None
        rows = _validation_rows(xs[0].shape[0], self._opt("validation_fraction"), seed)
        keep = np.setdiff1d(np.arange(xs[0].shape[0]), rows)
        val = (tuple(x[rows] for x in xs), None if lengths is None else lengths[rows])
        return tuple(x[keep] for x in xs), None if lengths is None else lengths[keep], val

    def _start_state(self, rec, cfg, model0, xs, means, stopper) -> cd.CDState:
        """The CD / PCD state to start from (the checkpoint's, with the stopper's best parameters, or a new one);
        sets the fitted attributes known before training."""
        if rec.checkpoint is not None:
            state = _state_from_checkpoint(rec.checkpoint, model0)
            if stopper is not None:
                best = {_param_key(k[5:]): np.array(v) for k, v in rec.checkpoint.arrays.items()
                        if k.startswith("best.")}
                stopper.restore(rec.checkpoint.extra.get("early_stopping", {}), best)
        else:
            state = cd.init(rec.rng, self._initial_model(rec.rng, xs, means), persistent=cfg.persistent,
                            n_chains=self.batch_size)
        self.base_rates_ = means
        self.n_train_rows_ = int(xs[0].shape[0])
        self._log_partition_cache = {}
        return state

    def _restore_best(self, state, stopper) -> None:
        """``model_`` and the state kept for ``partial_fit``: early stopping's best parameters, if any."""
        self.best_iteration_ = self.best_validation_score_ = None
        if stopper is not None and stopper.best_params is not None:
            for k, v in stopper.best_params.items():
                state.model.params[k][...] = v
            self.best_iteration_ = stopper.best_epoch
            self.best_validation_score_ = stopper.best_score
        self.model_ = state.model
        self._state = state

    def _check_training_options(self, validation) -> None:
        """The checks of the training options that their declarative constraints cannot make."""
        name = type(self).__name__
        if validation is not None and self._opt("validation_fraction") > 0:
            raise InvalidParameterError(f"{name}.fit: pass either validation= data or validation_fraction > 0, "
                                        f"not both (validation_fraction={self._opt('validation_fraction')}).")
        if self._opt("sparsity_target") is not None:
            hidden = self._architecture()[1]
            if type(hidden) is not BernoulliUnits:
                raise InvalidParameterError(f"The 'sparsity_target' parameter of {name} needs binary (Bernoulli) "
                                            f"hidden units; this model's are {type(hidden).__name__}. Leave it at "
                                            "None.")
            if self._opt("sparsity_cost") == 0:
                raise InvalidParameterError(f"The 'sparsity_cost' parameter of {name} must be > 0 when "
                                            f"sparsity_target is set (got 0); or leave sparsity_target at None.")
        if self._opt("fast_learning_rate") > 0 and self.learning != "pcd":
            raise InvalidParameterError(f"The 'fast_learning_rate' parameter of {name} needs learning='pcd' (fast "
                                        f"weights move persistent chains); got learning={self.learning!r}.")

    def _validation_score(self, vxs, vlen, means, n_rows: int):
        """``score(model)``: held-out log-likelihood per word (per row without lengths), log Z by AIS (fixed seed)."""
        runs, temps = (int(v) for v in self._opt("validation_ais"))
        xs64 = tuple(x.astype(np.float64) for x in vxs)
        lengths = None if vlen is None else np.unique(np.rint(vlen).astype(np.int64))
        denom = float(np.sum(vlen)) if vlen is not None else float(vxs[0].shape[0])
        dtype = np.dtype(self.dtype)

        def score(model) -> float:
            m = model.with_params(model.params, dtype=np.float64)
            lz = ais_log_partition(0, m, n_runs=runs, n_temperatures=temps, means=means, n_rows=n_rows,
                                   lengths=lengths, dtype=dtype)
            ll, _ = harmonium_log_likelihood(m, xs64, lz)
            return float(np.sum(ll) / denom)

        return score

    def partial_fit(self, X, y=None, *, features=None):
        """One more epoch of CD / PCD over ``X`` (the first call initialises the model from ``X``)."""
        self._validate_params()
        name = type(self).__name__
        fitted = getattr(self, "n_iter_", None) is not None
        xs, lengths, corpus = self._coerce(X, features, f"{name}.partial_fit", fitting=not fitted)
        cfg = self._config()
        if not fitted:
            rng, self.seed_ = check_random_state(self.random_state, name)
            model0 = self._new_model(xs)
            self.base_rates_ = data_means(model0, xs)
            self.n_train_rows_ = int(xs[0].shape[0])
            self.vocabulary_ = corpus.vocabulary
            model = self._initial_model(rng, xs, self.base_rates_)
            self._state = cd.init(rng, model, persistent=cfg.persistent, n_chains=self.batch_size)
            self.trace_ = {"epoch": [], "seconds": []}
            self.n_iter_ = 0
        else:
            rng = generator_from_state(self.rng_state_)
            if getattr(self, "_state", None) is None:
                self._state = cd.init(rng, self.model_, persistent=cfg.persistent, n_chains=self.batch_size)
        t0 = time.perf_counter()
        self._state, _ = cd.build_kernel(cfg)(rng, self._state, cd.TrainingData(xs, lengths))
        self.model_ = self._state.model
        self.n_iter_ += 1
        self.trace_.setdefault("epoch", []).append(self.n_iter_)
        self.trace_.setdefault("seconds", []).append(time.perf_counter() - t0)
        self.rng_state_ = rng.bit_generator.state
        self._log_partition_cache = {}
        return self

    def _resume_params(self, ckpt) -> list:
        ignored = ("n_iter", "checkpoint_path", "checkpoint_every", "evaluate_every", "random_state")
        return [k for k in ckpt.params if k not in ignored]

    # -- using a fitted model -------------------------------------------------------------
    def _check_fitted(self):
        if getattr(self, "n_iter_", None) is None or getattr(self, "model_", None) is None:
            raise NotFittedError(f"This {type(self).__name__} instance is not fitted yet. Call 'fit' first.")

    def transform(self, X, *, features=None) -> np.ndarray:
        """E[h | x] (D, n_hidden): the documents' latent representation."""
        self._check_fitted()
        xs, lengths, _ = self._coerce(X, features, f"{type(self).__name__}.transform", fitting=False)
        return np.asarray(self.model_.mean_h(xs, lengths), dtype=np.float64)

    def fit_transform(self, X, y=None, **fit_kwargs) -> np.ndarray:
        features = fit_kwargs.get("features")
        return self.fit(X, **fit_kwargs).transform(X, features=features)

    def free_energy(self, X, *, features=None) -> np.ndarray:
        """F(x) = -log p*(x) per document (p(x) = exp(-F(x)) / Z)."""
        self._check_fitted()
        xs, lengths, _ = self._coerce(X, features, f"{type(self).__name__}.free_energy", fitting=False)
        return self.model_.free_energy(xs, lengths)

    def log_partition(self, *, lengths=None, method: str = "ais", n_runs: int | None = None,
                      n_temperatures: int | None = None, n_length_groups: int | None = None, random_state=0,
                      progress=None) -> PartitionEstimate:
        """log Z (per document length for count models) by AIS (default) or exact enumeration.

        AIS uses ``n_ais_runs`` runs and ``n_temperatures`` temperatures unless given, from the
        base-rate model of the training data. Results are cached per length and settings. With
        ``n_length_groups``, log Z is annealed only at :func:`~harmonium.evaluation.partition.length_grid`
        lengths and interpolated between them. ``progress``: see
        :func:`~harmonium.evaluation.partition.ais_log_partition`.
        """
        self._check_fitted()
        if method not in ("ais", "exact"):
            raise InvalidParameterError(f"The 'method' parameter of log_partition must be 'ais' or 'exact'. "
                                        f"Got {method!r}.")
        model = self.model_.with_params(self.model_.params, dtype=np.float64)
        if method == "exact":
            return exact_log_partition(model, lengths)
        n_runs = self.n_ais_runs if n_runs is None else n_runs
        n_t = self.n_temperatures if n_temperatures is None else n_temperatures
        cache = getattr(self, "_log_partition_cache", None)
        if cache is None:
            cache = self._log_partition_cache = {}
        key = (int(n_runs), int(n_t), repr(random_state))
        want = None if lengths is None else np.unique(np.asarray(lengths, dtype=np.int64))
        need = None if want is None else length_grid(want, n_length_groups)
        have = cache.get(key, {})
        todo = [None] if need is None else [int(d) for d in need if int(d) not in have]
        if need is None and None in have:
            todo = []
        if todo:
            est = ais_log_partition(random_state, model, n_runs=int(n_runs), n_temperatures=int(n_t),
                                    means=self.base_rates_, n_rows=getattr(self, "n_train_rows_", None),
                                    lengths=None if need is None else np.array(todo),
                                    dtype=np.dtype(self.dtype), progress=progress)
            if need is None:
                have[None] = (float(est.log_z), float(est.std_error))
            else:
                for d, lz, se in zip(est.lengths, np.atleast_1d(est.log_z), np.atleast_1d(est.std_error), strict=True):
                    have[int(d)] = (float(lz), float(se))
            cache[key] = have
        if need is None:
            lz, se = have[None]
            return PartitionEstimate(lz, se, "ais", int(n_runs), None, None, None, int(n_t))
        out = PartitionEstimate(np.array([have[int(d)][0] for d in need]), np.array([have[int(d)][1] for d in need]),
                                "ais", int(n_runs), need, None, None, int(n_t))
        return out if need.size == want.size else interpolate_log_partition(out, want)

    def log_likelihood_documents(self, corpus, *, features=None, random_state=0, ais: str = "default",
                                 n_runs: int | None = None, n_temperatures: int | None = None,
                                 n_length_groups: int | None = None, progress=None) -> LogLikelihoodResult:
        """log p(x_d) = -F(x_d) - log Z per document, log Z by AIS (the evaluation layer's hook).

        For count models log p is the probability of the document's word *sequence* (as LDA's
        held-out likelihood), log Z is estimated for every distinct document length, and the
        per-document standard errors are scaled so that they add up (in squares) to the error of
        the total: the error of log Z is shared (see
        :func:`~harmonium.evaluation.partition.harmonium_log_likelihood`).

        Parameters
        ----------
        corpus : Corpus or array
            Held-out documents.
        features : list of arrays, optional
            The other wings' data.
        random_state : int, Generator or None, default 0
        ais : {"default", "fast"}, default "default"
            ``"default"``: the estimator's ``n_ais_runs`` and ``n_temperatures``, every distinct
            length. ``"fast"``: :data:`~harmonium.evaluation.partition.AIS_SETTINGS` ``["fast"]``
            (20 runs, 1,000 temperatures, 12 length groups), minutes instead of hours on a
            test set of thousands of documents, at the bias measured in benchmarks/RESULTS.md.
        n_runs, n_temperatures, n_length_groups : int, optional
            Override the setting named by ``ais``.
        progress : bool, callable or None, default None
            Progress bar with the time left (None: when stderr is a terminal).
        """
        self._check_fitted()
        where = f"{type(self).__name__}.log_likelihood_documents"
        if ais not in AIS_SETTINGS:
            raise InvalidParameterError(f"The 'ais' parameter of {where} must be one of {sorted(AIS_SETTINGS)}. "
                                        f"Got {ais!r}.")
        preset = AIS_SETTINGS[ais] if ais != "default" else {"n_runs": None, "n_temperatures": None,
                                                             "n_length_groups": None}
        n_runs = preset["n_runs"] if n_runs is None else n_runs
        n_temperatures = preset["n_temperatures"] if n_temperatures is None else n_temperatures
        n_length_groups = preset["n_length_groups"] if n_length_groups is None else n_length_groups
        xs, lengths, corp = self._coerce(corpus, features, where, fitting=False)
        lz = self.log_partition(lengths=None if lengths is None else np.rint(lengths).astype(np.int64),
                                n_runs=n_runs, n_temperatures=n_temperatures, n_length_groups=n_length_groups,
                                random_state=random_state, progress=progress)
        model = self.model_.with_params(self.model_.params, dtype=np.float64)
        xs64 = tuple(x.astype(np.float64) for x in xs)
        ll, se = harmonium_log_likelihood(model, xs64, lz)
        n_tokens = np.asarray(corp.doc_lengths, dtype=np.int64)
        return LogLikelihoodResult(ll, se, n_tokens, f"{type(self).__name__}.ais", int(lz.n_samples))

    def score(self, X, y=None, *, features=None, random_state=0) -> float:
        """Mean log-likelihood per document (AIS estimate of log Z)."""
        res = self.log_likelihood_documents(X, features=features, random_state=random_state)
        return float(res.log_likelihood.mean())

    # -- fitted attributes (scikit-learn names for the first wing) ---------------------
    @property
    def components_(self) -> np.ndarray:
        """(n_hidden, n_words): W of the first wing, transposed (scikit-learn's BernoulliRBM layout)."""
        self._check_fitted()
        return np.asarray(self.model_.W(0).T)

    @property
    def intercept_visible_(self) -> np.ndarray:
        self._check_fitted()
        return np.asarray(self.model_.params["v:0:bias"])

    @property
    def intercept_hidden_(self) -> np.ndarray:
        self._check_fitted()
        return np.asarray(self.model_.params["h:bias"])

    # -- persistence -----------------------------------------------------------------------
    def _json_params(self) -> dict:
        out = super()._json_params()
        for k, v in list(out.items()):
            if isinstance(v, Units):
                out[k] = v.spec()
            elif isinstance(v, tuple):  # n_gibbs, validation_ais: JSON has lists
                out[k] = [_plain_number(x) for x in v]
            elif k == "wings" and v is not None:
                out[k] = [[str(n), units_from_spec(u).spec()] for n, u in v]
        return out

    def _state_for_file(self):
        arrays = {f"p.{_array_name(k)}": np.asarray(v) for k, v in self.model_.params.items()}
        for w, m in enumerate(self.base_rates_):
            arrays[f"base_rate.{w}"] = np.asarray(m, dtype=np.float64)
        for w, (mu, sd) in getattr(self, "_feature_stats", {}).items():
            arrays[f"feature_mean.{w}"] = mu
            arrays[f"feature_scale.{w}"] = sd
        extra = {"n_iter_": self.n_iter_, "seed_": self.seed_, "n_train_rows_": getattr(self, "n_train_rows_", None),
                 "wing_sizes": [w.size for w in self.model_.wings]}
        return arrays, extra

    def _restore_from_file(self, arrays, manifest):
        extra = manifest.get("extra") or {}
        sizes = extra["wing_sizes"]
        fake = tuple(np.zeros((0, s)) for s in sizes)
        model = self._new_model(fake)
        params = {_param_key(k[2:]): np.asarray(v) for k, v in arrays.items() if k.startswith("p.")}
        missing = set(model.params) - set(params)
        if missing:
            raise ValueError(f"missing parameters {sorted(missing)}")
        self.model_ = model.with_params(params)
        self.base_rates_ = [np.asarray(arrays[f"base_rate.{w}"], dtype=np.float64) for w in range(len(sizes))]
        self._feature_stats = {}
        for k in arrays:
            if k.startswith("feature_mean."):
                w = k.split(".")[1]
                self._feature_stats[int(w)] = (np.asarray(arrays[k]), np.asarray(arrays[f"feature_scale.{w}"]))
        if self.vocabulary_ is not None and len(self.vocabulary_) != sizes[0]:
            raise ValueError("vocabulary and the word wing disagree on the number of words")
        self.n_iter_ = int(extra["n_iter_"])
        self.seed_ = extra.get("seed_")
        self.n_train_rows_ = extra.get("n_train_rows_")
        self._log_partition_cache = {}
        self._state = None
