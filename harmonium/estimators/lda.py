"""The ``LDA`` estimator: latent Dirichlet allocation fitted by MCMC or variational inference.

Model: :mod:`harmonium.models.directed.lda`. Algorithms (seeds 003 and 004):

* ``inference="collapsed_gibbs"``: :mod:`harmonium.inference.mcmc.lda_collapsed_gibbs`
  (exact; ``sampler`` chooses how each z_i is drawn);
* ``inference="parallel_gibbs"``: :mod:`harmonium.inference.mcmc.lda_parallel_gibbs`
  (approximate collapsed Gibbs over ``n_jobs`` threads, AD-LDA);
* ``inference="naive_gibbs"``: :mod:`harmonium.inference.mcmc.lda_naive_gibbs`
  (z, Theta and B drawn in turn);
* ``inference="vb"``, ``"online_vb"``, ``"cvb0"``: :mod:`harmonium.inference.vi.lda_vb`
  (batch VB, online VB, CVB0), driven by :mod:`harmonium.estimators._lda_vi`.

Estimates: :mod:`harmonium.inference.mcmc.lda_estimates`; hyperparameters:
:mod:`harmonium.models.directed.lda_hyper`.
"""

from __future__ import annotations

import os
import time
import zlib

import numpy as np

from harmonium._validation import NONE, RANDOM_STATE, InstanceOf, Interval, Options
from harmonium.corpus.corpus import Corpus
from harmonium.errors import CorpusError, InvalidParameterError
from harmonium.estimators import _lda_vi
from harmonium.estimators._base import BaseEstimator, as_corpus, register
from harmonium.evaluation.completion import CompletionResult, document_completion
from harmonium.inference.mcmc import lda_collapsed_gibbs as cgs
from harmonium.inference.mcmc import lda_naive_gibbs as ngs
from harmonium.inference.mcmc import lda_parallel_gibbs as pgs
from harmonium.inference.mcmc.lda_estimates import ChainAverage, keep_sample
from harmonium.inference.mcmc.lda_infer import infer_fixed_topics
from harmonium.inference.run import run
from harmonium.io import load_checkpoint, save_checkpoint
from harmonium.models.directed.lda import (
    collapsed_log_joint,
    doc_topic_mean,
    make_model,
    topic_word_mean,
)
from harmonium.models.directed.lda_hyper import optimize_alpha, optimize_beta
from harmonium.parallel.seeds import check_random_state

_POSITIVE = Interval("real", 0, None, "neither")


def _fingerprint(corpus: Corpus) -> dict:
    ts = corpus.tokens()
    crc = zlib.crc32(np.ascontiguousarray(ts.doc_ptr).view(np.uint8))
    crc = zlib.crc32(np.ascontiguousarray(ts.words).view(np.uint8), crc)
    return {"n_docs": corpus.n_docs, "n_words": corpus.n_words, "n_tokens": int(ts.words.shape[0]), "crc32": crc}


@register
class LDA(BaseEstimator):
    """Latent Dirichlet allocation (Blei, Ng & Jordan 2003) fitted by Gibbs sampling or variational inference.

    Parameters
    ----------
    n_topics : int, default 10
        Number of topics K.
    doc_topic_prior : float, default 0.1
        Symmetric Dirichlet prior alpha on each document's topic proportions theta_d.
    topic_word_prior : float, default 0.01
        Symmetric Dirichlet prior beta (eta in seed 003) on each topic's word distribution phi_k.
    inference : {"collapsed_gibbs", "parallel_gibbs", "naive_gibbs", "vb", "online_vb", "cvb0"}
        The algorithm (seeds 003 and 004). ``"collapsed_gibbs"``: Theta and B
        integrated out, exact (Griffiths & Steyvers 2004). ``"parallel_gibbs"``:
        the approximate collapsed sampler over ``n_jobs`` threads (AD-LDA,
        Newman et al. 2009); with ``n_jobs=1`` it is ``"collapsed_gibbs"``.
        ``"naive_gibbs"``: z, Theta and B drawn in turn from their conditionals.
        ``"vb"``: batch mean-field VB (Blei et al. 2003; seed 004 eqs. 4-6).
        ``"online_vb"``: stochastic VB on mini-batches (Hoffman et al. 2010);
        also :meth:`partial_fit`. ``"cvb0"``: zeroth-order collapsed VB
        (Asuncion et al. 2009), the most accurate of the three in our benchmarks.
    sampler : {"sparse", "alias_mh", "plain"}, default "sparse"
        How the collapsed samplers draw each z_i, all exact: SparseLDA buckets
        (O(k_d + k_w) a token, the default: fastest as measured in
        benchmarks/RESULTS.md), alias tables with Metropolis-Hastings (O(1)),
        or the plain O(K) reference.
    n_iter : int, default 200
        Sweeps over the training corpus: Gibbs sweeps, VB or CVB0 iterations,
        or online VB passes.
    burn_in : int or None, default None
        Sweeps discarded before samples are averaged; None means ``n_iter // 2``.
    thin : int, default 5
        Keep every ``thin``-th sweep after burn-in for the Rao-Blackwellised
        estimates of Theta and B.
    optimize_interval : int, default 0
        Every this many sweeps (after ``optimize_burn_in``) re-estimate an
        asymmetric alpha and a symmetric beta by Minka's fixed point; 0 keeps
        the priors fixed. VB maximises the ELBO's alpha and beta terms;
        online VB counts mini-batches and moves them by rho_t.
    optimize_burn_in : int, default 50
        Sweeps before the first hyperparameter update.
    n_jobs : int, default 1
        Threads for ``"parallel_gibbs"`` and for :meth:`transform`. The same
        seed and the same ``n_jobs`` give identical results.
    n_transform_iter : int, default 50
        Gibbs sweeps per call to :meth:`transform`; theta is averaged over the second half.
    evaluate_every : int, default 10
        Record the collapsed log joint log p(w, z) every this many sweeps (and at the last).
    learning_decay : float, default 0.7
        kappa in (0.5, 1] of online VB's step size rho_t = (tau0 + t)^-kappa.
    learning_offset : float, default 10.0
        tau0 >= 0 of the step size (down-weights the first mini-batches).
    batch_size : int, default 256
        Documents per online VB mini-batch.
    total_docs : int or None, default None
        D, the size of the stream, for online VB's scaling ``D / |batch|``; None
        in ``fit`` means the corpus size. :meth:`partial_fit` requires it.
    max_doc_iter : int, default 100
        Cap on the E-step iterations of one document (VB, online VB, and
        :meth:`transform` of models fitted by VI).
    doc_tol : float, default 1e-3
        E-step stop: mean absolute change of gamma_d below this.
    tol : float, default 0.0
        VB and CVB0 stop when the monitored objective changes by less than
        ``tol`` (relative) between two evaluations; 0 runs all ``n_iter``.
    checkpoint_path : str or path-like, optional
        Where to write checkpoints during ``fit``; ``fit(resume=True)`` continues from it.
    checkpoint_every : int, default 50
        Sweeps between checkpoints (one is always written at the end).
    random_state : int, numpy Generator or None
        Seed. ``None`` draws fresh entropy and records it in ``seed_``.

    Attributes
    ----------
    topic_word_ : ndarray (K, V)
        Rao-Blackwellised posterior mean of phi, averaged over the retained
        samples (the final state's (n_kw + beta) / (n_k + V beta) if none).
        Variational fits: E_q[phi] = lambda / sum_w lambda.
    topic_word_posterior_ : ndarray (K, V)
        Variational fits only: lambda, the Dirichlet parameters of q(phi_k)
        (CVB0: n_kw + beta).
    doc_topic_ : float32 ndarray (D, K) or None
        Rao-Blackwellised posterior mean of theta for the training documents
        (float32: it is the largest fitted array on corpora of many documents).
        Variational fits: E_q[theta_d]. None after online VB, which keeps no
        per-document state.
    alpha_ : ndarray (K,)
        The final (possibly optimised) alpha; ``beta_`` the final beta.
    n_samples_ : int
        Samples averaged into ``topic_word_`` and ``doc_topic_``.
    vocabulary_ : Vocabulary
    n_iter_ : int
        Sweeps done.
    seed_ : int or None
        The seed that reproduces the run (None if a Generator was passed).
    trace_ : dict of lists
        Gibbs: ``iteration``, ``log_joint`` (log p(w, z)), ``log_likelihood_per_token``,
        ``n_changed``, ``seconds``, ``alpha_sum`` and ``beta`` at each evaluation.
        VI: ``iteration``, ``elbo``, ``log_likelihood_per_token`` (VB: the ELBO
        per token, a lower bound; online VB: the current mini-batch's document
        terms of the ELBO per token, ``elbo`` NaN, since the topics' terms cost
        O(VK); CVB0: log p(w | theta-hat, phi-hat) per token), ``change``,
        ``seconds``, ``alpha_sum``, ``beta``.

    Examples
    --------
    >>> from harmonium.datasets import load_debian
    >>> corpus = load_debian(n_docs=2000)
    >>> lda = LDA(n_topics=10, n_iter=50, random_state=0).fit(corpus)
    >>> lda.top_words(5)[0]  # doctest: +SKIP
    """

    _parameter_constraints = {
        "n_topics": [Interval("int", 1, None)],
        "doc_topic_prior": [_POSITIVE],
        "topic_word_prior": [_POSITIVE],
        "inference": [Options(("collapsed_gibbs", "parallel_gibbs", "naive_gibbs", *_lda_vi.VI_INFERENCE))],
        "sampler": [Options(("sparse", "alias_mh", "plain"))],
        "n_iter": [Interval("int", 1, None)],
        "burn_in": [NONE, Interval("int", 0, None)],
        "thin": [Interval("int", 1, None)],
        "optimize_interval": [Interval("int", 0, None)],
        "optimize_burn_in": [Interval("int", 0, None)],
        "n_jobs": [Interval("int", 1, None)],
        "n_transform_iter": [Interval("int", 1, None)],
        "evaluate_every": [Interval("int", 1, None)],
        "learning_decay": [Interval("real", 0.5, 1.0, "right")],
        "learning_offset": [Interval("real", 0, None, "left")],
        "batch_size": [Interval("int", 1, None)],
        "total_docs": [NONE, Interval("int", 1, None)],
        "max_doc_iter": [Interval("int", 1, None)],
        "doc_tol": [Interval("real", 0, None, "left")],
        "tol": [Interval("real", 0, None, "left")],
        "checkpoint_path": [NONE, InstanceOf((str, os.PathLike), "a path")],
        "checkpoint_every": [Interval("int", 1, None)],
        "random_state": [RANDOM_STATE],
    }

    def __init__(
        self,
        n_topics: int = 10,
        *,
        doc_topic_prior: float = 0.1,
        topic_word_prior: float = 0.01,
        inference: str = "collapsed_gibbs",
        sampler: str = "sparse",
        n_iter: int = 200,
        burn_in: int | None = None,
        thin: int = 5,
        optimize_interval: int = 0,
        optimize_burn_in: int = 50,
        n_jobs: int = 1,
        n_transform_iter: int = 50,
        evaluate_every: int = 10,
        learning_decay: float = 0.7,
        learning_offset: float = 10.0,
        batch_size: int = 256,
        total_docs: int | None = None,
        max_doc_iter: int = 100,
        doc_tol: float = 1e-3,
        tol: float = 0.0,
        checkpoint_path=None,
        checkpoint_every: int = 50,
        random_state=None,
    ):
        self.n_topics = n_topics
        self.doc_topic_prior = doc_topic_prior
        self.topic_word_prior = topic_word_prior
        self.inference = inference
        self.sampler = sampler
        self.n_iter = n_iter
        self.burn_in = burn_in
        self.thin = thin
        self.optimize_interval = optimize_interval
        self.optimize_burn_in = optimize_burn_in
        self.n_jobs = n_jobs
        self.n_transform_iter = n_transform_iter
        self.evaluate_every = evaluate_every
        self.learning_decay = learning_decay
        self.learning_offset = learning_offset
        self.batch_size = batch_size
        self.total_docs = total_docs
        self.max_doc_iter = max_doc_iter
        self.doc_tol = doc_tol
        self.tol = tol
        self.checkpoint_path = checkpoint_path
        self.checkpoint_every = checkpoint_every
        self.random_state = random_state

    # -- fitting ---------------------------------------------------------------------
    def _check_training_corpus(self, corpus: Corpus) -> None:
        if corpus.n_docs == 0:
            raise CorpusError("LDA.fit got an empty corpus (0 documents).")
        if corpus.n_tokens == 0:
            raise CorpusError(f"LDA.fit got a corpus of {corpus.n_docs} documents with no tokens at all.")
        empty = corpus.empty_documents()
        if empty.size:
            raise CorpusError(
                f"document {int(empty[0])} is empty ({empty.size} empty documents in all) (LDA.fit); "
                "drop them with corpus.drop_empty() or Tokenizer(min_doc_length=1)."
            )

    def fit(self, X, y=None, *, resume: bool = False, callback=None, client=None, n_shards=None,
            sync_every: int = 1):
        """Fit the model to a corpus by ``n_iter`` Gibbs sweeps.

        Parameters
        ----------
        X : Corpus, scipy.sparse matrix or 2-D array of counts, shape (D, V)
        y : ignored
        resume : bool, default False
            Continue from ``checkpoint_path`` when that file exists (it must
            come from the same hyperparameters and the same corpus). The
            resumed run is bit-identical to an uninterrupted one.
        callback : callable, optional
            ``callback(iteration, n_iter, info)`` after every sweep; return
            True to stop early (the fitted state is kept).
        client : distributed.Client, optional
            Train on this Dask cluster (docs/guides/scale-out.md): AD-LDA for
            ``inference="parallel_gibbs"``, a distributed E-step for ``"vb"``
            and ``"online_vb"``. ``X`` may then be the path of an on-disk
            corpus, which the workers read themselves. ``dask_stats_`` records
            bytes moved and time per step, peak memory per worker, recoveries.
        n_shards : int, optional
            Shards of the corpus (default: the cluster's workers). The same
            seed and ``n_shards`` give identical results on any cluster; with
            ``client=None`` the shards run in this process (the reference).
        sync_every : int, default 1
            AD-LDA: local sweeps between merges of the word-topic counts.

        Returns
        -------
        self
        """
        self._validate_params()
        if resume and self.checkpoint_path is None:
            raise InvalidParameterError("LDA.fit(resume=True) needs checkpoint_path to be set.")
        if client is not None or n_shards is not None:
            from harmonium.estimators import _lda_dask

            return _lda_dask.fit(self, X, client, n_shards=n_shards, sync_every=sync_every, resume=resume,
                                 callback=callback)
        corpus = as_corpus(X, "LDA.fit")
        self._check_training_corpus(corpus)
        self._online_state = None
        if self.inference in _lda_vi.VI_INFERENCE:
            fit = _lda_vi.fit_online if self.inference == "online_vb" else _lda_vi.fit_batch
            fit(self, corpus, _lda_vi.fingerprint(corpus), resume=resume, callback=callback)
            return self
        self.topic_word_posterior_ = None
        tokens = corpus.tokens()
        model = make_model(self.n_topics, corpus.n_words, self.doc_topic_prior, self.topic_word_prior)
        fingerprint = _fingerprint(corpus)
        algo = _algorithm(self.inference)
        burn_in = self.n_iter // 2 if self.burn_in is None else self.burn_in

        ckpt = None
        if resume and os.path.exists(self.checkpoint_path):
            ckpt = load_checkpoint(self.checkpoint_path, expected_class="LDA")
            self._check_checkpoint(ckpt, fingerprint)
        if ckpt is not None:
            rng = ckpt.rng
            extra = ckpt.extra
            self.seed_ = extra.get("seed")
            model = make_model(self.n_topics, corpus.n_words, ckpt.arrays["alpha"], extra["beta"])
            state = algo.state_from_arrays(tokens, model, ckpt.arrays)
            average = ChainAverage.from_arrays(ckpt.arrays, extra["n_samples"])
            start = int(ckpt.iteration)
            trace = {k: list(v) for k, v in ckpt.trace.items()}
        else:
            rng, self.seed_ = check_random_state(self.random_state, "LDA")
            state = algo.init(rng, tokens, model)
            average = ChainAverage(corpus.n_docs, corpus.n_words, self.n_topics)
            start = 0
            trace = {k: [] for k in ("iteration", "log_joint", "log_likelihood_per_token", "n_changed", "seconds",
                                     "alpha_sum", "beta")}

        kernel = algo.build_kernel(self)
        current = {"model": model}
        n_tokens = fingerprint["n_tokens"]
        t0 = time.perf_counter() - (trace["seconds"][-1] if trace["seconds"] else 0.0)

        def on_sweep(it, st, info):
            m = current["model"]
            if keep_sample(it, burn_in, self.thin):
                average.add(st.n_dk, st.n_wk, st.n_k, m.alpha, m.beta)
            if self.optimize_interval and it > self.optimize_burn_in and it % self.optimize_interval == 0:
                current["model"] = m = _optimize_hyperparameters(st, m)
            stop = bool(callback(it, self.n_iter, info)) if callback is not None else False
            last = stop or it == self.n_iter
            if it % self.evaluate_every == 0 or last:
                lj = collapsed_log_joint(st.n_dk, st.n_wk, st.n_k, m)
                for key, value in (("iteration", it), ("log_joint", lj), ("log_likelihood_per_token", lj / n_tokens),
                                   ("n_changed", info.n_changed), ("seconds", time.perf_counter() - t0),
                                   ("alpha_sum", float(m.alpha.sum())), ("beta", m.beta)):
                    trace[key].append(value)
            if self.checkpoint_path is not None and (it % self.checkpoint_every == 0 or last):
                save_checkpoint(
                    self.checkpoint_path, cls="LDA", params=self._json_params(),
                    state_arrays={**algo.arrays_of_state(st), **average.to_arrays(), "alpha": m.alpha},
                    rng=rng, iteration=it, trace=trace,
                    extra={"corpus": fingerprint, "seed": self.seed_, "beta": m.beta, "n_samples": average.n_samples},
                )
            return stop

        state, last_it = run(rng, lambda r, st, data, _m: kernel(r, st, data, current["model"]), state, tokens,
                             model, self.n_iter, start=start, callback=on_sweep)

        model = current["model"]
        self.vocabulary_ = corpus.vocabulary
        self.alpha_ = model.alpha
        self.beta_ = model.beta
        self.n_samples_ = average.n_samples
        if average.n_samples:
            self.topic_word_ = average.topic_word()
            self.doc_topic_ = average.doc_topic(in_place=True)
        else:
            self.topic_word_ = topic_word_mean(state.n_wk, state.n_k, model.beta)
            self.doc_topic_ = doc_topic_mean(state.n_dk, model.alpha).astype(np.float32)
        self.trace_ = trace
        self.rng_state_ = rng.bit_generator.state
        self.n_iter_ = last_it
        return self

    def _check_checkpoint(self, ckpt, fingerprint: dict) -> None:
        path = os.fspath(self.checkpoint_path)
        saved = ckpt.params
        names = ("n_topics", "doc_topic_prior", "topic_word_prior", "inference", "n_jobs", "optimize_interval",
                 "optimize_burn_in")
        if self.inference in _lda_vi.VI_INFERENCE:
            names += ("learning_decay", "learning_offset", "batch_size", "total_docs", "max_doc_iter", "doc_tol")
        else:
            names += ("sampler", "burn_in", "thin")
        for name in names:
            if saved.get(name) != getattr(self, name):
                raise InvalidParameterError(
                    f"checkpoint {path!r} was written with {name}={saved.get(name)!r}, "
                    f"but this LDA has {name}={getattr(self, name)!r}; "
                    "use the same settings or another checkpoint_path."
                )
        if ckpt.manifest.get("extra", {}).get("corpus") != fingerprint:
            raise CorpusError(
                f"checkpoint {path!r} was written for a different corpus "
                f"({ckpt.manifest.get('extra', {}).get('corpus')} vs {fingerprint}); resume needs the same corpus."
            )

    def fit_transform(self, X, y=None, **fit_kwargs) -> np.ndarray:
        """Fit, then return ``doc_topic_`` (theta of the training documents; after online VB, ``transform(X)``)."""
        self.fit(X, **fit_kwargs)
        return self.doc_topic_ if self.doc_topic_ is not None else self.transform(X)

    def partial_fit(self, X, y=None):
        """Online VB updates from one chunk of a document stream (Hoffman et al. 2010).

        ``X`` is split into mini-batches of ``batch_size`` documents, each one
        step ``lambda <- (1 - rho_t) lambda + rho_t (beta + D/|batch| sstats)``
        with D = ``total_docs``. The first call fixes the vocabulary (a
        Corpus's, or the column count of a matrix); later Corpus chunks are
        matched to it by term. Works after ``fit(inference="online_vb")`` and
        after :func:`harmonium.load` of such a model: the run continues.
        """
        self._validate_params()
        if self.inference != "online_vb":
            raise InvalidParameterError(
                f"LDA.partial_fit needs inference='online_vb' (got {self.inference!r}); the batch algorithms "
                "see the whole corpus at once: use fit."
            )
        vocabulary = getattr(self, "vocabulary_", None) if getattr(self, "n_iter_", None) is not None else None
        corpus = as_corpus(X, "LDA.partial_fit", vocabulary)
        if corpus.n_docs == 0:
            raise CorpusError("LDA.partial_fit got an empty chunk (0 documents).")
        _lda_vi.partial_fit(self, corpus)
        return self

    # -- using a fitted model ---------------------------------------------------------
    def transform(self, X, *, n_iter: int | None = None, random_state=None) -> np.ndarray:
        """Topic proportions theta (D, K) of new documents, topics held fixed.

        Gibbs sampling of the new documents' assignments given ``topic_word_``
        (``n_iter`` sweeps, default ``n_transform_iter``); theta is the
        posterior mean averaged over the second half of the sweeps. An empty
        document gets the prior mean. Documents over another vocabulary are
        matched by term. With ``random_state=None`` the result is
        deterministic (seeded from ``seed_``).
        """
        self._check_is_fitted()
        corpus = as_corpus(X, "LDA.transform", self.vocabulary_)
        if getattr(self, "topic_word_posterior_", None) is not None:
            return _lda_vi.transform(self, corpus)
        n_iter = self.n_transform_iter if n_iter is None else n_iter
        if isinstance(n_iter, bool) or not isinstance(n_iter, (int, np.integer)) or n_iter < 1:
            raise InvalidParameterError(f"The 'n_iter' parameter of LDA.transform must be an int >= 1. Got {n_iter!r}.")
        if random_state is None:
            random_state = self.seed_ if self.seed_ is not None else 0
        rng, _ = check_random_state(random_state, "LDA.transform")
        phi_wk = np.ascontiguousarray(self.topic_word_.T)
        return infer_fixed_topics(rng, corpus.tokens(), phi_wk, self.alpha_, int(n_iter), n_threads=self.n_jobs)

    def top_words(self, n: int = 10) -> list[list[tuple[str, float]]]:
        """The ``n`` most probable words of each topic, as (term, phi_kw) pairs."""
        self._check_is_fitted()
        order = np.argsort(-self.topic_word_, axis=1, kind="stable")[:, :n]
        return [[(self.vocabulary_[int(w)], float(self.topic_word_[k, w])) for w in row] for k, row in enumerate(order)]

    def perplexity(self, X, *, observed_fraction: float = 0.5, random_state=0) -> CompletionResult:
        """Document-completion perplexity on held-out documents ``X`` (see :mod:`harmonium.evaluation`)."""
        self._check_is_fitted()
        corpus = as_corpus(X, "LDA.perplexity", self.vocabulary_)
        return document_completion(self, corpus, observed_fraction=observed_fraction, random_state=random_state)

    @property
    def log_likelihood_trace_(self) -> np.ndarray:
        """(n_evaluations, 2) array of (iteration, log p(w, z))."""
        self._check_is_fitted()
        return np.column_stack([self.trace_["iteration"], self.trace_["log_joint"]])

    # -- persistence -------------------------------------------------------------------
    def _state_for_file(self):
        arrays = {"topic_word": self.topic_word_, "alpha": self.alpha_}
        if self.doc_topic_ is not None:
            arrays["doc_topic"] = self.doc_topic_
        if getattr(self, "topic_word_posterior_", None) is not None:
            arrays["topic_word_posterior"] = self.topic_word_posterior_
        extra = {"n_iter_": self.n_iter_, "seed_": self.seed_, "beta_": self.beta_, "n_samples_": self.n_samples_}
        return arrays, extra

    def _restore_from_file(self, arrays, manifest):
        extra = manifest.get("extra") or {}
        self.topic_word_ = np.asarray(arrays["topic_word"], dtype=np.float64)
        self.doc_topic_ = np.asarray(arrays["doc_topic"], dtype=np.float32) if "doc_topic" in arrays else None
        self.alpha_ = np.asarray(arrays["alpha"], dtype=np.float64)
        self.beta_ = float(extra["beta_"])
        lam = arrays.get("topic_word_posterior")
        self.topic_word_posterior_ = None if lam is None else np.asarray(lam, dtype=np.float64)
        K = self.alpha_.shape[0]
        if self.topic_word_.shape[0] != K or (self.doc_topic_ is not None and self.doc_topic_.shape[1] != K):
            raise ValueError("topic_word, doc_topic and alpha disagree on the number of topics")
        if self.topic_word_posterior_ is not None and self.topic_word_posterior_.shape != self.topic_word_.shape:
            raise ValueError("topic_word_posterior and topic_word differ in shape")
        if self.vocabulary_ is not None and len(self.vocabulary_) != self.topic_word_.shape[1]:
            raise ValueError("vocabulary and topic_word disagree on the number of words")
        self.n_iter_ = int(extra["n_iter_"])
        self.seed_ = extra.get("seed_")
        self.n_samples_ = int(extra.get("n_samples_", 0))


class _Algorithm:
    """How the estimator drives one inference algorithm: init, kernel, checkpointed arrays."""

    def __init__(self, init, state_cls, build_kernel):
        self.init = init
        self.state_cls = state_cls
        self.build_kernel = build_kernel

    def arrays_of_state(self, state) -> dict:
        # the count tables are derived from z and are rebuilt on resume
        return {k: v for k, v in state._asdict().items() if k not in ("n_dk", "n_wk", "n_k")}

    def state_from_arrays(self, tokens, model, arrays):
        counts = cgs.state_from_assignments(tokens, model, arrays["z"])
        fields = {**counts._asdict(), **{k: np.array(arrays[k]) for k in self.state_cls._fields if k in arrays}}
        return self.state_cls(**fields)


def _algorithm(name: str) -> _Algorithm:
    if name == "naive_gibbs":
        return _Algorithm(ngs.init, ngs.NaiveGibbsState, lambda est: ngs.build_kernel(compute_log_joint=False))
    if name == "parallel_gibbs":
        return _Algorithm(cgs.init, cgs.CollapsedGibbsState,
                          lambda est: pgs.build_kernel(sampler=est.sampler, n_threads=est.n_jobs,
                                                       compute_log_joint=False))
    return _Algorithm(cgs.init, cgs.CollapsedGibbsState,
                      lambda est: cgs.build_kernel(sampler=est.sampler, compute_log_joint=False))


def _optimize_hyperparameters(state, model):
    """alpha (asymmetric) and beta (symmetric) by Minka's fixed point, from the current counts."""
    alpha = optimize_alpha(state.n_dk, model.alpha)
    beta = optimize_beta(state.n_wk, state.n_k, model.beta)
    return make_model(model.n_topics, model.n_words, alpha, beta)
