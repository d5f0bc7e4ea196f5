"""The experiment runner: a grid of models x numbers of topics x seeds on one corpus (issue 5).

:func:`compare` fits every model of the grid and scores it with harmonium's own evaluation code,
identically for every model:

* **perplexity** on one shared train/test split of whole documents (``test_size``,
  ``split_seed``): the models are fitted to the training documents and the test documents scored
  by :func:`harmonium.evaluation.perplexity` with ``method="auto"`` -- the left-to-right
  estimator (Wallach et al. 2009, ``n_particles`` particles) for LDA, and for harmoniums their
  ``log_likelihood_documents`` hook, log p(v) = -F(v) - log Z with log Z by AIS (Salakhutdinov &
  Hinton 2009, seed 001). LSI is not a probability model of counts and has no perplexity;
* **latent-projection classification** (seed 000 §5.2, Fig. 7): every model is fitted again to
  *all* documents without their labels, projects them (LSI's U_k S_k, LDA's theta, a harmonium's
  E[h | x]); one seeded 50/50 split (``split_seed``) serves every cell; a 1-nearest-neighbour
  classifier (cosine) and L2 logistic regression (:mod:`harmonium.evaluation.classification`)
  trained on one half predict the other;
* the **seconds** of each fit (the training split's fit: ``fit_seconds``).

Every finished cell (model, K, seed) is written atomically to ``out_dir/cells/`` with the settings
it was run under; a rerun with the same settings skips finished cells (resumable: an interrupted
run loses at most the cell in progress), and a rerun with other settings stops with an error
rather than mixing results. The whole table is then written as ``results.csv`` and
``results.json``; with ``plots=True`` the runner draws them too (``harmonium.report.plots.plot_compare``:
perplexity and accuracy against K, time against quality) into ``out_dir``.
"""

from __future__ import annotations

import csv
import inspect
import io
import json
import math
import os
import re
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np

from harmonium._progress import Progress, progress_bar
from harmonium.corpus.corpus import Corpus
from harmonium.corpus.splits import train_test_split
from harmonium.errors import CorpusError, InvalidParameterError
from harmonium.evaluation.classification import CLASSIFIERS, classify_projection
from harmonium.evaluation.likelihood import perplexity
from harmonium.io import atomic_write_bytes

__all__ = ["BUILTIN_MODELS", "CompareResult", "TASKS", "compare", "restrict_vocabulary"]

TASKS = ("perplexity", "classification")
RESULT_COLUMNS = (
    "model", "n_topics", "seed", "perplexity", "perplexity_se", "log_likelihood", "log_likelihood_se",
    "perplexity_method", "n_test_docs", "n_test_tokens", "fit_seconds", "eval_seconds", "accuracy_1nn",
    "accuracy_logreg", "majority", "classification_fit_seconds", "n_class_train", "n_class_test",
)


def _lsi(k, seed, **kw):
    from harmonium.evaluation.lsi import LSI

    return LSI(k, random_state=seed, **kw)


def _lda(inference, defaults):
    def make(k, seed, **kw):
        from harmonium.estimators.lda import LDA

        return LDA(k, inference=inference, random_state=seed, **{**defaults, **kw})
    return make


def _dwh(k, seed, **kw):
    from harmonium.estimators.efh import DualWingHarmonium

    return DualWingHarmonium(k, random_state=seed, **kw)


def _rsm(k, seed, **kw):
    from harmonium.estimators.efh import ReplicatedSoftmax

    return ReplicatedSoftmax(k, random_state=seed, **{"n_ais_runs": 10, "n_temperatures": 1000, **kw})


# name -> (label, factory(k, seed, **params)); the defaults are the settings of
# benchmarks/harmoniums/eval_classification.py and, for the Replicated Softmax, its class defaults with
# a cheaper AIS (10 runs x 1,000 temperatures).
BUILTIN_MODELS: dict[str, tuple[str, Callable]] = {
    "lsi": ("LSI", _lsi),
    "lda-gibbs": ("LDA (collapsed Gibbs)", _lda("collapsed_gibbs", {"n_iter": 200})),
    "lda-vb": ("LDA (VB)", _lda("vb", {"n_iter": 50})),
    "lda-cvb0": ("LDA (CVB0)", _lda("cvb0", {"n_iter": 50})),
    "lda-online-vb": ("LDA (online VB)", _lda("online_vb", {"n_iter": 10})),
    "rsm": ("Replicated Softmax", _rsm),
    "dwh": ("Dual-wing harmonium", _dwh),
}
# Models whose likelihood is not a likelihood of the words alone (the dual-wing harmonium's log p(x, z) includes the
# Gaussian feature wing): no perplexity, and no fit to the perplexity split.
NO_PERPLEXITY = ("DualWingHarmonium",)


class CompareResult:
    """The table of a :func:`compare` run.

    Attributes
    ----------
    records : list of dict
        One per cell (model, n_topics, seed), the columns of ``RESULT_COLUMNS`` plus ``params``.
    config : dict
        The settings and the corpus fingerprint the cells were computed under.
    out_dir : Path
    n_computed, n_skipped : int
        Cells computed in this call and cells found finished (resumed).
    plots : dict name -> Path
        The PNGs drawn by ``compare(plots=True)`` (empty otherwise).
    """

    def __init__(self, records, config, out_dir, n_computed, n_skipped, plots=None):
        self.records = records
        self.config = config
        self.out_dir = Path(out_dir)
        self.n_computed = n_computed
        self.n_skipped = n_skipped
        self.plots = dict(plots or {})

    def __repr__(self) -> str:
        return (f"CompareResult({len(self.records)} cells, {self.n_computed} computed, {self.n_skipped} resumed, "
                f"out_dir={os.fspath(self.out_dir)!r})")

    @property
    def csv_path(self) -> Path:
        return self.out_dir / "results.csv"

    @property
    def json_path(self) -> Path:
        return self.out_dir / "results.json"

    def _grid(self, column: str, cell: Callable[[list[dict]], str], *, finite: bool = False) -> str:
        """Markdown, one row per model and one column per K: ``cell`` of the records of that (model, K) with a
        value in ``column`` (not None and not NaN; with ``finite`` not infinite either), empty where none has."""
        ks = sorted({r["n_topics"] for r in self.records})
        models = list(dict.fromkeys(r["model"] for r in self.records))

        def has_value(r) -> bool:
            v = r.get(column)
            if v is None or not isinstance(v, float):
                return v is not None
            return math.isfinite(v) if finite else not math.isnan(v)

        lines = ["| model | " + " | ".join(f"K={k}" for k in ks) + " |", "|---|" + "---:|" * len(ks)]
        for m in models:
            cells = []
            for k in ks:
                rs = [r for r in self.records if r["model"] == m and r["n_topics"] == k and has_value(r)]
                cells.append(cell(rs) if rs else "")
            if any(cells):
                lines.append(f"| {m} | " + " | ".join(cells) + " |")
        return "\n".join(lines)

    def accuracy_table(self, classifier: str = "1nn", digits: int = 3) -> str:
        """Markdown: accuracy of ``classifier`` ("1nn" or "logreg"), one row per model, one column per K.

        With several seeds a cell is ``mean (min-max)``.
        """
        if classifier not in CLASSIFIERS:
            raise InvalidParameterError(f"The 'classifier' parameter of accuracy_table must be one of {CLASSIFIERS}. "
                                        f"Got {classifier!r}.")
        column = f"accuracy_{classifier}"

        def cell(rs):
            v = [r[column] for r in rs]
            return f"{v[0]:.{digits}f}" if len(v) == 1 else _mean_range(v, digits)
        return self._grid(column, cell)

    def perplexity_table(self, digits: int = 1) -> str:
        """Markdown: held-out perplexity (± 1 standard error; several seeds: mean (min-max))."""
        def cell(rs):
            if len(rs) == 1:
                return f"{rs[0]['perplexity']:.{digits}f} ± {rs[0]['perplexity_se']:.{digits}f}"
            return _mean_range([r["perplexity"] for r in rs], digits)
        return self._grid("perplexity", cell, finite=True)

    def time_table(self, digits: int = 1) -> str:
        """Markdown: seconds of the fit to the training split (several seeds: mean)."""
        return self._grid("fit_seconds", lambda rs: f"{np.mean([r['fit_seconds'] for r in rs]):.{digits}f}")


# -- helpers ---------------------------------------------------------------------------------------
def _mean_range(v: list[float], digits: int) -> str:
    """``mean (min-max)`` of several seeds' values."""
    return f"{np.mean(v):.{digits}f} ({min(v):.{digits}f}-{max(v):.{digits}f})"


def restrict_vocabulary(corpus: Corpus, max_words: int) -> Corpus:
    """The corpus over its ``max_words`` most frequent words (by token count; ties by word id), empty documents
    dropped -- as Salakhutdinov & Hinton (2009) restrict the vocabulary for the Replicated Softmax."""
    from harmonium.corpus.vocabulary import Vocabulary

    if corpus.n_words <= max_words:
        return corpus.drop_empty()
    freq = np.asarray(corpus.counts.sum(axis=0)).ravel()
    keep = np.sort(np.argsort(-freq, kind="stable")[:max_words])
    return corpus.reindex(Vocabulary([corpus.vocabulary[int(i)] for i in keep])).drop_empty()


def _json_safe(v):
    if isinstance(v, dict):
        return {str(k): _json_safe(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_json_safe(x) for x in v]
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    return repr(v)


def _cell_name(model: str, k: int, seed: int) -> str:
    return f"{re.sub(r'[^A-Za-z0-9_.-]+', '_', model)}__K{k}__seed{seed}.json"


def _model_params(model) -> dict:
    get = getattr(model, "get_params", None)
    if get is not None:
        return _json_safe(get())
    return _json_safe({k: v for k, v in vars(model).items() if not k.endswith("_") and not k.startswith("_")})


class _TextProgress:
    """A one-line progress bar over the cells on stderr, with the time left (no dependency)."""

    def __init__(self, stream=None):
        self.stream = stream or sys.stderr
        self.bar = None

    def __call__(self, ev: dict) -> None:
        if self.bar is None:
            self.bar = Progress(ev["n_cells"], "compare", stream=self.stream, min_interval=0.0)
        self.bar.label = f"compare {ev['event']:<7} {ev['model']} K={ev['n_topics']} seed={ev['seed']}"
        self.bar.update(ev["done"] - self.bar.done)
        if ev["done"] == ev["n_cells"] and ev["event"] != "start":
            self.bar.close()


def _check_grid(models, n_topics, seeds, tasks, classifiers, out_dir):
    if out_dir is None:
        raise InvalidParameterError("compare needs out_dir: the folder for the cells and the results table.")
    if isinstance(models, str):
        models = [models]
    if isinstance(models, Mapping):
        specs = dict(models)
    else:
        specs = {}
        for m in models:
            if not isinstance(m, str) or m not in BUILTIN_MODELS:
                raise InvalidParameterError(
                    f"The 'models' parameter of compare holds unknown model {m!r}; known: {', '.join(BUILTIN_MODELS)} "
                    "(or pass a dict name -> factory(n_topics, seed))."
                )
            if m in specs:
                raise InvalidParameterError(f"The 'models' parameter of compare names {m!r} twice.")
            specs[m] = m
    if not specs:
        raise InvalidParameterError("The 'models' parameter of compare must name at least one model.")
    for name, spec in specs.items():
        if not (callable(spec) or (isinstance(spec, str) and spec in BUILTIN_MODELS)):
            raise InvalidParameterError(f"compare: model {name!r} must be a built-in name ({', '.join(BUILTIN_MODELS)})"
                                        f" or a callable factory(n_topics, seed); got {type(spec).__name__}.")
    for arg, values, lo in (("n_topics", n_topics, 1), ("seeds", seeds, 0)):
        vals = [values] if isinstance(values, (int, np.integer)) else list(values)
        if not vals or any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo for v in vals):
            raise InvalidParameterError(f"The '{arg}' parameter of compare must be a non-empty list of ints >= {lo}. "
                                        f"Got {values!r}.")
        if len(set(vals)) != len(vals):
            raise InvalidParameterError(f"The '{arg}' parameter of compare has repeated values: {values!r}.")
    tasks = (tasks,) if isinstance(tasks, str) else tuple(tasks)
    if not tasks or any(t not in TASKS for t in tasks):
        raise InvalidParameterError(f"The 'tasks' parameter of compare must be a non-empty subset of {TASKS}. "
                                    f"Got {tasks!r}.")
    classifiers = tuple(classifiers)
    if not classifiers or any(c not in CLASSIFIERS for c in classifiers):
        raise InvalidParameterError(f"The 'classifiers' parameter of compare must be a non-empty subset of "
                                    f"{CLASSIFIERS}. Got {classifiers!r}.")
    ks = [int(n_topics)] if isinstance(n_topics, (int, np.integer)) else [int(k) for k in n_topics]
    ss = [int(seeds)] if isinstance(seeds, (int, np.integer)) else [int(s) for s in seeds]
    return specs, ks, ss, tasks, classifiers


def _factory(name, spec, model_params):
    extra = dict(model_params.get(name, {}))
    if isinstance(spec, str):
        label, make = BUILTIN_MODELS[spec]
        return label, (lambda k, s: make(k, s, **extra))
    if extra:
        raise InvalidParameterError(f"compare: model_params[{name!r}] is only for built-in models; "
                                    "put the settings into the factory.")
    return name, spec


# -- the runner -------------------------------------------------------------------------------------
def compare(
    corpus: Corpus,
    models: Sequence[str] | Mapping[str, str | Callable] = ("lsi", "lda-gibbs", "lda-vb", "rsm"),
    n_topics: Sequence[int] = (4, 8, 16, 32),
    seeds: Sequence[int] = (0,),
    *,
    out_dir,
    n_docs: int | None = None,
    tasks: Sequence[str] = TASKS,
    test_size: float = 0.1,
    classification_test_size: float = 0.5,
    split_seed: int = 0,
    max_words: int | None = None,
    n_particles: int = 5,
    classifiers: Sequence[str] = CLASSIFIERS,
    model_params: Mapping[str, Mapping] | None = None,
    progress: bool | Callable[[dict], None] | None = None,
    plots: bool = False,
) -> CompareResult:
    """Fit a grid of models x numbers of topics x seeds on ``corpus``; score them all the same way.

    Parameters
    ----------
    corpus : Corpus
        Documents, with ``labels`` for the classification task (e.g. ``load_debian()``: sections).
    models : list of names or dict label -> name or factory
        Built-in names: ``"lsi"``, ``"lda-gibbs"``, ``"lda-vb"``, ``"lda-cvb0"``, ``"lda-online-vb"``,
        ``"rsm"`` (Replicated Softmax with K hidden units), ``"dwh"`` (the dual-wing harmonium of seed 000
        Fig. 7 on words and the corpus's ``features``; classification only: its likelihood includes the
        feature wing, so it gets no perplexity). A factory is ``factory(n_topics, seed)``
        returning an unfitted model with ``fit`` and ``transform`` (or ``fit_transform``).
    n_topics : list of int, default (4, 8, 16, 32)
        The latent dimensions of seed 000 Fig. 7.
    seeds : list of int, default (0,)
        Each model is built with ``random_state=seed``; the splits do not depend on it.
    out_dir : path
        Cells go to ``out_dir/cells/``, the table to ``results.csv`` and ``results.json``.
    n_docs : int, optional
        Use a random subset of ``n_docs`` documents (seeded by ``split_seed``, kept in corpus order)
        instead of the whole corpus.
    tasks : subset of ("perplexity", "classification")
    test_size : float, default 0.1
        Held-out fraction of documents of the shared perplexity split (``split_seed``).
    classification_test_size : float, default 0.5
        Test fraction of the classification split (seed 000: a random half).
    split_seed : int, default 0
        Seeds both splits, shared by every model, K and seed.
    max_words : int, optional
        Keep only the most frequent words
        (:func:`~harmonium.experiments.compare.restrict_vocabulary`), for every model alike.
    n_particles : int, default 5
        Left-to-right particles (directed models). Harmoniums use their own AIS settings
        (``n_ais_runs``, ``n_temperatures``; the built-in ``"rsm"`` defaults to 10 x 1,000).
    classifiers : subset of ("1nn", "logreg")
    model_params : dict name -> dict, optional
        Settings for built-in models, e.g. ``{"lda-gibbs": {"n_iter": 100}}``.
    progress : bool, callable or None, default None
        True: a progress bar on stderr with the time left (estimated from the cells done so far);
        None: the bar when stderr is a terminal; False: none. A callable gets a dict per event (``event`` in "start",
        "done", "skipped"; ``done``, ``n_cells``, ``model``, ``n_topics``, ``seed``).
    plots : bool, default False
        Draw the table's plots into ``out_dir`` (``harmonium.report.plots.plot_compare``; their paths
        in ``CompareResult.plots``). Needs matplotlib (the ``plot`` extra), checked before the grid runs.

    Returns
    -------
    CompareResult

    Notes
    -----
    Cost and the fast setting. The grid runs len(models) x len(n_topics) x len(seeds) cells one
    after the other; the bar (``progress``) estimates the time left from the mean cost of the
    cells done, so it is rough while cheap and costly models alternate. For a first look: a
    subset of the documents (``load_debian(n_docs=2000)``), ``max_words=2000``, one seed, two
    values of K, and ``n_particles=5``; the built-in ``"rsm"`` scores with 10 AIS runs x 1,000
    temperatures per length. A rerun with the same ``out_dir`` skips the finished cells.

    Examples
    --------
    >>> from harmonium.datasets import load_debian
    >>> res = compare(load_debian(n_docs=2000), ["lsi", "lda-vb"], [4, 8], out_dir="cmp")  # doctest: +SKIP
    >>> print(res.accuracy_table("1nn"))  # doctest: +SKIP
    """
    if not isinstance(corpus, Corpus):
        raise CorpusError(f"compare expects a harmonium Corpus; got {type(corpus).__name__}.")
    specs, ks, ss, tasks, classifiers = _check_grid(models, n_topics, seeds, tasks, classifiers, out_dir)
    for arg, v in (("test_size", test_size), ("classification_test_size", classification_test_size)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v < 1:
            raise InvalidParameterError(f"The '{arg}' parameter of compare must be a float in (0, 1). Got {v!r}.")
    if isinstance(split_seed, bool) or not isinstance(split_seed, (int, np.integer)) or split_seed < 0:
        raise InvalidParameterError(f"The 'split_seed' parameter of compare must be an int >= 0. Got {split_seed!r}.")
    if max_words is not None and (isinstance(max_words, bool) or not isinstance(max_words, (int, np.integer))
                                  or max_words < 1):
        raise InvalidParameterError(f"The 'max_words' parameter of compare must be None or an int >= 1. "
                                    f"Got {max_words!r}.")
    if isinstance(n_particles, bool) or not isinstance(n_particles, (int, np.integer)) or n_particles < 1:
        raise InvalidParameterError(f"The 'n_particles' parameter of compare must be an int >= 1. Got {n_particles!r}.")
    if n_docs is not None and (isinstance(n_docs, bool) or not isinstance(n_docs, (int, np.integer)) or n_docs < 1):
        raise InvalidParameterError(f"The 'n_docs' parameter of compare must be None or an int >= 1. Got {n_docs!r}.")
    if not isinstance(plots, bool):
        raise InvalidParameterError(f"The 'plots' parameter of compare must be True or False. Got {plots!r}.")
    if plots:  # before hours of fitting, not after
        try:
            import matplotlib  # noqa: F401
        except ImportError as exc:
            raise ImportError("compare(plots=True) draws with matplotlib, which is the optional 'plot' extra: "
                              "pip install 'harmonium[plot]', or pass plots=False.") from exc
    model_params = dict(model_params or {})
    unknown = [n for n in model_params if n not in specs]
    if unknown:
        raise InvalidParameterError(f"compare: model_params names models not in the grid: {unknown}; "
                                    f"the grid has {list(specs)}.")
    if "classification" in tasks and corpus.labels is None:
        raise CorpusError("compare: the classification task needs labels and the corpus has none; pass "
                          "tasks=('perplexity',) or a labelled corpus.")

    if n_docs is not None and n_docs < corpus.n_docs:
        perm = np.random.default_rng(int(split_seed)).permutation(corpus.n_docs)
        corpus = corpus[np.sort(perm[: int(n_docs)])]
    data = corpus.drop_empty() if max_words is None else restrict_vocabulary(corpus, int(max_words))
    if data.n_docs < 4:
        raise CorpusError(f"compare needs at least 4 non-empty documents; the corpus has {data.n_docs}.")
    config = {
        "corpus": data.fingerprint(labels=True), "tasks": list(tasks), "test_size": float(test_size),
        "classification_test_size": float(classification_test_size), "split_seed": int(split_seed),
        "max_words": None if max_words is None else int(max_words), "n_particles": int(n_particles),
        "classifiers": list(classifiers),
    }
    out = Path(out_dir)
    (out / "cells").mkdir(parents=True, exist_ok=True)
    if progress is None:
        progress = progress_bar(None, 1, "compare").enabled   # True when stderr is a terminal
    report = _TextProgress() if progress is True else (progress or None)

    splits = {}
    if "perplexity" in tasks:
        train, test = train_test_split(data, float(test_size), random_state=int(split_seed))
        splits["perplexity"] = (train.drop_empty(), test)
    if "classification" in tasks:
        rng = np.random.default_rng(int(split_seed))
        perm = rng.permutation(data.n_docs)
        n_test = int(round(classification_test_size * data.n_docs))
        if n_test == 0 or n_test == data.n_docs:
            raise CorpusError(f"compare: {data.n_docs} documents with classification_test_size="
                              f"{classification_test_size} leave one side empty.")
        c_test, c_train = np.sort(perm[:n_test]), np.sort(perm[n_test:])
        y = np.asarray(data.labels)
        values, counts = np.unique(y[c_train], return_counts=True)
        splits["classification"] = (c_train, c_test, y, float(np.mean(y[c_test] == values[np.argmax(counts)])))

    cells = [(name, k, s) for name in specs for k in ks for s in ss]
    records, n_done, n_skipped = [], 0, 0
    for i, (name, k, seed) in enumerate(cells):
        label, make = _factory(name, specs[name], model_params)
        path = out / "cells" / _cell_name(label, k, seed)
        params = _model_params(make(k, seed))
        event = {"done": i, "n_cells": len(cells), "model": label, "n_topics": k, "seed": seed}
        if path.exists():
            rec = json.loads(path.read_text())
            _check_resumed(rec, config, params, path)
            records.append(rec)
            n_skipped += 1
            if report:
                report({**event, "event": "skipped", "done": i + 1})
            continue
        if report:
            report({**event, "event": "start"})
        rec = _run_cell(label, make, k, seed, splits, tasks, classifiers, n_particles, data)
        rec.update(params=params, config=config, finished=time.strftime("%Y-%m-%dT%H:%M:%S"))
        rec = _json_safe(rec)
        atomic_write_bytes(path, (json.dumps(rec, indent=1, allow_nan=False) + "\n").encode())
        records.append(rec)
        n_done += 1
        if report:
            report({**event, "event": "done", "done": i + 1})

    result = CompareResult(records, config, out, n_done, n_skipped)
    _write_table(result)
    if plots:
        from harmonium.report.plots import plot_compare

        result.plots = plot_compare(result, out)
    return result


def _check_resumed(rec: dict, config: dict, params: dict, path: Path) -> None:
    for what, saved, now in (("settings", rec.get("config"), config), ("model parameters", rec.get("params"), params)):
        if saved != now:
            saved, now = saved or {}, now or {}
            diff = sorted(k for k in set(saved) | set(now) if saved.get(k) != now.get(k))
            key = diff[0] if diff else "?"
            raise InvalidParameterError(
                f"{os.fspath(path)!r} was computed with other {what} ({key}: {saved.get(key)!r}, now "
                f"{now.get(key)!r}); use another out_dir, or delete the cell to recompute it."
            )


def _run_cell(label, make, k, seed, splits, tasks, classifiers, n_particles, data) -> dict:
    rec = {c: None for c in RESULT_COLUMNS}
    rec.update(model=label, n_topics=int(k), seed=int(seed))
    if "perplexity" in tasks and type(make(k, seed)).__name__ not in NO_PERPLEXITY:
        train, test = splits["perplexity"]
        model = make(k, seed)
        t0 = time.perf_counter()
        model.fit(train)
        rec["fit_seconds"] = time.perf_counter() - t0
        scorable = hasattr(model, "log_likelihood_documents") or hasattr(model, "topic_word_")
        if scorable:
            t0 = time.perf_counter()
            hook = getattr(model, "log_likelihood_documents", None)  # harmoniums take AIS options, not particles
            takes_particles = hook is None or "n_particles" in inspect.signature(hook).parameters
            opts = {"n_particles": int(n_particles)} if takes_particles else {}
            res = perplexity(model, test, method="auto", random_state=int(seed), **opts)
            rec.update(perplexity=res.perplexity, perplexity_se=res.perplexity * res.std_error / res.n_tokens,
                       log_likelihood=res.log_likelihood, log_likelihood_se=res.std_error,
                       perplexity_method=res.method, n_test_docs=res.n_docs, n_test_tokens=res.n_tokens,
                       eval_seconds=time.perf_counter() - t0)
    if "classification" in tasks:
        c_train, c_test, y, majority = splits["classification"]
        model = make(k, seed)
        t0 = time.perf_counter()
        Z = model.fit_transform(data) if hasattr(model, "fit_transform") else model.fit(data).transform(data)
        Z = np.asarray(Z, dtype=np.float64)
        if Z.shape[0] != data.n_docs or Z.ndim != 2:
            raise InvalidParameterError(f"{label} projected {data.n_docs} documents to shape {Z.shape}; expected "
                                        "(n_docs, n_dimensions).")
        rec["classification_fit_seconds"] = time.perf_counter() - t0
        if rec["fit_seconds"] is None:
            rec["fit_seconds"] = rec["classification_fit_seconds"]
        acc = classify_projection(Z, y, c_train, c_test, classifiers=classifiers)
        rec.update({f"accuracy_{c}": acc[c] for c in classifiers})
        rec.update(majority=majority, n_class_train=int(c_train.shape[0]), n_class_test=int(c_test.shape[0]))
    return rec


def _write_table(result: CompareResult) -> None:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(RESULT_COLUMNS), extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in result.records:
        w.writerow({c: "" if r.get(c) is None else r[c] for c in RESULT_COLUMNS})
    atomic_write_bytes(result.csv_path, buf.getvalue().encode())
    doc = {"config": result.config, "columns": list(RESULT_COLUMNS), "records": result.records}
    atomic_write_bytes(result.json_path, (json.dumps(doc, indent=1, allow_nan=False) + "\n").encode())
