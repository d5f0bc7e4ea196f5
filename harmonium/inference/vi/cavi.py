"""Coordinate ascent variational inference (CAVI) for conjugate-exponential models.

Implements the CAVI algorithm of seed 004 ("CAVI Algorithm" slide): under the
mean-field family q(z) = prod_j q_j(z_j), each factor in turn is set to
q_j(z_j) ∝ exp E_{q_-j}[log p(z_j | z_-j, x)], and the ELBO
E_q[log p(x, z)] - E_q[log q(z)] is computed after every sweep. In a model
whose complete conditionals are exponential families (seed 004, "Exponential
Family Conditionals") the update is closed-form: q_j stays in the family of
its conditional and its natural parameter becomes nu_j* = E_{q_-j}[eta(z_-j, x)].

The updates are derived mechanically in the variational-message-passing form
of Winn & Bishop (2005, JMLR 6, "Variational message passing", eqs. 22-25) for
the models declared with :mod:`harmonium.models.conjugate`:

* **Global theta** (prior of natural parameter eta_0): its new natural
  parameter is eta_0 plus the sum of the messages of its children. The
  message of an observed child x_n ~ L(theta_{z_n}) is the expected conjugate
  statistic sum_n r_nk c(x_n) (``L.conjugate_stats(x, weights=r)``); the
  message of a gate z_n ~ Cat(pi_{g_n}) is the expected count
  sum_{n in g} r_nk in the Dirichlet's coordinates.
* **Gate z_n** (responsibilities r_n): log r_nk = <c(k), E_q[T(pi_{g_n})]>
  + sum over gated children of E_q[log L(x_n | theta_k)]
  (``L.expected_log_likelihood(x, E_q[T(theta)])``), normalised.
* **ELBO** = sum over observed of <S, E_q[T(theta)]> + sum_n log h(x_n)
  + sum over gates of <M, E_q[T(pi)]> + H[q(z)] - sum over globals of
  KL(q(theta) || p(theta)), with S, M the messages above, H the entropy of the
  categoricals and KL from :meth:`ExponentialFamily.kl`.

Given the gates the globals are independent, and given the globals the gates
are, so one sweep (all gates, then all globals) is exact coordinate ascent and
the ELBO never decreases. For a Bayesian Gaussian mixture these are the VB
updates of Bishop (PRML sec. 10.2, eqs. 10.46-10.63); for LDA they are seed 004
eqs. 4-6 (Blei et al. 2003).

Layout (DESIGN.md "one algorithm, three pieces"): :class:`CAVIState`,
:func:`init`, :func:`build_kernel` with ``kernel(rng, state, data, model) ->
(state, info)``, the driver :func:`harmonium.inference.run.run`, and the
convenience :func:`fit_cavi` with convergence control and random restarts
(CAVI finds a local optimum of a non-convex ELBO; seed 004 "Variational
Inference & Nonconvexity").
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from harmonium.errors import InvalidParameterError
from harmonium.expfam._base import ExponentialFamily
from harmonium.expfam.categorical import Categorical
from harmonium.inference.run import run
from harmonium.models.conjugate import Model, Observed, chunk_rows, observed_weights, sum_conjugate_stats
from harmonium.parallel.seeds import check_random_state, spawn

__all__ = [
    "CAVIData", "CAVIInfo", "CAVIResult", "CAVIState", "build_kernel", "elbo", "fit_cavi", "gate_log_potentials",
    "init", "natural_update", "parent_message", "posteriors", "prepare", "update_gates", "update_globals",
]


class CAVIState(NamedTuple):
    """Variational parameters: natural parameters of q(theta) per Global, responsibilities per Gate."""

    eta: dict[str, tuple[np.ndarray, ...]]  # Global name -> natural parameters of q (prior's family)
    resp: dict[str, np.ndarray]  # Gate name -> (n, K) responsibilities r_nk = q(z_n = k)


class CAVIInfo(NamedTuple):
    """What one sweep reports: the ELBO after it and its terms by variable."""

    elbo: float
    terms: dict[str, float]  # variable name -> its contribution (see :func:`elbo`)


class _ObservedData(NamedTuple):
    unique: np.ndarray  # distinct observations (gated variables) or the data
    inverse: np.ndarray | None  # data[n] == unique[inverse[n]]
    fixed_stats: tuple | None  # constant message (no gate)
    log_base: float  # sum_n log h(x_n)
    rows: int  # samples per chunk of per-sample coefficients (memory bound)


class _GateData(NamedTuple):
    n_categories: int
    groups: np.ndarray | None  # None: the parent has batch shape ()
    group_matrix: sp.csr_matrix | None  # (G, n) indicator of the groups, for the expected counts


class CAVIData(NamedTuple):
    """What :func:`prepare` precomputes from a model's observations (the ``data`` of the kernel)."""

    observed: dict[str, _ObservedData]
    gates: dict[str, _GateData]


class CAVIResult(NamedTuple):
    """Outcome of :func:`fit_cavi` (the best of ``n_init`` restarts).

    Attributes
    ----------
    posteriors : dict
        Variable name -> q: an expfam instance in the prior's family for each
        Global, a :class:`~harmonium.expfam.categorical.Categorical` of batch
        shape (n,) for each Gate.
    state : CAVIState
    elbo : ndarray
        ELBO at initialisation then after each iteration (length n_iter + 1).
    n_iter : int
    converged : bool
        The relative ELBO change fell below ``tol``.
    restart_elbos : ndarray
        Final ELBO of each restart, in the order of the seeds.
    restart_n_iter : ndarray
    restart_converged : ndarray of bool
    best_restart : int
        Index of the restart returned.
    """

    posteriors: dict
    state: CAVIState
    elbo: np.ndarray
    n_iter: int
    converged: bool
    restart_elbos: np.ndarray
    restart_n_iter: np.ndarray
    restart_converged: np.ndarray
    best_restart: int

    @property
    def elbo_spread(self) -> float:
        """max - min of the restarts' final ELBOs (0 for one restart)."""
        return float(self.restart_elbos.max() - self.restart_elbos.min())


# -- the pieces every update uses (module level so that tests can replace one) -----


def parent_message(dist: ExponentialFamily) -> tuple:
    """E_q[T(theta)], the message a global sends to its children (Winn & Bishop 2005 eq. 23).

    For a Dirichlet it is E[log pi] = psi(alpha) - psi(alpha_0), the quantity of seed 004 eq. 6.
    The ELBO computes E_q[T] itself, so a wrong message here cannot hide in the ELBO.
    """
    return dist.expected_stats()


def natural_update(prior: ExponentialFamily, message: tuple) -> tuple:
    """nu* = eta_prior + sum of children's messages (seed 004: nu_j* = E_{q_-j}[eta(z_-j, x)])."""
    return prior.posterior(message).natural_params


def _lik(o: Observed):
    return o.likelihood, o.fixed


def _q(model: Model, eta: dict) -> dict[str, ExponentialFamily]:
    return {g.name: g.family.from_natural(*eta[g.name]) for g in model.globals}


def _add(a: tuple | None, b: tuple) -> tuple:
    return b if a is None else tuple(x + y for x, y in zip(a, b, strict=True))


def _categories(K: int) -> np.ndarray:
    return np.arange(K, dtype=np.int64)


def _softmax_rows(logits: np.ndarray) -> np.ndarray:
    logits = logits - logits.max(axis=1, keepdims=True)
    r = np.exp(logits)
    r /= r.sum(axis=1, keepdims=True)
    return r


# -- prepare, the E-step, the M-step, the ELBO ---------------------------------------


def prepare(model: Model) -> CAVIData:
    """Precompute what does not change between sweeps (distinct observations, constant messages, log h)."""
    obs = {}
    for o in model.observed:
        lik, fixed = _lik(o)
        prior = model[o.params].prior
        rows = chunk_rows(prior)
        log_base = float(np.sum(lik.log_likelihood_base(o.data, **fixed)))
        if o.gate is not None:
            flat = o.data.reshape(o.n, -1)
            _, first, inverse = np.unique(flat, axis=0, return_index=True, return_inverse=True)
            obs[o.name] = _ObservedData(o.data[first], inverse.reshape(-1), None, log_base, rows)
        else:
            stats = sum_conjugate_stats(lik, o.data, fixed, rows, observed_weights(o, prior.batch_shape))
            obs[o.name] = _ObservedData(o.data, None, stats, log_base, rows)
    gates = {}
    for z in model.gates:
        K = model.n_categories(z.name)
        if z.groups is None:
            gates[z.name] = _GateData(K, None, None)
        else:
            n, G = z.groups.shape[0], model[z.parent].batch_shape[0]
            matrix = sp.csr_matrix((np.ones(n), (z.groups, np.arange(n))), shape=(G, n))
            gates[z.name] = _GateData(K, z.groups, matrix)
    return CAVIData(obs, gates)


def gate_log_potentials(eta: dict, data: CAVIData, model: Model) -> dict[str, np.ndarray]:
    """Unnormalised log q*(z_n = k) of every gate given the globals' natural parameters ``eta``.

    log r_nk = E_q[log pi_{g_n k}] + sum over gated observed x of E_q[log L(x_n | theta_k)]
    (seed 004: q*(z_j) ∝ exp E_{q_-j}[log p(z_j | z_-j, x)]); the complete conditional of each
    gate, exposed apart from the normalisation so that tests can check it.
    """
    q = _q(model, eta)
    out = {}
    for z in model.gates:
        gd = data.gates[z.name]
        K = gd.n_categories
        # <c(k), E[T(pi_g)]>: shape (K,) for a shared pi, (K, G) with groups
        prior_term = Categorical.expected_log_likelihood(_categories(K), parent_message(q[z.parent]), n_categories=K)
        logits = np.broadcast_to(prior_term, (1, K)) if gd.groups is None else prior_term.T[gd.groups]
        logits = np.array(logits, dtype=np.float64)
        for o in model.gated_by(z.name):
            lik, fixed = _lik(o)
            od = data.observed[o.name]
            message = parent_message(q[o.params])
            ell = np.concatenate([lik.expected_log_likelihood(od.unique[i:i + od.rows], message, **fixed)
                                  for i in range(0, od.unique.shape[0], od.rows)])  # (U, K)
            logits = logits + ell[od.inverse]
        out[z.name] = logits
    return out


def update_gates(eta: dict, data: CAVIData, model: Model) -> dict[str, np.ndarray]:
    """The CAVI update of every gate: responsibilities r_nk ∝ exp(log potential) (seed 004 eq. 6)."""
    return {name: _softmax_rows(logits) for name, logits in gate_log_potentials(eta, data, model).items()}


def _gate_message(z_name: str, resp: np.ndarray, data: CAVIData) -> tuple:
    """Expected counts sum_{n in g} r_nk in the Dirichlet parent's natural coordinates."""
    gd = data.gates[z_name]
    K = gd.n_categories
    counts = resp.sum(axis=0) if gd.groups is None else np.asarray(gd.group_matrix @ resp).T  # (K,) or (K, G)
    return Categorical.conjugate_stats(_categories(K), weights=counts, n_categories=K)


def _messages(resp: dict, data: CAVIData, model: Model) -> tuple[dict, dict]:
    """Messages of every child to its global: ({global: summed message}, {child: its own message})."""
    own: dict[str, tuple] = {}
    for z in model.gates:
        own[z.name] = _gate_message(z.name, resp[z.name], data)
    for o in model.observed:
        od = data.observed[o.name]
        if o.gate is None:
            own[o.name] = od.fixed_stats
        else:
            lik, fixed = _lik(o)
            r = resp[o.gate]
            own[o.name] = sum_conjugate_stats(lik, o.data, fixed, od.rows, lambda sl, r=r: r[sl])
    total: dict[str, tuple | None] = {g.name: None for g in model.globals}
    for z in model.gates:
        total[z.parent] = _add(total[z.parent], own[z.name])
    for o in model.observed:
        total[o.params] = _add(total[o.params], own[o.name])
    return total, own


def update_globals(resp: dict, data: CAVIData, model: Model) -> tuple[dict, dict]:
    """The CAVI update of every global: prior natural parameter + children's messages (seed 004 eqs. 4-5).

    Returns ``(eta, messages)``; ``messages[child]`` is each child's own message (used by the ELBO).
    """
    total, own = _messages(resp, data, model)
    eta = {}
    for g in model.globals:
        if total[g.name] is None:  # no children: q(theta) = p(theta)
            eta[g.name] = tuple(np.asarray(e, dtype=np.float64) for e in g.prior.natural_params)
        else:
            eta[g.name] = natural_update(g.prior, total[g.name])
    return eta, own


def _sum_inner(a: tuple, b: tuple) -> float:
    return float(sum(np.sum(np.asarray(x) * np.asarray(y)) for x, y in zip(a, b, strict=True)))


def _elbo(eta: dict, resp: dict, messages: dict, data: CAVIData, model: Model) -> tuple[float, dict]:
    q = _q(model, eta)
    stats = {g.name: q[g.name].expected_stats() for g in model.globals}
    terms: dict[str, float] = {}
    for o in model.observed:  # E_q[log p(x | theta, z)] = <S, E[T(theta)]> + sum_n log h(x_n)
        terms[o.name] = _sum_inner(messages[o.name], stats[o.params]) + data.observed[o.name].log_base
    for z in model.gates:  # E_q[log p(z | pi)] + H[q(z)]
        r = resp[z.name]
        with np.errstate(divide="ignore", invalid="ignore"):
            entropy = -float(np.sum(np.where(r > 0, r * np.log(r), 0.0)))
        terms[z.name] = _sum_inner(messages[z.name], stats[z.parent]) + entropy
    for g in model.globals:  # -KL(q(theta) || p(theta))
        terms[g.name] = -float(np.sum(q[g.name].kl(g.prior)))
    return float(sum(terms.values())), terms


def elbo(state: CAVIState, data: CAVIData, model: Model) -> float:
    """The ELBO E_q[log p(x, z, theta)] - E_q[log q(z, theta)] of ``state`` (seed 004 CAVI line 7)."""
    _, own = _messages(state.resp, data, model)
    return _elbo(state.eta, state.resp, own, data, model)[0]


# -- the three pieces ------------------------------------------------------------------


def init(rng: np.random.Generator, model: Model, data: CAVIData | None = None, *, method: str = "random",
         resp: dict | None = None) -> CAVIState:
    """A starting state: responsibilities, then the globals updated from them.

    Parameters
    ----------
    rng : numpy.random.Generator
    model : Model
    data : CAVIData, optional
        From :func:`prepare` (computed when omitted).
    method : {"random", "points"}
        ``"random"``: each row r_n ~ Dirichlet(1, ..., 1). ``"points"``: each
        component k of a gate starts at the posterior of its parameter's prior
        given one observation drawn without replacement (the Bayesian analogue
        of random-centre k-means seeding), then responsibilities follow from
        one gate update.
    resp : dict, optional
        Given responsibilities per gate (``method`` is then ignored).

    Returns
    -------
    CAVIState
        With the globals already updated from the responsibilities (one M-step).
    """
    data = prepare(model) if data is None else data
    if resp is not None:
        resp = {z.name: np.array(resp[z.name], dtype=np.float64) for z in model.gates}
    elif method == "random":
        resp = {}
        for z in model.gates:
            K = data.gates[z.name].n_categories
            resp[z.name] = rng.dirichlet(np.ones(K), size=model.n_local(z.name))
    elif method == "points":
        eta = {g.name: tuple(np.asarray(e, dtype=np.float64) for e in g.prior.natural_params)
               for g in model.globals}
        seeded: set[str] = set()
        for z in model.gates:
            K, n = data.gates[z.name].n_categories, model.n_local(z.name)
            idx = rng.choice(n, size=K, replace=n < K)
            for o in model.gated_by(z.name):
                if o.params in seeded:
                    continue
                lik, fixed = _lik(o)
                stats = lik.conjugate_stats(o.data[idx], weights=np.eye(K), **fixed)
                eta[o.params] = natural_update(model[o.params].prior, stats)
                seeded.add(o.params)
        resp = update_gates(eta, data, model)
    else:
        raise InvalidParameterError(f"The 'init' parameter of CAVI must be 'random' or 'points'. Got {method!r}.")
    eta, _ = update_globals(resp, data, model)
    return CAVIState(eta, resp)


def build_kernel() -> Callable:
    """The CAVI sweep as ``kernel(rng, state, data, model) -> (state, info)``.

    One sweep updates every gate (E-step, seed 004 eq. 6) and then every global
    (M-step, eqs. 4-5) and reports the ELBO of the new state in ``info``. The
    kernel is deterministic (``rng`` is unused) and returns new arrays.
    """

    def kernel(rng, state: CAVIState, data: CAVIData, model: Model):
        resp = update_gates(state.eta, data, model)
        eta, own = update_globals(resp, data, model)
        value, terms = _elbo(eta, resp, own, data, model)
        return CAVIState(eta, resp), CAVIInfo(value, terms)

    return kernel


def posteriors(state: CAVIState, model: Model) -> dict[str, ExponentialFamily]:
    """The variational factors as expfam instances (Categorical of batch (n,) for each gate)."""
    out: dict[str, ExponentialFamily] = dict(_q(model, state.eta))
    for z in model.gates:
        out[z.name] = Categorical(state.resp[z.name])
    return out


def _check_int(name: str, value, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise InvalidParameterError(f"The {name!r} parameter of fit_cavi must be an int >= {low}. Got {value!r}.")
    return int(value)


def fit_cavi(rng, model: Model, max_iter: int = 200, tol: float = 1e-8, n_init: int = 1, *,
             init_method: str = "random", callback: Callable | None = None) -> CAVIResult:
    """Run CAVI to convergence from ``n_init`` random starts and return the best.

    Parameters
    ----------
    rng : int, numpy.random.Generator or None
        Restart r starts from child stream r of ``rng`` (``SeedSequence.spawn``);
        first, as every stochastic function of harmonium.
    model : Model
        A declared conjugate-exponential model (:mod:`harmonium.models.conjugate`).
    max_iter : int
        Sweeps per restart at most.
    tol : float
        Stop when |ELBO_t - ELBO_{t-1}| <= tol * |ELBO_t|.
    n_init : int
        Random restarts; CAVI converges to a local optimum (seed 004, the GMM
        restarts figure), so the restart with the highest final ELBO is returned
        and every restart's final ELBO is reported in ``restart_elbos``.
    init_method : {"random", "points"}
        See :func:`init`.
    callback : callable, optional
        ``callback(iteration, state, info)``; returning True stops the restart.

    Returns
    -------
    CAVIResult
    """
    if not isinstance(model, Model):
        raise InvalidParameterError(f"fit_cavi needs a harmonium.models.conjugate.Model. Got {type(model).__name__}.")
    max_iter = _check_int("max_iter", max_iter, 1)
    n_init = _check_int("n_init", n_init, 1)
    if isinstance(tol, bool) or not isinstance(tol, numbers.Real) or not (tol >= 0 and np.isfinite(tol)):
        raise InvalidParameterError(f"The 'tol' parameter of fit_cavi must be a finite float >= 0. Got {tol!r}.")
    if init_method not in ("random", "points"):
        raise InvalidParameterError(
            f"The 'init_method' parameter of fit_cavi must be 'random' or 'points'. Got {init_method!r}."
        )
    rng, _ = check_random_state(rng, "fit_cavi")
    data = prepare(model)
    kernel = build_kernel()
    runs = []
    for child in spawn(rng, n_init):
        state = init(child, model, data, method=init_method)
        trace = [elbo(state, data, model)]
        flags = {"converged": False}

        def on_iteration(it, st, info, trace=trace, flags=flags):
            trace.append(info.elbo)
            stop = bool(callback is not None and callback(it, st, info))
            if abs(trace[-1] - trace[-2]) <= tol * abs(trace[-1]):
                flags["converged"] = True
                return True
            return stop

        state, n_iter = run(child, kernel, state, data, model, max_iter, callback=on_iteration)
        runs.append((state, np.array(trace), n_iter, flags["converged"]))
    finals = np.array([r[1][-1] for r in runs])
    best = int(np.argmax(np.where(np.isnan(finals), -np.inf, finals)))  # a NaN restart never wins
    state, trace, n_iter, converged = runs[best]
    return CAVIResult(posteriors(state, model), state, trace, n_iter, converged, finals,
                      np.array([r[2] for r in runs]), np.array([r[3] for r in runs]), best)
