"""One runner per system compared in ``lda_peers.py``: harmonium, tomotopy, topica, lda, pyrmallet.

Each runner takes the benchmark's training corpus (harmonium's token stream,
handed to a peer as lists of word strings from harmonium's vocabulary, or as
the same count matrix), trains with alpha = 0.1 per topic and beta = 0.01 and
no hyperparameter optimisation, and exposes

* ``prepare(data)``: build the system's input and model and initialise the
  sampler (not on the training clock);
* ``fit(iters, eval_every, evaluate)``: train, timing the sweeps only
  (initialisation and held-out evaluation excluded); returns a dict with
  ``train_s`` (all sweeps), ``measured_iters`` / ``measured_s`` (the sweeps
  of :func:`throughput_window`, from which throughput is computed),
  ``train_cpu_s`` (the same sweeps in this process's CPU seconds, all
  threads), ``init_s`` / ``init_cpu_s`` (the sampler's initialisation where
  it can be timed apart, else 0 and counted in ``train_s``),
  ``fit_wall_s`` (the system's training call(s) end to end), ``timing``
  (how the sweeps were clocked) and ``trace`` (held-out perplexity with
  wall ``train_s`` and CPU ``cpu_s`` every ``eval_every`` sweeps where the
  system can be stopped and resumed; at separate fits' lengths otherwise);
* ``phi()``: the (K, V) topic-word matrix in harmonium's vocabulary order;
* ``transform(data, n_iter)``: theta of the observed test halves by the
  system's own inference, and a dict describing the settings used.
"""

from __future__ import annotations

import time

import numpy as np
from _common import doc_word_lists, phi_from_counts

ALPHA = 0.1
BETA = 0.01


def throughput_window(iters: int) -> tuple[int, int]:
    """The sweeps (lo, hi] that throughput is measured on: (P, 2P], P = (iters - 1) // 2, for every system.

    The second half of the run, so that initialisation and the first, slower
    sweeps of sparse samplers (dense counts) are left out the same way for all;
    it is the window that topica's progress callback can clock (TopicaRunner).
    """
    P = (iters - 1) // 2
    return (P, 2 * P) if P >= 1 else (0, iters)


def _clocks() -> tuple[float, float]:
    """(wall, CPU) now: ``time.perf_counter`` and this process's CPU time over all its threads."""
    return time.perf_counter(), time.process_time()


def _drive(step, iters: int, eval_every: int, evaluate, get_phi) -> dict:
    """Train by ``step(n) -> (wall s, CPU s)`` in chunks that end at the throughput window's ends and at every
    evaluation; the trace points carry both clocks (``train_s``, ``cpu_s``), evaluation excluded."""
    lo, hi = throughput_window(iters)
    marks = {lo, hi, iters}
    if eval_every:
        marks.update(range(eval_every, iters, eval_every))
    it, cum, cpu, steady, trace = 0, 0.0, 0.0, 0.0, []
    for m in sorted(marks):
        if m <= it:
            continue
        s, c = step(m - it)
        cum += s
        cpu += c
        if lo <= it and m <= hi:
            steady += s
        it = m
        if eval_every and it % eval_every == 0 and it < iters:
            trace.append({"iteration": it, "train_s": cum, "cpu_s": cpu, "perplexity": evaluate(get_phi())})
    return {"train_s": cum, "train_cpu_s": cpu, "measured_iters": hi - lo, "measured_s": steady, "trace": trace}


class Runner:
    system = "?"

    def __init__(self, K: int, threads: int, seed: int, options: dict | None = None):
        self.K, self.threads, self.seed = K, threads, seed
        self.options = dict(options or {})

    def versions(self) -> dict:
        return {}

    def settings(self) -> dict:
        return {}

    #: what a stepped runner's clocks measure (for runners that define ``_step(n)`` and set ``init``)
    timing = "?"

    def fit(self, iters, eval_every, evaluate):
        """Drive ``_step`` to ``iters`` sweeps, scoring every ``eval_every``; clocks from ``_step`` and ``init``."""
        t0 = time.perf_counter()
        out = _drive(self._step, iters, eval_every, evaluate, self.phi)
        out["fit_wall_s"] = time.perf_counter() - t0
        out["init_s"], out["init_cpu_s"] = self.init
        out["timing"] = self.timing
        return out


# ---------------------------------------------------------------------------------------------
class HarmoniumRunner(Runner):
    """``harmonium.LDA``; extra constructor arguments come from ``options`` (``--harmonium-params``).

    The sweeps are clocked inside ``LDA.fit`` by wrapping the driver loop
    ``run`` where the fit loop calls it (``harmonium.inference.recorder.run``
    since the Recorder, ``harmonium.estimators.lda.run`` before; a
    benchmark-only hook): a sweep's time
    runs from its start to the end of ``fit``'s own per-sweep callback (the
    chain average of the second half, the log joint at the last sweep), and
    the clock stops while our held-out evaluation runs; ``kernel_s`` holds
    the kernel calls alone. ``prepare`` runs a 2-sweep fit on 200 training
    documents first, off the clock, so that numba's compilation (or cache
    load) is not timed. ``final_state_phi`` is phi of the last state (not
    averaged), comparable with the peers' final-state phi; the fit keeps only that state's non-zero counts
    (``WordCounts``) and the (K, V) array is made when it is read, which the worker does after it has read
    the peak RSS: the peers hold no such extra array, so it must not count in ours. If a
    future ``fit`` no longer goes through that loop, the intervals between
    calls of the public ``callback`` are used instead (``timing`` says which).
    """

    system = "harmonium"

    def versions(self):
        from _common import git_revision

        import harmonium

        return {"harmonium": harmonium.__version__, "git": git_revision(str(_repo_root()))}

    def settings(self):
        out = {"params": self._params(), "warmup_s": getattr(self, "warmup_s", None)}
        if getattr(self, "model", None) is not None and hasattr(self.model, "get_params"):
            out["effective_params"] = {k: v for k, v in self.model.get_params().items()
                                       if isinstance(v, (int, float, str, bool, type(None)))}
        return out

    def _params(self) -> dict:
        params = {k: v for k, v in self.options.items() if k != "estimate_fits"}
        if "n_jobs" in params:
            params["n_jobs"] = self.threads
        return params

    def prepare(self, data):
        import harmonium

        self.data = data
        self.iters = None
        self.model = None
        self._make = lambda iters: harmonium.LDA(
            n_topics=self.K, doc_topic_prior=ALPHA, topic_word_prior=BETA, n_iter=iters,
            random_state=self.seed, **{"evaluate_every": iters, **self._params()},
        )
        self._make(1)  # validates the parameters before the clock starts
        # warm-up, off the clock: numba compiles (or loads from its cache) every kernel of this configuration
        # on its first call; the peers' native code needs no such step
        t = time.perf_counter()
        self._make(2).fit(data.train[: min(200, data.train.n_docs)])
        self.warmup_s = time.perf_counter() - t

    def fit(self, iters, eval_every, evaluate):
        out = self._timed_fit(iters, eval_every, evaluate)
        self.iters = iters
        return out

    def extra_trace(self, evaluate) -> list[dict]:
        """One fit of each length in ``options["estimate_fits"]`` below the main fit's, each on its own clock,
        whose ``topic_word_`` (what ``LDA(n_iter=L)`` returns) is scored: trace points marked
        ``"estimate": True``. The worker calls this after it has read the process's peak RSS, so that the
        extra fits do not count in it; the main fit's model is kept for :meth:`phi` and :meth:`transform`."""
        main_model, main_counts = self.model, self._final_counts
        points = []
        for n in sorted({int(c) for c in self.options.get("estimate_fits", []) if 0 < int(c) < self.iters}):
            sub = self._timed_fit(n, 0, evaluate)
            points.append({"iteration": n, "train_s": sub["train_s"], "cpu_s": sub.get("train_cpu_s"),
                           "perplexity": evaluate(self.model.topic_word_), "estimate": True,
                           "n_samples": int(self.model.n_samples_)})
            self.model = None
        self.model, self._final_counts = main_model, main_counts
        return points

    def _timed_fit(self, iters, eval_every, evaluate):
        import harmonium.estimators.lda as est
        from harmonium.inference.mcmc.lda.estimates import WordCounts
        from harmonium.models.directed.lda import topic_word_mean

        if not hasattr(est, "run"):  # since issue 19 the fit loop is the Recorder's, which calls run
            import harmonium.inference.recorder as est

        self.model = self._make(iters)
        sweeps: list[float] = []
        cpus: list[float] = []
        kernels: list[float] = []
        stamps: list[float] = []
        entered: list[tuple[float, float]] = []
        self._final_counts = None
        trace: list[dict] = []
        real_run = est.run

        def timed_run(rng, kernel, state, data, model, n_iter, *, start=0, callback=None):
            mark = [_clocks()]
            entered.append(mark[0])

            def cb(it, st, info):
                kernels.append(time.perf_counter() - mark[0][0])
                stop = bool(callback(it, st, info)) if callback is not None else False
                now = _clocks()
                sweeps.append(now[0] - mark[0][0])
                cpus.append(now[1] - mark[0][1])
                if hasattr(st, "n_wk") and it == n_iter:
                    self._final_counts = (WordCounts(st.n_wk), st.n_k.copy(), float(model.beta), model.seeds)
                elif hasattr(st, "n_wk") and eval_every and it % eval_every == 0:
                    phi = topic_word_mean(st.n_wk, st.n_k, model.beta)
                    trace.append({"iteration": it, "train_s": float(sum(sweeps)), "cpu_s": float(sum(cpus)),
                                  "perplexity": evaluate(phi)})
                    del phi
                mark[0] = _clocks()
                return stop

            return real_run(rng, kernel, state, data, model, n_iter, start=start, callback=cb)

        def user_cb(it, n_iter, info):
            stamps.append(time.perf_counter())

        est.run = timed_run
        try:
            t0, c0 = _clocks()
            self.model.fit(self.data.train, callback=user_cb)
            wall = time.perf_counter() - t0
        finally:
            est.run = real_run
        lo, hi = throughput_window(iters)
        if len(sweeps) == iters:
            return {"train_s": float(sum(sweeps)), "train_cpu_s": float(sum(cpus)), "measured_iters": hi - lo,
                    "measured_s": float(sum(sweeps[lo:hi])), "fit_wall_s": wall, "trace": trace,
                    "init_s": entered[0][0] - t0, "init_cpu_s": entered[0][1] - c0,
                    "sweep_s": sweeps, "sweep_cpu_s": cpus, "kernel_s": kernels,
                    "measured_kernel_s": float(sum(kernels[lo:hi])),
                    "timing": "per-sweep clock inside LDA.fit (driver loop wrapped); init_s: fit call to first sweep"}
        # fallback: the public callback's timestamps (the first sweep's start is not seen)
        lo = max(lo, 1)
        return {"train_s": wall, "measured_iters": hi - lo, "measured_s": stamps[hi - 1] - stamps[lo - 1],
                "fit_wall_s": wall, "trace": [], "timing": "intervals between LDA.fit callback calls"}

    @property
    def final_state_phi(self):
        """phi of the main fit's last state, made now from its kept counts (None if the fit kept none)."""
        from harmonium.inference.mcmc.lda.estimates import final_state_topic_word

        counts = getattr(self, "_final_counts", None)
        return None if counts is None else final_state_topic_word(*counts)

    def phi(self):
        return self.model.topic_word_

    def transform(self, data, n_iter):
        kw = {} if n_iter is None else {"n_iter": n_iter}
        t = time.perf_counter()
        theta = self.model.transform(data.observed, **kw)
        return theta, {"n_iter": n_iter or self.model.n_transform_iter, "infer_s": time.perf_counter() - t,
                       "method": "LDA.transform (fixed-topics Gibbs, theta averaged over the second half)"}


def _repo_root():
    from pathlib import Path

    return Path(__file__).resolve().parents[2]


# ---------------------------------------------------------------------------------------------
class TomotopyRunner(Runner):
    """tomotopy.LDAModel (collapsed Gibbs, SparseLDA-style, C++/SIMD), TermWeight.ONE, no alpha optimisation."""

    timing = "wall and CPU time of model.train(n) calls; init_s: the train(0) initialisation"

    system = "tomotopy"

    def versions(self):
        import tomotopy as tp

        return {"tomotopy": tp.__version__, "isa": tp.isa}

    def settings(self):
        return {"workers": self.threads, "parallel": str(self._scheme()), "optim_interval": 0, "burn_in": 0}

    def _scheme(self):
        import tomotopy as tp

        name = self.options.get("parallel", "DEFAULT")
        return getattr(tp.ParallelScheme, name)

    def prepare(self, data):
        import tomotopy as tp

        self.data = data
        self.terms = list(data.corpus.vocabulary)
        m = tp.LDAModel(tw=tp.TermWeight.ONE, k=self.K, alpha=ALPHA, eta=BETA, seed=self.seed)
        m.optim_interval = 0
        m.burn_in = 0
        for words in doc_word_lists(data.train, self.terms):
            m.add_doc(words)
        t, c = _clocks()
        m.train(0, workers=self.threads, parallel=self._scheme())  # initialisation only
        t1, c1 = _clocks()
        self.init = (t1 - t, c1 - c)
        self.m = m

    def _step(self, n):
        t, c = _clocks()
        self.m.train(n, workers=self.threads, parallel=self._scheme())
        t1, c1 = _clocks()
        return t1 - t, c1 - c

    def phi(self):
        m = self.m
        raw = np.array([m.get_topic_word_dist(k, normalize=False) for k in range(self.K)], dtype=np.float64)
        vocab = list(m.used_vocabs)
        if raw.shape[1] != len(vocab):
            vocab = list(m.vocabs)
        n_kw = np.zeros((self.K, len(self.terms)))
        index = {t: i for i, t in enumerate(self.terms)}
        cols = np.array([index[t] for t in vocab])
        n_kw[:, cols] = np.maximum(raw - float(m.eta), 0.0)  # raw values are n_kw + eta
        return phi_from_counts(n_kw, BETA)

    def transform(self, data, n_iter):
        n_iter = 100 if n_iter is None else n_iter
        docs = [self.m.make_doc(words) for words in doc_word_lists(data.observed, self.terms)]
        t = time.perf_counter()
        dists, _ = self.m.infer(docs, iterations=n_iter, workers=self.threads, parallel=self._scheme())
        info = {"n_iter": n_iter, "infer_s": time.perf_counter() - t, "method": "model.infer(together=False)"}
        return np.asarray(dists, dtype=np.float64), info


# ---------------------------------------------------------------------------------------------
class TopicaRunner(Runner):
    """topica.LDA with ``sampler`` "sparse" (MALLET SparseLDA), "warp" (WarpLDA MH) or "lightlda" (alias MH).

    ``fit(iters=N)`` runs N + num_samples x sample_interval sweeps (the
    snapshots averaged into phi come after the N; defaults 5 x 25 = 125 more),
    so the harness passes num_samples=1, sample_interval=0: exactly N sweeps,
    phi of the final state, as for the other systems.

    topica cannot resume a fit (a second ``fit`` starts again from scratch)
    and its topics cannot be read while it fits, so the held-out trace comes
    from separate fits of the lengths in ``options["checkpoints"]`` (each from
    the same seed, each on its own clock; none by default). Its ``fit`` does
    some work after the last sweep (estimates, diagnostics), so the sweeps are
    clocked from its ``progress`` callback, called every P sweeps (P of
    :func:`throughput_window`) and at the end, each call after computing a
    log likelihood: the window (P, 2P] is t(2P) - t(P) less the time of one
    ``model.log_likelihood()`` call (measured after the fit, min of 3;
    ``measured_raw_s`` keeps the uncorrected interval). ``train_s`` /
    ``train_cpu_s`` are the wall / CPU seconds from the start of ``fit`` to
    the last sweep less those calls, so they include topica's initialisation
    (``init_s`` 0: not separable).
    """

    def __init__(self, K, threads, seed, options=None, *, sampler="sparse"):
        super().__init__(K, threads, seed, options)
        self.sampler = sampler
        self.system = f"topica-{sampler}"

    def versions(self):
        import topica

        return {"topica": topica.__version__}

    def settings(self):
        return {"sampler": self.sampler, "num_threads": self.threads, "optimize_interval": 0, "num_samples": 1,
                "sample_interval": 0, "alpha_sum": ALPHA * self.K,
                "checkpoints": list(self.options.get("checkpoints", []))}

    def _model(self):
        import topica

        return topica.LDA(self.K, alpha_sum=ALPHA * self.K, beta=BETA, optimize_interval=0, seed=self.seed,
                          num_threads=self.threads, sampler=self.sampler)

    def prepare(self, data):
        import topica

        self.data = data
        self.terms = list(data.corpus.vocabulary)
        docs = doc_word_lists(data.train, self.terms)
        self.corpus = topica.Corpus.from_documents(docs, vocabulary=self.terms)
        del docs
        if self.corpus.num_docs != data.train.n_docs:
            raise RuntimeError(f"topica kept {self.corpus.num_docs} of {data.train.n_docs} training documents")
        self.m = self._model()

    def _fit_once(self, iters):
        P, _ = throughput_window(iters)
        P = max(P, 1)
        stamps: dict[int, tuple[float, float]] = {}

        def progress(i, n, info):
            stamps[int(i)] = _clocks()

        t0, c0 = _clocks()
        self.m.fit(self.corpus, iters=iters, num_samples=1, sample_interval=0, keep_theta_draws=False, check_every=0,
                   progress=progress, progress_interval=P)
        wall = time.perf_counter() - t0
        out = {"fit_wall_s": wall, "stamps": {str(k): v[0] - t0 for k, v in sorted(stamps.items())}}
        # the cost of one progress call's log likelihood, measured on the final state
        lls = []
        for _ in range(3):
            t, c = _clocks()
            self.m.log_likelihood()
            t1, c1 = _clocks()
            lls.append((t1 - t, c1 - c))
        c, ccpu = min(lls)
        out["ll_call_s"] = c
        n_calls = len(stamps)
        out["train_s"] = stamps[iters][0] - t0 - n_calls * c
        out["train_cpu_s"] = stamps[iters][1] - c0 - n_calls * ccpu
        out["init_s"] = out["init_cpu_s"] = 0.0
        if P in stamps and 2 * P in stamps and 2 * P <= iters:
            d1 = stamps[2 * P][0] - stamps[P][0]  # sweeps P+1 .. 2P and one log likelihood
            out.update(measured_iters=P, measured_s=max(d1 - c, 0.5 * d1), measured_raw_s=d1,
                       timing=f"progress callback every {P} sweeps, less one model.log_likelihood() call")
        else:
            first = min(stamps)
            out.update(measured_iters=iters - first, measured_s=stamps[iters][0] - stamps[first][0],
                       timing="progress callback timestamps (log-likelihood cost included)")
        return out

    def fit(self, iters, eval_every, evaluate):
        trace = []
        for n in sorted({int(c) for c in self.options.get("checkpoints", []) if 0 < int(c) < iters}):
            self.m = self._model()
            o = self._fit_once(n)
            trace.append({"iteration": n, "train_s": o["train_s"], "cpu_s": o["train_cpu_s"],
                          "perplexity": evaluate(self.phi()), "separate_fit": True})
            self.m = None
        self.m = self._model()
        out = self._fit_once(iters)
        out["trace"] = trace if eval_every else []
        return out

    def phi(self):
        phi = np.asarray(self.m.topic_word, dtype=np.float64)
        vocab = list(self.m.vocabulary)
        if vocab != self.terms:
            index = {t: i for i, t in enumerate(vocab)}
            phi = phi[:, [index[t] for t in self.terms]]
        return phi

    def transform(self, data, n_iter):
        kw = {} if n_iter is None else {"iters": n_iter}
        docs = doc_word_lists(data.observed, self.terms)
        t = time.perf_counter()
        theta = self.m.transform(docs, seed=self.seed, **kw)
        return np.asarray(theta, dtype=np.float64), {
            "n_iter": n_iter or 100, "infer_s": time.perf_counter() - t,
            "method": "model.transform (collapsed Gibbs per document; burn_in 10, 10 samples 5 apart)"}


# ---------------------------------------------------------------------------------------------
class LdaPackageRunner(Runner):
    """The ``lda`` package (Cython collapsed Gibbs, single-threaded).

    ``LDA.fit`` is a Python loop around ``_sample_topics``; the harness runs
    that loop itself (initialisation ``_initialize`` off the clock, the
    per-iteration log likelihood skipped) so that it can evaluate on the way.
    """

    timing = "wall time of the _sample_topics loop (as in lda.LDA._fit, log likelihood skipped)"

    system = "lda"

    def versions(self):
        import lda

        return {"lda": lda.__version__}

    def settings(self):
        return {"threads": 1, "init": "lda's deterministic round-robin (z_i = i mod K)"}

    def prepare(self, data):
        import logging

        import lda
        import lda.utils

        logging.getLogger("lda").setLevel(logging.ERROR)
        if self.threads != 1:
            raise RuntimeError("the lda package is single-threaded")
        self.data = data
        self.m = lda.LDA(n_topics=self.K, n_iter=1, alpha=ALPHA, eta=BETA, random_state=self.seed, refresh=10**9)
        X = data.train.counts.astype(np.int64)
        t, c = _clocks()
        self.m._initialize(X)
        t1, c1 = _clocks()
        self.init = (t1 - t, c1 - c)
        self.rs = lda.utils.check_random_state(self.seed)
        self.rands = self.m._rands.copy()

    def _step(self, n):
        t, c = _clocks()
        for _ in range(n):
            self.rs.shuffle(self.rands)
            self.m._sample_topics(self.rands)
        t1, c1 = _clocks()
        return t1 - t, c1 - c

    def phi(self):
        return phi_from_counts(self.m.nzw_, BETA)

    def transform(self, data, n_iter):
        n_iter = 20 if n_iter is None else n_iter
        self.m.components_ = self.phi()
        X = data.observed.counts.astype(np.int64)
        t = time.perf_counter()
        theta = self.m.transform(X, max_iter=n_iter)
        return theta, {"n_iter": n_iter, "infer_s": time.perf_counter() - t,
                       "method": "lda.LDA.transform (iterated pseudo-counts per document, Python loop)"}


# ---------------------------------------------------------------------------------------------
class PyrmalletRunner(Runner):
    """pyrmallet (RustMallet: MALLET's SparseLDA in Rust, single-threaded), through its low-level ``rm.train``.

    The corpus is built by ``Corpus.from_strings`` from harmonium's token
    stream joined by spaces, split back on whitespace (``token_regex=r"\\S+"``,
    no stop words, no frequency cut): the same tokens in the same order.
    ``num_samples=1, sample_interval=0``: exactly N sweeps, phi of the final
    state. It cannot resume, so the held-out trace comes from separate fits of
    the lengths in ``options["checkpoints"]``, as for topica. Clocked by its
    callback (called every P sweeps and at the end, each computing a log
    likelihood, whose cost is measured after the fit and taken off).
    """

    system = "pyrmallet"

    def versions(self):
        from importlib.metadata import version

        return {"pyrmallet": version("pyrmallet")}

    def settings(self):
        return {"threads": 1, "optimize_interval": 0, "burn_in": 0, "num_samples": 1, "sample_interval": 0,
                "alpha_sum": ALPHA * self.K, "checkpoints": list(self.options.get("checkpoints", []))}

    def prepare(self, data):
        from pyrmallet import _rust_mallet as rm

        if self.threads != 1:
            raise RuntimeError("pyrmallet is single-threaded")
        self.data = data
        self.terms = list(data.corpus.vocabulary)
        docs = [" ".join(ws) for ws in doc_word_lists(data.train, self.terms)]
        self.corpus = rm.Corpus.from_strings(docs, stopwords=[], min_doc_freq=1, max_doc_fraction=1.0,
                                             token_regex=r"\S+")
        del docs
        if self.corpus.num_docs != data.train.n_docs or self.corpus.total_tokens != data.n_train_tokens:
            raise RuntimeError(f"pyrmallet kept {self.corpus.num_docs} documents / {self.corpus.total_tokens} tokens "
                               f"of {data.train.n_docs} / {data.n_train_tokens}")
        self.m = None

    def _fit_once(self, iters):
        from pyrmallet import _rust_mallet as rm

        P = max(throughput_window(iters)[0], 1)
        stamps: dict[int, tuple[float, float]] = {}

        def cb(it, total, ll):
            stamps[int(it)] = _clocks()

        t0, c0 = _clocks()
        self.m = rm.train(self.corpus, num_topics=self.K, iterations=iters, burn_in=0, optimize_interval=0,
                          num_samples=1, sample_interval=0, alpha_sum=ALPHA * self.K, beta=BETA, seed=self.seed,
                          verbose=False, callback=cb, callback_interval=P)
        wall = time.perf_counter() - t0
        lls = []
        for _ in range(3):
            t, c = _clocks()
            self.m.log_likelihood(self.corpus)
            t1, c1 = _clocks()
            lls.append((t1 - t, c1 - c))
        c, ccpu = min(lls)
        last = max(stamps)
        out = {"fit_wall_s": wall, "ll_call_s": c, "train_s": stamps[last][0] - t0 - len(stamps) * c,
               "train_cpu_s": stamps[last][1] - c0 - len(stamps) * ccpu, "init_s": 0.0, "init_cpu_s": 0.0,
               "stamps": {str(k): v[0] - t0 for k, v in sorted(stamps.items())}}
        if P in stamps and 2 * P in stamps:
            d1 = stamps[2 * P][0] - stamps[P][0]
            out.update(measured_iters=P, measured_s=max(d1 - c, 0.5 * d1), measured_raw_s=d1,
                       timing=f"callback every {P} sweeps, less one log_likelihood() call")
        else:
            out.update(measured_iters=iters, measured_s=out["train_s"], timing="fit start to last callback")
        return out

    def fit(self, iters, eval_every, evaluate):
        trace = []
        for n in sorted({int(c) for c in self.options.get("checkpoints", []) if 0 < int(c) < iters}):
            o = self._fit_once(n)
            trace.append({"iteration": n, "train_s": o["train_s"], "cpu_s": o["train_cpu_s"],
                          "perplexity": evaluate(self.phi()), "separate_fit": True})
        out = self._fit_once(iters)
        out["trace"] = trace if eval_every else []
        return out

    def phi(self):
        phi = np.asarray(self.m.topic_word_matrix(), dtype=np.float64)
        vocab = list(self.m.vocabulary)
        if vocab != self.terms:
            index = {t: i for i, t in enumerate(vocab)}
            out = np.zeros((self.K, len(self.terms)))
            cols = np.array([index.get(t, -1) for t in self.terms])
            out[:, cols >= 0] = phi[:, cols[cols >= 0]]
            phi = out + 1e-300
        return phi

    def transform(self, data, n_iter):
        n_iter = 50 if n_iter is None else n_iter
        docs = [" ".join(ws) for ws in doc_word_lists(data.observed, self.terms)]
        t = time.perf_counter()
        theta = self.m.infer_strings(docs, n_iter=n_iter)
        return np.asarray(theta, dtype=np.float64), {"n_iter": n_iter, "infer_s": time.perf_counter() - t,
                                                     "method": "model.infer_strings (fixed-phi Gibbs)"}


# ---------------------------------------------------------------------------------------------
def make_runner(system: str, K: int, threads: int, seed: int, options: dict | None = None) -> Runner:
    base = system.split(":", 1)[0]
    if base == "harmonium" or base.startswith("harmonium-"):  # harmonium-LABEL: another checkout's harmonium
        r = HarmoniumRunner(K, threads, seed, options)
        r.system = system
        return r
    if base == "tomotopy":
        return TomotopyRunner(K, threads, seed, options)
    if base in ("topica-sparse", "topica-warp", "topica-lightlda"):
        return TopicaRunner(K, threads, seed, options, sampler=base.split("-", 1)[1])
    if base == "lda":
        return LdaPackageRunner(K, threads, seed, options)
    if base == "pyrmallet":
        return PyrmalletRunner(K, threads, seed, options)
    raise ValueError(f"unknown system {system!r}")


SYSTEMS = ("harmonium", "tomotopy", "topica-sparse", "topica-warp", "lda")
OTHER_SYSTEMS = ("topica-lightlda", "pyrmallet")  # runnable, not in the default list
