"""How the ``LDA`` estimator drives the variational algorithms (``inference`` in VI_INFERENCE).

The algorithms live in :mod:`harmonium.inference.vi.lda_vb`; this module
loops them (one driver, :func:`harmonium.inference.run.run`), records the
trace, writes checkpoints and sets the fitted attributes, in the same shape
as the Gibbs path of :mod:`harmonium.estimators.lda`:

* ``topic_word_`` (K, V): the posterior mean of phi, lambda / sum_w lambda
  (CVB0: (n_kw + beta) / (n_k + V beta));
* ``topic_word_posterior_`` (K, V): lambda, the Dirichlet parameters of
  q(phi_k) (CVB0: n_kw + beta), used by :meth:`LDA.transform`;
* ``doc_topic_`` (D, K) float32: E_q[theta_d] (batch VB, CVB0). Online VB
  keeps no per-document state (its memory does not grow with the corpus), so
  ``doc_topic_`` is None and ``fit_transform`` runs :meth:`LDA.transform`.
"""

from __future__ import annotations

import time

import numpy as np

from harmonium._lazy import lazy
from harmonium.corpus.ondisk import release_pages
from harmonium.errors import InvalidParameterError
from harmonium.parallel.seeds import check_random_state, generator_from_state

# numba kernels and scipy.special on first use (harmonium/_lazy.py)
vb = lazy("harmonium.inference.vi.lda_vb")
make_model = lazy("harmonium.models.directed.lda", "make_model")
optimize_alpha = lazy("harmonium.models.directed.lda_hyper", "optimize_alpha")
optimize_beta = lazy("harmonium.models.directed.lda_hyper", "optimize_beta")

VI_INFERENCE = ("vb", "cvb0", "online_vb")
TRACE_KEYS = ("iteration", "elbo", "log_likelihood_per_token", "change", "seconds", "alpha_sum", "beta")
_RELEASE_EVERY = 64  # mini-batches between releases of a memory-mapped corpus's pages
RESTART_ITERATIONS = 10  # batch VB: E-steps that restart gamma before warm starts (docs/ARCHITECTURE.md)


def _new_trace() -> dict:
    return {k: [] for k in TRACE_KEYS}


def _row(it, elbo, per_token, change, model) -> dict:
    """A trace row (without ``seconds``, which the recorder adds)."""
    return {"iteration": it, "elbo": elbo, "log_likelihood_per_token": per_token, "change": change,
            "alpha_sum": float(model.alpha.sum()), "beta": float(model.beta)}


def _record(trace, it, elbo, per_token, change, t0, model) -> None:
    """Append a trace row outside a recorder (``partial_fit``, the distributed runs)."""
    row = {**_row(it, elbo, per_token, change, model), "seconds": time.perf_counter() - t0}
    for key in TRACE_KEYS:
        trace[key].append(row[key])


def _converged(trace: dict, tol: float) -> bool:
    values = trace["log_likelihood_per_token"]
    if tol <= 0 or len(values) < 2:
        return False
    return abs(values[-1] - values[-2]) <= tol * abs(values[-2])


def n_steps(est, corpus) -> int:
    """Iterations of the driver: ``n_iter`` (batch VB, CVB0), or ``n_iter`` passes of mini-batches (online VB)."""
    return est.n_iter * len(_batch_bounds(corpus.n_docs, est.batch_size)) if est.inference == "online_vb" \
        else est.n_iter


def fit(est, corpus, rec) -> None:
    """Fit ``est`` by its variational ``inference`` on ``corpus``, driven by the recorder ``rec``."""
    (fit_online if est.inference == "online_vb" else fit_batch)(est, corpus, rec)


def _model(est, corpus, ckpt):
    """The LDA model to start from: the estimator's priors, or the checkpoint's (possibly optimised) ones."""
    if ckpt is None:
        return make_model(est.n_topics, corpus.n_words, est.doc_topic_prior, est.topic_word_prior, est._seeds)
    return make_model(est.n_topics, corpus.n_words, ckpt.arrays["alpha"], ckpt.extra["beta"], est._seeds)


def _finish(est, corpus, model, lam_wk, doc_topic) -> None:
    est.vocabulary_ = corpus.vocabulary
    est.alpha_ = model.alpha
    est.beta_ = float(model.beta)
    est.topic_word_posterior_ = lam_wk.T  # a view: no (K, V) copy
    est.topic_word_ = est.topic_word_posterior_ / est.topic_word_posterior_.sum(axis=1, keepdims=True)
    est.doc_topic_ = doc_topic
    est.n_samples_ = 0


def _optimize_due(est, it: int) -> bool:
    return bool(est.optimize_interval) and it > est.optimize_burn_in and it % est.optimize_interval == 0


# -- batch VB and CVB0 -------------------------------------------------------------------------
def fit_batch(est, corpus, rec) -> None:
    """Batch VB or CVB0 for ``est.n_iter`` iterations (or until the objective changes by < ``tol``)."""
    data = vb.VBData.from_corpus(corpus)
    n_tokens = corpus.n_tokens
    is_cvb0 = est.inference == "cvb0"
    quantised = is_cvb0 and est.cvb0_dtype != "float32"  # gamma in fixed point, n_dk not stored (issue 21)
    ckpt = rec.checkpoint
    model = _model(est, corpus, ckpt)
    if ckpt is not None:  # CVB0: the running counts, not a recount of the float32 gamma: resume is exact
        state_cls = vb.CVB0QState if quantised else vb.CVB0State if is_cvb0 else vb.BatchVBState
        if quantised:  # q into an anonymous map (no other copy), so that its pages can be given back at the end
            saved = ckpt.arrays["q"]
            q = vb.anonymous_array(saved.shape, saved.dtype)
            q[...] = saved
            state = vb.CVB0QState(q, np.array(ckpt.arrays["n_wk"]), np.array(ckpt.arrays["n_k"]))
        else:
            state = state_cls(*(np.array(ckpt.arrays[k]) for k in state_cls._fields))
    elif quantised:
        state = vb.cvb0q_init(rec.rng, data, model, est.cvb0_dtype)
    else:
        state = vb.cvb0_init(rec.rng, data, model) if is_cvb0 else vb.batch_init(rec.rng, data, model)

    if quantised:
        kernel = vb.build_cvb0q_kernel(n_threads=est.n_jobs, dither=True)
    elif is_cvb0:
        kernel = vb.build_cvb0_kernel(n_threads=est.n_jobs)
    else:
        kernels = [vb.build_batch_kernel(max_doc_iter=est.max_doc_iter, doc_tol=est.doc_tol, n_threads=est.n_jobs,
                                         warm_start=warm) for warm in (False, True)]
        counter = {"it": rec.start}

        def kernel(r, st, d, m):
            # gamma restarts for the first RESTART_ITERATIONS iterations (documents may still change topics),
            # then continues from its last value: coordinate ascent, and several times cheaper
            counter["it"] += 1
            return kernels[counter["it"] > RESTART_ITERATIONS](r, st, d, m)
    current = {"model": model}

    def step(it, st, info):
        m = current["model"]
        if _optimize_due(est, it):
            if quantised:  # n_dk (D x K) made for the optimiser only
                scale = vb.quant_scale(st.q.dtype)
                m = make_model(m.n_topics, m.n_words, optimize_alpha(vb.cvb0q_doc_counts(data, st), m.alpha),
                               optimize_beta(st.n_wk / scale, st.n_k / scale, m.beta), m.seeds)
            elif is_cvb0:
                m = make_model(m.n_topics, m.n_words, optimize_alpha(st.n_dk, m.alpha),
                               optimize_beta(st.n_wk, st.n_k, m.beta), m.seeds)
            else:
                m = vb.update_hyperparameters(st.lam_wk, st.gamma, m)
                # lambda = beta + sstats: move lambda with the new beta (the M-step given the new prior)
                st.lam_wk[...] += m.beta - current["model"].beta
            current["model"] = m

    def evaluate(it, st, info):
        m = current["model"]
        if quantised:  # n_dk rebuilt per document
            return _row(it, float("nan"), vb.cvb0q_log_likelihood(data, st, m, est.n_jobs) / n_tokens, info.change, m)
        if is_cvb0:  # no D x K theta at each evaluation
            return _row(it, float("nan"), vb.cvb0_log_likelihood(data, st, m, est.n_jobs) / n_tokens, info.change, m)
        e = vb.elbo(data, st.lam_wk, st.gamma, m, est.n_jobs)
        return _row(it, e, e / n_tokens, info.change, m)

    def snapshot(st):
        return {**st._asdict(), "alpha": current["model"].alpha}, {"beta": current["model"].beta}

    state, last_it = rec.drive(lambda r, st, d, _m: kernel(r, st, d, current["model"]), state, data, model,
                               evaluate=evaluate, snapshot=snapshot, step=step,
                               converged=lambda trace: _converged(trace, est.tol))
    model = current["model"]
    if quantised:
        lam_wk = vb.cvb0q_lambda(state, model)
        theta = vb.cvb0q_theta_release(data, state, model)  # gives q's pages back as theta's rows are written
    elif is_cvb0:
        theta = vb.cvb0_theta_in_place(state, model)  # over n_dk: no second D x K array
        lam_wk = state.n_wk + model.beta  # n_wk carries delta (seeded topics)
    else:
        theta = state.gamma / state.gamma.sum(axis=1, keepdims=True)
        lam_wk = state.lam_wk
    _finish(est, corpus, model, lam_wk, theta.astype(np.float32, copy=False))
    est._finish_fit(rec, last_it)


# -- online VB ---------------------------------------------------------------------------------
def _batch_bounds(n_docs: int, batch_size: int) -> list[tuple[int, int]]:
    return [(lo, min(lo + batch_size, n_docs)) for lo in range(0, n_docs, batch_size)]


def _slice(corpus, lo: int, hi: int) -> vb.VBData:
    """Documents lo..hi-1 as in-memory CSR arrays (copied out of a memory map, if any)."""
    m = corpus.counts
    a, b = int(m.indptr[lo]), int(m.indptr[hi])
    indptr = np.asarray(m.indptr[lo:hi + 1], dtype=np.int64) - a
    return vb.VBData(indptr, np.array(m.indices[a:b]), np.array(m.data[a:b]), corpus.n_words)


def _online_kernel(est, total_docs: int):
    return vb.build_online_kernel(total_docs=total_docs, tau0=est.learning_offset, kappa=est.learning_decay,
                                  max_doc_iter=est.max_doc_iter, doc_tol=est.doc_tol, n_threads=est.n_jobs,
                                  return_gamma=True)


def _online_step(est, kernel, rng, state, batch, model, step: int):
    """One mini-batch; returns (state, model, info, gamma). Hyperparameters move by rho_t, as lambda does."""
    state, (info, gamma) = kernel(rng, state, batch, model)
    if _optimize_due(est, step):
        target = vb.update_hyperparameters(vb.online_lambda(state), gamma, model)
        rho = info.rho
        new = make_model(model.n_topics, model.n_words, (1 - rho) * model.alpha + rho * target.alpha,
                         (1 - rho) * model.beta + rho * target.beta, model.seeds)
        state = vb.online_shift_beta(state, new.beta - model.beta)
        model = new
    return state, model, info, gamma


def _batch_estimate(batch, state, gamma, model) -> tuple[float, float]:
    """The mini-batch's document terms of the ELBO, and per token (the topics' O(VK) terms are left out)."""
    docs = vb.batch_bound(batch, state, gamma, model.alpha)
    return float("nan"), docs / max(float(batch.data.sum()), 1.0)


def fit_online(est, corpus, rec) -> None:
    """Online VB: ``n_iter`` passes over ``corpus`` in mini-batches of ``batch_size`` documents, in order.

    Steps (mini-batches) are the unit of ``evaluate_every``, ``checkpoint_every``
    and ``optimize_interval`` here, and the driver's iterations. A
    memory-mapped corpus is read one batch at a time and its pages are
    released as the pass goes, so the resident memory does not grow with the corpus.
    """
    bounds = _batch_bounds(corpus.n_docs, est.batch_size)
    ckpt = rec.checkpoint
    model = _model(est, corpus, ckpt)
    if ckpt is not None:
        state = vb.OnlineVBState(np.array(ckpt.arrays["u_wk"]), float(ckpt.extra["c"]), float(ckpt.extra["b"]),
                                 np.array(ckpt.arrays["usum"]), int(ckpt.extra["t"]))
    else:
        state = vb.online_init(rec.rng, corpus.n_words, model)
    online_kernel = _online_kernel(est, est.total_docs or corpus.n_docs)
    last = {"model": model}

    def kernel(r, st, _data, _model):  # the mini-batch after st.t steps; step() below sees it
        batch = _slice(corpus, *bounds[st.t % len(bounds)])
        st, last["model"], info, last["gamma"] = _online_step(est, online_kernel, r, st, batch, last["model"],
                                                              st.t + 1)
        last["batch"] = batch
        return st, info

    def step(it, st, info):
        if it % _RELEASE_EVERY == 0:
            release_pages(corpus.counts.indices)
            release_pages(corpus.counts.data)

    def evaluate(it, st, info):
        return _row(it, *_batch_estimate(last["batch"], st, last["gamma"], last["model"]), info.change, last["model"])

    def snapshot(st):
        return ({"u_wk": st.u_wk, "usum": st.usum, "alpha": last["model"].alpha},
                {"beta": last["model"].beta, "t": st.t, "c": st.c, "b": st.b})

    state, last_it = rec.drive(kernel, state, None, model, evaluate=evaluate, snapshot=snapshot, step=step)
    _finish(est, corpus, last["model"], vb.online_lambda(state, in_place=True), None)
    est._finish_fit(rec, last_it)


def partial_fit(est, corpus) -> None:
    """One online VB update per ``batch_size`` documents of ``corpus`` (a mini-batch of a stream)."""
    if est.total_docs is None:
        raise InvalidParameterError(
            "LDA.partial_fit needs total_docs: the number of documents in the whole stream (D in rho_t's "
            "update lambda = (1 - rho) lambda + rho (beta + D/|batch| sstats)). Set LDA(total_docs=...)."
        )
    if getattr(est, "_online_state", None) is None:
        if getattr(est, "topic_word_posterior_", None) is not None:
            # continue a fitted (or loaded) online model: lambda, t and the RNG are all in its attributes
            rng = generator_from_state(est.rng_state_)
            model = make_model(est.n_topics, len(est.vocabulary_), est.alpha_, est.beta_, est._seeds)
            state = vb.online_state_from_lambda(np.array(est.topic_word_posterior_.T, order="C"), est.n_iter_)
            est.trace_ = {k: list(v) for k, v in (est.trace_ or _new_trace()).items()}
            elapsed = est.trace_["seconds"][-1] if est.trace_.get("seconds") else 0.0
        else:
            rng, est.seed_ = check_random_state(est.random_state, "LDA")
            model = make_model(est.n_topics, corpus.n_words, est.doc_topic_prior, est.topic_word_prior, est._seeds)
            state = vb.online_init(rng, corpus.n_words, model)
            est.trace_ = _new_trace()
            est.vocabulary_ = corpus.vocabulary
            elapsed = 0.0
        est._online_rng, est._online_state, est._online_model = rng, state, model
        est._online_t0 = time.perf_counter() - elapsed
    rng, state, model = est._online_rng, est._online_state, est._online_model
    kernel = _online_kernel(est, est.total_docs)
    for lo, hi in _batch_bounds(corpus.n_docs, est.batch_size):
        batch = _slice(corpus, lo, hi)
        state, model, info, gamma = _online_step(est, kernel, rng, state, batch, model, state.t + 1)
        if state.t % est.evaluate_every == 0:
            e, per_token = _batch_estimate(batch, state, gamma, model)
            _record(est.trace_, state.t, e, per_token, info.change, est._online_t0, model)
    state = vb.online_fold(state)  # u_wk is lambda now; the fitted attributes view it
    est._online_state, est._online_model = state, model
    vocabulary = est.vocabulary_
    _finish(est, corpus, model, state.u_wk, None)
    est.vocabulary_ = vocabulary
    est.rng_state_ = rng.bit_generator.state
    est.n_iter_ = state.t


def transform(est, corpus) -> np.ndarray:
    """E_q[theta_d] of new documents by the VB E-step against q(phi) = Dir(topic_word_posterior_)."""
    data = vb.VBData.from_corpus(corpus)
    lam_wk = np.ascontiguousarray(est.topic_word_posterior_.T)
    eb = vb.exp_elog_beta(lam_wk)
    gamma = vb.initial_gamma(data, est.alpha_)
    vb.e_step(data, eb, est.alpha_, gamma, max_iter=est.max_doc_iter, tol=est.doc_tol, collect=False,
              n_threads=est.n_jobs)
    return gamma / gamma.sum(axis=1, keepdims=True)
