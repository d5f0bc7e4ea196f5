"""The ``LDA`` estimator: latent Dirichlet allocation fitted by MCMC or variational inference.

Model: :mod:`harmonium.models.directed.lda`. Algorithms (seeds 003 and 004):

* ``inference="collapsed_gibbs"``: :mod:`harmonium.inference.mcmc.lda.collapsed_gibbs`
  (exact; ``sampler`` chooses how each z_i is drawn);
* ``inference="parallel_gibbs"``: :mod:`harmonium.inference.mcmc.lda.parallel_gibbs`
  (approximate collapsed Gibbs over ``n_jobs`` threads: word-partitioned for ``sampler="sparse"``,
  ``"fplus"`` and ``"auto"``, AD-LDA for the other samplers);
* ``inference="naive_gibbs"``: :mod:`harmonium.inference.mcmc.lda.naive_gibbs`
  (z, Theta and B drawn in turn);
* ``inference="vb"``, ``"online_vb"``, ``"cvb0"``: :mod:`harmonium.inference.vi.lda_vb`
  (batch VB, online VB, CVB0), driven by :mod:`harmonium.estimators._lda_vi`.

Estimates: :mod:`harmonium.inference.mcmc.lda.estimates`; hyperparameters:
:mod:`harmonium.models.directed.lda_hyper`.
"""

from __future__ import annotations

import os
import warnings
from typing import TYPE_CHECKING

import numpy as np

from harmonium._heap import release_free_heap
from harmonium._lazy import lazy
from harmonium._validation import NONE, InstanceOf, Interval, LazyOptions, Options
from harmonium.corpus.corpus import Corpus
from harmonium.errors import CorpusError, InvalidParameterError
from harmonium.estimators import _lda_vi
from harmonium.estimators._base import POSITIVE, TOPIC_MODEL_CONSTRAINTS, BaseEstimator, as_corpus, register
from harmonium.estimators._perplexity import WholeDocumentPerplexity

if TYPE_CHECKING:
    from harmonium.evaluation.completion import CompletionResult

ALIAS_MH_DEPRECATED = (
    'LDA(sampler="alias_mh") is deprecated and will be removed: it is exact, but at K = 1000 it takes 3x the CPU '
    'time of sampler="sparse" and reaches a worse held-out perplexity after the same sweeps. Use sampler="auto" '
    '(the default: F+LDA or SparseLDA, sweep by sweep), or "sparse".'
)

# The samplers, their numba kernels and scipy.special are imported on first use, not by `import harmonium`.
document_completion = lazy("harmonium.evaluation.completion", "document_completion")
cgs = lazy("harmonium.inference.mcmc.lda.collapsed_gibbs")
ngs = lazy("harmonium.inference.mcmc.lda.naive_gibbs")
pgs = lazy("harmonium.inference.mcmc.lda.parallel_gibbs")
ChainAverage = lazy("harmonium.inference.mcmc.lda.estimates", "ChainAverage")
final_state_theta = lazy("harmonium.inference.mcmc.lda.estimates", "final_state_theta")
final_state_topic_word = lazy("harmonium.inference.mcmc.lda.estimates", "final_state_topic_word")
WordCounts = lazy("harmonium.inference.mcmc.lda.estimates", "WordCounts")
keep_sample = lazy("harmonium.inference.mcmc.lda.estimates", "keep_sample")
default_burn_in = lazy("harmonium.inference.mcmc.lda.estimates", "default_burn_in")
infer_fixed_topics = lazy("harmonium.inference.mcmc.lda.infer", "infer_fixed_topics")
collapsed_log_joint = lazy("harmonium.models.directed.lda", "collapsed_log_joint")
make_model = lazy("harmonium.models.directed.lda", "make_model")
make_seed_prior = lazy("harmonium.models.directed.lda", "make_seed_prior")
optimize_alpha = lazy("harmonium.models.directed.lda_hyper", "optimize_alpha")
optimize_beta = lazy("harmonium.models.directed.lda_hyper", "optimize_beta")

_GIBBS_TRACE_KEYS = ("iteration", "log_joint", "log_likelihood_per_token", "n_changed", "seconds", "alpha_sum", "beta")


@register
class LDA(WholeDocumentPerplexity, BaseEstimator):
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
        the approximate collapsed sampler over ``n_jobs`` threads (documents
        and words in blocks, as tomotopy's PARTITION, for ``sampler="auto"``,
        ``"sparse"`` and ``"fplus"``; AD-LDA, Newman et al. 2009, for the
        others); with ``n_jobs=1`` it is ``"collapsed_gibbs"``. The blocked
        sweep visits each document once a thread, so its CPU grows with
        ``n_jobs``: on one core the 2-, 4- and 8-thread layouts cost about
        1.1, 1.25 and 1.5 times the serial sweep (Debian and PyPI, K = 100;
        benchmarks/lda/README.md, "Threads: what more threads cost"). On
        documents of at least 2 ``n_topics`` tokens on average the SparseLDA
        sweep keeps the D x K topic counts (at most a byte a token) and reads a
        document's row at each visit instead of walking its tokens.
        ``"naive_gibbs"``: z, Theta and B drawn in turn from their conditionals.
        ``"vb"``: batch mean-field VB (Blei et al. 2003; seed 004 eqs. 4-6).
        ``"online_vb"``: stochastic VB on mini-batches (Hoffman et al. 2010);
        also :meth:`partial_fit`. ``"cvb0"``: zeroth-order collapsed VB
        (Asuncion et al. 2009), the most accurate of the three in our benchmarks.
    sampler : {"auto", "sparse", "fplus", "warp", "alias_mh", "plain"}, default "auto"
        How the collapsed samplers draw each z_i, all exact: SparseLDA buckets
        (Yao et al. 2009; O(k_w + k_d) a token), word-by-word F+LDA (Yu et al.
        2015; O(k_d + log K) a token, the tokens visited word by word),
        WarpLDA-style word-major / document-major Metropolis-Hastings passes
        (O(1) a token, but slower than F+LDA or SparseLDA to a held-out
        perplexity in every cell measured, up to K = 3000 on short documents:
        benchmarks/lda/warp_crossover.md), alias tables with Metropolis-Hastings
        (O(1); deprecated, see below), or the plain O(K) reference. ``"auto"``
        (the default) runs, sweep by sweep, whichever of an F+LDA and a SparseLDA
        sweep its cost model predicts cheaper for the current state (F+LDA while
        the words' topic lists are long against the documents', as in the first
        sweeps from the random start at large K; benchmarks/lda/README.md,
        "F+LDA sweeps"). With ``n_jobs > 1`` (``inference="parallel_gibbs"``) it
        makes the same choice each sweep between the word-partitioned F+LDA and
        SparseLDA sweeps.

        .. deprecated:: 0.1.0
           ``"alias_mh"`` warns (``FutureWarning``) and will be removed: it is exact but
           3x slower than ``"sparse"`` at K = 1000 and mixes worse per sweep
           (benchmarks/lda/README.md, "alias_mh"). Use ``"sparse"`` or ``"auto"``.
    n_iter : int, default 200
        Sweeps over the training corpus: Gibbs sweeps, VB or CVB0 iterations,
        or online VB passes.
    burn_in : int or None, default None
        Sweeps discarded before samples are averaged. None averages the last
        tenth of the sweeps, ending on the last (at least the last sweep alone):
        a longer window lags a chain that still moves, and averaging the second
        half was worse than the last state in three of four benchmark cells
        (benchmarks/lda/README.md, "The default estimate").
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
    cvb0_dtype : {"uint8", "uint16", "float32"}, default "uint8"
        How CVB0 stores each (document, word) entry's responsibilities gamma,
        nnz x K of them, the bulk of its memory. ``"uint8"`` and ``"uint16"``
        store them in fixed point (multiples of 1/255 or 1/65535 summing to
        one), keep the expected counts exactly equal to the sums of the stored
        values, and rebuild each document's topic counts from its entries
        instead of storing D x K of them. The update is CVB0's; the new gamma
        is rounded by cumulative rounding from an offset that moves with each
        entry and each iteration (drawn from ``random_state``), so that no
        small change is rounded away every time. On all PyPI summaries at
        K = 100, uint8 peaks at 867 MiB (float32: 2556) and reaches the same
        held-out perplexity (1758.6 vs 1757.0 after 30 iterations); its
        sweeps take 1.5-1.7x the CPU time. ``"float32"`` is the unrounded
        algorithm (benchmarks/lda/memory.md).
    tol : float, default 0.0
        VB and CVB0 stop when the monitored objective changes by less than
        ``tol`` (relative) between two evaluations; 0 runs all ``n_iter``.
    seed_words : dict or list or None, default None
        Seeded (guided) topics: ``{topic index: [word, ...]}`` (keys may also
        be decimal strings, as in JSON), or a list whose k-th entry lists the
        seed words of topic k (an empty entry leaves that topic unseeded).
        Each seed word w of topic k gets ``seed_weight`` pseudo-counts delta_kw
        in the topic-word prior, phi_k ~ Dir(beta + delta_k.), the asymmetric
        prior with which GuidedLDA and seededlda guide topics (after
        Jagarlamudi, Daume & Udupa 2012, "Incorporating lexical priors into
        topic models"). A word may seed several topics. Every inference
        supports it except ``fit(client=...)``; ``optimize_interval`` must be 0.
    seed_weight : int, default 10
        delta, the pseudo-counts (>= 1) given to each seed word in its topic.
        It pulls as hard as that many occurrences of the word assigned to the
        topic: compare it with the seed words' corpus frequencies. An integer,
        so that the Gibbs samplers stay exact with their integer count tables.
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
        Gibbs fits keep the sums sparse and make this dense array on first
        access, so a fit that never reads it never holds a D x K array.
        Variational fits: E_q[theta_d]. None after online VB, which keeps no
        per-document state.
    alpha_ : ndarray (K,)
        The final (possibly optimised) alpha; ``beta_`` the final beta (the
        symmetric part; with ``seed_words`` the prior of phi_k is beta + delta_k.).
    n_samples_ : int
        Samples averaged into ``topic_word_`` and ``doc_topic_``.
    vocabulary_ : Vocabulary
    n_iter_ : int
        Sweeps done.
    seed_ : int or None
        The seed that reproduces the run (None if a Generator was passed).
    resumed_from_ : int or None
        The sweep of the checkpoint this fit resumed from (``fit(resume=True)``;
        also logged on the ``harmonium`` logger), None for a fresh run.
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

    Seeded topics: topic 0 is pulled towards two words, topic 3 towards one.

    >>> seeded = LDA(10, seed_words={0: ["python", "module"], 3: ["game"]}, seed_weight=50)
    """

    _resume_missing = {"cvb0_dtype": "float32"}  # checkpoints written before the option existed

    _parameter_constraints = {
        "n_topics": [Interval("int", 1, None)],
        "doc_topic_prior": [POSITIVE],
        "inference": [Options(("collapsed_gibbs", "parallel_gibbs", "naive_gibbs", *_lda_vi.VI_INFERENCE))],
        "sampler": [LazyOptions(lambda: cgs.SAMPLERS)],
        "burn_in": [NONE, Interval("int", 0, None)],
        "thin": [Interval("int", 1, None)],
        "optimize_interval": [Interval("int", 0, None)],
        "optimize_burn_in": [Interval("int", 0, None)],
        "n_jobs": [Interval("int", 1, None)],
        "learning_decay": [Interval("real", 0.5, 1.0, "right")],
        "learning_offset": [Interval("real", 0, None, "left")],
        "batch_size": [Interval("int", 1, None)],
        "total_docs": [NONE, Interval("int", 1, None)],
        "max_doc_iter": [Interval("int", 1, None)],
        "doc_tol": [Interval("real", 0, None, "left")],
        "tol": [Interval("real", 0, None, "left")],
        "cvb0_dtype": [Options(("float32", "uint16", "uint8"))],
        "seed_words": [NONE, InstanceOf((dict, list, tuple), "a dict {topic: [word, ...]} or a list of word lists")],
        "seed_weight": [Interval("int", 1, None)],
        **TOPIC_MODEL_CONSTRAINTS,
    }

    def __init__(
        self,
        n_topics: int = 10,
        *,
        doc_topic_prior: float = 0.1,
        topic_word_prior: float = 0.01,
        inference: str = "collapsed_gibbs",
        sampler: str = "auto",
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
        cvb0_dtype: str = "uint8",
        seed_words=None,
        seed_weight: int = 10,
        checkpoint_path=None,
        checkpoint_every: int = 50,
        random_state=None,
    ):
        self._store_params(locals())

    # -- doc_topic_, made on first access after a Gibbs fit ----------------------------
    @property
    def doc_topic_(self):
        source = self.__dict__.get("_doc_topic_source")
        if source is not None:  # the Rao-Blackwellised sums are sparse; the dense D x K array only when asked
            self.__dict__["_doc_topic"] = source.dense()
            self.__dict__["_doc_topic_source"] = None
        try:
            return self.__dict__["_doc_topic"]
        except KeyError:
            raise AttributeError("'LDA' object has no attribute 'doc_topic_'") from None

    @doc_topic_.setter
    def doc_topic_(self, value):
        self.__dict__["_doc_topic_source"] = None
        self.__dict__["_doc_topic"] = value

    # -- fitting ---------------------------------------------------------------------
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
        self._validate_fit(resume)
        seed_map = self._seed_map()
        if client is not None or n_shards is not None:
            if seed_map:
                raise InvalidParameterError(
                    "LDA.fit(client=..., n_shards=...) does not support seed_words; fit a seeded model in one "
                    "process (inference='parallel_gibbs' with n_jobs threads) or drop seed_words."
                )
            from harmonium.estimators import _lda_dask

            return _lda_dask.fit(self, X, client, n_shards=n_shards, sync_every=sync_every, resume=resume,
                                 callback=callback)
        corpus = as_corpus(X, "LDA.fit")
        self._check_training_corpus(corpus)
        self._seeds = _seed_prior(seed_map, corpus.vocabulary, self.seed_weight)
        self._online_state = None
        vi = self.inference in _lda_vi.VI_INFERENCE
        rec = self._recorder(_lda_vi.TRACE_KEYS if vi else _GIBBS_TRACE_KEYS, resume=resume, callback=callback,
                             corpus=corpus, n_iter=_lda_vi.n_steps(self, corpus) if vi else None)
        if vi:
            _lda_vi.fit(self, corpus, rec)
        else:
            self._fit_gibbs(corpus, rec)
        return self

    def _fit_gibbs(self, corpus: Corpus, rec) -> None:
        """The collapsed, parallel or naive Gibbs sampler, driven by ``rec`` (fresh or resumed)."""
        self.topic_word_posterior_ = None
        if self.sampler == "alias_mh":
            warnings.warn(ALIAS_MH_DEPRECATED, FutureWarning, stacklevel=3)
        tokens = corpus.tokens()
        # the token stream's build arrays and whatever the caller freed before fit: heap pages back to the system
        release_free_heap()
        algo = _algorithm(self.inference)
        burn_in = default_burn_in(self.n_iter, self.thin) if self.burn_in is None else self.burn_in
        ckpt = rec.checkpoint
        if ckpt is not None:
            model = make_model(self.n_topics, corpus.n_words, ckpt.arrays["alpha"], ckpt.extra["beta"], self._seeds)
            state = algo.state_from_arrays(tokens, model, ckpt.arrays, doc_counts=algo.doc_counts(self, model, tokens))
            average = ChainAverage.from_arrays(ckpt.arrays, ckpt.extra["n_samples"])
        else:
            model = make_model(self.n_topics, corpus.n_words, self.doc_topic_prior, self.topic_word_prior, self._seeds)
            state = algo.init(rec.rng, tokens, model, doc_counts=algo.doc_counts(self, model, tokens))
            average = ChainAverage(corpus.n_docs, corpus.n_words, self.n_topics)
        kernel = algo.build_kernel(self)
        current = {"model": model}
        n_tokens = int(tokens.words.shape[0])

        first = rec.start + 1

        def step(it, st, info):
            m = current["model"]
            kept = keep_sample(it, burn_in, self.thin)
            if kept:
                average.add(st.n_dk, st.n_wk, st.n_k, m.alpha, m.beta, m.seeds, doc_ptr=tokens.doc_ptr, z=st.z)
            if kept or it == first:  # the sums' replaced arrays, the kernels' loading: heap pages back
                release_free_heap()
            if self.optimize_interval and it > self.optimize_burn_in and it % self.optimize_interval == 0:
                current["model"] = _optimize_hyperparameters(st, m, tokens)

        def evaluate(it, st, info):
            m = current["model"]
            lj = collapsed_log_joint(st.n_dk, st.n_wk, st.n_k, m, doc_ptr=tokens.doc_ptr, z=st.z)
            return {"iteration": it, "log_joint": lj, "log_likelihood_per_token": lj / n_tokens,
                    "n_changed": info.n_changed, "alpha_sum": float(m.alpha.sum()), "beta": m.beta}

        def snapshot(st):
            m = current["model"]
            return ({**algo.arrays_of_state(st), **average.to_arrays(), "alpha": m.alpha},
                    {"beta": m.beta, "n_samples": average.n_samples})

        state, last_it = rec.drive(lambda r, st, data, _m: kernel(r, st, data, current["model"]), state, tokens,
                                   model, evaluate=evaluate, snapshot=snapshot, step=step)
        model = current["model"]
        self.vocabulary_ = corpus.vocabulary
        self.alpha_ = model.alpha
        self.beta_ = model.beta
        self.n_samples_ = average.n_samples
        # the count tables are let go before the (K, V) float64 topic_word_ is made: that is the fit's peak
        if average.n_samples:
            theta = average.theta
            del state
            self.topic_word_ = average.topic_word()
        else:
            theta = final_state_theta(state.n_dk, model.alpha, doc_ptr=tokens.doc_ptr, z=state.z)
            # n_wk's non-zero cells only: the dense table goes before the (K, V) topic_word_ is made
            n_wk, n_k = WordCounts(state.n_wk), state.n_k
            del state
            self.topic_word_ = final_state_topic_word(n_wk, n_k, model.beta, model.seeds)
        self.__dict__.pop("_doc_topic", None)  # a previous fit's array
        self._doc_topic_source = theta  # doc_topic_ (D x K) is made from the sparse sums on first access
        self._finish_fit(rec, last_it)

    def _seed_map(self) -> dict[int, tuple[str, ...]]:
        """``seed_words`` checked and normalised (after ``_validate_params``); {} when unseeded."""
        seed_map = _seed_map(self.seed_words, self.n_topics)
        if seed_map and self.optimize_interval:
            raise InvalidParameterError(
                f"LDA with seed_words cannot use optimize_interval={self.optimize_interval}: the optimiser "
                "re-estimates a symmetric topic-word prior, which the seed pseudo-counts make asymmetric. "
                "Set optimize_interval=0 (or drop seed_words)."
            )
        return seed_map

    def _resume_params(self, ckpt) -> tuple:
        names = ("n_topics", "doc_topic_prior", "topic_word_prior", "inference", "n_jobs", "optimize_interval",
                 "optimize_burn_in")
        if self.inference in _lda_vi.VI_INFERENCE:
            names += ("learning_decay", "learning_offset", "batch_size", "total_docs", "max_doc_iter", "doc_tol")
            if self.inference == "cvb0":
                names += ("cvb0_dtype",)
        else:
            names += ("sampler", "burn_in", "thin")
        saved_seeds = _seed_map(ckpt.params.get("seed_words"), self.n_topics)
        mine_seeds = _seed_map(self.seed_words, self.n_topics)
        if saved_seeds != mine_seeds:
            raise InvalidParameterError(
                f"checkpoint {os.fspath(self.checkpoint_path)!r} was written with seed_words={saved_seeds!r}, "
                f"but this LDA has seed_words={mine_seeds!r}; use the same settings or another checkpoint_path."
            )
        return names + ("seed_weight",) if mine_seeds else names

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
        seed_map = self._seed_map()
        vocabulary = getattr(self, "vocabulary_", None) if getattr(self, "n_iter_", None) is not None else None
        corpus = as_corpus(X, "LDA.partial_fit", vocabulary)
        if corpus.n_docs == 0:
            raise CorpusError("LDA.partial_fit got an empty chunk (0 documents).")
        self._seeds = _seed_prior(seed_map, vocabulary if vocabulary is not None else corpus.vocabulary,
                                  self.seed_weight)
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
        n_iter, rng = self._transform_settings(n_iter, random_state)
        # topic_word_.T is a view: infer_fixed_topics copies only the rows of the documents' words
        return infer_fixed_topics(rng, corpus.tokens(), self.topic_word_.T, self.alpha_, n_iter,
                                  n_threads=self.n_jobs)

    def top_words(self, n: int = 10) -> list[list[tuple[str, float]]]:
        """The ``n`` most probable words of each topic, as (term, phi_kw) pairs."""
        self._check_is_fitted()
        order = np.argsort(-self.topic_word_, axis=1, kind="stable")[:, :n]
        return [[(self.vocabulary_[int(w)], float(self.topic_word_[k, w])) for w in row] for k, row in enumerate(order)]

    # perplexity(X): held-out perplexity of whole documents, the one every estimator reports (_perplexity.py)

    def completion_perplexity(self, X, *, observed_fraction: float = 0.5, random_state=0) -> CompletionResult:
        """Document-completion perplexity of held-out documents ``X`` (Wallach et al. 2009 §4; Rosen-Zvi et al. 2004).

        Each document's tokens are split (``observed_fraction`` observed, seeded by
        ``random_state``); theta is inferred from the observed part with the topics
        fixed and the rest is scored (:func:`harmonium.evaluation.document_completion`).
        Not the number :meth:`perplexity` gives (whole documents); lower, since a part
        of each document is given.
        """
        self._check_is_fitted()
        corpus = as_corpus(X, "LDA.completion_perplexity", self.vocabulary_)
        return document_completion(self, corpus, observed_fraction=observed_fraction, random_state=random_state)

    @property
    def log_likelihood_trace_(self) -> np.ndarray:
        """(n_evaluations, 2) array of (iteration, log p(w, z))."""
        self._check_is_fitted()
        return np.column_stack([self.trace_["iteration"], self.trace_["log_joint"]])

    # -- persistence -------------------------------------------------------------------
    def _json_params(self) -> dict:
        out = super()._json_params()
        seeds = out.get("seed_words")
        if isinstance(seeds, dict):  # JSON object keys are strings; _seed_map reads them back as topic indices
            out["seed_words"] = {str(k): list(v) if isinstance(v, (list, tuple)) else v for k, v in seeds.items()}
        elif isinstance(seeds, (list, tuple)):
            out["seed_words"] = [list(v) if isinstance(v, (list, tuple)) else v for v in seeds]
        return out

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
    """How the estimator drives one inference algorithm: init, kernel, checkpointed arrays.

    ``doc_counts(est, model, tokens)`` says whether the state keeps the D x K n_dk table (the serial
    SparseLDA sweep does not need it: :func:`~harmonium.inference.mcmc.lda.collapsed_gibbs.needs_doc_counts`).
    """

    def __init__(self, init, state_cls, build_kernel, doc_counts=None):
        self._init = init
        self.state_cls = state_cls
        self.build_kernel = build_kernel
        self.doc_counts = doc_counts if doc_counts is not None else (lambda est, model, tokens: True)

    def init(self, rng, tokens, model, *, doc_counts: bool = True):
        if doc_counts:
            return self._init(rng, tokens, model)
        return self._init(rng, tokens, model, doc_counts=False)

    def arrays_of_state(self, state) -> dict:
        # the count tables are derived from z and are rebuilt on resume
        return {k: v for k, v in state._asdict().items() if k not in ("n_dk", "n_wk", "n_k")}

    def state_from_arrays(self, tokens, model, arrays, *, doc_counts: bool = True):
        counts = cgs.state_from_assignments(tokens, model, arrays["z"], doc_counts=doc_counts)
        fields = {**counts._asdict(), **{k: np.array(arrays[k]) for k in self.state_cls._fields if k in arrays}}
        return self.state_cls(**fields)


def _serial_doc_counts(est, model, tokens) -> bool:
    return cgs.needs_doc_counts(est.sampler, model, tokens)


def _algorithm(name: str) -> _Algorithm:
    if name == "naive_gibbs":
        return _Algorithm(ngs.init, ngs.NaiveGibbsState, lambda est: ngs.build_kernel(compute_log_joint=False))
    if name == "parallel_gibbs":
        return _Algorithm(cgs.init, cgs.CollapsedGibbsState,
                          lambda est: pgs.build_kernel(sampler=est.sampler, n_threads=est.n_jobs,
                                                       compute_log_joint=False),
                          lambda est, model, tokens: pgs.needs_doc_counts(est.sampler, model, tokens, est.n_jobs))
    return _Algorithm(cgs.init, cgs.CollapsedGibbsState,
                      lambda est: cgs.build_kernel(sampler=est.sampler, compute_log_joint=False),
                      _serial_doc_counts)


def _optimize_hyperparameters(state, model, tokens):
    """alpha (asymmetric) and beta (symmetric) by Minka's fixed point, from the current counts."""
    alpha = optimize_alpha(state.n_dk, model.alpha, doc_ptr=tokens.doc_ptr, z=state.z)
    beta = optimize_beta(state.n_wk, state.n_k, model.beta)
    return make_model(model.n_topics, model.n_words, alpha, beta, model.seeds)


def _seed_map(seed_words, n_topics: int) -> dict[int, tuple[str, ...]]:
    """``seed_words`` as {topic: (word, ...)} in topic order, checked against ``n_topics`` ({} for None).

    The form was checked by the declarative constraint; this names the entry that is wrong.
    """
    if seed_words is None:
        return {}
    where = "The 'seed_words' parameter of LDA"
    if isinstance(seed_words, dict):
        items = list(seed_words.items())
    else:
        items = [(k, words) for k, words in enumerate(seed_words) if not (isinstance(words, (list, tuple))
                                                                          and len(words) == 0)]
    out: dict[int, tuple[str, ...]] = {}
    for key, words in items:
        topic = key
        if isinstance(key, str) and key.strip().lstrip("-").isdigit():
            topic = int(key)
        if isinstance(topic, bool) or not isinstance(topic, (int, np.integer)):
            raise InvalidParameterError(f"{where} has the key {key!r}; keys must be topic indices (ints).")
        topic = int(topic)
        if not 0 <= topic < n_topics:
            raise InvalidParameterError(
                f"{where} names topic {topic}, outside 0..{n_topics - 1} (n_topics={n_topics})."
            )
        if topic in out:
            raise InvalidParameterError(f"{where} names topic {topic} twice.")
        if isinstance(words, str) or not isinstance(words, (list, tuple)):
            raise InvalidParameterError(
                f"{where} maps topic {topic} to {words!r}; give a list of words, e.g. {{{topic}: [{words!r}]}}."
            )
        if len(words) == 0:
            raise InvalidParameterError(
                f"{where} gives topic {topic} an empty list of words; list at least one word or leave the topic out."
            )
        for w in words:
            if not isinstance(w, str) or not w:
                raise InvalidParameterError(f"{where} lists {w!r} for topic {topic}; seed words are non-empty strings.")
        dup = sorted({w for w in words if list(words).count(w) > 1})
        if dup:
            raise InvalidParameterError(f"{where} lists {dup[0]!r} more than once for topic {topic}.")
        out[topic] = tuple(words)
    return dict(sorted(out.items()))


def _seed_prior(seed_map: dict, vocabulary, weight: int):
    """The :class:`SeedPrior` of ``seed_map`` over ``vocabulary`` (None if no seeds); unknown words are an error."""
    if not seed_map:
        return None
    pairs = []
    for topic, words in seed_map.items():
        for w in words:
            wid = vocabulary.get(w)
            if wid is None:
                raise InvalidParameterError(
                    f"The 'seed_words' parameter of LDA lists {w!r} for topic {topic}, which is not in the "
                    f"corpus vocabulary ({len(vocabulary)} words); remove it or check its spelling and case "
                    "(seed words are matched to the vocabulary's terms exactly)."
                )
            pairs.append((int(wid), topic))
    return make_seed_prior(pairs, weight)
