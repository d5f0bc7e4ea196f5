"""Shared pieces of the compiled MCMC chains: user-function signatures, lazy compilation, stats layout.

A user log density is a numba-jitted function ``logdensity(x, *data) -> float`` (or
``value_and_grad(x, *data) -> (float, ndarray)``) where ``x`` is a 1-d C-contiguous float64
array. The chain loops take it as a *first-class function* argument (``numba.types.FunctionType``)
rather than as a dispatcher type: the loop is then compiled once per data signature and cached on
disk, and each new user function only compiles itself (about 0.1-1 s), not the whole loop again.
Compilation is lazy (first use), so importing harmonium compiles nothing.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import njit, types

ARRAY_1D = types.Array(types.float64, 1, "C")
GENERATOR = types.NumPyRandomGeneratorType("NumPyRandomGeneratorType")

# Per-draw statistics, one row of a (n_draws, N_STATS) float64 array.
STAT_NAMES = (
    "acceptance_prob",  # MH acceptance probability (NUTS: mean over the trajectory)
    "is_accepted",  # 1.0 when the proposal was taken
    "is_divergent",  # 1.0 when the energy error exceeded the divergence threshold
    "energy",  # Hamiltonian of the new state (NaN for kernels without momentum)
    "n_steps",  # gradient evaluations (leapfrog steps) in this transition
    "tree_depth",  # NUTS tree depth (NaN elsewhere)
    "logdensity",  # log density of the new state
    "step_size",  # step size (or proposal scale) used
)
ACCEPT, ACCEPTED, DIVERGENT, ENERGY, N_STEPS, DEPTH, LOGDENSITY, STEP = range(len(STAT_NAMES))
N_STATS = len(STAT_NAMES)
DIVERGENCE = 1000.0  # energy error that marks a divergent transition (Stan, NumPyro, BlackJAX)


def data_types(data: tuple) -> tuple:
    """numba types of the extra arguments ``data`` (arrays must already be C-contiguous and writable)."""
    return tuple(numba.typeof(a) for a in data)


def logdensity_signature(dtypes: tuple):
    """``float64(float64[::1], *data)``."""
    return types.float64(ARRAY_1D, *dtypes)


def value_and_grad_signature(dtypes: tuple):
    """``Tuple(float64, float64[::1])(float64[::1], *data)``."""
    return types.Tuple((types.float64, ARRAY_1D))(ARRAY_1D, *dtypes)


def grad_signature(dtypes: tuple):
    """``float64[::1](float64[::1], *data)``."""
    return ARRAY_1D(ARRAY_1D, *dtypes)


def chain_signature(fn_signature, dtypes: tuple, tuning: tuple):
    """Signature of a whole chain of the kernel registry (``harmonium.inference.mcmc.sample.KERNELS``).

    Every chain takes ``(rng, fn, data, x0, kind, n_warmup, n_draws, *tuning, in_window, window_end,
    inverse_mass, draws, stats, out)`` and returns an int64 status; ``fn`` is the user's function of
    signature ``fn_signature`` (first-class), ``tuning`` the numba types of the family's tuning.
    """
    i8 = types.Array(types.int8, 1, "C")
    f2 = types.Array(types.float64, 2, "C")
    return types.int64(GENERATOR, types.FunctionType(fn_signature), types.Tuple(dtypes), ARRAY_1D, types.int64,
                       types.int64, types.int64, *tuning, i8, i8, ARRAY_1D, f2, f2, ARRAY_1D)


@njit(cache=True, nogil=True)
def fill_stats(stats, accept_prob, accepted, divergent, energy, n_steps, depth, lp, step_size):
    """One row of per-draw statistics (layout :data:`STAT_NAMES`)."""
    stats[ACCEPT] = accept_prob
    stats[ACCEPTED] = 1.0 if accepted else 0.0
    stats[DIVERGENT] = 1.0 if divergent else 0.0
    stats[ENERGY] = energy
    stats[N_STEPS] = n_steps
    stats[DEPTH] = depth
    stats[LOGDENSITY] = lp
    stats[STEP] = step_size


class LazyKernel:
    """A compiled loop built on first use for each signature that ``signature(key)`` returns.

    ``kernel.get(key)`` is the dispatcher compiled for that signature (explicit signature, so a
    user function passed as argument is converted to a first-class function, never a new
    specialisation); ``cache=True`` keeps each signature on disk across sessions. With
    NUMBA_DISABLE_JIT=1 ``get`` returns the plain Python function.
    """

    def __init__(self, py_func, signature):
        self.py_func = py_func
        self._signature = signature
        self._compiled: dict = {}

    def get(self, key):
        fn = self._compiled.get(key)
        if fn is None:
            fn = njit(self._signature(key), cache=True, nogil=True)(self.py_func)
            self._compiled[key] = fn
        return fn


def _with_arity(template: str, n_data: int, env: dict):
    """A jitted function from ``template`` with ``n_data`` explicit data arguments.

    numba compiles a function for an explicit signature only when its arity is fixed, so the
    wrappers below are generated for the number of data arguments instead of using ``*data``.
    """
    args = "".join(f", a{i}" for i in range(n_data))
    namespace = dict(env)
    exec(template.format(args=args), namespace)  # noqa: S102 - fixed template, no user text
    return njit(nogil=True)(namespace["wrapper"])


_WRAPPERS: dict = {}  # (kind, user functions..., n_data) -> generated wrapper; the user functions stay referenced


def _cached(key, make):
    fn = _WRAPPERS.get(key)
    if fn is None:
        if len(_WRAPPERS) >= 64:
            _WRAPPERS.clear()
        fn = _WRAPPERS[key] = make()
    return fn


def fuse_value_and_grad(logdensity, grad, n_data: int):
    """A jitted ``value_and_grad(x, *data)`` calling the jitted ``logdensity`` and ``grad``.

    Cached per (logdensity, grad, n_data), so repeated runs on the same functions compile once.
    """
    template = "def wrapper(x{args}):\n    return logdensity(x{args}), grad(x{args})\n"
    return _cached(("vg", logdensity, grad, n_data),
                   lambda: _with_arity(template, n_data, {"logdensity": logdensity, "grad": grad}))


def value_of(value_and_grad, n_data: int):
    """A jitted ``logdensity(x, *data)`` taking the value of the jitted ``value_and_grad`` (cached likewise)."""
    template = "def wrapper(x{args}):\n    return value_and_grad(x{args})[0]\n"
    return _cached(("value", value_and_grad, n_data),
                   lambda: _with_arity(template, n_data, {"value_and_grad": value_and_grad}))


# -- small compiled helpers shared by the chains -------------------------------------------------
@njit(cache=True, nogil=True)
def logaddexp(a, b):
    if a == -np.inf:
        return b
    if b == -np.inf:
        return a
    m = max(a, b)
    return m + math.log(math.exp(a - m) + math.exp(b - m))


@njit(cache=True, nogil=True)
def copy_into(dst, src):
    for j in range(src.shape[0]):
        dst[j] = src[j]


@njit(cache=True, nogil=True)
def popcount(n):
    c = 0
    while n > 0:
        c += n & 1
        n >>= 1
    return c


@njit(cache=True, nogil=True)
def trailing_ones(n):
    c = 0
    while n & 1:
        c += 1
        n >>= 1
    return c
