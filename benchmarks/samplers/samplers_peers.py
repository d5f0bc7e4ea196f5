"""Effective samples per second of harmonium's HMC and NUTS against NumPyro and BlackJAX on CPU (issue 9).

Problems (the same data, initial positions and settings for every system):

* ``corr10``: 10-d Gaussian, unit variances, every correlation 0.9 (precision matrix passed as data);
* ``logreg``: Bayesian logistic regression, 2000 x 10 synthetic standardised design (seed 0), true
  coefficients N(0, 0.5^2), prior N(0, I) on the coefficients.

Every system runs 4 chains one after the other (NumPyro and BlackJAX: one jitted function of a
whole chain, warm-up included, called per chain; ``blackjax-*-vmap`` vmaps the 4 chains instead), 1000 warm-up
and 1000 kept draws, target acceptance 0.8, Stan's warm-up windows with a diagonal mass matrix,
NUTS max tree depth 10, HMC with ``--hmc-steps`` leapfrog steps (10 by default; on ``logreg`` 10 steps
of the adapted size, about 0.63, make a full orbit of the whitened posterior and every system's ESS
collapses, so its HMC figures are also run with 3), float64 (``jax_enable_x64``), one thread
(XLA_FLAGS single-threaded Eigen, OMP/MKL/OPENBLAS/NUMBA threads = 1). harmonium's log density
is a numba-jitted ``value_and_grad``; the JAX systems differentiate the same density with
``jax.grad``.

Each (problem, system) runs in its own subprocess: one untimed run that compiles (its wall time,
minus the median timed run, is reported as ``compile_s``), then ``--repeats`` timed runs with
different seeds. Wall time covers warm-up and sampling. The draws go back to this process, where
harmonium's own diagnostics compute the bulk ESS of every parameter for every system; the figure
of merit is min bulk ESS / wall seconds.

Examples::

    .venv/bin/python benchmarks/samplers/samplers_peers.py run --repeats 3 \
        --out benchmarks/samplers/results/samplers-cpu.jsonl
    .venv/bin/python benchmarks/samplers/samplers_peers.py run --repeats 3 --problems logreg --hmc-steps 3 \
        --systems harmonium-hmc numpyro-hmc blackjax-hmc blackjax-hmc-vmap \
        --out benchmarks/samplers/results/samplers-cpu-logreg-hmc3.jsonl
    .venv/bin/python benchmarks/samplers/samplers_peers.py table benchmarks/samplers/results/samplers-cpu.jsonl

The JAX systems need a separate venv (``python3.11 -m venv .bench-jax && .bench-jax/bin/pip install
numpyro blackjax``); ``--jax-python`` points at its interpreter.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parents[1]  # benchmarks/, where the shared _common.py lives
ROOT = HERE.parent
N_CHAINS, HMC_STEPS, MAX_DEPTH, TARGET = 4, 10, 10, 0.8
# 1000 + 1000 for the published figures; the environment variables are for quick smoke runs only
N_WARMUP, N_DRAWS = int(os.environ.get("BENCH_WARMUP", 1000)), int(os.environ.get("BENCH_DRAWS", 1000))
PROBLEMS = ("corr10", "logreg")
SYSTEMS = ("harmonium-nuts", "harmonium-hmc", "numpyro-nuts", "numpyro-hmc", "blackjax-nuts", "blackjax-hmc",
           "blackjax-nuts-vmap", "blackjax-hmc-vmap")
SINGLE_THREAD = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
                 "NUMBA_NUM_THREADS": "1", "JAX_PLATFORMS": "cpu",
                 "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"}


# -- problems ---------------------------------------------------------------------------------------------
def make_problem(name: str) -> dict:
    """Arrays of the problem (data and the 4 chains' initial positions), identical for every system."""
    rng = np.random.default_rng(0)
    if name == "corr10":
        d, rho = 10, 0.9
        cov = (1 - rho) * np.eye(d) + rho * np.ones((d, d))
        return {"precision": np.linalg.inv(cov), "init": rng.uniform(-2, 2, size=(N_CHAINS, d))}
    if name == "logreg":
        n, d = 2000, 10
        X = rng.standard_normal((n, d))
        X = (X - X.mean(axis=0)) / X.std(axis=0)
        beta = 0.5 * rng.standard_normal(d)
        y = (rng.random(n) < 1 / (1 + np.exp(-X @ beta))).astype(np.float64)
        return {"X": X, "y": y, "init": rng.uniform(-0.5, 0.5, size=(N_CHAINS, d))}
    raise ValueError(name)


# -- workers (run in a subprocess; the JAX ones import only numpy and jax) ----------------------------------
def _harmonium_worker(cfg, arrays):
    sys.path.insert(0, str(ROOT))
    from numba import njit

    from harmonium.inference.mcmc.sample import sample

    if cfg["problem"] == "corr10":
        @njit
        def vg(x, prec):
            g = -(prec @ x)
            return 0.5 * (x @ g), g

        data = (arrays["precision"],)
    else:
        @njit
        def vg(beta, X, y):
            eta = X @ beta
            r = np.empty(eta.shape[0])
            lp = -0.5 * (beta @ beta)
            for i in range(eta.shape[0]):
                e = eta[i]
                lp += y[i] * e - (max(e, 0.0) + np.log1p(np.exp(-abs(e))))
                r[i] = y[i] - 1.0 / (1.0 + np.exp(-e))
            return lp, X.T @ r - beta

        data = (arrays["X"], arrays["y"])
    kernel = cfg["system"].split("-")[1]
    extra = {"n_steps": cfg["hmc_steps"]} if kernel == "hmc" else {"max_tree_depth": MAX_DEPTH}

    def run(seed):
        t = time.perf_counter()
        res = sample(seed, None, arrays["init"], value_and_grad=vg, data=data, kernel=kernel, n_chains=N_CHAINS,
                     n_warmup=N_WARMUP, n_draws=N_DRAWS, init_per_chain=True, target_accept=TARGET, **extra)
        wall = time.perf_counter() - t
        return wall, res.draws, {
            "step_size": res.step_size.tolist(), "mean_accept": float(np.nanmean(res.stats["acceptance_prob"])),
            "divergent": int(np.nansum(res.stats["is_divergent"])),
            "mean_n_steps": float(np.nanmean(res.stats["n_steps"])), "harmonium_compile_s": res.compile_s,
        }

    import numba

    import harmonium

    return run, {"harmonium": harmonium.__version__, "numba": numba.__version__}


def _jax_logdensity(cfg, arrays):
    import jax
    import jax.numpy as jnp

    if cfg["problem"] == "corr10":
        prec = jnp.asarray(arrays["precision"])

        def logdensity(x):
            return -0.5 * x @ (prec @ x)
    else:
        X, y = jnp.asarray(arrays["X"]), jnp.asarray(arrays["y"])

        def logdensity(beta):
            eta = X @ beta
            return jnp.sum(y * eta - jnp.logaddexp(0.0, eta)) - 0.5 * beta @ beta

    return logdensity, jax


def _numpyro_worker(cfg, arrays):
    """NumPyro's functional kernels (``numpyro.infer.hmc.hmc``: the NUTS / HMC kernels with MCMC's warm-up
    adapter inside), warm-up and sampling in one ``lax.scan``, jitted once and called per chain.

    ``MCMC.run`` itself re-traces and recompiles on every call (about 3 s a chain here), which would
    put compilation into every timed run.
    """
    import numpyro
    from numpyro.infer.hmc import hmc

    logdensity, jax = _jax_logdensity(cfg, arrays)
    jnp = jax.numpy
    kernel = cfg["system"].split("-")[1]
    init_kernel, sample_kernel = hmc(potential_fn=lambda x: -logdensity(x), algo=kernel.upper())
    extra = {"max_tree_depth": MAX_DEPTH} if kernel == "nuts" else {"num_steps": cfg["hmc_steps"]}

    def one_chain(key, x0):
        state = init_kernel(x0, num_warmup=N_WARMUP, target_accept_prob=TARGET, rng_key=key, **extra)

        def body(s, _):
            s = sample_kernel(s)
            return s, (s.z, s.accept_prob, s.diverging, s.num_steps)

        _, out = jax.lax.scan(body, state, None, length=N_WARMUP + N_DRAWS)
        return tuple(o[N_WARMUP:] for o in out)

    fn = jax.jit(one_chain)
    init = jnp.asarray(arrays["init"])

    def run(seed):
        keys = jax.random.split(jax.random.PRNGKey(seed), N_CHAINS)
        t = time.perf_counter()
        outs = [jax.block_until_ready(fn(keys[c], init[c])) for c in range(N_CHAINS)]
        wall = time.perf_counter() - t
        pos, acc, div, nsteps = (np.stack([np.asarray(o[k]) for o in outs]) for k in range(4))
        return wall, pos, {"mean_accept": float(acc.mean()), "divergent": int(div.sum()),
                           "mean_n_steps": float(nsteps.mean())}

    return run, {"numpyro": numpyro.__version__, "jax": jax.__version__}


def _blackjax_worker(cfg, arrays):
    import blackjax

    logdensity, jax = _jax_logdensity(cfg, arrays)
    jnp = jax.numpy
    parts = cfg["system"].split("-")
    kernel, vmap = parts[1], parts[-1] == "vmap"
    algorithm = blackjax.nuts if kernel == "nuts" else blackjax.hmc
    extra = {"num_integration_steps": cfg["hmc_steps"]} if kernel == "hmc" else {"max_num_doublings": MAX_DEPTH}

    def one_chain(key, position):
        warm_key, sample_key = jax.random.split(key)
        warmup = blackjax.window_adaptation(algorithm, logdensity, is_mass_matrix_diagonal=True,
                                            target_acceptance_rate=TARGET, **extra)
        (state, params), _ = warmup.run(warm_key, position, num_steps=N_WARMUP)
        step = algorithm(logdensity, **params).step  # params carry the steps / doublings too

        def body(state, k):
            state, info = step(k, state)
            return state, (state.position, info.acceptance_rate, info.is_divergent, info.num_integration_steps)

        _, out = jax.lax.scan(body, state, jax.random.split(sample_key, N_DRAWS))
        return out

    fn = jax.jit(jax.vmap(one_chain)) if vmap else jax.jit(one_chain)
    init = jnp.asarray(arrays["init"])

    def run(seed):
        keys = jax.random.split(jax.random.PRNGKey(seed), N_CHAINS)
        t = time.perf_counter()
        if vmap:
            out = jax.block_until_ready(fn(keys, init))
        else:
            outs = [jax.block_until_ready(fn(keys[c], init[c])) for c in range(N_CHAINS)]
            out = tuple(jnp.stack([o[k] for o in outs]) for k in range(4))
        wall = time.perf_counter() - t
        pos, acc, div, nsteps = (np.asarray(a) for a in out)
        return wall, pos, {"mean_accept": float(acc.mean()), "divergent": int(div.sum()),
                           "mean_n_steps": float(nsteps.mean())}

    return run, {"blackjax": blackjax.__version__, "jax": jax.__version__}


def _busy_s() -> float:
    """CPU-seconds all cores have been busy (/proc/stat), to estimate other processes' load during a run."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (sum(v[:8]) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")


def worker(cfg_path: str, out_dir: str) -> None:
    cfg = json.loads(Path(cfg_path).read_text())
    arrays = dict(np.load(cfg["arrays"]))
    if cfg["system"].startswith(("numpyro", "blackjax")):
        import jax

        jax.config.update("jax_enable_x64", True)
        make = _numpyro_worker if cfg["system"].startswith("numpyro") else _blackjax_worker
    else:
        make = _harmonium_worker
    run, versions = make(cfg, arrays)
    t = time.perf_counter()
    first_wall, _, _ = run(10_000)  # compiles
    first = time.perf_counter() - t
    runs = []
    for r in range(cfg["repeats"]):
        b0, c0, t0 = _busy_s(), time.process_time(), time.perf_counter()
        wall, draws, info = run(r + 1)
        cpu, span, busy = time.process_time() - c0, time.perf_counter() - t0, _busy_s() - b0
        np.save(Path(out_dir, f"draws{r}.npy"), np.asarray(draws, dtype=np.float64))
        runs.append(dict(info, repeat=r, seed=r + 1, wall_s=wall, cpu_s=cpu,
                         other_busy_cores=max(0.0, busy - cpu) / span))
    Path(out_dir, "result.json").write_text(json.dumps({"first_call_s": first, "runs": runs, "versions": versions}))


# -- parent -----------------------------------------------------------------------------------------------
def _ess_and_check(draws: np.ndarray, problem: str) -> dict:
    sys.path.insert(0, str(ROOT))
    from harmonium.evaluation.diagnostics import ess_bulk, rhat

    ess = ess_bulk(draws)
    out = {"min_ess_bulk": float(ess.min()), "max_rhat": float(rhat(draws).max()),
           "draws_shape": list(draws.shape), "post_mean": draws.mean(axis=(0, 1)).tolist(),
           "post_sd": draws.std(axis=(0, 1)).tolist()}
    if problem == "corr10":  # exact answer: mean 0, sd 1
        out["max_abs_mean_error_sd"] = float(np.abs(draws.mean(axis=(0, 1))).max())
        out["max_abs_sd_error"] = float(np.abs(draws.std(axis=(0, 1)) - 1).max())
    return out


def run_system(problem: str, system: str, arrays_path: str, repeats: int, jax_python: str, timeout: float,
               hmc_steps: int = HMC_STEPS) -> list:
    python = jax_python if system.startswith(("numpyro", "blackjax")) else sys.executable
    env = dict(os.environ, **SINGLE_THREAD)
    with tempfile.TemporaryDirectory() as tmp:
        cfg = {"problem": problem, "system": system, "arrays": arrays_path, "repeats": repeats,
               "hmc_steps": hmc_steps}
        cfg_path = Path(tmp, "cfg.json")
        cfg_path.write_text(json.dumps(cfg))
        cmd = [python, str(Path(__file__).resolve()), "_worker", str(cfg_path), tmp]
        t = time.perf_counter()
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
        wall = time.perf_counter() - t
        res_path = Path(tmp, "result.json")
        if proc.returncode != 0 or not res_path.exists():
            return [{"problem": problem, "system": system, "error": f"exit {proc.returncode}",
                     "stderr_tail": proc.stderr[-3000:]}]
        res = json.loads(res_path.read_text())
        walls = [r["wall_s"] for r in res["runs"]]
        compile_s = res["first_call_s"] - statistics.median(walls)
        records = []
        for r in res["runs"]:
            draws = np.load(Path(tmp, f"draws{r['repeat']}.npy"))
            rec = {"problem": problem, "system": system, **r, **_ess_and_check(draws, problem),
                   "compile_s": compile_s, "first_call_s": res["first_call_s"], "subprocess_wall_s": wall,
                   "versions": res["versions"]}
            rec["ess_per_s"] = rec["min_ess_bulk"] / rec["wall_s"]
            rec["ess_per_cpu_s"] = rec["min_ess_bulk"] / rec["cpu_s"]
            records.append(rec)
        return records


def cmd_run(args) -> None:
    sys.path.insert(0, str(HERE))
    import _common as C

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    stamp = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    meta = {"date": stamp, "machine": C.machine(), "harmonium_rev": C.git_revision(str(ROOT)),
            "command": " ".join([Path(sys.executable).name] + sys.argv),
            "settings": {"n_chains": N_CHAINS, "n_warmup": N_WARMUP, "n_draws": N_DRAWS, "hmc_steps": args.hmc_steps,
                         "max_tree_depth": MAX_DEPTH, "target_accept": TARGET, "x64": True, "threads": 1}}
    with tempfile.TemporaryDirectory() as tmp:
        for problem in args.problems:
            arrays_path = str(Path(tmp, f"{problem}.npz"))
            np.savez(arrays_path, **make_problem(problem))
            for system in args.systems:
                print(f"{problem} {system} ...", flush=True)
                for rec in run_system(problem, system, arrays_path, args.repeats, args.jax_python, args.timeout,
                                      args.hmc_steps):
                    rec.update(meta)
                    with out.open("a") as f:
                        f.write(json.dumps(rec) + "\n")
                    if "error" in rec:
                        print("  ERROR", rec["error"], rec["stderr_tail"][-800:], flush=True)
                    else:
                        print(f"  repeat {rec['repeat']}: wall {rec['wall_s']:.2f} s, min ESS "
                              f"{rec['min_ess_bulk']:.0f}, ESS/s {rec['ess_per_s']:.0f}, compile "
                              f"{rec['compile_s']:.1f} s", flush=True)
    cmd_table(argparse.Namespace(files=[str(out)]))


def cmd_table(args) -> None:
    rows = []
    for path in args.files:
        rows += [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    rows = [r for r in rows if "error" not in r]
    for problem in PROBLEMS:
        sub = [r for r in rows if r["problem"] == problem]
        if not sub:
            continue
        print(f"\n{problem}: min bulk ESS / wall s (warm-up + sampling), {N_CHAINS} chains x ({N_WARMUP} + {N_DRAWS})")
        print("| system | ESS/s min | median | max | ESS/CPU-s median | wall s median | min ESS median | compile s | "
              "accept | leapfrog/draw | divergent | other load (cores) | ratio to harmonium (median ESS/s) |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        ref = {}
        for kern in ("nuts", "hmc"):
            h = [r["ess_per_s"] for r in sub if r["system"] == f"harmonium-{kern}"]
            if h:
                ref[kern] = statistics.median(h)
        for system in SYSTEMS:
            rs = [r for r in sub if r["system"] == system]
            if not rs:
                continue
            e = sorted(r["ess_per_s"] for r in rs)
            kern = system.split("-")[1]
            ratio = statistics.median(e) / ref[kern] if kern in ref else float("nan")
            print(f"| {system} | {e[0]:.0f} | {statistics.median(e):.0f} | {e[-1]:.0f} | "
                  f"{statistics.median(r['ess_per_cpu_s'] for r in rs):.0f} | "
                  f"{statistics.median(r['wall_s'] for r in rs):.2f} | "
                  f"{statistics.median(r['min_ess_bulk'] for r in rs):.0f} | {rs[0]['compile_s']:.1f} | "
                  f"{statistics.median(r['mean_accept'] for r in rs):.2f} | "
                  f"{statistics.median(r['mean_n_steps'] for r in rs):.1f} | "
                  f"{sum(r['divergent'] for r in rs)} | {statistics.median(r['other_busy_cores'] for r in rs):.1f} | "
                  f"{ratio:.2f} |")


def main(argv=None) -> None:
    if argv is None and len(sys.argv) > 1 and sys.argv[1] == "_worker":
        worker(sys.argv[2], sys.argv[3])
        return
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--problems", nargs="+", default=list(PROBLEMS), choices=PROBLEMS)
    r.add_argument("--systems", nargs="+", default=list(SYSTEMS), choices=SYSTEMS)
    r.add_argument("--repeats", type=int, default=3)
    r.add_argument("--hmc-steps", type=int, default=HMC_STEPS, help="leapfrog steps of every HMC system")
    r.add_argument("--out", required=True)
    r.add_argument("--jax-python", default=str(ROOT / ".bench-jax" / "bin" / "python"))
    r.add_argument("--timeout", type=float, default=3600)
    t = sub.add_parser("table")
    t.add_argument("files", nargs="+")
    args = p.parse_args(argv)
    cmd_run(args) if args.cmd == "run" else cmd_table(args)


if __name__ == "__main__":
    main()
