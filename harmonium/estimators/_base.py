"""What every estimator shares: parameters, validation, input coercion, save/load.

The contract follows scikit-learn: the constructor only stores
hyperparameters, ``fit`` validates them (declaratively, see
:mod:`harmonium._validation`) and learns attributes ending in ``_``.
Models are saved as harmonium model files (:mod:`harmonium.io`), never pickles.
"""

from __future__ import annotations

import importlib
import inspect
import logging
import numbers
import os

import numpy as np
import scipy.sparse as sp

from harmonium._validation import NONE, RANDOM_STATE, InstanceOf, Interval, check_is_fitted, validate_params
from harmonium.corpus.corpus import Corpus
from harmonium.corpus.vocabulary import Vocabulary
from harmonium.errors import CorpusError, InvalidParameterError, ModelFileError
from harmonium.estimators.registry import LAZY_ESTIMATORS
from harmonium.inference.recorder import Recorder
from harmonium.io import check_writable, read_model_file, write_model_file
from harmonium.parallel.seeds import check_random_state

logger = logging.getLogger("harmonium")

_REGISTRY: dict[str, type] = {}

# LAZY_ESTIMATORS (class name -> module, imported on first use so that ``import harmonium`` stays light) comes from
# the one table of estimators, harmonium.estimators.registry; ``load`` imports the module of a class it has not seen.


FIT_LOOP_CONSTRAINTS = {
    "checkpoint_path": [NONE, InstanceOf((str, os.PathLike), "a path")],
    "checkpoint_every": [Interval("int", 1, None)],
    "random_state": [RANDOM_STATE],
}
"""The constraints of the parameters every checkpointed fit shares (spread into ``_parameter_constraints``)."""

POSITIVE = Interval("real", 0, None, "neither")
#: The parameters the topic models (LDA, HDP) share, with the same meaning: the topic-word prior, the fit's
#: iterations and monitoring, the iterations of ``transform``, and the checkpointed fit's own.
TOPIC_MODEL_CONSTRAINTS = {
    "topic_word_prior": [POSITIVE],
    "n_iter": [Interval("int", 1, None)],
    "evaluate_every": [Interval("int", 1, None)],
    "n_transform_iter": [Interval("int", 1, None)],
    **FIT_LOOP_CONSTRAINTS,
}


def _plain(value):
    """JSON's view of a parameter (tuples are lists), for comparing with a checkpoint's."""
    return [_plain(v) for v in value] if isinstance(value, (list, tuple)) else value


def register(cls):
    """Class decorator: make ``harmonium.load`` able to rebuild instances of ``cls``."""
    _REGISTRY[cls.__name__] = cls
    return cls


class BaseEstimator:
    """Hyperparameter handling, validation and persistence for harmonium estimators."""

    _parameter_constraints: dict[str, list] = {}
    _fitted_attribute = "n_iter_"

    @classmethod
    def _param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        return [p.name for p in sig.parameters.values() if p.name != "self" and p.kind != p.VAR_KEYWORD]

    def _store_params(self, arguments: dict) -> None:
        """Store every constructor argument unchanged, as scikit-learn requires (no validation, no work in
        ``__init__``): ``self._store_params(locals())``."""
        for name in self._param_names():
            setattr(self, name, arguments[name])

    def get_params(self, deep: bool = True) -> dict:
        """Hyperparameters as passed to the constructor."""
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params):
        """Set hyperparameters; unknown names raise ``ValueError``."""
        valid = set(self._param_names())
        for k, v in params.items():
            if k not in valid:
                raise ValueError(f"Invalid parameter {k!r} for {type(self).__name__}; valid: {sorted(valid)}.")
            setattr(self, k, v)
        return self

    def __repr__(self) -> str:
        sig = inspect.signature(type(self).__init__)
        parts = []
        for name, value in self.get_params().items():
            default = sig.parameters[name].default
            if not (value is default or (isinstance(value, (int, float, str)) and value == default)):
                parts.append(f"{name}={value!r}")
        return f"{type(self).__name__}({', '.join(parts)})"

    @property
    def n_features_in_(self) -> int:
        """Columns of the count matrix ``fit`` saw: the size of the vocabulary (scikit-learn's name).

        Estimators whose input is not a count matrix (HCRF) set it themselves.
        """
        if "_n_features_in" in self.__dict__:
            return self.__dict__["_n_features_in"]
        vocab = getattr(self, "vocabulary_", None)
        if vocab is None:
            self._check_is_fitted()
            raise AttributeError(f"{type(self).__name__} has no vocabulary_, so no n_features_in_.")
        return len(vocab)

    @n_features_in_.setter
    def n_features_in_(self, value: int) -> None:
        self.__dict__["_n_features_in"] = value

    def __sklearn_tags__(self):
        """scikit-learn's estimator tags (scikit-learn >= 1.6 asks for them; imported only then).

        Unsupervised, fitted on non-negative counts (``positive_only``), dense or scipy.sparse.
        """
        from sklearn.utils import InputTags, Tags, TargetTags, TransformerTags

        return Tags(estimator_type=None, target_tags=TargetTags(required=False),
                    transformer_tags=TransformerTags() if hasattr(type(self), "transform") else None,
                    input_tags=InputTags(sparse=True, positive_only=True, categorical=True))

    def _check_training_corpus(self, corpus) -> None:
        """Refuse a training corpus with no documents, no tokens or an empty document (topic models' ``fit``)."""
        where = f"{type(self).__name__}.fit"
        if corpus.n_docs == 0:
            raise CorpusError(f"{where} got an empty corpus (0 documents).")
        if corpus.n_tokens == 0:
            raise CorpusError(f"{where} got a corpus of {corpus.n_docs} documents with no tokens at all.")
        empty = corpus.empty_documents()
        if empty.size:
            raise CorpusError(
                f"document {int(empty[0])} is empty ({empty.size} empty documents in all) ({where}); "
                "drop them with corpus.drop_empty() or Tokenizer(min_doc_length=1)."
            )

    def _transform_settings(self, n_iter, random_state) -> tuple[int, np.random.Generator]:
        """``transform``'s sweeps (``n_transform_iter`` unless given, checked) and Generator (from
        ``random_state``, or the fit's seed, or 0)."""
        where = f"{type(self).__name__}.transform"
        n_iter = self.n_transform_iter if n_iter is None else n_iter
        if isinstance(n_iter, bool) or not isinstance(n_iter, (int, np.integer)) or n_iter < 1:
            raise InvalidParameterError(f"The 'n_iter' parameter of {where} must be an int >= 1. Got {n_iter!r}.")
        if random_state is None:
            random_state = self.seed_ if self.seed_ is not None else 0
        rng, _ = check_random_state(random_state, where)
        return int(n_iter), rng

    def _validate_params(self) -> None:
        validate_params(type(self).__name__, self.get_params(), self._parameter_constraints)

    def _check_is_fitted(self) -> None:
        check_is_fitted(self, self._fitted_attribute)

    # -- the fit loop: one recorder for every estimator -----------------------------
    _checkpoint_data = "corpus"  # the checkpoint extra that holds the data's fingerprint
    _resume_missing: dict = {}  # parameter -> its value in checkpoints written before it was recorded

    def _validate_fit(self, resume: bool) -> None:
        """``_validate_params``, and ``resume=True`` needs ``checkpoint_path``; clears ``resumed_from_``."""
        self._validate_params()
        self.resumed_from_ = None
        if resume and self.checkpoint_path is None:
            raise InvalidParameterError(f"{type(self).__name__}.fit(resume=True) needs checkpoint_path to be set.")

    def _recorder(self, trace_keys, *, resume: bool, callback, corpus=None, fingerprint: dict | None = None,
                  n_iter: int | None = None, check=None, **settings) -> Recorder:
        """The :class:`~harmonium.inference.recorder.Recorder` of this fit, begun: fresh or resumed and checked.

        The data are ``corpus`` (fingerprinted by :meth:`Corpus.fingerprint`) or
        ``fingerprint`` given. ``check(ckpt)`` replaces :meth:`_check_checkpoint`;
        ``settings`` (``params``, ``checkpoint_every``, ...) replace the
        estimator's own in the Recorder. Sets ``seed_`` (and ``resumed_from_`` on resume).
        """
        if fingerprint is None:
            fingerprint = corpus.fingerprint()
        settings = {"params": self._json_params(), "checkpoint_path": self.checkpoint_path,
                    "checkpoint_every": self.checkpoint_every, "evaluate_every": self.evaluate_every, **settings}
        rec = Recorder(type(self).__name__, self.n_iter if n_iter is None else n_iter, trace_keys,
                       fingerprint=fingerprint, data_key=self._checkpoint_data, callback=callback, **settings)
        rec.begin(self.random_state, resume=resume,
                  check=check or (lambda ckpt: self._check_checkpoint(ckpt, fingerprint, corpus)))
        self.seed_ = rec.seed
        return rec

    def _finish_fit(self, rec: Recorder, last_iteration: int) -> None:
        """The attributes every fit ends with: ``trace_``, ``rng_state_``, ``n_iter_``."""
        self.trace_ = rec.trace
        self.rng_state_ = rec.rng.bit_generator.state
        self.n_iter_ = last_iteration

    def _resume_params(self, ckpt) -> tuple:
        """The hyperparameters a checkpoint must share with this estimator to be resumed (subclasses)."""
        raise NotImplementedError

    def _check_checkpoint(self, ckpt, fingerprint: dict, corpus=None) -> None:
        """:meth:`_check_resume` with :meth:`_resume_params` and the checkpoint's data fingerprint.

        With ``corpus``, the fingerprint compared is the corpus's in the
        checkpoint's own form (:meth:`Corpus.fingerprint_like`), so that
        checkpoints written before the current form still resume.
        """
        saved = ckpt.extra.get(self._checkpoint_data)
        if corpus is not None:
            fingerprint = corpus.fingerprint_like(saved)
        data = "corpus" if self._checkpoint_data == "corpus" else self._checkpoint_data
        self._check_resume(ckpt, self._resume_params(ckpt), fingerprint, saved, data=data,
                           missing=self._resume_missing)

    # -- resuming from a checkpoint ------------------------------------------------
    def _check_resume(self, ckpt, params, fingerprint: dict, saved_fingerprint, *, data: str = "corpus",
                      missing: dict | None = None) -> None:
        """Refuse a checkpoint written by another run; say where this one resumes.

        The one check every estimator's ``fit(resume=True)`` makes before using
        ``ckpt``, in this order: the hyperparameters named in ``params`` (those
        that change the result; ``n_iter`` may grow), the seed (an int
        ``random_state`` must be the checkpoint's; ``None`` or a Generator
        continues the checkpoint's stream), then the data (``fingerprint`` of
        this corpus against the checkpoint's). ``missing`` gives the value a
        parameter had before checkpoints recorded it. Each refusal names the
        difference. On success ``resumed_from_`` is the checkpoint's iteration
        and the ``harmonium`` logger says so at INFO level.

        Raises
        ------
        InvalidParameterError
            A hyperparameter or the seed disagrees.
        CorpusError
            The data differ.
        """
        path = os.fspath(self.checkpoint_path)
        name = type(self).__name__
        mine, saved = self._json_params(), ckpt.params
        missing = missing or {}
        for key in params:
            if _plain(saved.get(key, missing.get(key))) != _plain(mine.get(key)):
                raise InvalidParameterError(
                    f"checkpoint {path!r} was written with {key}={saved.get(key)!r}, but this {name} has "
                    f"{key}={mine.get(key)!r}; use the same settings or another checkpoint_path."
                )
        seed, saved_seed = self.random_state, ckpt.extra.get("seed")
        if (isinstance(seed, numbers.Integral) and not isinstance(seed, bool) and saved_seed is not None
                and int(seed) != int(saved_seed)):
            raise InvalidParameterError(
                f"checkpoint {path!r} was written by a run with random_state={saved_seed}, but this {name} has "
                f"random_state={seed}; resume with the same random_state (or leave random_state at None to "
                "continue the checkpoint's stream), or use another checkpoint_path."
            )
        if saved_fingerprint != fingerprint:
            if isinstance(saved_fingerprint, dict):
                diffs = [f"{k} {saved_fingerprint.get(k)!r} in the checkpoint, {v!r} now"
                         for k, v in fingerprint.items() if k != "crc32" and saved_fingerprint.get(k) != v]
            else:
                diffs = []
            detail = "; ".join(diffs) or "the same sizes but other tokens"
            other = "a different corpus" if data == "corpus" else f"different {data}"
            raise CorpusError(
                f"checkpoint {path!r} was written for {other} ({detail}); resume needs the same {data}, "
                "or use another checkpoint_path."
            )
        self.resumed_from_ = int(ckpt.iteration)
        logger.info("%s: resumed from checkpoint %r at iteration %d (seed %s).", name, path, ckpt.iteration,
                    saved_seed)

    # -- persistence -------------------------------------------------------------
    def _json_params(self) -> dict:
        out = {}
        for k, v in self.get_params().items():
            if isinstance(v, np.random.Generator):
                v = None
            elif isinstance(v, np.generic):
                v = v.item()
            elif isinstance(v, os.PathLike):
                v = os.fspath(v)
            out[k] = v
        return out

    def _state_for_file(self) -> tuple[dict, dict]:
        """(arrays, extra) describing the fitted model; implemented by subclasses."""
        raise NotImplementedError

    def _restore_from_file(self, arrays: dict, manifest: dict) -> None:
        raise NotImplementedError

    def save(self, path) -> None:
        """Write the fitted model to ``path`` atomically (a harmonium model file, no pickle).

        Raises :class:`~harmonium.errors.OutputPathError` naming ``path`` (before any
        work) when its folder is missing or not writable.
        """
        self._check_is_fitted()
        check_writable(path)
        arrays, extra = self._state_for_file()
        vocab = getattr(self, "vocabulary_", None)
        write_model_file(
            path,
            cls=type(self).__name__,
            params=self._json_params(),
            arrays=arrays,
            vocabulary=None if vocab is None else vocab.terms,
            rng_state=getattr(self, "rng_state_", None),
            trace=getattr(self, "trace_", None),
            extra=extra,
        )


def load(path):
    """Load a model saved with ``model.save(path)``.

    Raises
    ------
    ModelFileError
        If the file is missing, truncated, corrupted, foreign, of a newer
        format version, or holds a class this version does not know.
    """
    mf = read_model_file(path)
    name = mf.manifest["class"]
    if name not in _REGISTRY and name in LAZY_ESTIMATORS:
        importlib.import_module(LAZY_ESTIMATORS[name])
    cls = _REGISTRY.get(name)
    if cls is None:
        raise ModelFileError(
            f"{os.fspath(path)!r} holds a model of class {name!r}, which this harmonium does not know "
            f"(known: {', '.join(sorted(set(_REGISTRY) | set(LAZY_ESTIMATORS)))})."
        )
    if mf.manifest.get("kind", "model") != "model":
        raise ModelFileError(f"{os.fspath(path)!r} is a {mf.manifest.get('kind')} file, not a model; "
                             f"resume it with fit(..., resume=True) instead.")
    params = {k: v for k, v in mf.manifest["params"].items() if k in cls._param_names()}
    est = cls(**params)
    vocab = mf.manifest.get("vocabulary")
    est.vocabulary_ = None if vocab is None else Vocabulary(vocab)
    est.trace_ = mf.manifest.get("trace")
    est.rng_state_ = mf.manifest.get("rng_state")
    try:
        est._restore_from_file(mf.arrays, mf.manifest)
    except (KeyError, ValueError, TypeError) as exc:
        raise ModelFileError(f"{os.fspath(path)!r}: the {name} arrays are inconsistent ({exc}).") from exc
    return est


def as_corpus(X, where: str, vocabulary: Vocabulary | None = None) -> Corpus:
    """Coerce ``X`` (Corpus, scipy sparse, 2-D array or array-like of counts) to a Corpus.

    With ``vocabulary`` (a fitted model's), a Corpus over another vocabulary is
    matched by term (:meth:`Corpus.match_vocabulary`: unknown words dropped with a
    warning, none known or bare ids beyond the vocabulary an error), and a raw
    matrix must have exactly ``len(vocabulary)`` columns, column j being word j
    of the model's vocabulary (as scikit-learn requires ``n_features_in_``):
    any other width would be read silently wrong.
    """
    if isinstance(X, Corpus):
        return X if vocabulary is None else X.match_vocabulary(vocabulary, where)
    if isinstance(X, (list, tuple)):
        try:
            X = np.asarray(X)
        except (TypeError, ValueError) as exc:
            raise CorpusError(f"{where}: a list given as a count matrix must hold rows of equal length "
                              f"({exc}).") from exc
        if X.dtype.kind not in "biuf":
            raise CorpusError(
                f"{where} expects a harmonium Corpus or a document-term count matrix; got a list of "
                f"{X.dtype} values, not numbers. Texts or token lists become a Corpus with harmonium.Tokenizer."
            )
    if sp.issparse(X) or isinstance(X, np.ndarray) or hasattr(X, "__array__"):
        from harmonium.corpus.corpus import _as_csr_counts

        m = _as_csr_counts(X, where)
        if m.shape[1] == 0:
            raise CorpusError(f"{where}: the count matrix has 0 feature(s) (shape={m.shape}) while a minimum of 1 "
                              "is required: it needs at least one word column.")
        if vocabulary is not None:
            if m.shape[1] > len(vocabulary):
                Corpus.check_word_ids_of(m, len(vocabulary), where)  # names the first word id beyond it
            if m.shape[1] != len(vocabulary):
                raise CorpusError(
                    f"{where}: X has {m.shape[1]} features, but {where.split('.')[0]} is expecting "
                    f"{len(vocabulary)} features as input: the count matrix has {m.shape[1]} columns but the "
                    f"model's vocabulary has {len(vocabulary)} words. Build the matrix over the model's vocabulary "
                    "(column j = model.vocabulary_[j]), or pass a harmonium Corpus, which is matched by term."
                )
            return Corpus(m, vocabulary, _validated=True)
        return Corpus(m, _validated=True)
    raise CorpusError(
        f"{where} expects a harmonium Corpus or a document-term count matrix "
        f"(scipy.sparse, a 2-D numpy array or an object with __array__); got {type(X).__name__}."
    )
