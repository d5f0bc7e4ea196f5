"""The ``HCRF`` estimator: sequence (or tree) classification with a hidden-state CRF.

Model, likelihood and gradient: :mod:`harmonium.models.undirected.hcrf`
(Quattoni et al. 2007; seed 004, "Hidden-state CRFs"); exact sum-product on the
hidden layer: :mod:`harmonium._kernels.hcrf`. Training minimises the
L2-regularised negative conditional log-likelihood with L-BFGS-B
(``scipy.optimize.minimize(method="L-BFGS-B", jac=True)``); the gradient is the
seed 004 difference of expected features on the full and the clamped graphs,
summed over sequences in ``n_jobs`` threads.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize

from harmonium._validation import RANDOM_STATE, Interval, Options
from harmonium.errors import CorpusError
from harmonium.estimators._base import BaseEstimator, register
from harmonium.inference.recorder import Recorder
from harmonium.models.undirected import hcrf as model
from harmonium.parallel.seeds import check_random_state

_LABEL_KINDS = "biufU"  # label dtypes a model file can hold without pickling
# L-BFGS-B correction pairs (scipy's maxcor). With scipy's default 10, fits of the digits benchmark
# (benchmarks/samplers/hcrf_peers.py) took 1.3-1.8x more iterations to the same objective; a pair costs O(n_params).
_LBFGS_MEMORY = 50


def _check_labels(y, seqs, where: str):
    """``y`` as an array of one label per sequence, and its classes (at least two); one error naming the fault."""
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != seqs.n_sequences:
        raise CorpusError(f"y must be 1-D with one label per sequence: {seqs.n_sequences} sequences, "
                          f"y of shape {y.shape} ({where}).")
    if y.dtype.kind not in _LABEL_KINDS:
        raise CorpusError(f"labels must be ints, floats, bools or strings; got dtype {y.dtype} ({where}).")
    if y.dtype.kind == "f" and not np.isfinite(y).all():
        raise CorpusError(f"y holds NaN or infinity at sequence {int(np.flatnonzero(~np.isfinite(y))[0])} "
                          f"({where}).")
    classes = np.unique(y)
    if classes.shape[0] < 2:
        raise CorpusError(f"y holds one class only ({classes[0]!r}); an HCRF needs at least two ({where}).")
    return y, classes


@register
class HCRF(BaseEstimator):
    """Hidden-state conditional random field (Quattoni et al. 2007) for classifying sequences.

    Each sequence x = (x_1..x_T), x_t in R^F, gets one label y; a hidden state
    z_t in {0..H-1} sits at every position, linked in a chain (or a tree given
    by ``parents``), and

        p(y | x) ∝ exp(b_y) sum_z exp( sum_t (theta[y, z_t] . x_t + beta[y, z_t])
                                     + pi[y, z_1] + eps[y, z_T] + sum_{t>1} A[y, z_{t-1}, z_t] )

    (on a tree: pi at the root, eps at every leaf, A on every edge parent -> child).

    Parameters
    ----------
    n_hidden_states : int, default 5
        H, the number of hidden states per position.
    l2 : float, default 1.0
        Weight of the L2 penalty ``l2 * ||w||^2`` (pyhcrf's ``c2`` convention;
        the label bias b is not penalised) added to the summed negative
        conditional log-likelihood.
    transitions : {"left_to_right", "full"}, default "left_to_right"
        Which hidden-state transitions are allowed: only staying or moving one
        state on (j in {i, i + 1}, the Bakis topology of gesture and speech
        models; with the start and end weights it ties hidden states to
        positions), or all (ergodic). On scikit-learn's digits read row by row
        (benchmarks/samplers/hcrf_peers.py) left-to-right is both more accurate and faster.
    max_iter : int, default 1000
        Maximum L-BFGS-B iterations.
    tol : float, default 1e-7
        L-BFGS-B stops when the relative decrease of the objective,
        ``(f_k - f_{k+1}) / max(|f_k|, |f_{k+1}|, 1)``, falls to ``tol`` (scipy's
        ``ftol``) or the largest gradient component to 1e-5 (scipy's ``gtol``).
    init_scale : float, default 0.01
        Standard deviation of the Gaussian initial weights (the label bias
        starts at 0); random starts break the symmetry between hidden states.
    n_jobs : int, default 1
        Threads for the gradient and for prediction (the kernels release the
        GIL). The objective depends on ``n_jobs`` only through rounding.
    random_state : int, numpy Generator or None
        Seed of the initial weights. ``None`` draws fresh entropy and records
        it in ``seed_``.

    Attributes
    ----------
    classes_ : ndarray (C,)
        The sorted class labels.
    state_weights_ : ndarray (C, H, F)
        theta, the state-feature weights per class and hidden state.
    state_bias_ : ndarray (C, H)
        beta, the state bias per class and hidden state.
    start_weights_, end_weights_ : ndarray (C, H)
        pi and eps, the weights of the first (root) and last (leaf) hidden states.
    transition_weights_ : ndarray (C, H, H)
        A, ``A[y, i, j]`` scores a parent in state i with a child in state j;
        -inf where ``transitions`` forbids the move.
    label_bias_ : ndarray (C,)
        b, the label bias.
    n_features_in_ : int
        F.
    n_iter_ : int
        L-BFGS-B iterations done.
    n_evaluations_ : int
        Evaluations of the objective and its gradient (line searches add some).
    converged_ : bool
        Whether L-BFGS-B met its stopping rule before ``max_iter``.
    objective_ : float
        The final regularised objective.
    seed_ : int or None
        The seed that reproduces the run (None if a Generator was passed).
    trace_ : dict of lists
        ``iteration``, ``objective`` and ``seconds`` after every L-BFGS-B iteration.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = [rng.normal(size=(rng.integers(3, 8), 2)) + (i % 2) for i in range(40)]
    >>> y = [i % 2 for i in range(40)]
    >>> clf = HCRF(n_hidden_states=3, l2=0.1, random_state=0).fit(X, y)
    >>> clf.score(X, y) > 0.9
    True
    """

    _parameter_constraints = {
        "n_hidden_states": [Interval("int", 1, None)],
        "l2": [Interval("real", 0, None, "left")],
        "transitions": [Options(model.TRANSITIONS)],
        "max_iter": [Interval("int", 1, None)],
        "tol": [Interval("real", 0, None, "left")],
        "init_scale": [Interval("real", 0, None, "left")],
        "n_jobs": [Interval("int", 1, None)],
        "random_state": [RANDOM_STATE],
    }
    _fitted_attribute = "state_weights_"

    def __init__(
        self,
        n_hidden_states: int = 5,
        *,
        l2: float = 1.0,
        transitions: str = "left_to_right",
        max_iter: int = 1000,
        tol: float = 1e-7,
        init_scale: float = 0.01,
        n_jobs: int = 1,
        random_state=None,
    ):
        self._store_params(locals())

    # -- fitting ------------------------------------------------------------------------------
    def fit(self, X, y, parents=None):
        """Learn the weights from sequences ``X`` and labels ``y``.

        Parameters
        ----------
        X : list of array_like (T_i, F), or an array (n, T, F)
            One array per sequence; lengths may differ.
        y : array_like (n,)
            Class labels (ints, floats, bools or str), at least two distinct.
        parents : list of array_like of int (T_i,), optional
            Tree-structured hidden layers: the parent of every position, -1 at
            the root. None: chains.

        Returns
        -------
        self
        """
        self._validate_params()
        where = f"{type(self).__name__}.fit"
        seqs = model.as_sequences(X, parents, where=where)
        y, classes = _check_labels(y, seqs, where)
        y_idx = model.encode_labels(y, classes, where)
        rng, seed = check_random_state(self.random_state, type(self).__name__)
        C, H, F = classes.shape[0], self.n_hidden_states, seqs.n_features
        allowed = model.transition_mask(H, self.transitions)
        w0 = model.pack(model.init_params(rng, C, H, F, self.init_scale, allowed))

        rec = Recorder(type(self).__name__, self.max_iter, ("iteration", "objective", "seconds"), params={})
        n_eval = [0]
        work = model.Workspace(seqs.X.shape[0], C, H)  # reused by every evaluation

        def fun(w):
            n_eval[0] += 1
            return model.objective(w, seqs, y_idx, C, H, self.l2, allowed, self.n_jobs, work)

        def callback(intermediate_result):
            rec.record({"iteration": len(rec.trace["iteration"]) + 1, "objective": float(intermediate_result.fun)})

        res = minimize(fun, w0, method="L-BFGS-B", jac=True, callback=callback,
                       options={"maxiter": self.max_iter, "ftol": self.tol, "gtol": 1e-5, "maxcor": _LBFGS_MEMORY})
        params = model.unpack(np.array(res.x), C, H, F)
        params = params._replace(transition_weights=model.effective_transitions(params.transition_weights, allowed))
        self.classes_ = classes
        self._set_params(params)
        self.n_features_in_ = F
        self.n_iter_ = int(res.nit)
        self.n_evaluations_ = n_eval[0]
        self.converged_ = bool(res.success)
        self.objective_ = float(res.fun)
        self.optimizer_message_ = str(res.message)
        self.seed_ = seed
        self.trace_ = rec.trace
        return self

    def __sklearn_tags__(self):
        """scikit-learn's estimator tags (scikit-learn >= 1.6 asks for them; imported only then)."""
        from sklearn.utils import ClassifierTags, InputTags, Tags, TargetTags

        return Tags(estimator_type="classifier", target_tags=TargetTags(required=True),
                    classifier_tags=ClassifierTags(), input_tags=InputTags(two_d_array=False, three_d_array=True))

    # -- prediction -----------------------------------------------------------------------------
    def _params(self) -> model.HCRFParams:
        self._check_is_fitted()
        return model.HCRFParams(self.state_weights_, self.state_bias_, self.start_weights_, self.end_weights_,
                                self.transition_weights_, self.label_bias_)

    def _set_params(self, params: model.HCRFParams) -> None:
        (self.state_weights_, self.state_bias_, self.start_weights_, self.end_weights_, self.transition_weights_,
         self.label_bias_) = (np.ascontiguousarray(a, dtype=np.float64) for a in params)

    def _sequences(self, X, parents, method: str) -> model.Sequences:
        return model.as_sequences(X, parents, where=f"{type(self).__name__}.{method}", n_features=self.n_features_in_)

    def predict_log_proba(self, X, parents=None) -> np.ndarray:
        """(n, C) log p(y | x) for each sequence, classes in the order of ``classes_``."""
        return model.predict_log_proba(self._params(), self._sequences(X, parents, "predict_log_proba"), self.n_jobs)

    def predict_proba(self, X, parents=None) -> np.ndarray:
        """(n, C) p(y | x) for each sequence, classes in the order of ``classes_``."""
        lp = model.predict_log_proba(self._params(), self._sequences(X, parents, "predict_proba"), self.n_jobs)
        return np.exp(lp)

    def predict(self, X, parents=None) -> np.ndarray:
        """The most probable class of each sequence."""
        s = model.log_scores(self._params(), self._sequences(X, parents, "predict"), self.n_jobs)
        return self.classes_[np.argmax(s, axis=1)]

    def score(self, X, y, parents=None) -> float:
        """Mean accuracy of :meth:`predict` on ``(X, y)``."""
        y = np.asarray(y)
        pred = self.predict(X, parents)
        if y.shape != pred.shape:
            raise CorpusError(f"y must hold one label per sequence: {pred.shape[0]} sequences, y of shape {y.shape} "
                              f"({type(self).__name__}.score).")
        return float(np.mean(pred == y))

    def posterior(self, x, parents=None) -> model.SequencePosterior:
        """Exact marginals of one sequence x (T, F): p(y | x), and p(z_t | y, x), p(z_parent(t), z_t | y, x) per y."""
        return model.sequence_posterior(self._params(), x, parents, where=f"{type(self).__name__}.posterior")

    # -- persistence ---------------------------------------------------------------------------
    def _state_for_file(self):
        if self.classes_.dtype.kind not in _LABEL_KINDS:
            raise CorpusError(f"class labels of dtype {self.classes_.dtype} cannot be saved without pickling.")
        arrays = {"classes": self.classes_}
        arrays.update(zip(model.HCRFParams._fields, self._params(), strict=True))
        extra = {"n_iter_": self.n_iter_, "converged_": self.converged_, "objective_": self.objective_,
                 "seed_": self.seed_}
        return arrays, extra

    def _restore_from_file(self, arrays, manifest):
        extra = manifest.get("extra") or {}
        classes = np.asarray(arrays["classes"])
        params = model.HCRFParams(*(np.asarray(arrays[name], dtype=np.float64) for name in model.HCRFParams._fields))
        if params.state_weights.ndim != 3:
            raise ValueError("state_weights must be 3-D (C, H, F)")
        C, H, F = params.shape
        expected = model.unpack(np.zeros(model.n_params(C, H, F)), C, H, F)
        for name, got, want in zip(model.HCRFParams._fields, params, expected, strict=True):
            if got.shape != want.shape:
                raise ValueError(f"{name} has shape {got.shape}, but state_weights {params.shape} needs {want.shape}")
        if classes.shape != (C,):
            raise ValueError(f"classes has shape {classes.shape}, expected ({C},)")
        if H != self.n_hidden_states:
            raise ValueError(f"n_hidden_states is {self.n_hidden_states} but the weights have {H} hidden states")
        self.classes_ = classes
        self._set_params(params)
        self.n_features_in_ = F
        self.n_iter_ = int(extra["n_iter_"])
        self.converged_ = bool(extra.get("converged_", False))
        self.objective_ = float(extra.get("objective_", np.nan))
        self.seed_ = extra.get("seed_")
