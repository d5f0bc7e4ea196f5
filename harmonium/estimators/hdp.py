"""The ``HDP`` estimator: the hierarchical Dirichlet process topic model by direct-assignment Gibbs sampling.

Model: :mod:`harmonium.models.directed.hdp`; algorithm:
:mod:`harmonium.inference.mcmc.isbn.hdp` (Teh et al. 2006 §5.3;
seed 002 §4, eqs. 1-3), with the concentrations resampled by auxiliary
variables (Escobar & West 1995; Teh et al. 2006, appendix A).

Held-out evaluation uses the same code as LDA. The fitted HDP is, for a new
document, the finite model with K + 1 topics: the K used topics with prior
weights alpha tau_k, and one "new topic" with weight alpha tau_u whose word
distribution is the prior predictive 1/V of an empty topic (seed 002 §4: the
(K + 1)-th state is the pool of all unused states). :meth:`HDP.predictive_topics`
returns that (topic_word, alpha) pair; :meth:`HDP.perplexity` (whole documents,
left-to-right, through :meth:`HDP.log_likelihood_documents`, the hook of
:func:`harmonium.evaluation.log_likelihood`) and :meth:`HDP.completion_perplexity`
(document completion) score it.
"""

from __future__ import annotations

import numpy as np

from harmonium._validation import NONE, InstanceOf, Interval, Options
from harmonium.corpus.corpus import Corpus
from harmonium.errors import InvalidParameterError
from harmonium.estimators._base import POSITIVE, TOPIC_MODEL_CONSTRAINTS, BaseEstimator, as_corpus, register
from harmonium.estimators._perplexity import WholeDocumentPerplexity
from harmonium.evaluation.completion import CompletionResult, document_completion
from harmonium.inference.mcmc.isbn import engine as isbn_engine
from harmonium.inference.mcmc.isbn import hdp as da
from harmonium.inference.mcmc.lda.infer import infer_fixed_topics
from harmonium.models.directed import isbn_examples

_BEFORE_SPLIT_MERGE = {"split_merge": 0, "split_merge_launch": 2, "sample_topic_word_prior": False,
                       "topic_word_hyperprior": [1.0, 1.0], "split_merge_iterations": None,
                       "split_merge_unit": "token"}
_PAIR = InstanceOf((tuple, list), "a (shape, rate) pair of positive floats")


_TRACE_KEYS = ("iteration", "n_topics", "n_tables", "log_likelihood", "log_likelihood_per_token", "log_joint",
               "doc_concentration", "corpus_concentration", "n_new", "n_changed", "n_split", "n_merge", "seconds",
               "n_topics_per_iteration")


def _evaluator(tokens, model):
    """The trace row of an iteration: topics, tables, log p(w | z) and log p(w, z), concentrations, moves."""
    from harmonium._kernels import hdp as khdp

    n_tokens = int(tokens.words.shape[0])

    def evaluate(it, st, info):
        K = st.n_topics
        ll = float(khdp.word_log_likelihood(st.n_wk, st.n_k, K, model.beta))
        lj = ll + float(khdp.assignment_log_prior(tokens.doc_ptr, st.n_dk, K, st.alpha, st.tau))
        return {"iteration": it, "n_topics": K, "n_tables": info.n_tables, "log_likelihood": ll,
                "log_likelihood_per_token": ll / n_tokens, "log_joint": lj, "doc_concentration": st.alpha,
                "corpus_concentration": st.gamma, "n_new": info.n_new, "n_changed": info.n_changed,
                "n_split": info.n_split, "n_merge": info.n_merge}

    return evaluate


class _Predictive:
    """The fitted HDP seen as a K + 1 topic model, for :func:`document_completion`."""

    def __init__(self, hdp):
        self.hdp = hdp
        self.topic_word_, self.alpha_ = hdp.predictive_topics()

    def transform(self, corpus):
        return self.hdp._infer(corpus, None, None)


@register
class HDP(WholeDocumentPerplexity, BaseEstimator):
    """Hierarchical Dirichlet process topic model (Teh et al. 2006), fitted by direct-assignment Gibbs sampling.

    The number of topics is inferred: topics are created from the mass
    tau_u of the unused ones and removed when they empty (seed 002 §4).

    Parameters
    ----------
    initial_topics : int, default 10
        Topics of the random initial assignment (empty ones are dropped).
    doc_concentration : float, default 1.0
        alpha, the concentration of each document's DP: pi_j ~ DP(alpha, tau)
        (the starting value when ``sample_concentrations``).
    corpus_concentration : float, default 1.0
        gamma, the concentration of the top-level DP: tau ~ GEM(gamma) (starting value likewise).
    topic_word_prior : float, default 0.01
        Symmetric Dirichlet prior beta of each topic's word distribution (the starting value when
        ``sample_topic_word_prior``).
    sampler : {"sparse", "plain"}, default "sparse"
        How each z_i is drawn, both exact: SparseLDA-style buckets (O(k_w + k_d)
        a token) or the plain O(K) conditional.
    split_merge : int, default 0
        Split-merge proposals per iteration (Jain & Neal 2004; exact Metropolis-Hastings moves
        on (z, tau), ``harmonium.inference.mcmc.isbn.hdp.split_merge``),
        each from a launch state improved by ``split_merge_launch`` restricted Gibbs scans.
        They let a chain started from few topics find the planted number instead of stopping
        short; the one-token Gibbs moves alone keep the initial topics for thousands of
        iterations (benchmarks/isbn/README.md, "HDP on planted topics").
    split_merge_launch : int, default 2
    split_merge_unit : {"token", "document", "alternate", "mixed"}, default "token"
        What the restricted scans of a proposal move: single tokens, each document's share of the two
        topics as one block (``harmonium._kernels.hdp_split_merge.split_merge_blocks``), the one then the other in
        turn, or each document's share drawn from a mixture of the two, as a whole or token by token
        (``harmonium._kernels.hdp_split_merge.split_merge_mixed``). Block proposals can merge two topics that split the
        documents between them: the reverse split then has one factor per document instead of one per token
        (benchmarks/isbn/README.md, "Merges from above"); mixed ones need no pair whose documents hold one
        topic each, since q sums both paths.
    split_merge_iterations : int or None, default None
        Make the split-merge proposals only in iterations 1 .. ``split_merge_iterations`` and plain
        Gibbs iterations after them (None: in every iteration). A fixed schedule, so the chain stays
        exact. The moves find the topics early and cost most of an iteration's time on large corpora.
        On both planted problems, ``initial_topics=1, split_merge=3, split_merge_launch=20,
        split_merge_iterations=100, sample_topic_word_prior=True`` (200 iterations) recovers the planted
        number of topics within ±20%; on 18k Debian documents it costs about 4x the defaults' CPU time
        for a better held-out perplexity (benchmarks/isbn/README.md, "Candidate defaults").
    sample_concentrations : bool, default True
        Resample alpha and gamma every iteration from their conditionals under
        Gamma hyperpriors (auxiliary variables; Teh et al. 2006, appendix A).
    doc_concentration_prior, corpus_concentration_prior : (shape, rate), default (1.0, 1.0)
        Gamma hyperpriors of alpha and gamma.
    sample_topic_word_prior : bool, default False
        Resample beta | z, w every iteration by slice sampling on log beta
        (``harmonium.inference.mcmc.isbn.hyper.resample_beta``; Neal 2003 §4), under the Gamma
        hyperprior ``topic_word_hyperprior``. beta sets how many small topics the posterior keeps:
        on planted data with beta = 0.05 a fixed beta = 0.01 holds about 60 topics where 20 were
        planted, and a resampled beta settles near 0.05 with about 25 (benchmarks/isbn/README.md).
    topic_word_hyperprior : (shape, rate), default (1.0, 1.0)
        Gamma hyperprior of beta when it is resampled.
    n_iter : int, default 200
        Gibbs iterations (each: one sweep over every token, tables, tau, concentrations).
    evaluate_every : int, default 10
        Record log p(w | z) and log p(w, z | tau, alpha) every this many iterations (and at the last).
    n_transform_iter : int, default 50
        Gibbs sweeps per call to :meth:`transform` (topics fixed); theta averaged over the second half.
    checkpoint_path : str or path-like, optional
        Where to write checkpoints during ``fit``; ``fit(resume=True)`` continues from it, bit-identically.
    checkpoint_every : int, default 50
    random_state : int, numpy Generator or None
        Seed. ``None`` draws fresh entropy and records it in ``seed_``.

    Attributes
    ----------
    n_topics_ : int
        K, the number of used topics at the end.
    topic_word_ : ndarray (K, V)
        E[phi_k | z, w] = (n_kw + beta) / (n_k + V beta) of the final state.
    alpha_ : ndarray (K,)
        alpha tau_k, the prior weights of the used topics in a new document.
    new_topic_weight_ : float
        alpha tau_u, the prior weight of the unused topics.
    tau_ : ndarray (K + 1,)
        The global topic weights (last: tau_u).
    doc_concentration_, corpus_concentration_ : float
        Final alpha and gamma.
    beta_ : float
        The topic-word prior of the final state (``topic_word_prior`` unless it is resampled).
    doc_topic_ : float32 ndarray (D, K)
        E[pi_j | z, tau] over the used topics for the training documents, renormalised over them.
    n_topics_trace_ : ndarray, one entry per iteration
        K after every iteration.
    trace_ : dict of lists
        At each evaluation: ``iteration``, ``n_topics``, ``n_tables``, ``log_likelihood``
        (log p(w | z)), ``log_likelihood_per_token``, ``log_joint`` (log p(w, z | tau, alpha)),
        ``doc_concentration``, ``corpus_concentration``, ``n_new`` (topics created in that
        iteration), ``n_changed``,
        ``n_split`` / ``n_merge`` (split-merge moves accepted in it), ``seconds``; and ``n_topics_per_iteration``.
    vocabulary_, n_iter_, seed_
    resumed_from_ : int or None
        The iteration of the checkpoint ``fit(resume=True)`` resumed from; None for a fresh run.

    Examples
    --------
    >>> from harmonium.datasets import load_debian
    >>> corpus = load_debian(n_docs=2000)
    >>> hdp = HDP(n_iter=100, random_state=0).fit(corpus)  # doctest: +SKIP
    >>> hdp.n_topics_, hdp.top_words(5)[0]  # doctest: +SKIP
    """

    _parameter_constraints = {
        "initial_topics": [Interval("int", 1, None)],
        "doc_concentration": [POSITIVE],
        "corpus_concentration": [POSITIVE],
        "sampler": [Options(("sparse", "plain"))],
        "sample_concentrations": [InstanceOf(bool, "a bool")],
        "split_merge": [Interval("int", 0, None)],
        "split_merge_launch": [Interval("int", 0, None)],
        "split_merge_iterations": [Interval("int", 0, None), NONE],
        "split_merge_unit": [Options(da.SPLIT_MERGE_UNITS)],
        "doc_concentration_prior": [_PAIR],
        "corpus_concentration_prior": [_PAIR],
        "sample_topic_word_prior": [InstanceOf(bool, "a bool")],
        "topic_word_hyperprior": [_PAIR],
        **TOPIC_MODEL_CONSTRAINTS,
    }

    def __init__(
        self,
        initial_topics: int = 10,
        *,
        doc_concentration: float = 1.0,
        corpus_concentration: float = 1.0,
        topic_word_prior: float = 0.01,
        sampler: str = "sparse",
        sample_concentrations: bool = True,
        split_merge: int = 0,
        split_merge_launch: int = 2,
        split_merge_iterations: int | None = None,
        split_merge_unit: str = "token",
        doc_concentration_prior=(1.0, 1.0),
        corpus_concentration_prior=(1.0, 1.0),
        sample_topic_word_prior: bool = False,
        topic_word_hyperprior=(1.0, 1.0),
        n_iter: int = 200,
        evaluate_every: int = 10,
        n_transform_iter: int = 50,
        checkpoint_path=None,
        checkpoint_every: int = 50,
        random_state=None,
    ):
        self._store_params(locals())

    # -- fitting ---------------------------------------------------------------------
    def _check_pairs(self) -> None:
        for name in ("doc_concentration_prior", "corpus_concentration_prior", "topic_word_hyperprior"):
            v = getattr(self, name)
            ok = len(v) == 2 and all(isinstance(x, (int, float)) and not isinstance(x, bool) and np.isfinite(x)
                                     and x > 0 for x in v)
            if not ok:
                raise InvalidParameterError(
                    f"The {name!r} parameter of HDP must be a (shape, rate) pair of positive floats "
                    f"(a Gamma hyperprior). Got {v!r}."
                )

    def _sampler(self, n_words: int):
        """(state/init/kernel module, HDPModel): the HDP topic model declared as an ISBN (seed 002 Fig. 1b),
        run by the sweep the engine package plans for it (the direct-assignment sampler)."""
        network = isbn_examples.hdp(int(n_words), float(self.doc_concentration), float(self.corpus_concentration),
                                    float(self.topic_word_prior))
        plan = isbn_engine.plan(network)
        model = plan.model._replace(alpha_prior=tuple(float(x) for x in self.doc_concentration_prior),
                                    gamma_prior=tuple(float(x) for x in self.corpus_concentration_prior))
        return plan.algorithm, model

    def fit(self, X, y=None, *, resume: bool = False, callback=None):
        """Fit the model to a corpus by ``n_iter`` Gibbs iterations.

        Parameters
        ----------
        X : Corpus, scipy.sparse matrix or 2-D array of counts, shape (D, V)
        y : ignored
        resume : bool, default False
            Continue from ``checkpoint_path`` when that file exists (same
            hyperparameters and corpus); the result is bit-identical to an
            uninterrupted run.
        callback : callable, optional
            ``callback(iteration, n_iter, info)`` after every iteration; return True to stop early.
        """
        self._validate_fit(resume)
        self._check_pairs()
        corpus = as_corpus(X, "HDP.fit")
        self._check_training_corpus(corpus)
        tokens = corpus.tokens()
        algorithm, model = self._sampler(corpus.n_words)
        rec = self._recorder(_TRACE_KEYS, resume=resume, callback=callback, corpus=corpus)
        ckpt = rec.checkpoint
        if ckpt is not None:
            state = algorithm.state_from_assignments(tokens, model, ckpt.arrays["z"], ckpt.arrays["tau"],
                                                     ckpt.extra["alpha"], ckpt.extra["gamma"])
            state = state._replace(beta=ckpt.extra.get("beta"))
        else:
            state = algorithm.init(rec.rng, tokens, model, n_topics=self.initial_topics,
                                   alpha=self.doc_concentration, gamma=self.corpus_concentration)
        kernel = self._kernel(algorithm, rec.start)
        per_iteration = rec.trace["n_topics_per_iteration"]
        state, last_it = rec.drive(kernel, state, tokens, model, evaluate=_evaluator(tokens, model),
                                   step=lambda it, st, info: per_iteration.append(int(st.n_topics)),
                                   snapshot=lambda st: ({"z": st.z, "tau": st.tau[: st.n_topics + 1]},
                                                        {"alpha": st.alpha, "gamma": st.gamma, "beta": st.beta}))
        self._set_fitted(state, model, corpus)
        self.n_topics_trace_ = np.asarray(rec.trace["n_topics_per_iteration"], dtype=np.int64)
        self._finish_fit(rec, last_it)
        return self

    def _kernel(self, algorithm, start: int):
        """The iteration's kernel: with split-merge moves in iterations 1 .. ``split_merge_iterations``, plain after.

        ``algorithm``: the engine's sampler for the declared network (``_sampler``); ``start``: the iteration
        already done (a resumed run's checkpoint), so the schedule counts from it.
        """
        def build(proposals):
            return algorithm.build_kernel(sampler=self.sampler, sample_alpha=self.sample_concentrations,
                                          sample_gamma=self.sample_concentrations, compute_log_joint=False,
                                          split_merge_proposals=proposals,
                                          split_merge_launch=self.split_merge_launch,
                                          split_merge_unit=self.split_merge_unit,
                                          sample_beta=self.sample_topic_word_prior,
                                          beta_prior=tuple(float(x) for x in self.topic_word_hyperprior))

        with_moves = build(self.split_merge)
        if self.split_merge == 0 or self.split_merge_iterations is None:
            return with_moves
        plain, last, it = build(0), int(self.split_merge_iterations), [int(start)]

        def scheduled(rng, state, tokens, model):
            it[0] += 1
            return (with_moves if it[0] <= last else plain)(rng, state, tokens, model)

        return scheduled

    def _set_fitted(self, state, model, corpus) -> None:
        K = state.n_topics
        self.vocabulary_ = corpus.vocabulary
        self.n_topics_ = int(K)
        self.topic_word_ = da.topic_word(state, model)
        self.tau_ = state.tau[: K + 1].copy()
        self.doc_concentration_ = float(state.alpha)
        self.corpus_concentration_ = float(state.gamma)
        self.alpha_ = self.doc_concentration_ * self.tau_[:K]
        self.new_topic_weight_ = float(self.doc_concentration_ * self.tau_[K])
        theta = da.doc_topic(state)[:, :K]
        self.doc_topic_ = (theta / theta.sum(axis=1, keepdims=True)).astype(np.float32)
        self.beta_ = da.current_beta(state, model)

    _resume_missing = _BEFORE_SPLIT_MERGE  # checkpoints older than split_merge

    def _resume_params(self, ckpt) -> tuple:
        return ("initial_topics", "doc_concentration", "corpus_concentration", "topic_word_prior", "sampler",
                "sample_concentrations", "doc_concentration_prior", "corpus_concentration_prior", "split_merge",
                "split_merge_launch", "sample_topic_word_prior", "topic_word_hyperprior", "split_merge_iterations",
                "split_merge_unit")

    def fit_transform(self, X, y=None, **fit_kwargs) -> np.ndarray:
        """Fit, then return ``doc_topic_``."""
        return self.fit(X, **fit_kwargs).doc_topic_

    # -- using a fitted model ---------------------------------------------------------
    def predictive_topics(self) -> tuple[np.ndarray, np.ndarray]:
        """(topic_word (K + 1, V), alpha (K + 1,)): the used topics plus the new-topic pool (module docstring)."""
        self._check_is_fitted()
        V = self.topic_word_.shape[1]
        phi = np.vstack([self.topic_word_, np.full((1, V), 1.0 / V)])
        alpha = np.append(self.alpha_, max(self.new_topic_weight_, 1e-300))
        return phi, alpha

    def _infer(self, corpus: Corpus, n_iter, random_state) -> np.ndarray:
        n_iter, rng = self._transform_settings(n_iter, random_state)
        phi, alpha = self.predictive_topics()
        return infer_fixed_topics(rng, corpus.tokens(), phi.T, alpha, n_iter)

    def transform(self, X, *, n_iter: int | None = None, random_state=None) -> np.ndarray:
        """Topic proportions (D, K) of new documents over the used topics, topics held fixed.

        Gibbs sampling of the documents' assignments among the K + 1 predictive
        topics (:meth:`predictive_topics`); the new-topic column is dropped and
        the rest renormalised. Deterministic for ``random_state=None`` (seeded from ``seed_``).
        """
        self._check_is_fitted()
        corpus = as_corpus(X, "HDP.transform", self.vocabulary_)
        theta = self._infer(corpus, n_iter, random_state)[:, :-1]
        s = theta.sum(axis=1, keepdims=True)
        return np.divide(theta, s, out=np.full_like(theta, 1.0 / max(theta.shape[1], 1)), where=s > 0)

    def top_words(self, n: int = 10) -> list[list[tuple[str, float]]]:
        """The ``n`` most probable words of each used topic, as (term, phi_kw) pairs."""
        self._check_is_fitted()
        order = np.argsort(-self.topic_word_, axis=1, kind="stable")[:, :n]
        return [[(self.vocabulary_[int(w)], float(self.topic_word_[k, w])) for w in row] for k, row in enumerate(order)]

    # perplexity(X): held-out perplexity of whole documents, the one every estimator reports (_perplexity.py)

    def completion_perplexity(self, X, *, observed_fraction: float = 0.5, random_state=0) -> CompletionResult:
        """Document-completion perplexity of held-out documents, scored by the same code as LDA's.

        See :meth:`LDA.completion_perplexity <harmonium.estimators.lda.LDA.completion_perplexity>`;
        the topics are the K + 1 predictive ones (:meth:`predictive_topics`).
        """
        self._check_is_fitted()
        corpus = as_corpus(X, "HDP.completion_perplexity", self.vocabulary_)
        return document_completion(_Predictive(self), corpus, observed_fraction=observed_fraction,
                                   random_state=random_state)

    def log_likelihood_documents(self, corpus, random_state=0, n_particles: int = 20, n_jobs: int = 1):
        """log p(w_d | model) per document by left-to-right over the K + 1 predictive topics.

        The hook of :func:`harmonium.evaluation.log_likelihood` (``method="auto"``), hence
        of :meth:`perplexity`; ``n_particles`` and ``n_jobs`` as for LDA.
        """
        from harmonium.evaluation.left_to_right import left_to_right

        self._check_is_fitted()
        corpus = as_corpus(corpus, "HDP.log_likelihood_documents", self.vocabulary_)
        return left_to_right(self.predictive_topics(), corpus, n_particles=n_particles, random_state=random_state,
                             n_jobs=n_jobs)

    # -- persistence -------------------------------------------------------------------
    def _state_for_file(self):
        arrays = {"topic_word": self.topic_word_, "tau": self.tau_, "doc_topic": self.doc_topic_,
                  "n_topics_trace": self.n_topics_trace_}
        extra = {"n_iter_": self.n_iter_, "seed_": self.seed_, "beta_": self.beta_,
                 "doc_concentration_": self.doc_concentration_, "corpus_concentration_": self.corpus_concentration_}
        return arrays, extra

    def _restore_from_file(self, arrays, manifest):
        extra = manifest.get("extra") or {}
        self.topic_word_ = np.asarray(arrays["topic_word"], dtype=np.float64)
        self.tau_ = np.asarray(arrays["tau"], dtype=np.float64)
        self.doc_topic_ = np.asarray(arrays["doc_topic"], dtype=np.float32)
        self.n_topics_trace_ = np.asarray(arrays["n_topics_trace"], dtype=np.int64)
        K = self.topic_word_.shape[0]
        if self.tau_.shape != (K + 1,) or self.doc_topic_.shape[1] != K:
            raise ValueError("topic_word, tau and doc_topic disagree on the number of topics")
        if self.vocabulary_ is not None and len(self.vocabulary_) != self.topic_word_.shape[1]:
            raise ValueError("vocabulary and topic_word disagree on the number of words")
        self.n_topics_ = K
        self.beta_ = float(extra["beta_"])
        self.doc_concentration_ = float(extra["doc_concentration_"])
        self.corpus_concentration_ = float(extra["corpus_concentration_"])
        self.alpha_ = self.doc_concentration_ * self.tau_[:K]
        self.new_topic_weight_ = float(self.doc_concentration_ * self.tau_[K])
        self.n_iter_ = int(extra["n_iter_"])
        self.seed_ = extra.get("seed_")
