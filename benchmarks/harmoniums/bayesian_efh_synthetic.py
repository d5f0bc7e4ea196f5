"""Seed 000 §5.1: Bayesian EFH on synthetic GB-EFH data (M = 100, J = 10, theta = 0), Figs. 3-6, §3.1.3.

    .venv/bin/python benchmarks/harmoniums/bayesian_efh_synthetic.py [--runs 10] \
        [--out benchmarks/harmoniums/results/bayesian-efh]

* W_true: the rank-J SVD of an M x M matrix A with uniform[0, 0.1] entries, W = U_J S_J^(1/2), so
  V = W W^T = U_J S_J U_J^T; A is redrawn (seed + 1) until V >= 0 (needed by CFTP; the count of
  redraws is recorded). Training data: N exact draws of p(x | W_true) by monotone CFTP.
* ML: full-batch gradient ascent with CD-1 from W ~ N(0, 0.01^2) (theta = 0 known), learning rate
  0.01, 1,000 epochs; the error is recorded along the way, so "ML best" (the best epoch in hindsight,
  an oracle ML cannot have) is reported next to "ML final".
* Bayes: the Langevin posterior (prior mu = 0, sigma = 0.1, l = 1, eps = 0.03: ~3/4 of the step that
  diverges at N = 200), 4 chains from prior draws, 2,000 burn-in steps, 1,500 draws thinned by 10; V-hat
  is the posterior mean of W W^T. Convergence is judged on identified quantities only (W is identified
  up to W -> WQ, eq. 28): split R-hat and bulk ESS of 500 entries of V and of V's J eigenvalues, and the
  worst R-hat over V after 1/8, 1/4, 1/2 and all of the draws (<out>-rhat.png with ``--only fig5 plot``).
  ``--eps --chains --warmup --draws --thin`` change the setting (the ablation in the README).
* mae / mre of V-hat against V_true (eqs. 29-30), mean and standard error over runs, per N.
* Fig. 3: W_11 traces of three chains. Fig. 4: d log Z / d W_11 by brief sampling against l, vs
  perfect sampling (CFTP), 50 runs x 100 samples, at W_true and at 0.8 W_true (data from W_true).
  Fig. 5: errors vs N. Fig. 6: 100 naive Monte Carlo estimates of Z (1,000 samples each) at W_true.
* §3.1.3: spread of N log Z(W)/Z(W') by IS (eq. 12, 100 draws of p(x | W'): CFTP, or 50 heat-bath
  sweeps when V' has a negative entry) and by the first-order
  approximation (eq. 20), against the log Z part of the Langevin move, at W_true and a W' one
  Langevin step away.
* Empirical Bayes (eqs. 23-27): on one §5.1 data set (N = 100) from the ML start with mu free (the
  paper's EM), and with mu = 0 held from a sigma 3x too large and 3x too small (also with l = 50:
  ``--only eb_l``); and on a well-specified problem (W drawn from the column-iid prior).
* "tiny": Langevin with brief sampling (l = 1, 5, 25) and with the exact grad log Z against the exact
  posterior (quadrature) of the enumerable GB-EFH of the tests.

Writes <out>.jsonl (one record per measurement) and, when matplotlib imports, <out>-fig{3,4,5,6}.png.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from harmonium.evaluation.partition import naive_mc_log_partition  # noqa: E402
from harmonium.inference.learning import cd  # noqa: E402
from harmonium.inference.learning.empirical_bayes import monte_carlo_em  # noqa: E402
from harmonium.inference.learning.schedules import make_schedule, momentum_schedule  # noqa: E402
from harmonium.inference.mcmc import cftp  # noqa: E402
from harmonium.inference.mcmc.bayesian_efh import langevin as bl  # noqa: E402
from harmonium.inference.mcmc.bayesian_efh import mh as befh_mh  # noqa: E402
from harmonium.models.undirected import bayesian_efh as befh  # noqa: E402
from harmonium.models.undirected.variants import gb_efh  # noqa: E402

M, J = 100, 10
EPS, L_BRIEF, SIGMA = 0.02, 1, 0.1
# Fig. 5's posterior runs: eps at ~3/4 of the divergence threshold at N = 200 (0.04 diverged there), 4 chains
# (Vehtari et al. 2021, Bayesian Analysis 16(2): R-hat <= 1.01 and bulk ESS >= 400 from >= 4 chains)
EPS_FIG5 = 0.03
CD_LR, CD_EPOCHS = 0.01, 1000
N_WARMUP, N_DRAWS, THIN, N_CHAINS = 2000, 1500, 10, 4


def true_couplings(seed: int = 0):
    for tries in range(1000):
        rng = np.random.default_rng(seed + tries)
        A = rng.uniform(0.0, 0.1, (M, M))
        U, s, _ = np.linalg.svd(A)
        W = U[:, :J] * np.sqrt(s[:J])
        if W[:, 0].sum() < 0:
            W[:, 0] = -W[:, 0]
        if (W @ W.T).min() >= 0:
            return W, tries
    raise RuntimeError("no A with V >= 0 in 1000 draws")


def errors(V_hat, V):
    d = np.abs(V_hat - V)
    return float(d.mean()), float((d / np.maximum(np.maximum(np.abs(V), np.abs(V_hat)), 1e-300)).mean())


def model0():
    return gb_efh(M, J, dtype=np.float64, fixed={"v:0:bias"})


def ml_cd(rng, X, V_true, record=(50, 100, 250, 500, 1000)):
    m = model0()
    m.params["W:0"] = 0.01 * rng.standard_normal((M, J))
    cfg = cd.CDConfig(batch_size=X.shape[0], n_gibbs=1, learning_rate=make_schedule("constant", CD_LR),
                      momentum=momentum_schedule(0.0), sparse=False, shuffle=False)
    st = cd.init(rng, m)
    kernel = cd.build_kernel(cfg)
    out = {}
    for ep in range(1, CD_EPOCHS + 1):
        st, _ = kernel(rng, st, cd.TrainingData((X,), None))
        if ep in record:
            W = st.model.params["W:0"]
            out[ep] = errors(W @ W.T, V_true)
    return st.model.params["W:0"].copy(), out


def langevin(rng, X, prior, n_chains=None, n_warmup=None, n_draws=None, thin=None):
    n_chains = N_CHAINS if n_chains is None else n_chains
    thin = THIN if thin is None else thin
    n_warmup = N_WARMUP if n_warmup is None else n_warmup
    n_draws = N_DRAWS if n_draws is None else n_draws
    m = model0()
    starts = np.stack([prior.sample(rng, J).ravel() for _ in range(n_chains)])
    res = bl.sample_posterior(rng, m, X, [prior], bl.LangevinConfig(step_size=EPS_FIG5, n_gibbs=L_BRIEF),
                              n_chains=n_chains, n_warmup=n_warmup, n_samples=n_draws, thin=thin,
                              init_positions=starts, trace_index=(0,))
    D = res.draws.reshape(-1, M, J)
    return res, np.einsum("kij,klj->il", D, D) / D.shape[0]


def _identified_diagnostics(draws):
    """Convergence of quantities that are identified (invariant under W -> WQ, eq. 28): split R-hat and
    bulk ESS of the J eigenvalues of V = W W^T, and the worst R-hat over 500 entries of V when only the
    first 1/8, 1/4, 1/2 and all of the stored draws are used (for the R-hat-vs-steps plot)."""
    from harmonium.estimators.bayesian_efh import _v_diagnostics
    from harmonium.evaluation.diagnostics import ess_bulk, rhat

    n_c, n_s, _ = draws.shape
    D = draws.reshape(n_c, n_s, M, J)
    ev = np.linalg.svd(D, compute_uv=False) ** 2  # the J eigenvalues of W W^T
    path = {}
    for frac in (8, 4, 2, 1):
        k = n_s // frac
        if k >= 8:
            path[str(k)] = _v_diagnostics(draws[:, :k], model0())["max_rhat"]
    return {"rhat_eig_max": float(np.max(rhat(ev))), "ess_eig_min": float(np.min(ess_bulk(ev))),
            "rhat_V_max_by_draws": path}


def fig5_errors(args, W_true, emit):
    V = W_true @ W_true.T
    prior = befh.GaussianColumnPrior(M, 0.0, SIGMA)
    from harmonium.estimators.bayesian_efh import _v_diagnostics

    fig3 = None
    for n in args.sizes:
        for r in range(args.runs):
            rng = np.random.default_rng([n, r])
            X, info = cftp.sample(rng, W_true, None, n)
            t0 = time.perf_counter()
            W_ml, ml_path = ml_cd(rng, X, V)
            t_ml = time.perf_counter() - t0
            t0 = time.perf_counter()
            res, V_b = langevin(rng, X, prior)
            t_b = time.perf_counter() - t0
            diag = _v_diagnostics(res.draws, model0())
            ident = _identified_diagnostics(res.draws)
            rec = {"exp": "fig5", "N": n, "run": r, "data_mean": float(X.mean()),
                   "cftp_max_T": int(info.horizons.max()),
                   "ml_final": ml_path[CD_EPOCHS], "ml_best": min(ml_path.values()), "ml_path": ml_path,
                   "bayes": errors(V_b, V), "zero": errors(np.zeros_like(V), V), "n_divergent": res.n_divergent,
                   "rhat_V_max": diag["max_rhat"], "ess_V_min": diag["min_ess_bulk"], **ident,
                   "n_chains": N_CHAINS, "n_steps": N_WARMUP + N_DRAWS * THIN, "eps": EPS_FIG5, "seconds_ml": t_ml,
                   "seconds_bayes": t_b}
            emit(rec)
            print(f"N={n} run={r}: ML mae {rec['ml_final'][0]:.4f} (best {rec['ml_best'][0]:.4f})  "
                  f"Bayes mae {rec['bayes'][0]:.4f}  mre ML {rec['ml_final'][1]:.3f} Bayes {rec['bayes'][1]:.3f}  "
                  f"R-hat(V) {diag['max_rhat']:.3f} ESS(V) {diag['min_ess_bulk']:.0f} R-hat(eig) "
                  f"{ident['rhat_eig_max']:.3f} ESS(eig) {ident['ess_eig_min']:.0f}  {t_ml:.1f}s/{t_b:.1f}s",
                  flush=True)
            if r == 0 and (n == 100 or fig3 is None):
                fig3, fig3_n = res.trace, n
    emit({"exp": "fig3", "N": fig3_n, "eps": EPS_FIG5, "every": 10, "trace_W11": fig3[:, ::10].tolist()})
    return fig3


def fig4_brief(args, W_true, emit):
    """d log Z / d W_11 = E[x_1 (x^T W)_1] by brief sampling from 100 data rows vs 100 CFTP draws."""
    ls = (1, 2, 3, 5, 10, 20, 50)
    out = {}
    for label, scale in (("W_true", 1.0), ("0.8_W_true", 0.8)):
        W = scale * W_true
        m = model0()
        m.params["W:0"] = W.copy()
        brief = {ell: [] for ell in ls}
        perfect = []
        for r in range(args.fig4_runs):
            rng = np.random.default_rng([4, r])
            X, _ = cftp.sample(rng, W_true, None, 100)
            for ell in ls:
                g = befh.grad_log_partition_brief(rng, m, X, ell)
                brief[ell].append(g[0])
            Xp, _ = cftp.sample(rng, W, None, 100)
            perfect.append(float(np.mean(Xp[:, 0] * (Xp @ W[:, 0]))))
        perfect = np.array(perfect)
        rec = {"exp": "fig4", "at": label, "runs": args.fig4_runs, "perfect_mean": float(perfect.mean()),
               "perfect_se": float(perfect.std(ddof=1) / np.sqrt(perfect.size)),
               "brief": {str(ell): {"mean": float(np.mean(v)), "se": float(np.std(v, ddof=1) / np.sqrt(len(v))),
                                    "sd": float(np.std(v, ddof=1))} for ell, v in brief.items()}}
        emit(rec)
        out[label] = rec
        print(f"fig4 {label}: perfect {rec['perfect_mean']:.4f} +- {rec['perfect_se']:.4f}; brief "
              + ", ".join(f"l={ell}: {rec['brief'][str(ell)]['mean']:.4f}+-{rec['brief'][str(ell)]['se']:.4f}"
                          for ell in ls), flush=True)
    return out


def fig6_naive(args, W_true, emit):
    m = model0()
    m.params["W:0"] = W_true.copy()
    est = np.array([naive_mc_log_partition(np.random.default_rng([6, r]), m, 1000).log_z for r in range(100)])
    # Z itself (scaled): exp(log Z - max) so the histogram is of Z / Z_max
    rec = {"exp": "fig6", "log_z": est.tolist(), "log_z_mean": float(est.mean()), "log_z_sd": float(est.std(ddof=1)),
           "z_cv": float(np.std(np.exp(est - est.max()), ddof=1) / np.mean(np.exp(est - est.max())))}
    emit(rec)
    print(f"fig6: log Z naive MC mean {rec['log_z_mean']:.3f} sd {rec['log_z_sd']:.3f}; sd(Z)/mean(Z) "
          f"{rec['z_cv']:.3f}", flush=True)
    return rec


def _exact_or_long_gibbs(rng, model, n):
    """Draws of p(x | W'): CFTP when V' = W' W'^T >= 0, else 50 heat-bath sweeps from the top state
    (CFTP coalesces within 4 sweeps at W_true, so 50 sweeps are far past mixing)."""
    W = model.params["W:0"]
    if (W @ W.T).min() >= 0:
        return (cftp.sample(rng, W, model.params["v:0:bias"], n)[0],)
    return (cftp.forward_sample(rng, W, model.params["v:0:bias"], n, n_sweeps=50, start=1.0),)


def variance_313(args, W_true, emit):
    rng = np.random.default_rng(313)
    out = []
    for n in (25, 100, 200):
        X, _ = cftp.sample(rng, W_true, None, n)
        q = W_true.ravel().copy()
        prior = befh.GaussianColumnPrior(M, 0.0, SIGMA)
        m = model0()
        kernel = bl.build_kernel(m, X, [prior], bl.LangevinConfig(step_size=EPS))
        st = bl.init(rng, m, X, [prior], bl.LangevinConfig(step_size=EPS), q)
        st1, _ = kernel(rng, st)
        q1 = st1.position
        m.params["W:0"] = W_true.copy()
        est = befh_mh.log_ratio_estimates(rng, m, X, q, q1, n_repeats=args.var_repeats, n_is_samples=100,
                                          sampler=_exact_or_long_gibbs, n_gibbs=1, step_size=EPS)
        rec = {"exp": "variance_3.1.3", "N": n, "n_is_samples": 100,
               **{k: {"mean": float(v.mean()), "sd": float(v.std(ddof=1))} for k, v in est.items()
                  if k != "langevin_sd_per_coord"},
               "langevin_noise_over_eps": float(est["langevin_sd_per_coord"][0]),
               "ratio_cv_is": float(np.std(np.exp(est["is"] - est["is"].max()), ddof=1)
                                    / np.mean(np.exp(est["is"] - est["is"].max()))),
               "ratio_cv_first_order": float(np.std(np.exp(est["first_order"] - est["first_order"].max()), ddof=1)
                                             / np.mean(np.exp(est["first_order"] - est["first_order"].max())))}
        emit(rec)
        out.append(rec)
        print(f"3.1.3 N={n}: sd of N log Z ratio: IS {rec['is']['sd']:.3f}, "
              f"first-order {rec['first_order']['sd']:.3f}; "
              f"Langevin log Z drift noise / eps {rec['langevin_noise_over_eps']:.4f}; CV of (Z/Z')^N: "
              f"IS {rec['ratio_cv_is']:.2f}, first-order {rec['ratio_cv_first_order']:.2f}", flush=True)
    return out


def _eb_run(rng, model, X, V, s0, n_iter, fit_mean, eps=EPS, init_means=None, n_gibbs=1):  # eps < 2 sigma*/3
    """One Monte Carlo EM run (E-step: 2 chains, 300 burn-in, 50 draws thinned by 5) from sigma = s0."""
    M_, J_ = model.params["W:0"].shape
    if init_means is None:
        init_means = [np.zeros(M_)]
    t0 = time.perf_counter()
    em = monte_carlo_em(rng, model, X, bl.LangevinConfig(step_size=eps, n_gibbs=n_gibbs), n_em_iter=n_iter, n_chains=2,
                        n_warmup=300, n_samples=50, thin=5, init_means=init_means,
                        init_scales=None if s0 is None else [np.full(M_, s0)], fit_mean=fit_mean, min_scale=1e-3)
    D = em.samples.draws.reshape(-1, M_, J_)
    V_b = np.einsum("kij,klj->il", D, D) / D.shape[0]
    return {"sigma_path": [float(h[1][0].mean()) for h in em.history],
            "mu_path": [float(h[0][0].mean()) for h in em.history], "V_error": errors(V_b, V),
            "seconds": time.perf_counter() - t0}


def empirical_bayes(args, W_true, emit):
    """Monte Carlo EM (eqs. 23-27) from a sigma 3x too large and 3x too small.

    sigma* = rms(W_true) = sqrt(||W_true||_F^2 / (M J)), the rotation-invariant scale of W_true (the prior
    with mu = 0 is invariant under W -> WQ, as p(X | W) is; eq. 28). Two problems: the §5.1 data (N = 100),
    and a well-specified one (W_true drawn from the column-iid prior itself: M = 20, J = 3, sigma = 0.3,
    N = 500, data by 200 heat-bath sweeps since V has entries of both signs). mu is held at 0 (fit_mean
    False) except in the "paper" row (eqs. 24-27 with mu free, from W^MLE), kept to show why.
    """
    V = W_true @ W_true.T
    s_star = float(np.sqrt(np.mean(W_true**2)))
    rng = np.random.default_rng(2327)
    X, _ = cftp.sample(rng, W_true, None, 100)
    # the fixed prior of Fig. 5 on the same data, for comparison
    res, V_fixed = langevin(np.random.default_rng(1), X, befh.GaussianColumnPrior(M, 0.0, SIGMA), n_chains=2,
                            n_warmup=300, n_draws=50)
    fixed = errors(V_fixed, V)
    W_ml, _ = ml_cd(rng, X, V)
    m = model0()
    m.params["W:0"] = W_ml
    paper = _eb_run(np.random.default_rng(3), m, X, V, None, 5, True, init_means=None)
    rec = {"exp": "empirical_bayes", "problem": "5.1", "N": 100, "start": "ML (eqs. 26-27), mu free",
           "sigma_star": s_star, "fixed_prior_V_error": fixed, **paper}
    emit(rec)
    print(f"EB 5.1 paper (mu free, ML start): sigma {' '.join(f'{v:.4f}' for v in paper['sigma_path'])}; mu -> "
          f"{paper['mu_path'][-1]:.4f}; V mae {paper['V_error'][0]:.4f} (fixed prior {fixed[0]:.4f})", flush=True)
    for factor in (3.0, 1.0 / 3.0):
        m = model0()
        m.params["W:0"] = factor * s_star * np.random.default_rng(5).standard_normal((M, J))
        one = _eb_run(np.random.default_rng(4), m, X, V, factor * s_star, 1, False)
        out = _eb_run(np.random.default_rng(4), m, X, V, factor * s_star, args.eb_iter, False)
        rec = {"exp": "empirical_bayes", "problem": "5.1", "N": 100, "start_factor": factor, "sigma_star": s_star,
               "sigma_error_start": abs(factor - 1.0), "sigma_error_final": abs(out["sigma_path"][-1] / s_star - 1),
               "V_error_at_start_prior": one["V_error"], "fixed_prior_V_error": fixed, **out}
        emit(rec)
        print(f"EB 5.1 from {factor:.2f} sigma*: sigma {' '.join(f'{v:.3f}' for v in out['sigma_path'])} "
              f"(sigma* {s_star:.4f}); V mae start-prior {one['V_error'][0]:.4f} -> EB {out['V_error'][0]:.4f}",
              flush=True)
    # well-specified: W_true drawn from the prior
    Mw, Jw, Nw, sw = 20, 3, 500, 0.3
    rng = np.random.default_rng(11)
    Ww = sw * rng.standard_normal((Mw, Jw))
    Xw = cftp.forward_sample(rng, Ww, None, Nw, n_sweeps=200, start=1.0)
    Vw = Ww @ Ww.T
    sw_star = float(np.sqrt(np.mean(Ww**2)))
    for factor in (3.0, 1.0 / 3.0):
        mw = gb_efh(Mw, Jw, dtype=np.float64, fixed={"v:0:bias"})
        mw.params["W:0"] = factor * sw_star * np.random.default_rng(5).standard_normal((Mw, Jw))
        one = _eb_run(np.random.default_rng(4), mw, Xw, Vw, factor * sw_star, 1, False)
        orc = _eb_run(np.random.default_rng(4), mw, Xw, Vw, sw_star, 1, False)
        out = _eb_run(np.random.default_rng(4), mw, Xw, Vw, factor * sw_star, args.eb_iter, False)
        rec = {"exp": "empirical_bayes", "problem": "well-specified", "M": Mw, "J": Jw, "N": Nw, "sigma_draw": sw,
               "start_factor": factor, "sigma_star": sw_star, "sigma_error_start": abs(factor - 1.0),
               "sigma_error_final": abs(out["sigma_path"][-1] / sw_star - 1), "V_error_at_start_prior": one["V_error"],
               "V_error_at_true_sigma": orc["V_error"], **out}
        emit(rec)
        print(f"EB well-specified from {factor:.2f} sigma*: sigma {' '.join(f'{v:.3f}' for v in out['sigma_path'])} "
              f"(sigma* {sw_star:.4f}); V mae start-prior {one['V_error'][0]:.4f} -> EB {out['V_error'][0]:.4f} "
              f"(at sigma* {orc['V_error'][0]:.4f})", flush=True)


def empirical_bayes_brief_l(args, W_true, emit):
    """The §5.1 run from 3 sigma* again with l = 50 brief-sampling sweeps (is the E-step's l = 1 the reason
    sigma does not move down?)."""
    V = W_true @ W_true.T
    s_star = float(np.sqrt(np.mean(W_true**2)))
    X, _ = cftp.sample(np.random.default_rng(2327), W_true, None, 100)  # the data of empirical_bayes()
    m = model0()
    m.params["W:0"] = 3.0 * s_star * np.random.default_rng(5).standard_normal((M, J))
    out = _eb_run(np.random.default_rng(4), m, X, V, 3.0 * s_star, args.eb_iter, False, n_gibbs=50)
    emit({"exp": "empirical_bayes", "problem": "5.1", "N": 100, "start_factor": 3.0, "l": 50, "sigma_star": s_star,
          "sigma_error_final": abs(out["sigma_path"][-1] / s_star - 1), **out})
    print(f"EB 5.1 from 3 sigma*, l = 50: sigma {' '.join(f'{v:.3f}' for v in out['sigma_path'])}; V mae "
          f"{out['V_error'][0]:.4f}", flush=True)


def tiny_posterior(args, W_true, emit):
    """The paper's sampler (Langevin + brief sampling) against the exact posterior of the tests' enumerable
    GB-EFH (M = 2, J = 1, N = 20; posterior by quadrature): how far does brief sampling move the posterior?"""
    import itertools

    from scipy.special import logsumexp

    from harmonium.evaluation.diagnostics import mcse_mean, rhat

    states = np.array(list(itertools.product([0.0, 1.0], repeat=2)))
    theta = np.array([-0.3, 0.2])
    m = gb_efh(2, 1, dtype=np.float64)
    m.params["v:0:bias"], m.params["W:0"] = theta, np.array([[0.9], [0.6]])
    _, p, _ = befh.visible_distribution(m)
    X = states[np.random.default_rng(5).choice(4, size=20, p=p)]
    prior = befh.GaussianColumnPrior(2, 0.8, 0.3)
    g = np.linspace(-2.5, 3.5, 601)
    A, B = np.meshgrid(g, g, indexing="ij")
    proj = states[:, 0, None, None] * A + states[:, 1, None, None] * B
    log_z = logsumexp((states @ theta)[:, None, None] + 0.5 * proj**2, axis=0)
    L = sum(x @ theta + 0.5 * (x[0] * A + x[1] * B) ** 2 for x in X) - len(X) * log_z
    L = L - 0.5 * (((A - 0.8) / 0.3) ** 2 + ((B - 0.8) / 0.3) ** 2)
    w = np.exp(L - L.max())
    w /= w.sum()
    mean = np.array([(w * A).sum(), (w * B).sum()])
    sd = np.sqrt(np.array([(w * A * A).sum(), (w * B * B).sum()]) - mean**2)
    emit({"exp": "tiny_posterior", "kind": "exact (quadrature)", "mean": mean.tolist(), "sd": sd.tolist()})
    print(f"tiny: exact mean {mean.round(4)} sd {sd.round(4)}", flush=True)
    for grad, ell in (("exact", 1), ("brief", 1), ("brief", 5), ("brief", 25)):
        res = bl.sample_posterior(np.random.default_rng(3), m, X, [prior],
                                  bl.LangevinConfig(step_size=0.06, gradient=grad, n_gibbs=ell), n_chains=4,
                                  n_warmup=300, n_samples=3000, thin=3)
        d = res.draws
        kind = f"Langevin, {grad} grad log Z" + (f", l={ell}" if grad == "brief" else "")
        rec = {"exp": "tiny_posterior", "kind": kind,
               "mean": d.mean(axis=(0, 1)).tolist(), "mcse": mcse_mean(d).tolist(), "sd": d.std(axis=(0, 1)).tolist(),
               "rhat": rhat(d).tolist(), "shift_in_posterior_sd": ((d.mean(axis=(0, 1)) - mean) / sd).tolist()}
        emit(rec)
        print(f"tiny: {rec['kind']}: mean {np.round(rec['mean'], 4)} +- {np.round(rec['mcse'], 4)}, shift/sd "
              f"{np.round(rec['shift_in_posterior_sd'], 3)}", flush=True)


def _plot_fig5(plt, path, fig5_recs):
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.5))
    sizes = sorted({r["N"] for r in fig5_recs})
    for i, (ax, name) in enumerate(zip(axes, ("mae", "mre"), strict=True)):
        for key, lab in (("ml_final", "ML (CD-1, final)"), ("ml_best", "ML (best epoch, oracle)"),
                         ("bayes", "Bayes (Langevin mean)")):
            vals = [[r[key][i] for r in fig5_recs if r["N"] == n] for n in sizes]
            ax.errorbar(sizes, [np.mean(v) for v in vals],
                        yerr=[np.std(v, ddof=1) / np.sqrt(len(v)) if len(v) > 1 else 0 for v in vals],
                        marker="o", capsize=3, label=lab)
        ax.set_xlabel("N")
        ax.set_ylabel(name)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def plots(prefix, fig3, fig4, fig5_recs, fig6):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not importable: no PNGs (pip install 'harmonium[plot]')")
        return
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for c, tr in enumerate(np.asarray(fig3)):
        ax.plot(tr, lw=0.8, label=f"chain {c + 1}")
    ax.set_xlabel("Langevin step")
    ax.set_ylabel("W_11")
    ax.axvline(N_WARMUP, color="k", ls=":", lw=0.8)
    ax.legend()
    fig.tight_layout()
    fig.savefig(prefix + "-fig3.png", dpi=120)
    fig, axes = plt.subplots(1, len(fig4), figsize=(10, 3.5))
    for ax, (label, rec) in zip(np.atleast_1d(axes), fig4.items(), strict=True):
        ls = [int(k) for k in rec["brief"]]
        mu = [rec["brief"][str(k)]["mean"] for k in ls]
        se = [1.64 * rec["brief"][str(k)]["se"] for k in ls]
        ax.errorbar(ls, mu, yerr=se, marker="o", label="brief sampling")
        ax.axhline(rec["perfect_mean"], ls="--", color="k", label="perfect sampling (CFTP)")
        ax.axhspan(rec["perfect_mean"] - 1.64 * rec["perfect_se"], rec["perfect_mean"] + 1.64 * rec["perfect_se"],
                   color="k", alpha=0.1)
        ax.set_xscale("log")
        ax.set_xlabel("l (Gibbs sweeps)")
        ax.set_ylabel("d log Z / d W_11")
        ax.set_title(label)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(prefix + "-fig4.png", dpi=120)
    _plot_fig5(plt, prefix + "-fig5.png", fig5_recs)
    fig, ax = plt.subplots(figsize=(5, 3.5))
    lz = np.asarray(fig6["log_z"])
    z = np.exp(lz - lz.mean())
    ax.hist(z, bins=20)
    ax.set_xlabel("Z / exp(mean log Z)")
    ax.set_title("naive MC estimates of Z (100 x 1000 samples)")
    fig.tight_layout()
    fig.savefig(prefix + "-fig6.png", dpi=120)
    print("figures written:", prefix + "-fig{3,4,5,6}.png")


def plot_convergence(prefix):
    """<prefix>-rhat.png: worst split R-hat over 500 entries of V against the stored draws used (fig5 records
    of the current setting), one line per data set, with the 1.01 goal."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not importable: no PNG (pip install 'harmonium[plot]')")
        return
    recs = [json.loads(line) for line in open(prefix + ".jsonl")]
    recs = [r for r in recs if r.get("exp") == "fig5" and "rhat_V_max_by_draws" in r]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    colors = {n: f"C{i}" for i, n in enumerate(sorted({r["N"] for r in recs}))}
    for r in recs:
        path = r["rhat_V_max_by_draws"]
        ax.plot([int(k) * r["n_chains"] for k in path], list(path.values()), marker="o", color=colors[r["N"]],
                lw=0.8, label=f"N = {r['N']}" if r["run"] == 0 else None)
    ax.axhline(1.01, color="k", ls=":", lw=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("stored draws, all chains (thin 10, after burn-in)")
    ax.set_ylabel("max split R-hat over 500 entries of V")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(prefix + "-rhat.png", dpi=120)
    path = prefix + ".png" if prefix.endswith("-fig5") else prefix + "-fig5.png"
    _plot_fig5(plt, path, recs)
    print("figures written:", prefix + "-rhat.png", path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--sizes", type=int, nargs="+", default=[25, 50, 100, 200])
    ap.add_argument("--fig4-runs", type=int, default=50)
    ap.add_argument("--var-repeats", type=int, default=200)
    ap.add_argument("--out", default="benchmarks/harmoniums/results/bayesian-efh")
    ap.add_argument("--only", nargs="*", default=None, help="subset of: fig5 fig4 fig6 var eb eb_l tiny plot")
    ap.add_argument("--warmup", type=int, default=N_WARMUP, help="Langevin burn-in steps (fig5)")
    ap.add_argument("--draws", type=int, default=N_DRAWS, help="stored draws per chain (fig5)")
    ap.add_argument("--thin", type=int, default=THIN, help="Langevin steps per stored draw (fig5)")
    ap.add_argument("--chains", type=int, default=N_CHAINS, help="Langevin chains (fig5)")
    ap.add_argument("--eps", type=float, default=EPS_FIG5, help="Langevin step size (fig5)")
    ap.add_argument("--eb-iter", type=int, default=30, help="Monte Carlo EM iterations (eb)")
    args = ap.parse_args(argv)
    globals().update(N_WARMUP=args.warmup, N_DRAWS=args.draws, THIN=args.thin, N_CHAINS=args.chains,
                     EPS_FIG5=args.eps)
    W_true, redraws = true_couplings(0)
    path = args.out + ".jsonl"
    todo = set(args.only or ["fig5", "fig4", "fig6", "var", "eb", "tiny"])
    with open(path, "a") as fh:
        def emit(rec):
            rec = {"time": time.strftime("%Y-%m-%dT%H:%M:%S"), "host": platform.node(), "load": os.getloadavg()[0],
                   **rec}
            fh.write(json.dumps(rec) + "\n")
            fh.flush()

        emit({"exp": "setup", "M": M, "J": J, "A_redraws": redraws, "V_min": float((W_true @ W_true.T).min()),
              "V_mean": float((W_true @ W_true.T).mean()), "eps": EPS, "eps_fig5": EPS_FIG5,
              "l": L_BRIEF, "sigma": SIGMA,
              "cd_lr": CD_LR, "cd_epochs": CD_EPOCHS, "n_warmup": N_WARMUP, "n_draws": N_DRAWS, "thin": THIN,
              "n_chains": N_CHAINS, "argv": sys.argv})
        fig3 = fig4 = fig6 = None
        recs = []
        if "fig5" in todo:
            fig3 = fig5_errors(args, W_true, lambda r: (recs.append(r), emit(r)))
        if "fig4" in todo:
            fig4 = fig4_brief(args, W_true, emit)
        if "fig6" in todo:
            fig6 = fig6_naive(args, W_true, emit)
        if "var" in todo:
            variance_313(args, W_true, emit)
        if "eb" in todo:
            empirical_bayes(args, W_true, emit)
        if "eb_l" in todo:
            empirical_bayes_brief_l(args, W_true, emit)
        if "tiny" in todo:
            tiny_posterior(args, W_true, emit)
    if "plot" in todo:
        plot_convergence(args.out)
    if fig3 is not None and fig4 is not None and fig6 is not None:
        plots(args.out, fig3, fig4, [r for r in recs if r.get("exp") == "fig5"], fig6)


if __name__ == "__main__":
    main()
