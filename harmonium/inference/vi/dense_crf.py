"""Mean-field inference in fully connected pairwise CRFs with Gaussian edge potentials.

Krähenbühl & Koltun (2011), "Efficient inference in fully connected CRFs with
Gaussian edge potentials", NIPS (eqs. 1-5, Algorithm 1, Fig. 2); seed 004,
"Fully-Connected CRF". N variables x_i in {0..L-1} with energy

    E(x) = sum_i psi_u(x_i) + sum_{i<j} mu(x_i, x_j) K(i, j),
    K(i, j) = sum_m w_m k_m(f_i, f_j),   k_m(f_i, f_j) = exp(-|f_i^m - f_j^m|^2 / 2)

(features divided by their bandwidths theta_m; ``mu`` symmetric, Potts
mu(l, l') = [l != l'] by default) and p(x) = exp(-E(x)) / Z. The mean-field
family Q(x) = prod_i Q_i(x_i) minimises KL(Q || P) = F(Q) + log Z with the free energy

    F(Q) = E_Q[E] - H(Q)
         = sum_i Q_i . psi_i + 1/2 sum_i Q_i . (mu msg_i) + sum_i Q_i . log Q_i,
    msg_i(l') = sum_{j != i} K(i, j) Q_j(l').

The update of variable i with the others fixed is (K&K eq. 4)

    Q_i(l) ∝ exp{-psi_u(l) - sum_l' mu(l, l') msg_i(l')}.

* ``schedule="sequential"``: one variable at a time (a coordinate descent on F,
  which therefore never increases), with every message kept exact as Q_i moves
  (:func:`harmonium._kernels.dense_crf.sequential_sweep`); O(N^2) a sweep.
* ``schedule="parallel"``: all variables from the same messages (K&K Algorithm
  1). Not guaranteed to decrease F; each iteration reports F of its result.

The messages (K&K's "message passing" step, a Gaussian filtering of Q in
feature space) are computed by

* ``method="exact"``: the O(N^2 (D + L)) sum (numba), for small N;
* ``method="grid"``: a bilateral-grid approximation (Paris & Durand 2006; the
  downsampled-grid alternative to K&K's permutohedral lattice). Per kernel,
  Q is splatted onto a regular grid over the feature space with spacing
  ``spacing`` (in bandwidths) by multilinear weights, blurred with
  ``scipy.ndimage.gaussian_filter``, and sliced back at the points by the same
  weights, then scaled by (sqrt(2 pi) / spacing)^D so that the effective kernel
  has the mass of k_m. Splatting and slicing each add a tent of variance 1/6
  cell^2 per axis, so the blur has variance 1/spacing^2 - 1/3 cells^2 and the
  total matches k_m's (spacing must be < sqrt(3)). The grid's own estimate of
  k(f_i, f_i) Q_i is subtracted, as the sum excludes j = i. Cost
  O(N 2^D L + n_cells L D (truncation width)); memory n_cells L. Relative RMS
  error against the exact messages (:func:`grid_error`; 400 points uniform on a
  cube of side 6 bandwidths, random Q; tests/unit/inference/test_dense_crf.py
  checks the 2-D and 3-D rows): at spacing 0.5 / 0.75 (default) / 1.0,
  0.3% / 0.8% / 1.5% in 2-D, 0.5% / 1.2% / 2.5% in 3-D, 0.9% / 2.5% / 4.5% in 5-D.
  The grid has (range / spacing + 2)^D cells per kernel, so it suits
  low-dimensional features; the exact method has no such limit.

Layout (DESIGN.md "one algorithm, three pieces"): :class:`MeanFieldState`,
:func:`init`, :func:`build_kernel` with ``kernel(rng, state, plan, model) ->
(state, info)``, driven by :func:`harmonium.inference.run.run`; :func:`mean_field`
runs it with a convergence test and returns the trace of Fig. 2 (free energy,
that is KL(Q || P) - log Z, and expected energy per iteration).
"""

from __future__ import annotations

import math
import numbers
from typing import NamedTuple

import numpy as np
from scipy.ndimage import gaussian_filter

from harmonium._kernels import dense_crf as kd
from harmonium._validation import Interval, Options, validate_params
from harmonium.errors import InvalidParameterError
from harmonium.inference.run import run
from harmonium.parallel.threads import run_blocks

__all__ = [
    "DenseCRF", "MeanFieldInfo", "MeanFieldResult", "MeanFieldState", "build_kernel", "energy", "free_energy",
    "grid_error", "init", "make_model", "mean_field", "message_plan", "messages", "potts", "update",
]


# -- the model ---------------------------------------------------------------------------------------


class DenseCRF(NamedTuple):
    """A fully connected CRF: ``unary`` (N, L) psi_u, ``feats`` (N, sum D_m) features already divided by
    their bandwidths, ``dim_ptr`` (M + 1,) the columns of each kernel, ``weights`` (M,) w_m, ``compat``
    (L, L) symmetric mu."""

    unary: np.ndarray
    feats: np.ndarray
    dim_ptr: np.ndarray
    weights: np.ndarray
    compat: np.ndarray

    @property
    def n_variables(self) -> int:
        return self.unary.shape[0]

    @property
    def n_labels(self) -> int:
        return self.unary.shape[1]


def potts(n_labels: int) -> np.ndarray:
    """The Potts compatibility mu(l, l') = [l != l']."""
    return 1.0 - np.eye(n_labels)


def make_model(unary, features, weights, compat="potts", bandwidths=None) -> DenseCRF:
    """Check and assemble a :class:`DenseCRF`.

    Parameters
    ----------
    unary : array_like (N, L)
        psi_u(x_i = l), finite (e.g. negative log-probabilities of a classifier).
    features : array_like (N, D) or sequence of M such arrays
        The feature vectors f^m of each kernel (e.g. positions, and positions
        with colours, for K&K's smoothness and appearance kernels).
    weights : float or sequence of M floats
        w_m >= 0.
    compat : "potts" or array_like (L, L)
        mu, symmetric.
    bandwidths : None, float or sequence of M (floats or (D_m,) arrays)
        theta_m: the features are divided by them (None: already scaled).
    """
    unary = np.ascontiguousarray(unary, dtype=np.float64)
    if unary.ndim != 2 or unary.shape[0] < 1 or unary.shape[1] < 1:
        raise InvalidParameterError(f"unary must be a non-empty 2-D array (N, L); got shape {unary.shape}.")
    if not np.isfinite(unary).all():
        raise InvalidParameterError("unary holds NaN or infinity (use a large finite cost instead of +inf).")
    N, L = unary.shape
    feats = [features] if isinstance(features, np.ndarray) else list(features)
    M = len(feats)
    w = np.atleast_1d(np.asarray(weights, dtype=np.float64))
    if w.shape != (M,) or not np.isfinite(w).all() or (w < 0).any():
        raise InvalidParameterError(
            f"weights must be {M} finite non-negative numbers (one per kernel); got {weights!r}."
        )
    if bandwidths is None or isinstance(bandwidths, numbers.Real):
        bws = [bandwidths] * M
    else:
        bws = list(bandwidths) if M > 1 else [bandwidths]
    if len(bws) != M:
        raise InvalidParameterError(f"bandwidths must give one entry per kernel ({M}); got {len(bws)}.")
    cols = []
    for m, (f, bw) in enumerate(zip(feats, bws, strict=True)):
        f = np.asarray(f, dtype=np.float64)
        if f.ndim == 1:
            f = f[:, None]
        if f.ndim != 2 or f.shape[0] != N or f.shape[1] < 1:
            raise InvalidParameterError(f"features of kernel {m} must be ({N}, D) with D >= 1; got shape {f.shape}.")
        if not np.isfinite(f).all():
            raise InvalidParameterError(f"features of kernel {m} hold NaN or infinity.")
        if bw is not None:
            bw = np.broadcast_to(np.asarray(bw, dtype=np.float64), (f.shape[1],))
            if not (np.isfinite(bw).all() and (bw > 0).all()):
                raise InvalidParameterError(f"bandwidths of kernel {m} must be positive; got {bw!r}.")
            f = f / bw
        cols.append(f)
    dim_ptr = np.concatenate([[0], np.cumsum([c.shape[1] for c in cols])]).astype(np.int64)
    if isinstance(compat, str):
        if compat != "potts":
            raise InvalidParameterError(f"compat must be 'potts' or an (L, L) array; got {compat!r}.")
        mu = potts(L)
    else:
        mu = np.ascontiguousarray(compat, dtype=np.float64)
        if mu.shape != (L, L) or not np.isfinite(mu).all():
            raise InvalidParameterError(f"compat must be a finite ({L}, {L}) array; got shape {mu.shape}.")
        if not np.allclose(mu, mu.T, rtol=0, atol=1e-12):
            raise InvalidParameterError("compat must be symmetric: the energy sums mu(x_i, x_j) over pairs i < j.")
    return DenseCRF(unary, np.ascontiguousarray(np.concatenate(cols, axis=1)), dim_ptr, w, mu)


def energy(model: DenseCRF, x) -> float:
    """E(x) of a labelling ``x`` (N,), by the O(N^2) double sum (for tests and small problems)."""
    x = np.asarray(x)
    N = model.n_variables
    e = float(model.unary[np.arange(N), x].sum())
    K = _strength_matrix(model)
    mu = model.compat[x[:, None], x[None, :]]
    return e + float(np.triu(mu * K, k=1).sum())


def _strength_matrix(model: DenseCRF) -> np.ndarray:
    """K (N, N) with zero diagonal, in numpy (small N only)."""
    N = model.n_variables
    K = np.zeros((N, N))
    for m in range(model.weights.shape[0]):
        f = model.feats[:, model.dim_ptr[m]:model.dim_ptr[m + 1]]
        d2 = ((f[:, None, :] - f[None, :, :]) ** 2).sum(axis=2)
        K += model.weights[m] * np.exp(-0.5 * d2)
    np.fill_diagonal(K, 0.0)
    return K


# -- messages ----------------------------------------------------------------------------------------


class _Grid(NamedTuple):
    pos: np.ndarray  # (N, D) grid coordinates
    shape: tuple
    strides: np.ndarray
    sigma: float  # blur std in cells
    amplitude: float  # (sqrt(2 pi) / spacing)^D
    self_weight: np.ndarray  # (N,) the grid's k(f_i, f_i)


class MessagePlan(NamedTuple):
    """How messages are computed: ``method``, ``n_jobs`` and, for the grid, one :class:`_Grid` per kernel."""

    method: str
    n_jobs: int
    grids: tuple


def _tap(sigma: float, offset: int, truncate: float = 4.0) -> float:
    """gaussian_filter's normalised 1-D weight at ``offset`` cells for ``sigma`` (same truncation)."""
    radius = int(truncate * sigma + 0.5)
    k = np.arange(-radius, radius + 1)
    g = np.exp(-0.5 * (k / sigma) ** 2)
    return float(g[radius + offset] / g.sum()) if abs(offset) <= radius else 0.0


def message_plan(model: DenseCRF, method: str = "exact", *, spacing: float = 0.75, n_jobs: int = 1,
                 max_cells: int = 20_000_000) -> MessagePlan:
    """Prepare the message computation (the grids are built once per model).

    Raises
    ------
    InvalidParameterError
        For an unknown method, a spacing outside (0, sqrt(3)), or a grid with
        more than ``max_cells`` cells times labels (use a larger spacing or the
        exact method).
    """
    validate_params("message_plan", {"method": method, "spacing": spacing, "n_jobs": n_jobs},
                    {"method": [Options(("exact", "grid"))],
                     "spacing": [Interval("real", 0, math.sqrt(3), "neither")],
                     "n_jobs": [Interval("int", 1, None)]})
    if method == "exact":
        return MessagePlan("exact", n_jobs, ())
    grids = []
    L = model.n_labels
    var_blur = 1.0 / spacing**2 - 1.0 / 3.0
    sigma = math.sqrt(var_blur)
    for m in range(model.weights.shape[0]):
        f = model.feats[:, model.dim_ptr[m]:model.dim_ptr[m + 1]]
        D = f.shape[1]
        lo = f.min(axis=0)
        pos = (f - lo) / spacing
        shape = tuple(int(np.floor(p)) + 2 for p in pos.max(axis=0))
        n_cells = int(np.prod(shape, dtype=np.float64))
        if n_cells * L > max_cells:
            raise InvalidParameterError(
                f"the grid of kernel {m} would have {n_cells} cells x {L} labels > max_cells={max_cells}; "
                f"use a larger spacing (now {spacing}) or method='exact'."
            )
        strides = np.array([int(np.prod(shape[d + 1:])) for d in range(D)], dtype=np.int64)
        frac = pos - np.floor(pos)
        g0, g1 = _tap(sigma, 0), _tap(sigma, 1)
        amplitude = (math.sqrt(2 * math.pi) / spacing) ** D
        self_w = amplitude * np.prod(((1 - frac) ** 2 + frac**2) * g0 + 2 * frac * (1 - frac) * g1, axis=1)
        grids.append(_Grid(np.ascontiguousarray(pos), shape, strides, sigma, amplitude, self_w))
    return MessagePlan("grid", n_jobs, tuple(grids))


def messages(model: DenseCRF, Q: np.ndarray, plan: MessagePlan | None = None) -> np.ndarray:
    """msg (N, L): msg[i, l] = sum_{j != i} K(i, j) Q[j, l], exactly or by the plan's grid."""
    plan = plan or message_plan(model)
    N, L = Q.shape
    Q = np.ascontiguousarray(Q, dtype=np.float64)
    out = np.empty((N, L))
    if plan.method == "exact":
        bounds = np.linspace(0, N, min(plan.n_jobs, N) + 1).astype(int)
        run_blocks(lambda lo, hi: kd.exact_messages_rows(model.feats, model.dim_ptr, model.weights, Q, lo, hi, out),
                   [(int(bounds[b]), int(bounds[b + 1])) for b in range(len(bounds) - 1)])
        return out
    out[:] = 0.0
    part = np.empty((N, L))
    for w, g in zip(model.weights, plan.grids, strict=True):
        if w == 0.0:
            continue
        grid = np.zeros((int(np.prod(g.shape)), L))
        kd.splat(g.pos, Q, g.strides, grid)
        blurred = gaussian_filter(grid.reshape(*g.shape, L), sigma=(g.sigma,) * len(g.shape) + (0.0,),
                                  mode="constant", cval=0.0)
        kd.slice_grid(g.pos, g.strides, np.ascontiguousarray(blurred.reshape(-1, L)), part)
        out += w * (g.amplitude * part - g.self_weight[:, None] * Q)
    return out


def grid_error(model: DenseCRF, Q: np.ndarray, spacing: float = 0.75) -> float:
    """Relative RMS error of the grid messages against the exact ones: ||grid - exact|| / ||exact||."""
    exact = messages(model, Q, message_plan(model, "exact"))
    approx = messages(model, Q, message_plan(model, "grid", spacing=spacing))
    return float(np.linalg.norm(approx - exact) / np.linalg.norm(exact))


# -- the free energy and the update -------------------------------------------------------------------


def _softmax_neg(logits: np.ndarray) -> np.ndarray:
    z = logits - logits.max(axis=1, keepdims=True)
    np.exp(z, out=z)
    z /= z.sum(axis=1, keepdims=True)
    return z


def update(model: DenseCRF, msg: np.ndarray) -> np.ndarray:
    """The parallel mean-field update: Q_i(l) ∝ exp(-psi_u(i, l) - sum_l' mu(l, l') msg[i, l'])."""
    return _softmax_neg(-model.unary - msg @ model.compat.T)


def free_energy(model: DenseCRF, Q: np.ndarray, msg: np.ndarray | None = None) -> tuple[float, float, float]:
    """(F(Q), E_Q[E], H(Q)); F = E_Q[E] - H(Q) = KL(Q || P) - log Z. ``msg`` defaults to the exact messages."""
    if msg is None:
        msg = messages(model, Q)
    expected = float((Q * model.unary).sum() + 0.5 * (Q * (msg @ model.compat.T)).sum())
    with np.errstate(divide="ignore", invalid="ignore"):
        entropy = -float(np.where(Q > 0, Q * np.log(Q), 0.0).sum())
    return expected - entropy, expected, entropy


class MeanFieldState(NamedTuple):
    """``Q`` (N, L) the factors Q_i; ``msg`` (N, L) their messages (exact, or the plan's approximation)."""

    Q: np.ndarray
    msg: np.ndarray


class MeanFieldInfo(NamedTuple):
    """After an iteration: the free energy F(Q) = KL(Q || P) - log Z, E_Q[E], H(Q), the largest change of Q."""

    free_energy: float
    expected_energy: float
    entropy: float
    change: float


def init(model: DenseCRF, plan: MessagePlan, Q0: np.ndarray | None = None) -> MeanFieldState:
    """Start from the unary-only distribution Q_i ∝ exp(-psi_u(i)) (K&K Algorithm 1), or from ``Q0``."""
    Q = _softmax_neg(-model.unary) if Q0 is None else np.array(Q0, dtype=np.float64)
    return MeanFieldState(Q, messages(model, Q, plan))


def build_kernel(schedule: str = "parallel"):
    """``kernel(rng, state, plan, model) -> (state, info)``, one iteration; ``rng`` is unused (deterministic).

    ``"parallel"``: every Q_i from the same messages, then new messages.
    ``"sequential"``: one sweep over i = 0..N-1 with exact messages kept current
    (requires ``plan.method == "exact"``); Q and msg are updated in place.
    """
    validate_params("build_kernel", {"schedule": schedule}, {"schedule": [Options(("parallel", "sequential"))]})

    def parallel(rng, state, plan, model):
        Q = update(model, state.msg)
        change = float(np.abs(Q - state.Q).max())
        msg = messages(model, Q, plan)
        return MeanFieldState(Q, msg), MeanFieldInfo(*free_energy(model, Q, msg), change)

    def sequential(rng, state, plan, model):
        if plan.method != "exact":
            raise InvalidParameterError("the sequential schedule needs method='exact' (its messages are updated "
                                        "one variable at a time).")
        order = np.arange(model.n_variables, dtype=np.int64)
        change = kd.sequential_sweep(model.feats, model.dim_ptr, model.weights, model.unary, model.compat, order,
                                     state.Q, state.msg, np.empty(model.n_labels))
        return state, MeanFieldInfo(*free_energy(model, state.Q, state.msg), float(change))

    return parallel if schedule == "parallel" else sequential


class MeanFieldResult(NamedTuple):
    """``Q`` (N, L); ``trace`` with ``iteration`` (0 = the start), ``free_energy``, ``expected_energy``,
    ``entropy``, ``change``; ``converged``: the largest change of Q fell below ``tol``."""

    Q: np.ndarray
    trace: dict
    converged: bool


def mean_field(model: DenseCRF, n_iter: int = 10, *, method: str = "exact", schedule: str = "parallel",
               tol: float = 0.0, spacing: float = 0.75, n_jobs: int = 1, Q0=None) -> MeanFieldResult:
    """Run mean field for at most ``n_iter`` iterations (sweeps); stop once no Q_i(l) moves by more than ``tol``.

    The trace holds F(Q) and E_Q[E] of the start and after every iteration: the
    convergence curve of K&K's Fig. 2 (the KL divergence up to the constant log Z).
    With ``method="grid"`` they are computed from the approximate messages.
    """
    validate_params("mean_field", {"n_iter": n_iter, "tol": tol},
                    {"n_iter": [Interval("int", 0, None)], "tol": [Interval("real", 0, None, "left")]})
    plan = message_plan(model, method, spacing=spacing, n_jobs=n_jobs)
    kernel = build_kernel(schedule)
    state = init(model, plan, Q0)
    f0 = free_energy(model, state.Q, state.msg)
    trace = {"iteration": [0], "free_energy": [f0[0]], "expected_energy": [f0[1]], "entropy": [f0[2]],
             "change": [float("nan")]}
    converged = [False]

    def record(it, state, info):
        trace["iteration"].append(it)
        for k in ("free_energy", "expected_energy", "entropy", "change"):
            trace[k].append(getattr(info, k))
        if info.change <= tol:
            converged[0] = True
            return True
        return None

    state, _ = run(None, kernel, state, plan, model, n_iter, callback=record)
    return MeanFieldResult(state.Q, trace, converged[0])
