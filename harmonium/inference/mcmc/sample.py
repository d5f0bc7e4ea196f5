"""Several chains of any sampler on any log density: :func:`sample` (and :func:`sample_sgld`).

The log density is either a numpy callable or a numba-jitted function. Every kernel is one row of
the registry :data:`KERNELS`, which names its two chains, taking the same arguments: the compiled
one (``harmonium._kernels.mcmc_gradient`` / ``mcmc_rwmh``), run when every function given is
``numba.njit``-ed, and the numpy one (:mod:`harmonium.inference.mcmc.warmup`), run otherwise.
One runner (:func:`_run_chains`) calls either, warm-up included; compiled chains release the GIL, so
``n_jobs > 1`` runs chains on threads. Both draw the same random numbers: with the same seed they
give the same chains (up to floating-point rounding). :func:`sample_sgld` calls
:func:`harmonium.inference.mcmc.sgld.chain` or its compiled twin ``mcmc_sgld.sgld_chain`` alike.

Conventions for the user's functions:

* numpy callables get the position with the shape of ``init_position``:
  ``logdensity(x, *data) -> float``, ``grad(x, *data) -> array like x``,
  ``value_and_grad(x, *data) -> (float, array)``;
* jitted functions always get a flat 1-d C-contiguous float64 vector (reshape inside if needed)
  and return a float64 (and a 1-d float64 array); ``data`` is a tuple of numpy arrays or numbers,
  passed through unchanged (so large data are arguments, not compile-time constants).

Chain c uses child stream c of ``rng`` (``harmonium.parallel.seeds.spawn``): the same seed gives
the same draws, whatever ``n_jobs``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from harmonium._kernels import mcmc_adapt, mcmc_common, mcmc_gradient, mcmc_rwmh, mcmc_sgld
from harmonium._kernels.mcmc_common import LazyKernel
from harmonium._validation import Interval, Options, validate_params
from harmonium.errors import InvalidParameterError
from harmonium.inference.mcmc import gibbs, rwmh, sgld, warmup
from harmonium.parallel.seeds import check_random_state, spawn

OWNER = "sample"


@dataclass(frozen=True)
class KernelSpec:
    """One row of :data:`KERNELS`: the chains that run a kernel, and its defaults.

    family : what the chain loop takes, which fixes the tuning arguments :func:`sample` passes:
        "gradient" (step size, leapfrog steps, trajectory length, tree depth, target, adapt_step),
        "random_walk" (scale, target, adapt_scale) or "gibbs" (the sweep over the conditionals).
    kind : the kind id the chain loop dispatches on (``mcmc_gradient.HMC``, ``mcmc_rwmh.RWMH``...).
    target_accept : default acceptance target of the warm-up (None: 0.234, or 0.44 in one dimension;
        NaN where nothing is adapted toward an acceptance rate).
    adapt_mass : default of ``adapt_mass`` (the diagonal mass / proposal sd from the slow windows).
    needs : arguments that have no default for this kernel (beyond ``logdensity`` and ``init_position``);
        "grad" (``grad`` or ``value_and_grad``) makes the chains take ``value_and_grad``.
    exact : True when the kept draws come from a pi-invariant kernel; False for a sampler biased by
        construction (ULA: its stationary law is that of the Euler discretisation, see
        :mod:`harmonium.inference.mcmc.langevin`).
    numpy_chain : the chain on numpy callables, e.g. :func:`harmonium.inference.mcmc.warmup.gradient_chain`.
    compiled_chain : its compiled twin (a ``mcmc_common.LazyKernel`` taking the same arguments), or
        None where the kernel runs Python callables only (Gibbs' conditionals).
    adapt_step : False when the step size is the user's and never adapted (ULA); such a kernel also
        refuses ``adapt_mass=True`` (see :func:`sample`'s Notes).
    default_step : the first random-walk scale from the dimension d (gradient kernels: None, the
        heuristic of Hoffman & Gelman's Algorithm 4).
    """

    family: str
    kind: int | None
    target_accept: float | None
    adapt_mass: bool
    needs: tuple
    exact: bool
    numpy_chain: Callable
    compiled_chain: LazyKernel | None
    adapt_step: bool = True
    default_step: Callable[[int], float] | None = None

    @property
    def needs_gradient(self) -> bool:
        return "grad" in self.needs


def _unit_scale(d: int) -> float:
    return 1.0


_GRAD = mcmc_gradient.gradient_chain
# The registry: the runner, the validation, the parity tests (tests/kernels/test_mcmc_parity.py) and the
# test matrix (tests/statistical/test_samplers_defaults.py) read the kernel names and chains from here.
KERNELS: dict[str, KernelSpec] = {
    "nuts": KernelSpec("gradient", mcmc_gradient.NUTS, 0.8, True, ("grad",), True, warmup.gradient_chain, _GRAD),
    "hmc": KernelSpec("gradient", mcmc_gradient.HMC, 0.8, True, ("grad",), True, warmup.gradient_chain, _GRAD),
    "mala": KernelSpec("gradient", mcmc_gradient.MALA, 0.574, True, ("grad",), True, warmup.gradient_chain, _GRAD),
    # ULA: fixed step, no MH correction. Its mass is not adapted by default (see ``sample``'s notes).
    "ula": KernelSpec("gradient", mcmc_gradient.ULA, math.nan, False, ("grad", "step_size"), False,
                      warmup.gradient_chain, _GRAD, adapt_step=False),
    "rwmh": KernelSpec("random_walk", mcmc_rwmh.RWMH, None, True, (), True, warmup.rw_chain, mcmc_rwmh.rw_chain,
                       default_step=rwmh.default_scale),
    # MWG adapts one scale per coordinate (adapt_step_size); it has no joint proposal sd to adapt.
    "mwg": KernelSpec("random_walk", mcmc_rwmh.MWG, 0.44, False, (), True, warmup.rw_chain, mcmc_rwmh.rw_chain,
                      default_step=_unit_scale),
    "gibbs": KernelSpec("gibbs", None, math.nan, False, ("conditionals",), True, warmup.gibbs_chain, None),
}


class SampleResult(NamedTuple):
    """Draws of several chains and how they were made.

    draws : (n_chains, n_draws, *param_shape) kept draws (warm-up excluded).
    stats : per-draw sampler statistics, each (n_chains, n_draws): ``acceptance_prob``,
        ``is_accepted``, ``is_divergent``, ``energy``, ``n_steps``, ``tree_depth``, ``logdensity``,
        ``step_size`` (NaN where a kernel has no such quantity).
    step_size : (n_chains,) adapted step size (HMC, NUTS, MALA, ULA) or random-walk scale (RWMH).
    inverse_mass : (n_chains, d) adapted diagonal inverse mass (gradient kernels), proposal sd
        (RWMH) or per-coordinate scales (MWG); NaN for Gibbs.
    compile_s : seconds spent compiling or loading compiled code (0 for numpy callables).
    sample_s : wall seconds of the chains, warm-up included, compilation excluded.
    """

    draws: np.ndarray
    stats: dict
    step_size: np.ndarray
    inverse_mass: np.ndarray
    kernel: str
    backend: str
    n_warmup: int
    compile_s: float
    sample_s: float


# -- validation helpers -----------------------------------------------------------------------------
def _is_jitted(fn) -> bool:
    from numba.extending import is_jitted

    return fn is not None and is_jitted(fn)


def _check_callable(name, fn, owner=OWNER):
    if fn is not None and not callable(fn):
        raise InvalidParameterError(f"The {name!r} parameter of {owner} must be a callable or None. Got {fn!r}.")


def _compiled_data(data, owner=OWNER):
    out = []
    for k, a in enumerate(data):
        if isinstance(a, np.ndarray):
            if a.dtype.kind not in "biuf":
                raise InvalidParameterError(
                    f"data[{k}] passed to {owner} must be a numeric numpy array or a number for a jitted log "
                    f"density. Got an array of dtype {a.dtype}."
                )
            a = np.require(a, requirements=["C", "W"])
            if a.dtype == np.bool_:
                a = a.astype(np.int8)
        elif isinstance(a, bool) or not isinstance(a, int | float | np.integer | np.floating):
            raise InvalidParameterError(
                f"data[{k}] passed to {owner} must be a numeric numpy array or a number for a jitted log "
                f"density. Got {type(a).__name__}."
            )
        out.append(a)
    return tuple(out)


def _compile_user(fn, sig, name, owner=OWNER):
    """Compile the jitted ``fn`` for ``sig`` now, so that a typing problem is reported in our words."""
    from numba.core.errors import NumbaError

    try:
        fn.compile(sig)
    except RuntimeError as exc:  # "compilation disabled": jitted with explicit, non-matching signatures
        raise InvalidParameterError(
            f"The {name!r} parameter of {owner} was jitted with explicit signatures that do not include "
            f"{sig}; decorate it with a plain @numba.njit (or add that signature)."
        ) from exc
    except (NumbaError, TypeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InvalidParameterError(
            f"The {name!r} parameter of {owner} must be a numba function of a 1-d float64 array (and data) "
            f"returning {sig.return_type}; numba could not compile it: {first}"
        ) from exc


def _check_value(lp, where, owner=OWNER):
    try:
        lp = float(lp)
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError(f"The log density given to {owner} must return a float. Got {lp!r} {where}.") \
            from exc
    if not math.isfinite(lp):
        raise InvalidParameterError(
            f"The log density given to {owner} must be finite at the initial position. Got {lp} {where}; "
            f"start the chains inside the support."
        )
    return lp


def _check_grad(g, shape, where, owner=OWNER):
    g = np.asarray(g, dtype=np.float64)
    if g.shape != shape:
        raise InvalidParameterError(
            f"The gradient given to {owner} must have the shape of the position {shape}. Got {g.shape} {where}."
        )
    if not np.all(np.isfinite(g)):
        raise InvalidParameterError(f"The gradient given to {owner} must be finite at the initial position {where}.")


# -- the runner ---------------------------------------------------------------------------------------
def sample(rng, logdensity: Callable | None, init_position, *, kernel: str = "nuts", n_chains: int = 4,
           n_warmup: int = 1000, n_draws: int = 1000, grad: Callable | None = None,
           value_and_grad: Callable | None = None, data: tuple = (), step_size: float | None = None,
           target_accept: float | None = None, n_steps: int | None = None, trajectory_length: float | None = None,
           max_tree_depth: int = 10, adapt_step_size: bool = True, adapt_mass: bool | None = None, inverse_mass=None,
           init_jitter: float = 0.0, init_per_chain: bool = False, conditionals: Sequence | None = None,
           blocks: Sequence | None = None, n_jobs: int = 1, backend: str = "auto") -> SampleResult:
    """Run ``n_chains`` chains of ``kernel`` on ``logdensity``; return a :class:`SampleResult`.

    Parameters
    ----------
    rng : int, numpy Generator or None
        Source of the chains' child streams.
    logdensity : callable or None
        log pi(x, *data) up to a constant (None if ``value_and_grad`` is given, or for Gibbs).
    init_position : array
        Starting position (its shape is the parameter shape), or one per chain along axis 0 when
        ``init_per_chain``. ``init_jitter > 0`` adds Uniform(-init_jitter, init_jitter) noise
        (drawn from each chain's stream).
    kernel : str
        A name of the registry :data:`KERNELS` (which also holds each kernel's defaults): <KERNELS>.
        "mwg" is componentwise Metropolis within Gibbs; "gibbs" needs ``conditionals``: a list of
        ``draw(rng, x) -> new values of x[blocks[j]]`` (blocks default to one per coordinate).
    n_warmup, n_draws : int
        Adaptive warm-up iterations (discarded) and kept draws per chain.
    grad, value_and_grad : callable, optional
        Gradient of the log density; required by the gradient kernels (hmc, nuts, mala, ula).
    data : tuple
        Extra arguments passed to every user function after the position.
    step_size : float, optional
        Initial step size (or random-walk scale); the heuristic of Hoffman & Gelman's Algorithm 4
        when None. Required by "ula", whose step size is never adapted: ULA has no acceptance
        statistic to adapt it toward, and its step sets its bias (see Notes), so it is the user's
        explicit choice.
    target_accept : float, optional
        Acceptance rate that warm-up aims at: 0.8 (hmc, nuts), 0.574 (mala), 0.234 (rwmh; 0.44 in
        one dimension), 0.44 (mwg).
    n_steps, trajectory_length : optional
        HMC leapfrog steps, or the integration time from which they follow (floor(L / eps));
        default trajectory length pi / 2 (a quarter period of a unit-variance Gaussian).
    max_tree_depth : int
        NUTS: at most 2^max_tree_depth leapfrog steps a transition.
    adapt_step_size : bool
        Warm-up adaptation of the step size (random-walk scale; MWG's per-coordinate scales).
    adapt_mass : bool or None
        Warm-up adaptation of the diagonal mass (RWMH: proposal sd) from Stan's slow windows.
        None (default) takes the kernel's default in :data:`KERNELS`: True for nuts, hmc, mala and
        rwmh; False for ula (True is refused, see Notes); mwg and gibbs have no mass.
    inverse_mass : array, optional
        Initial diagonal inverse mass (gradient kernels) or proposal sd / scales (rwmh, mwg).
    n_jobs : int
        Threads running chains at once (compiled chains release the GIL).
    backend : {"auto", "numpy"}
        "auto" compiles when every function is jitted; "numpy" always runs the Python kernels.

    Notes
    -----
    Every kernel's default arguments are the path the test matrix
    ``tests/statistical/test_samplers_defaults.py`` runs against exact targets.

    ULA is biased by construction: its kept draws follow the stationary law of the Euler
    discretisation, not pi (for a Gaussian target with precision P and diagonal inverse mass D,
    x' = x - h D P x + sqrt(2 h) D^1/2 xi with h = eps^2 / 2, whose stationary covariance S solves
    S = A S A^T + 2 h D, A = I - h D P: O(eps^2) away from P^-1). Warm-up mass adaptation is not
    offered for ULA. With the step fixed, the adapted inverse mass multiplies the effective step:
    a short slow window of a slowly mixing chain underestimates the variance, the smaller inverse
    mass slows the chain further, and the next window underestimates more (on the equicorrelated
    2-d Gaussian, rho = 0.9, eps = 0.3, 1000 warm-up iterations, the four chains ended with inverse
    masses 0.02-0.45 and pooled variances 0.76, against ULA's own 1.03). The gradient MH kernels
    escape this loop because their step size is re-found after each window; ULA's step is the bias
    the user chose, so it cannot be re-tuned silently. Pass ``inverse_mass`` (e.g. posterior
    variance estimates) instead.
    """
    validate_params(OWNER, {
        "kernel": kernel, "n_chains": n_chains, "n_warmup": n_warmup, "n_draws": n_draws,
        "max_tree_depth": max_tree_depth, "init_jitter": init_jitter, "n_jobs": n_jobs, "backend": backend,
    }, {
        "kernel": [Options(tuple(KERNELS))], "n_chains": [Interval("int", 1)], "n_warmup": [Interval("int", 0)],
        "n_draws": [Interval("int", 1)], "max_tree_depth": [Interval("int", 1, 30)],
        "init_jitter": [Interval("real", 0)], "n_jobs": [Interval("int", 1)], "backend": [Options(("auto", "numpy"))],
    })
    for name, value, lo, hi in (("step_size", step_size, 0, None), ("trajectory_length", trajectory_length, 0, None),
                                ("target_accept", target_accept, 0, 1)):
        if value is not None and not Interval("real", lo, hi, "neither").accepts(value):
            bound = f"> {lo}" + (f" and < {hi}" if hi is not None else "")
            raise InvalidParameterError(f"The {name!r} parameter of {OWNER} must be a finite float {bound} or None. "
                                        f"Got {value!r}.")
    if n_steps is not None and not Interval("int", 1).accepts(n_steps):
        raise InvalidParameterError(f"The 'n_steps' parameter of {OWNER} must be an int >= 1 or None. Got {n_steps!r}.")
    for name, fn in (("logdensity", logdensity), ("grad", grad), ("value_and_grad", value_and_grad)):
        _check_callable(name, fn)
    if not isinstance(data, tuple):
        raise InvalidParameterError(f"The 'data' parameter of {OWNER} must be a tuple. Got {type(data).__name__}.")
    if adapt_mass is not None and not isinstance(adapt_mass, bool | np.bool_):
        raise InvalidParameterError(f"The 'adapt_mass' parameter of {OWNER} must be a bool or None. "
                                    f"Got {adapt_mass!r}.")
    spec = KERNELS[kernel]
    if adapt_mass is None:
        adapt_mass = spec.adapt_mass
    elif adapt_mass and not spec.adapt_step:
        raise InvalidParameterError(
            f"The 'adapt_mass' parameter of {OWNER} must be False or None for kernel={kernel!r}. Got True: with its "
            f"fixed step an adapted mass feeds back on itself and shrinks toward 0 (biased draws); pass "
            f"'inverse_mass' instead, or use an MH-corrected kernel such as kernel='mala'."
        )
    given = {"grad": grad if grad is not None else value_and_grad, "step_size": step_size,
             "conditionals": conditionals if conditionals else None}
    for name in spec.needs:
        if given[name] is None:
            got = conditionals if name == "conditionals" else None
            raise InvalidParameterError(_NEEDS_MESSAGE[name].format(owner=OWNER, kernel=kernel, got=got))
    if spec.family != "gibbs" and logdensity is None and value_and_grad is None:
        raise InvalidParameterError(f"{OWNER} needs 'logdensity' or 'value_and_grad'. Got neither.")
    rng, _ = check_random_state(rng, OWNER)
    x0 = _initial_positions(init_position, n_chains, init_per_chain, None if spec.family == "gibbs" else np.float64)
    param_shape = x0.shape[1:]
    d = int(np.prod(param_shape, dtype=np.int64))
    if d == 0:
        raise InvalidParameterError(f"The 'init_position' parameter of {OWNER} must have at least one element.")
    functions = (logdensity, grad, value_and_grad)
    compiled = (spec.compiled_chain is not None and backend == "auto"
                and all(_is_jitted(f) for f in functions if f is not None))
    child = spawn(rng, n_chains)
    if init_jitter > 0 and spec.family != "gibbs":
        x0 = np.stack([x0[c] + child[c].uniform(-init_jitter, init_jitter, size=param_shape) for c in range(n_chains)])

    target = float(target_accept if target_accept is not None else (
        spec.target_accept if spec.target_accept is not None else rwmh.default_target(d)))
    if spec.family == "gibbs":
        _check_blocks(conditionals, blocks, x0)
        tuning = (gibbs.build_kernel(conditionals, blocks),)
        mass = np.full(1, np.nan)
    else:
        mass = np.ones(d) if inverse_mass is None else np.array(inverse_mass, dtype=np.float64).reshape(-1)
        if mass.shape != (d,) or not np.all(np.isfinite(mass)) or np.any(mass <= 0):
            raise InvalidParameterError(f"The 'inverse_mass' parameter of {OWNER} must hold {d} finite values > 0.")
        adapt_step = bool(adapt_step_size) and spec.adapt_step
        if spec.family == "gradient":
            tuning = (-1.0 if step_size is None else float(step_size), 10 if n_steps is None else int(n_steps),
                      0.0 if n_steps is not None else float(trajectory_length or math.pi / 2), int(max_tree_depth),
                      target, adapt_step)
        else:
            tuning = (float(step_size) if step_size is not None else float(spec.default_step(d)), target, adapt_step)
    return _run_chains(spec, kernel, compiled, child, x0, functions, data, n_warmup, n_draws, tuning,
                       bool(adapt_mass), mass, n_jobs)



if sample.__doc__:  # the kernel names of the docstring are the registry's
    sample.__doc__ = sample.__doc__.replace("<KERNELS>", ", ".join(f'"{k}"' for k in KERNELS))

_NEEDS_MESSAGE = {
    "grad": "The kernel {kernel!r} of {owner} uses the gradient of the log density: pass 'grad' or 'value_and_grad', "
            "or choose kernel='rwmh' or 'mwg'.",
    "step_size": "The 'step_size' parameter of {owner} must be given for kernel={kernel!r} (its step size is not "
                 "adapted). Got None.",
    "conditionals": "kernel={kernel!r} of {owner} needs 'conditionals': a list of draw(rng, x) -> new values of "
                    "block j. Got {got!r}.",
}


def _check_blocks(conditionals, blocks, x0):
    if blocks is None and x0[0].ndim == 1 and len(conditionals) != x0.shape[1]:
        raise InvalidParameterError(
            f"{OWNER} got {len(conditionals)} conditionals for a position of {x0.shape[1]} coordinates; pass "
            f"'blocks' (one index per conditional) or one conditional per coordinate."
        )


def _initial_positions(init_position, n_chains, init_per_chain, dtype=np.float64):
    """(n_chains, *param_shape) starting positions; ``dtype=None`` keeps the given dtype (Gibbs states)."""
    try:
        x = np.array(init_position, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError(f"The 'init_position' parameter of {OWNER} must be a numeric array. "
                                    f"Got {init_position!r}.") from exc
    if init_per_chain:
        if x.ndim == 0 or x.shape[0] != n_chains:
            raise InvalidParameterError(
                f"The 'init_position' parameter of {OWNER} must have n_chains={n_chains} rows when "
                f"init_per_chain=True. Got shape {x.shape}."
            )
    else:
        x = np.broadcast_to(x, (n_chains,) + x.shape).copy()
    if x.dtype.kind not in "biuf" or not np.all(np.isfinite(x)):
        raise InvalidParameterError(f"The 'init_position' parameter of {OWNER} must be finite.")
    return x


def _numpy_functions(logdensity, grad, value_and_grad, param_shape):
    """Flat-vector wrappers of the user's numpy callables: (logdensity, value_and_grad) taking 1-d x."""

    def lp(x, *data):
        return logdensity(x.reshape(param_shape), *data)

    def vg_from_parts(x, *data):
        xs = x.reshape(param_shape)
        return logdensity(xs, *data), np.asarray(grad(xs, *data), dtype=np.float64).reshape(-1)

    def vg_user(x, *data):
        v, g = value_and_grad(x.reshape(param_shape), *data)
        return v, np.asarray(g, dtype=np.float64).reshape(-1)

    vg = vg_user if value_and_grad is not None else (vg_from_parts if grad is not None else None)
    if logdensity is None and value_and_grad is None:  # Gibbs without a log density
        lp = None
    elif logdensity is None:
        def lp(x, *data):  # noqa: F811 - the value of value_and_grad
            return vg_user(x, *data)[0]
    return lp, vg


def _check_start(x0, lp, vg, data, need_grad):
    for c in range(x0.shape[0]):
        where = f"(chain {c})"
        x = x0[c].reshape(-1)
        if need_grad:
            v, g = vg(x.copy(), *data)
            _check_value(v, where)
            _check_grad(g, x.shape, where)
        else:
            _check_value(lp(x.copy(), *data), where)


def _map_chains(fn, n_chains, n_jobs):
    if n_jobs == 1 or n_chains == 1:
        return [fn(c) for c in range(n_chains)]
    with ThreadPoolExecutor(max_workers=min(n_jobs, n_chains)) as pool:
        return list(pool.map(fn, range(n_chains)))


def _jitted_functions(logdensity, grad, value_and_grad, data, need_grad):
    """The user's jitted functions compiled for the chain's signatures: (logdensity or None, value_and_grad or None)."""
    dtypes = mcmc_common.data_types(data)
    lp = vg = None
    if need_grad:
        if value_and_grad is not None:
            vg = value_and_grad
            _compile_user(vg, mcmc_common.value_and_grad_signature(dtypes), "value_and_grad")
        else:
            _compile_user(logdensity, mcmc_common.logdensity_signature(dtypes), "logdensity")
            _compile_user(grad, mcmc_common.grad_signature(dtypes), "grad")
            vg = mcmc_common.fuse_value_and_grad(logdensity, grad, len(data))
            _compile_user(vg, mcmc_common.value_and_grad_signature(dtypes), "value_and_grad")
    else:
        if logdensity is not None:
            lp = logdensity
        else:
            _compile_user(value_and_grad, mcmc_common.value_and_grad_signature(dtypes), "value_and_grad")
            lp = mcmc_common.value_of(value_and_grad, len(data))
        _compile_user(lp, mcmc_common.logdensity_signature(dtypes), "logdensity")
    return lp, vg, dtypes


def _run_chains(spec, kernel, compiled, child, x0, functions, data, n_warmup, n_draws, tuning, adapt_mass, mass,
                n_jobs):
    """The one chain runner: ``spec``'s compiled chain (all functions jitted) or its numpy chain, one per child stream.

    Both chains take ``(rng, fn, data, x0, kind, n_warmup, n_draws, *tuning, in_window, window_end,
    inverse_mass, draws, stats, out)`` with ``fn`` the log density, or ``value_and_grad`` for a kernel
    that needs the gradient; they write the kept draws, the statistics, the adapted inverse mass (or
    proposal sd / scales) and the final step size in place.
    """
    t0 = time.perf_counter()
    param_shape = x0.shape[1:]
    need_grad = spec.needs_gradient
    if compiled:
        data = _compiled_data(data)
        lp, vg, dtypes = _jitted_functions(*functions, data, need_grad)
        chain = spec.compiled_chain.get(dtypes)
    else:
        lp, vg = _numpy_functions(*functions, param_shape)
        chain = spec.numpy_chain
    compile_s = time.perf_counter() - t0 if compiled else 0.0
    fn = vg if need_grad else lp
    if fn is not None:
        _check_start(x0, lp, vg, data, need_grad)
    n_chains, d = x0.shape[0], x0[0].size
    draws = np.empty((n_chains, n_draws, d), dtype=x0.dtype)
    stats = np.empty((n_chains, n_draws, mcmc_common.N_STATS))
    masses = np.empty((n_chains, mass.shape[0]))
    steps = np.empty(n_chains)
    in_window, window_end = mcmc_adapt.window_schedule(n_warmup, adapt_mass)

    def one(c):
        masses[c] = mass
        out = np.empty(1)
        x = np.ascontiguousarray(x0[c].reshape(-1)) if compiled else x0[c]
        chain(child[c], fn, data, x, spec.kind, n_warmup, n_draws, *tuning, in_window, window_end, masses[c],
              draws[c], stats[c], out)
        steps[c] = out[0]

    t1 = time.perf_counter()
    _map_chains(one, n_chains, n_jobs)
    sample_s = time.perf_counter() - t1
    stats_dict = {name: np.ascontiguousarray(stats[:, :, k]) for k, name in enumerate(mcmc_common.STAT_NAMES)}
    return SampleResult(draws.reshape((n_chains, n_draws) + tuple(param_shape)), stats_dict, steps, masses, kernel,
                        "compiled" if compiled else "numpy", n_warmup, compile_s, sample_s)


# -- SGLD -----------------------------------------------------------------------------------------------
class SGLDResult(NamedTuple):
    """draws (n_chains, n_iter, d) after each update; step_size (n_iter,) the schedule eps_t."""

    draws: np.ndarray
    step_size: np.ndarray
    backend: str
    compile_s: float
    sample_s: float


def sample_sgld(rng, grad_log_prior: Callable, grad_log_likelihood: Callable, data, init_position, *, n_iter: int,
                batch_size: int, a: float, b: float = 1.0, gamma: float = 0.55, n_chains: int = 1,
                noise_scale: float = 1.0, backend: str = "auto") -> SGLDResult:
    """``n_chains`` SGLD runs of ``n_iter`` updates each (Welling & Teh 2011), eps_t = a (b + t)^-gamma.

    ``grad_log_likelihood(theta, x_i)`` is the gradient of one datum's log likelihood, ``x_i`` a
    row of the 2-d ``data``; ``grad_log_prior(theta)`` that of the log prior. Jitted functions run
    the whole chain compiled. Every update is returned (no warm-up is discarded).
    """
    owner = "sample_sgld"
    validate_params(owner, {"n_iter": n_iter, "batch_size": batch_size, "a": a, "b": b, "gamma": gamma,
                            "n_chains": n_chains, "noise_scale": noise_scale, "backend": backend},
                    {"n_iter": [Interval("int", 1)], "batch_size": [Interval("int", 1)],
                     "a": [Interval("real", 0, None, "neither")], "b": [Interval("real", 0, None, "neither")],
                     "gamma": [Interval("real", 0, 1)], "n_chains": [Interval("int", 1)],
                     "noise_scale": [Interval("real", 0)], "backend": [Options(("auto", "numpy"))]})
    for name, fn in (("grad_log_prior", grad_log_prior), ("grad_log_likelihood", grad_log_likelihood)):
        if not callable(fn):
            raise InvalidParameterError(f"The {name!r} parameter of {owner} must be a callable. Got {fn!r}.")
    x = np.ascontiguousarray(np.asarray(data, dtype=np.float64))
    if x.ndim == 1:
        x = x[:, None]
    if x.ndim != 2 or x.shape[0] == 0:
        raise InvalidParameterError(f"The 'data' parameter of {owner} must be a non-empty 2-d array (one row a "
                                    f"datum). Got shape {np.shape(data)}.")
    if batch_size > x.shape[0]:
        raise InvalidParameterError(f"The 'batch_size' parameter of {owner} must be <= the number of data rows "
                                    f"{x.shape[0]}. Got {batch_size}.")
    theta0 = np.array(init_position, dtype=np.float64).reshape(-1)
    if not np.all(np.isfinite(theta0)):
        raise InvalidParameterError(f"The 'init_position' parameter of {owner} must be finite.")
    g = np.asarray(grad_log_prior(theta0), dtype=np.float64)
    gi = np.asarray(grad_log_likelihood(theta0, x[0]), dtype=np.float64)
    for name, v in (("grad_log_prior", g), ("grad_log_likelihood", gi)):
        if v.shape != theta0.shape or not np.all(np.isfinite(v)):
            raise InvalidParameterError(f"The {name!r} of {owner} must return {theta0.shape[0]} finite values at the "
                                        f"initial position. Got shape {v.shape}.")
    rng, _ = check_random_state(rng, owner)
    child = spawn(rng, n_chains)
    d = theta0.shape[0]
    draws = np.empty((n_chains, n_iter, d))
    steps = np.empty(n_iter)
    compiled = backend == "auto" and _is_jitted(grad_log_prior) and _is_jitted(grad_log_likelihood)
    t0 = time.perf_counter()
    compile_s = 0.0
    if compiled:
        arr = mcmc_common.ARRAY_1D
        _compile_user(grad_log_prior, arr(arr), "grad_log_prior", owner)
        _compile_user(grad_log_likelihood, arr(arr, arr), "grad_log_likelihood", owner)
        chain = mcmc_sgld.sgld_chain.get(())
        compile_s = time.perf_counter() - t0
        t0 = time.perf_counter()
    else:
        chain = sgld.chain
    for c in range(n_chains):
        chain(child[c], grad_log_prior, grad_log_likelihood, x, theta0, n_iter, batch_size, float(a), float(b),
              float(gamma), 0, float(noise_scale), draws[c], steps)
    return SGLDResult(draws, steps, "compiled" if compiled else "numpy", compile_s, time.perf_counter() - t0)
