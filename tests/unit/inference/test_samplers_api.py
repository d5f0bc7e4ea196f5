"""The sampler runner (``inference.mcmc.sample``): shapes, reproducibility, both backends, input errors."""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from harmonium.errors import InvalidParameterError
from harmonium.inference.mcmc import gibbs, hmc, langevin, rwmh, sgld
from harmonium.inference.mcmc.sample import KERNELS, sample, sample_sgld


@njit
def lp(x):
    return -0.5 * np.sum(x * x)


@njit
def grad(x):
    return -x


@njit
def vg(x):
    return -0.5 * np.sum(x * x), -x


@njit
def lp_data(x, mu, scale):
    r = (x - mu) / scale
    return -0.5 * np.sum(r * r)


@njit
def grad_data(x, mu, scale):
    return -(x - mu) / (scale * scale)


def lp_np(x, mu, scale):
    r = (x - mu) / scale
    return -0.5 * float(np.sum(r * r))


def grad_np(x, mu, scale):
    return -(x - mu) / (scale * scale)


SHORT = dict(n_chains=2, n_warmup=60, n_draws=40)
# the registry's rows that compile (and so have two backends), and those of them with every default
COMPILED = [k for k, s in KERNELS.items() if s.compiled_chain is not None]
COMPILED_DEFAULTS = [k for k in COMPILED if set(KERNELS[k].needs) <= {"grad"}]


@pytest.mark.parametrize("kernel", COMPILED_DEFAULTS)
def test_same_seed_same_draws_whatever_n_jobs(kernel):
    a = sample(7, lp, np.zeros(3), grad=grad, kernel=kernel, **SHORT)
    b = sample(7, lp, np.zeros(3), grad=grad, kernel=kernel, n_jobs=2, **SHORT)
    c = sample(8, lp, np.zeros(3), grad=grad, kernel=kernel, **SHORT)
    assert a.backend == "compiled"
    np.testing.assert_array_equal(a.draws, b.draws)
    assert not np.array_equal(a.draws, c.draws)
    assert a.draws.shape == (2, 40, 3)
    assert set(a.stats) >= {"acceptance_prob", "is_divergent", "energy", "n_steps", "logdensity", "step_size"}
    assert all(v.shape == (2, 40) for v in a.stats.values())
    np.testing.assert_allclose(a.stats["logdensity"], -0.5 * (a.draws ** 2).sum(axis=2), rtol=1e-12)


@pytest.mark.parametrize("kernel", COMPILED)
def test_numpy_and_compiled_backends_agree_with_data_and_fixed_tuning(kernel):
    data = (np.array([1.0, -2.0]), np.array([0.5, 2.0]))
    kw = dict(kernel=kernel, data=data, step_size=0.3, adapt_step_size=False, adapt_mass=False, n_chains=2,
              n_warmup=5, n_draws=30, n_steps=4)
    if not KERNELS[kernel].needs_gradient:
        kw.pop("n_steps")
    a = sample(3, lp_data, np.zeros(2), grad=grad_data, **kw)
    b = sample(3, lp_np, np.zeros(2), grad=grad_np, **kw)
    assert (a.backend, b.backend) == ("compiled", "numpy")
    np.testing.assert_allclose(a.draws, b.draws, rtol=1e-9, atol=1e-12)


def test_numpy_callables_keep_the_parameter_shape():
    seen = []

    def logp(x):
        seen.append(x.shape)
        return -0.5 * float(np.sum(x * x))

    res = sample(0, logp, np.zeros((2, 3)), grad=lambda x: -x, kernel="mala", n_chains=2, n_warmup=10, n_draws=5)
    assert res.backend == "numpy"
    assert res.draws.shape == (2, 5, 2, 3)
    assert set(seen) == {(2, 3)}


def test_value_and_grad_alone_serves_every_kernel():
    for kernel in ("nuts", "rwmh"):
        res = sample(1, None, np.zeros(2), value_and_grad=vg, kernel=kernel, **SHORT)
        assert res.backend == "compiled" and np.all(np.isfinite(res.draws))


def test_init_per_chain_and_jitter():
    x0 = np.array([[0.0, 1.0], [2.0, 3.0]])
    res = sample(2, lp, x0, grad=grad, kernel="rwmh", init_per_chain=True, n_chains=2, n_warmup=0, n_draws=1,
                 step_size=1e-9)
    np.testing.assert_allclose(res.draws[:, 0], x0, atol=1e-6)
    a = sample(2, lp, np.zeros(2), grad=grad, kernel="rwmh", init_jitter=2.0, n_chains=2, n_warmup=0, n_draws=1,
               step_size=1e-9)
    assert np.abs(a.draws).max() > 0.1 and np.abs(a.draws).max() <= 2.0


def test_gibbs_through_the_runner():
    rho = 0.5
    cond = [lambda rng, x: rho * x[1] + rng.standard_normal() * np.sqrt(1 - rho ** 2),
            lambda rng, x: rho * x[0] + rng.standard_normal() * np.sqrt(1 - rho ** 2)]
    res = sample(4, None, np.zeros(2), kernel="gibbs", conditionals=cond, n_chains=2, n_warmup=10, n_draws=50)
    assert res.draws.shape == (2, 50, 2) and res.kernel == "gibbs"
    np.testing.assert_array_equal(res.stats["acceptance_prob"], 1.0)


def test_adapted_tuning_is_reported():
    res = sample(5, lp, np.zeros(4), grad=grad, kernel="nuts", n_chains=2, n_warmup=300, n_draws=20)
    assert res.step_size.shape == (2,) and np.all(res.step_size > 0.1)
    assert res.inverse_mass.shape == (2, 4) and not np.allclose(res.inverse_mass, 1.0)
    np.testing.assert_array_equal(res.stats["step_size"], res.step_size[:, None] * np.ones((1, 20)))
    assert res.compile_s >= 0 and res.sample_s > 0


# -- errors ----------------------------------------------------------------------------------------
@njit
def lp_outside(x):
    return -np.inf if x[0] < 1 else -x[0]


@njit
def lp_untypable(x):
    return x.upper()  # arrays have no .upper: numba cannot type this


@njit("float64(float64[:])")
def lp_explicit_a_layout(x):
    return -0.5 * np.sum(x * x)


def _bad_grad(x):
    return np.zeros(x.shape[0] + 1)


@pytest.mark.parametrize(("kwargs", "message"), [
    (dict(logdensity=lp, init_position=np.zeros(2), kernel="hmc"), "uses the gradient"),
    (dict(logdensity=lp_outside, init_position=np.zeros(2), kernel="rwmh"), "must be finite at the initial"),
    (dict(logdensity=lambda x: 0.0, init_position=np.zeros(2), grad=_bad_grad, kernel="mala"), "shape of the position"),
    (dict(logdensity=lp, init_position=np.zeros(2), kernel="slice"), "'kernel' parameter of sample must be one of"),
    (dict(logdensity=lp, init_position=np.zeros(2), kernel="rwmh", n_chains=0), "'n_chains' parameter"),
    (dict(logdensity=lp, init_position=np.zeros(2), grad=grad, kernel="ula"), "'step_size' parameter"),
    (dict(logdensity=lp, init_position=np.zeros(2), grad=grad, kernel="ula", step_size=0.1, adapt_mass=True),
     "'adapt_mass' parameter of sample must be False or None for kernel='ula'"),
    (dict(logdensity=lp, init_position=np.zeros(2), grad=grad, kernel="hmc", adapt_mass="yes"), "'adapt_mass'"),
    (dict(logdensity=lp, init_position=np.zeros(2), kernel="rwmh", data=[1.0]), "'data' parameter"),
    (dict(logdensity=lp_untypable, init_position=np.zeros(2), kernel="rwmh"), "numba could not compile it"),
    (dict(logdensity=lp_explicit_a_layout, init_position=np.zeros(2), kernel="rwmh"), "explicit signatures"),
    (dict(logdensity=lp, init_position=np.zeros((3, 2)), kernel="rwmh", init_per_chain=True), "n_chains=4 rows"),
    (dict(logdensity=lp, init_position=[np.nan, 0.0], kernel="rwmh"), "must be finite"),
    (dict(logdensity=lp_data, init_position=np.zeros(2), kernel="rwmh", data=(np.array(["a"]), 1.0)),
     "numeric numpy array"),
    (dict(logdensity=None, init_position=np.zeros(2), kernel="gibbs"), "needs 'conditionals'"),
    (dict(logdensity=lp, init_position=np.zeros(2), kernel="hmc", grad=grad, step_size=-1.0), "'step_size'"),
    (dict(logdensity=lp, init_position=np.zeros(2), kernel="nuts", grad=grad, target_accept=1.5), "'target_accept'"),
    (dict(logdensity=lp, init_position=np.zeros(2), kernel="hmc", grad=grad, inverse_mass=[1.0, -1.0]),
     "'inverse_mass'"),
])
def test_bad_input_raises_invalid_parameter_error(kwargs, message):
    with pytest.raises(InvalidParameterError, match=message):
        sample(0, **kwargs)


def test_kernel_list():
    assert set(KERNELS) >= {"nuts", "hmc", "mala", "ula", "rwmh", "mwg", "gibbs"}  # the public names stay
    assert all(f'"{k}"' in sample.__doc__ for k in KERNELS)  # the docstring lists the registry
    assert COMPILED_DEFAULTS and set(COMPILED) == {k for k, s in KERNELS.items() if s.family != "gibbs"}


def test_adapt_mass_default_comes_from_the_registry():
    """None (the default) adapts the mass of nuts, hmc, mala, rwmh and leaves ULA's at the given inverse_mass."""
    assert [k for k, s in KERNELS.items() if s.adapt_mass] == ["nuts", "hmc", "mala", "rwmh"]
    assert not KERNELS["ula"].exact and all(s.exact for k, s in KERNELS.items() if k != "ula")
    ula = sample(0, lp, np.zeros(2), grad=grad, kernel="ula", step_size=0.3, n_chains=2, n_warmup=200, n_draws=10,
                 inverse_mass=[2.0, 0.5])
    np.testing.assert_array_equal(ula.inverse_mass, [[2.0, 0.5], [2.0, 0.5]])
    mala = sample(0, lp, np.zeros(2), grad=grad, kernel="mala", n_chains=2, n_warmup=200, n_draws=10)
    assert np.all(mala.inverse_mass != 1.0)


# -- the algorithm modules directly (state / init / build_kernel) -----------------------------------------
def test_state_init_kernel_pieces():
    rng = np.random.default_rng(0)
    state = hmc.init(np.ones(3), lambda x: (-0.5 * float(x @ x), -x))
    for build in (lambda f: hmc.build_kernel(f, 0.3, 5), lambda f: hmc.build_nuts_kernel(f, 0.3),
                  lambda f: langevin.build_mala_kernel(f, 0.5), lambda f: langevin.build_ula_kernel(f, 0.5)):
        new, info = build(lambda x: (-0.5 * float(x @ x), -x))(rng, state)
        assert new.position.shape == (3,) and 0.0 <= info.acceptance_prob <= 1.0
    np.testing.assert_array_equal(state.position, 1.0)  # kernels never mutate the state given
    rs = rwmh.init(np.ones(2), lambda x: -float(x @ x))
    new, info = rwmh.build_kernel(lambda x: -float(x @ x), 0.5)(rng, rs)
    assert isinstance(info, rwmh.RWMHInfo)
    gs = gibbs.init(np.zeros(2), lambda x: -float(x @ x))
    new, info = gibbs.build_mwg_kernel(lambda x: -float(x @ x), [0.5, 0.5])(rng, gs)
    assert info.acceptance_prob.shape == (2,) and np.isfinite(new.logdensity)
    with pytest.raises(InvalidParameterError, match="'scan' parameter"):
        gibbs.build_kernel([lambda r, x: 0.0], scan="diagonal")
    s = sgld.init([0.0])
    s, info = sgld.build_kernel(lambda t: -t, lambda t, x: x - t, np.ones((5, 1)), 2, 0.01)(rng, s)
    assert s.t == 1 and info.step_size == pytest.approx(0.01 * 1.0 ** -0.55)


def test_sgld_runner_validates_and_runs_numpy_callables():
    x = np.random.default_rng(1).normal(size=(20, 1))
    res = sample_sgld(0, lambda t: -t, lambda t, xi: xi - t, x, [0.0], n_iter=30, batch_size=5, a=0.01)
    assert res.backend == "numpy" and res.draws.shape == (1, 30, 1)
    with pytest.raises(InvalidParameterError, match="'batch_size' parameter"):
        sample_sgld(0, lambda t: -t, lambda t, xi: xi - t, x, [0.0], n_iter=3, batch_size=50, a=0.01)
    with pytest.raises(InvalidParameterError, match="must return 1 finite"):
        sample_sgld(0, lambda t: np.zeros(2), lambda t, xi: xi - t, x, [0.0], n_iter=3, batch_size=5, a=0.01)
