"""harmonium's HDP against tomotopy.HDPModel on the same token stream.

Every (system, repeat) runs in its own subprocess. Each loads the corpus,
splits it 90/10 by document (seed 0) and each test document's tokens 50/50
(seed 0) with ``_common.load_data`` (the split of the LDA benchmarks), and
trains on the training documents, with the same settings: topic-word prior
beta = 0.01, initial concentrations alpha = gamma = 1, resampled/optimised by
each system's own method (harmonium: auxiliary variables; tomotopy:
``optim_interval`` = 10), ``--initial-topics`` topics at start.

Measured:

* seconds per iteration over the second half of the run (iterations
  (P, 2P], P = iters // 2), initialisation and evaluation excluded;
* the number of topics after every ``--eval-every`` iterations and at the end;
* held-out perplexity by document completion, scored identically for every
  system by harmonium's code: the system's used topics phi_k plus one
  "new topic" row 1/V, prior weights alpha_k of each (harmonium: alpha tau_k and
  alpha tau_u; tomotopy: the alpha of its own ``convert_to_lda`` and
  alpha gamma / (m.. + gamma) for the new row), theta of the observed
  halves by harmonium's fixed-topics Gibbs sampler (50 sweeps), log-likelihood
  of the held-out halves by ``completion_perplexity``.

Example::

    .venv/bin/python benchmarks/isbn/hdp_peers.py --max-docs 20000 --iters 200 --repeats 3 \\
        --out benchmarks/isbn/results/hdp-debian20k.jsonl
    .venv/bin/python benchmarks/isbn/hdp_peers.py --table benchmarks/isbn/results/hdp-debian20k.jsonl
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import statistics
import sys
import time
import traceback
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parents[1]  # benchmarks/, where the shared _common.py lives
sys.path.insert(0, str(HERE))

import _common as C  # noqa: E402

BETA = 0.01


def score(phi_used: np.ndarray, alpha_used: np.ndarray, new_weight: float, data, n_iter: int = 50) -> float:
    """Document-completion perplexity of (used topics + the new-topic row), harmonium's theta and scoring."""
    from harmonium.evaluation import completion_perplexity
    from harmonium.inference.mcmc.lda.infer import infer_fixed_topics

    V = data.corpus.n_words
    phi = np.vstack([np.asarray(phi_used, dtype=np.float64), np.full((1, V), 1.0 / V)])
    phi /= phi.sum(axis=1, keepdims=True)
    alpha = np.append(np.asarray(alpha_used, dtype=np.float64), max(float(new_weight), 1e-300))
    theta = infer_fixed_topics(np.random.default_rng(0), data.observed.tokens(), np.ascontiguousarray(phi.T),
                               alpha, n_iter)
    return float(completion_perplexity(theta, phi, data.held).perplexity)


class Harmonium:
    system = "harmonium"

    def __init__(self, cfg):
        self.cfg = cfg

    def versions(self):
        import harmonium

        return {"harmonium": getattr(harmonium, "__version__", "?"), "git": C.git_revision(str(HERE.parent))}

    def prepare(self, data):
        from harmonium.inference.mcmc.isbn import hdp as da
        from harmonium.models.directed.hdp import HDPModel

        self.da = da
        self.tokens = data.train.tokens()
        v = self.cfg.get("variant") or {}  # --variant: the estimator's settings that differ from these
        self.model = HDPModel(v.get("beta", BETA), data.corpus.n_words)
        self.rng = np.random.default_rng(self.cfg["seed"])
        self.state = da.init(self.rng, self.tokens, self.model, n_topics=v.get("initial_topics",
                                                                                self.cfg["initial_topics"]),
                             alpha=1.0, gamma=1.0)
        self.kernel = da.build_kernel(sampler=self.cfg.get("sampler", "sparse"), sample_alpha=True,
                                      sample_gamma=True, compute_log_joint=False,
                                      split_merge_proposals=v.get("split_merge", 0),
                                      split_merge_launch=v.get("split_merge_launch", 3),
                                      split_merge_unit=v.get("split_merge_unit", "token"),
                                      sample_beta=v.get("sample_beta", False))
        # split_merge_until / _every: split-merge only in this first fraction of the run, every n-th iteration
        # (a fixed schedule, exact)
        self.plain = da.build_kernel(sampler=self.cfg.get("sampler", "sparse"), sample_alpha=True, sample_gamma=True,
                                     compute_log_joint=False, sample_beta=v.get("sample_beta", False))
        until = v.get("split_merge_until")
        self.sm_iters = self.cfg["iters"] if until is None else int(until * self.cfg["iters"])
        self.sm_every = int(v.get("split_merge_every", 1))
        self.it = 0

    def step(self, n):
        for _ in range(n):
            sm = self.it < self.sm_iters and self.it % self.sm_every == 0
            kernel = self.kernel if sm else self.plain
            self.state, _ = kernel(self.rng, self.state, self.tokens, self.model)
            self.it += 1

    def n_topics(self):
        return int(self.state.n_topics)

    def topics(self):
        st = self.state
        K = st.n_topics
        return self.da.topic_word(st, self.model), st.alpha * st.tau[:K], st.alpha * st.tau[K]

    def hyper(self):
        return {"alpha": self.state.alpha, "gamma": self.state.gamma, "beta": self.da.current_beta(self.state,
                                                                                                   self.model)}


class Tomotopy:
    system = "tomotopy"

    def __init__(self, cfg):
        self.cfg = cfg

    def versions(self):
        import tomotopy as tp

        return {"tomotopy": tp.__version__, "isa": tp.isa}

    def prepare(self, data):
        import tomotopy as tp

        self.tp = tp
        terms = list(data.corpus.vocabulary)
        self.m = tp.HDPModel(initial_k=self.cfg["initial_topics"], alpha=1.0, gamma=1.0, eta=BETA,
                             seed=self.cfg["seed"])
        for d in C.doc_word_lists(data.train, terms):
            self.m.add_doc(d)
        self.m.optim_interval = 10
        self.m.train(0, workers=1)
        self.terms = terms  # tomotopy orders its vocabulary itself: topics() maps it back to ours

    def step(self, n):
        self.m.train(n, workers=1)

    def n_topics(self):
        return int(self.m.live_k)

    def topics(self):
        lda, mapping = self.m.convert_to_lda(topic_threshold=0.0)
        pos = {w: i for i, w in enumerate(self.terms)}
        cols = np.array([pos[w] for w in lda.used_vocabs])
        phi = np.zeros((lda.k, len(self.terms)))
        for k in range(lda.k):
            phi[k, cols] = np.asarray(lda.get_topic_word_dist(k))
        # words the model never saw get the prior share (none here: all words occur in training)
        phi = (phi + 1e-12) / (phi + 1e-12).sum(axis=1, keepdims=True)
        a, g, m = float(self.m.alpha), float(self.m.gamma), float(self.m.num_tables)
        return phi, np.asarray(lda.alpha, dtype=np.float64), a * g / (m + g)

    def hyper(self):
        return {"alpha": float(self.m.alpha), "gamma": float(self.m.gamma)}


class Topica:
    """topica.HDP (direct-assignment Gibbs, a port of blei-lab/hdp). Its ``fit`` cannot be resumed, so the
    run is one ``fit(iters)`` call: seconds per iteration are that call's time over ``iters`` (its
    initialisation included), and the topic count and perplexity are taken at the end only."""

    system = "topica"
    one_shot = True

    def __init__(self, cfg):
        self.cfg = cfg

    def versions(self):
        import topica

        return {"topica": topica.__version__}

    def prepare(self, data):
        import topica

        self.terms = list(data.corpus.vocabulary)
        self.docs = C.doc_word_lists(data.train, self.terms)
        self.m = topica.HDP(alpha=1.0, gamma=1.0, beta=BETA, seed=self.cfg["seed"], resample_conc=True)

    def step(self, n):
        self.m.fit(self.docs, iters=n, keep_theta_draws=False)

    def n_topics(self):
        return int(self.m.num_topics)

    def topics(self):
        pos = {w: i for i, w in enumerate(self.terms)}
        cols = np.array([pos[w] for w in self.m.vocabulary])
        tw = np.asarray(self.m.topic_word, dtype=np.float64)
        phi = np.zeros((tw.shape[0], len(self.terms)))
        phi[:, cols] = tw
        phi = (phi + 1e-12) / (phi + 1e-12).sum(axis=1, keepdims=True)
        # topica exposes no global weights tau: alpha times the mean training-document topic proportions,
        # and no mass for a new topic (a slight disadvantage to topica in the scoring)
        theta_bar = np.asarray(self.m.doc_topic, dtype=np.float64).mean(axis=0)
        return phi, float(self.m.alpha) * theta_bar / theta_bar.sum(), 0.0

    def hyper(self):
        return {"alpha": float(self.m.alpha), "gamma": float(self.m.gamma)}


RUNNERS = {"harmonium": Harmonium, "harmonium-plain": Harmonium, "tomotopy": Tomotopy, "topica": Topica}


def worker(cfg: dict) -> dict:
    res = dict(cfg)
    res["started"] = _dt.datetime.now().isoformat(timespec="seconds")
    try:
        data = C.load_data(cfg["corpus"], cfg.get("max_docs"))
        res["data"] = data.describe()
        if cfg["system"] == "harmonium-plain":
            cfg = dict(cfg, sampler="plain")
        runner = (Harmonium if cfg["system"].startswith("harmonium:") else RUNNERS[cfg["system"]])(cfg)
        res["versions"] = runner.versions()
        t = time.perf_counter()
        runner.prepare(data)
        res["prepare_s"] = time.perf_counter() - t
        iters, every = cfg["iters"], cfg["eval_every"]
        P = iters // 2
        if getattr(runner, "one_shot", False):  # one fit call: s/iter over the whole run, end point only
            every, P = iters, 0
        trace, train_s, done = [], 0.0, 0
        measured = measured_cpu = train_cpu = 0.0
        while done < iters:
            n = min(every, iters - done)
            if done < P < done + n:  # split so that the window starts exactly at P
                n = P - done
            t, c = time.perf_counter(), time.process_time()
            runner.step(n)
            dt, dc = time.perf_counter() - t, time.process_time() - c
            train_s += dt
            train_cpu += dc
            if done >= P:
                measured += dt
                measured_cpu += dc
            done += n
            point = {"iteration": done, "train_s": train_s, "train_cpu_s": train_cpu, "n_topics": runner.n_topics(),
                     **runner.hyper()}
            if cfg["quality_trace"] or done == iters:
                phi, a, new = runner.topics()
                point["perplexity"] = score(phi, a, new, data)
            trace.append(point)
        res["trace"] = trace
        res["s_per_iter"] = train_s / iters if getattr(runner, "one_shot", False) else measured / (iters - P)
        # CPU seconds of this (single-threaded) process: less sensitive than the wall clock to other load
        res["cpu_s_per_iter"] = train_cpu / iters if getattr(runner, "one_shot", False) else measured_cpu / (iters - P)
        res["cpu_s_total"] = train_cpu
        res["tokens_per_s"] = data.n_train_tokens / res["s_per_iter"]
        res["n_topics"] = trace[-1]["n_topics"]
        res["perplexity"] = trace[-1]["perplexity"]
        res["maxrss_mib"] = C.maxrss_mib()
    except Exception as exc:  # noqa: BLE001 - recorded, the harness goes on
        res["error"] = f"{type(exc).__name__}: {exc}"
        res["traceback"] = traceback.format_exc()
    return res


def tables(records: list[dict]) -> str:
    lines = []
    groups: dict[tuple, list[dict]] = {}
    for r in records:
        groups.setdefault((r["corpus"], r.get("max_docs"), r["iters"], r["initial_topics"], r["system"]), []).append(r)
    for key in sorted({k[:4] for k in groups}, key=str):
        corpus, max_docs, iters, k0 = key
        rows = {k[4]: v for k, v in groups.items() if k[:4] == key}
        ok0 = [r for v in rows.values() for r in v if "error" not in r]
        d = ok0[0]["data"] if ok0 else {}
        lines.append(f"\n### {corpus}{'' if max_docs is None else f' (first {max_docs} rows)'}: "
                     f"{d.get('n_train_docs', '?')} training documents, {d.get('n_train_tokens', '?')} tokens, "
                     f"V = {d.get('n_words', '?')}; {iters} iterations from {k0} topics\n")
        lines.append("| system | runs | s/iter min | median | max | CPU s/iter (median, min-max) "
                     "| CPU s/iter, whole run (median, min-max) "
                     "| iter/s vs tomotopy (median) | topics (min-max) "
                     "| perplexity (median, min-max) | alpha, gamma (run 1) | other load (cores, max) |")
        lines.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
        base = None
        if "tomotopy" in rows:
            ok = [r for r in rows["tomotopy"] if "error" not in r]
            if ok:
                base = statistics.median(r["s_per_iter"] for r in ok)
        for system, v in sorted(rows.items(), key=lambda kv: kv[0] != "harmonium"):
            ok = [r for r in v if "error" not in r]
            if not ok:
                lines.append(f"| {system} | 0/{len(v)} | failed: {v[0]['error'][:100]} ||||||||")
                continue
            s = sorted(r["s_per_iter"] for r in ok)
            med = statistics.median(s)
            cpu = sorted(r["cpu_s_per_iter"] for r in ok if "cpu_s_per_iter" in r)
            cpu_cell = f"{statistics.median(cpu):.3f} ({cpu[0]:.3f}-{cpu[-1]:.3f})" if cpu else "n/a"
            whole = sorted(r["cpu_s_total"] / r["iters"] for r in ok if "cpu_s_total" in r)
            cpu_cell += (f" | {statistics.median(whole):.3f} ({whole[0]:.3f}-{whole[-1]:.3f})" if whole else " | n/a")
            ks = [r["n_topics"] for r in ok]
            ps = sorted(r["perplexity"] for r in ok)
            h = ok[0]["trace"][-1]
            lines.append(f"| {system} | {len(ok)}/{len(v)} | {s[0]:.3f} | {med:.3f} | {s[-1]:.3f} | {cpu_cell} | "
                         f"{'n/a' if base is None else f'{base / med:.2f}'} | {min(ks)}-{max(ks)} | "
                         f"{statistics.median(ps):.1f} ({ps[0]:.1f}-{ps[-1]:.1f}) | "
                         f"{h['alpha']:.3g}, {h['gamma']:.3g}"
                         + (f", beta {h['beta']:.3g}" if "beta" in h else "") + " | "
                         f"{max(r.get('other_busy_cores', 0.0) for r in ok):.2f} |")
        lines.append("\nTraces (run 1; iteration: topics / perplexity):\n")
        for system, v in rows.items():
            ok = [r for r in v if "error" not in r]
            if ok:
                tr = " ".join(f"{p['iteration']}:{p['n_topics']}"
                              + (f"/{p['perplexity']:.0f}" if "perplexity" in p else "") for p in ok[0]["trace"])
                lines.append(f"- {system}: {tr}")
    return "\n".join(lines)


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if C.serve_worker(argv, worker):
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", choices=C.CORPORA, default="debian")
    ap.add_argument("--max-docs", type=int, default=None)
    ap.add_argument("--systems", nargs="+", default=["harmonium", "tomotopy", "topica"], choices=list(RUNNERS))
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--eval-every", type=int, default=50)
    ap.add_argument("--quality-trace", action="store_true", help="score the perplexity at every evaluation")
    ap.add_argument("--initial-topics", type=int, default=10)
    ap.add_argument("--variant", nargs="*", default=[], metavar="NAME=JSON",
                    help="also run harmonium with these settings, as system 'harmonium:NAME', alternating with "
                         "--systems; JSON keys: initial_topics, beta, split_merge, split_merge_launch, sample_beta, "
                         "split_merge_until (a fraction of --iters), split_merge_every")
    ap.add_argument("--repeats", type=int, default=3)
    C.add_run_options(ap, timeout=1800, quiet_cores=0.5, max_wait=60)
    args = ap.parse_args(argv)
    if args.table:
        recs = C.read_records(args.table)
        print(tables(recs))
        return
    meta = C.run_meta("benchmarks/isbn/hdp_peers.py", argv)
    out = Path(args.out) if args.out else None
    records = []
    variants = {}
    for nv in args.variant:
        name, _, js = nv.partition("=")
        variants[f"harmonium:{name}"] = json.loads(js)
    for rep in range(args.repeats):
        for system in [*args.systems, *variants]:
            cfg = {"corpus": args.corpus, "max_docs": args.max_docs, "system": system, "iters": args.iters,
                   "variant": variants.get(system),
                   "eval_every": args.eval_every, "quality_trace": args.quality_trace,
                   "initial_topics": args.initial_topics, "repeat": rep, "seed": args.seed + rep, "threads": 1,
                   **meta}
            print(f"[{time.strftime('%H:%M:%S')}] {system} rep={rep} ...", end=" ", flush=True)
            r = C.run_recorded(cfg, args.timeout, __file__, quiet_cores=args.quiet_cores, max_wait=args.max_wait,
                                out=out)
            records.append(r)
            if "error" in r:
                print(f"FAILED {r['error'][:300]}", flush=True)
            else:
                print(f"{r['s_per_iter']:.3f} s/iter ({r['cpu_s_per_iter']:.3f} CPU), "
                      f"K={r['n_topics']}, perplexity {r['perplexity']:.1f} "
                      f"(other load {r['other_busy_cores']:.2f})", flush=True)
    print(tables(records))


if __name__ == "__main__":
    main()
