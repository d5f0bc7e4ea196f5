"""Infinite PAM (seed 002 §6, Fig. 3a) against LDA and HDP on Debian: held-out perplexity (issue 8).

Every (system, seed) runs in its own subprocess. Each loads the corpus, splits it 90/10 by document (seed 0)
and each test document's tokens 50/50 (seed 0) with ``_common.load_data`` (the split of hdp_peers/lda_peers),
and trains on the training documents' token stream:

* ``lda:K``: harmonium's collapsed Gibbs LDA kernel (SparseLDA sweep; the kernel ``harmonium.LDA`` runs),
  alpha = 0.1 per topic (as lda_peers), beta = 0.01, random initial topics;
* ``hdp``: harmonium's direct-assignment HDP kernel (the kernel ``harmonium.HDP`` runs), beta = 0.01,
  alpha = gamma = 1 at start, both resampled by auxiliary variables, ``--initial-topics`` random topics;
* ``pam``: ``isbn_examples.infinite_pam(V, 1, 1, beta=0.01)`` sampled by the ISBN engine (``--engine compiled``:
  ``CompiledISBNSampler``; ``python``: ``ISBNSampler``, tiny data only): super-topic and sub-topic document
  specific HDPs, words from the sub-topic; ``--pam-concentration sample`` resamples alpha and gamma of both
  nodes (``fixed``: alpha = gamma = 1); initial states uniformly at random among ``--pam-init S SUB`` super and
  sub states (0 0: everything in state 0).

The same number of iterations for every system. Measured: seconds per iteration over the second half of the
run (initialisation and evaluation excluded), the number of topics (PAM: super and sub) at the end, and the
held-out perplexity by document completion, with the same held-out halves and the same
``completion_perplexity`` call for every system. theta of the observed halves with the global parameters
frozen at the final training state, 50 sweeps, the second half averaged:

* LDA: phi of the final counts, harmonium's fixed-topics Gibbs (``infer_fixed_topics``), alpha = 0.1;
* HDP: the used topics + one new-topic row (1/V), prior weights alpha tau_k and alpha tau_u, the same
  fixed-topics Gibbs (``hdp_peers.score``);
* PAM: the engine's ``fold_in`` of the observed halves (super and sub labels per sweep), theta over the
  sub-topics + one new row by the Rao-Blackwellised chain estimator of ``harmonium.evaluation.pam``
  (seed 002 footnote 2),
  phi of the final counts + the new row (1/V).

Example::

    .venv/bin/python benchmarks/isbn/isbn_pam_debian.py --max-docs 20000 --iters 300 --systems lda:20 lda:50 \\
        lda:100 hdp pam --repeats 2 --out benchmarks/isbn/results/isbn-pam-debian.jsonl
    .venv/bin/python benchmarks/isbn/isbn_pam_debian.py --table benchmarks/isbn/results/isbn-pam-debian.jsonl
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

import harmonium.evaluation.pam as E  # noqa: E402

BETA = 0.01
LDA_ALPHA = 0.1
FOLD_SWEEPS = 50  # as infer_fixed_topics' n_iter in hdp_peers/lda_peers: the second half is averaged


def _token_docs(tokens) -> np.ndarray:
    return np.repeat(np.arange(tokens.doc_ptr.shape[0] - 1, dtype=np.int64), np.diff(tokens.doc_ptr))


class LDARunner:
    def __init__(self, cfg):
        self.cfg, self.K = cfg, int(cfg["system"].split(":")[1])

    def prepare(self, data):
        from harmonium.inference.mcmc.lda import collapsed_gibbs as cg
        from harmonium.models.directed.lda import make_model

        self.tokens = data.train.tokens()
        self.model = make_model(self.K, data.corpus.n_words, LDA_ALPHA, BETA)
        self.rng = np.random.default_rng(self.cfg["seed"])
        self.state = cg.init(self.rng, self.tokens, self.model)
        self.kernel = cg.build_kernel(sampler="sparse", compute_log_joint=False)

    def step(self, n):
        for _ in range(n):
            self.state, _ = self.kernel(self.rng, self.state, self.tokens, self.model)

    def n_topics(self):
        return {"n_topics": self.K}

    def hyper(self):
        return {}

    def score(self, data):
        from harmonium.models.directed.lda import topic_word_mean

        phi = topic_word_mean(self.state.n_wk, self.state.n_k, BETA)
        return C.heldout_perplexity(phi, LDA_ALPHA, data, n_iter=FOLD_SWEEPS)


class HDPRunner:
    def __init__(self, cfg):
        import hdp_peers

        self.h = hdp_peers.Harmonium(cfg)
        self.hdp_score = hdp_peers.score

    def prepare(self, data):
        self.h.prepare(data)

    def step(self, n):
        self.h.step(n)

    def n_topics(self):
        return {"n_topics": self.h.n_topics()}

    def hyper(self):
        return {k: float(v) for k, v in self.h.hyper().items()}

    def score(self, data):
        phi, a, new = self.h.topics()
        return self.hdp_score(phi, a, new, data, n_iter=FOLD_SWEEPS)


class PAMRunner:
    def __init__(self, cfg):
        self.cfg = cfg

    def prepare(self, data):
        from harmonium.models.directed.isbn_examples import infinite_pam

        cfg = self.cfg
        V = data.corpus.n_words
        ts = data.train.tokens()
        doc = _token_docs(ts)
        words = np.asarray(ts.words, dtype=np.int64)
        self.rng = np.random.default_rng(cfg["seed"])
        k1, k2 = cfg["pam_init"]
        init = None
        if k1 > 0 and k2 > 0:
            init = {"super": self.rng.integers(0, k1, doc.shape[0]), "sub": self.rng.integers(0, k2, doc.shape[0])}
        net = infinite_pam(V, alpha=1.0, gamma=1.0, beta=BETA)
        if cfg["engine"] == "python":
            from harmonium.inference.mcmc.isbn.gibbs import ISBNSampler

            self.s = E.PythonPAMView(ISBNSampler(net, {"doc": doc}, {"w": words}, init=init), BETA)
        else:
            from harmonium.inference.mcmc.isbn.compiled import CompiledISBNSampler

            self.s = CompiledISBNSampler(net, {"doc": doc}, {"w": words}, init=init,
                                         sample_concentration=cfg["pam_concentration"] == "sample")

    def step(self, n):
        for _ in range(n):
            self.s.step(self.rng)

    def n_topics(self):
        ns = self.s.n_states()
        return {"n_topics": int(ns["sub"]), "n_super": int(ns["super"])}

    def hyper(self):
        return {f"{p}_{b}": float(getattr(self.s, p)(b)) for b in ("super", "sub") for p in ("alpha", "gamma")}

    def score(self, data):
        from harmonium.evaluation import completion_perplexity

        ts = data.observed.tokens()
        doc = _token_docs(ts)
        # the test documents are new values of the doc index, numbered from 0 in their own space; sweep 0 of
        # fold_in is the sequential initialisation, then FOLD_SWEEPS Gibbs scans of which the second half is
        # averaged (as infer_fixed_topics does for LDA and HDP)
        draws = self.s.fold_in({"doc": doc}, {"w": np.asarray(ts.words, dtype=np.int64)},
                               n_sweeps=FOLD_SWEEPS + 1, rng=np.random.default_rng(0))
        theta = E.theta_from_fold_in(draws, doc, int(data.observed.n_docs), self.s,
                                     keep_from=1 + FOLD_SWEEPS // 2)
        phi = E.topic_word_with_new(self.s.observed_counts(), BETA)
        return float(completion_perplexity(theta, phi, data.held).perplexity)


def make_runner(cfg):
    name = cfg["system"]
    if name.startswith("lda:"):
        return LDARunner(cfg)
    if name == "hdp":
        return HDPRunner(cfg)
    if name == "pam":
        return PAMRunner(cfg)
    raise ValueError(f"unknown system {name!r}: lda:K, hdp or pam")


def worker(cfg: dict) -> dict:
    res = dict(cfg)
    res["started"] = _dt.datetime.now().isoformat(timespec="seconds")
    try:
        import harmonium

        res["versions"] = {"harmonium": getattr(harmonium, "__version__", "?"),
                           "git": C.git_revision(str(HERE.parent))}
        data = C.load_data(cfg["corpus"], cfg.get("max_docs"))
        res["data"] = data.describe()
        runner = make_runner(cfg)
        t = time.perf_counter()
        runner.prepare(data)
        res["prepare_s"] = time.perf_counter() - t
        iters, every = cfg["iters"], cfg["eval_every"]
        P = iters // 2
        trace, train_s, measured, done = [], 0.0, 0.0, 0
        while done < iters:
            n = min(every, iters - done)
            if done < P < done + n:  # split so that the timed window starts exactly at P
                n = P - done
            t = time.perf_counter()
            runner.step(n)
            dt = time.perf_counter() - t
            train_s += dt
            if done >= P:
                measured += dt
            done += n
            point = {"iteration": done, "train_s": train_s, **runner.n_topics(), **runner.hyper()}
            if cfg["quality_trace"] or done == iters:
                t = time.perf_counter()
                point["perplexity"] = runner.score(data)
                point["score_s"] = time.perf_counter() - t
            trace.append(point)
            print(json.dumps(point), file=sys.stderr, flush=True)
        res["trace"] = trace
        res["s_per_iter"] = measured / (iters - P)
        res["tokens_per_s"] = data.n_train_tokens / res["s_per_iter"]
        res.update({k: v for k, v in trace[-1].items() if k.startswith("n_")})
        res["perplexity"] = trace[-1]["perplexity"]
        res["maxrss_mib"] = C.maxrss_mib()
    except Exception as exc:  # noqa: BLE001 - recorded, the harness goes on
        res["error"] = f"{type(exc).__name__}: {exc}"
        res["traceback"] = traceback.format_exc()
    return res


def _label(r: dict) -> str:
    """The row name of a run: the system plus its initialisation (HDP topics, PAM super x sub states)."""
    if r["system"] == "hdp":
        return f"hdp, {r['initial_topics']} initial topics"
    if r["system"] == "pam":
        k1, k2 = r["pam_init"]
        conc = "" if r.get("pam_concentration", "sample") == "sample" else ", fixed alpha = gamma = 1"
        return f"pam, init {k1} x {k2}{conc}" + ("" if r.get("engine", "compiled") == "compiled" else " (python)")
    return r["system"]


def _order(label: str):
    import re

    nums = [int(x) for x in re.findall(r"\d+", label)]
    return ({"lda": 0, "hdp": 1}.get(label[:3], 2), nums[-1] if nums else 0, label)


def tables(records: list[dict]) -> str:
    lines = []
    groups: dict[tuple, list[dict]] = {}
    for r in records:
        groups.setdefault((r["corpus"], r.get("max_docs"), r["iters"]), []).append(r)
    for (corpus, max_docs, iters), recs in sorted(groups.items(), key=lambda kv: str(kv[0])):
        ok0 = [r for r in recs if "error" not in r]
        d = ok0[0]["data"] if ok0 else {}
        lines.append(f"\n### {corpus}{'' if max_docs is None else f' (first {max_docs} rows)'}: "
                     f"{d.get('n_train_docs', '?')} training documents, {d.get('n_train_tokens', '?')} tokens, "
                     f"V = {d.get('n_words', '?')}; {d.get('n_test_docs_scored', '?')} test documents, "
                     f"{d.get('n_held_tokens', '?')} held-out tokens; {iters} iterations\n")
        lines.append("| system | runs | perplexity median (min-max) | sub-topics (min-max) | super-topics (min-max) "
                     "| s/iter median (min-max) | concentrations (run 1) | other load (cores, max) |")
        lines.append("|---|---|---|---|---|---|---|---|")
        by_sys: dict[str, list[dict]] = {}
        for r in recs:
            by_sys.setdefault(_label(r), []).append(r)
        for system in sorted(by_sys, key=_order):
            v = by_sys[system]
            ok = [r for r in v if "error" not in r]
            if not ok:
                lines.append(f"| {system} | 0/{len(v)} | failed: {v[0]['error'][:100]} ||||||")
                continue
            ps = sorted(r["perplexity"] for r in ok)
            ks = [r["n_topics"] for r in ok]
            sup = [r["n_super"] for r in ok if "n_super" in r]
            s = sorted(r["s_per_iter"] for r in ok)
            h = {k: v for k, v in ok[0]["trace"][-1].items() if "alpha" in k or "gamma" in k}
            lines.append(f"| {system} | {len(ok)}/{len(v)} | {statistics.median(ps):.1f} ({ps[0]:.1f}-{ps[-1]:.1f}) | "
                         f"{min(ks)}-{max(ks)} | {f'{min(sup)}-{max(sup)}' if sup else '-'} | "
                         f"{statistics.median(s):.3f} ({s[0]:.3f}-{s[-1]:.3f}) | "
                         f"{', '.join(f'{k} {x:.3g}' for k, x in h.items()) or 'fixed'} | "
                         f"{max(r.get('other_busy_cores', 0.0) for r in ok):.2f} |")
        lines.append("\nTraces (first run; iteration: sub-topics[/super] / perplexity):\n")
        for system in sorted(by_sys, key=_order):
            ok = [r for r in by_sys[system] if "error" not in r]
            if ok:
                tr = " ".join(f"{p['iteration']}:{p['n_topics']}" + (f"/{p['n_super']}" if "n_super" in p else "")
                              + (f"/{p['perplexity']:.0f}" if "perplexity" in p else "") for p in ok[0]["trace"])
                lines.append(f"- {system}: {tr}")
    return "\n".join(lines)


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if C.serve_worker(argv, worker):
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", choices=C.CORPORA, default="debian")
    ap.add_argument("--max-docs", type=int, default=20000)
    ap.add_argument("--systems", nargs="+", default=["lda:20", "lda:50", "lda:100", "hdp", "pam"])
    ap.add_argument("--iters", type=int, default=300)
    ap.add_argument("--eval-every", type=int, default=100)
    ap.add_argument("--quality-trace", action="store_true", help="score the perplexity at every evaluation")
    ap.add_argument("--initial-topics", type=int, default=50, help="HDP: random initial topics")
    ap.add_argument("--pam-init", type=int, nargs=2, default=[5, 50], metavar=("SUPER", "SUB"),
                    help="PAM: initial states uniformly at random among SUPER x SUB (0 0: all in state 0)")
    ap.add_argument("--pam-concentration", choices=["sample", "fixed"], default="sample")
    ap.add_argument("--engine", choices=["compiled", "python"], default="compiled")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--repeats-for", nargs="*", default=None,
                    help="systems that get --repeats seeds (default all); the others run seed 0 only")
    C.add_run_options(ap, timeout=3600, quiet_cores=0.7, max_wait=30)
    args = ap.parse_args(argv)
    if args.table:
        recs = C.read_records(args.table)
        print(tables(recs))
        return
    meta = C.run_meta("benchmarks/isbn/isbn_pam_debian.py", argv)
    out = Path(args.out) if args.out else None
    records = []
    for rep in range(args.repeats):
        for system in args.systems:
            if rep > 0 and args.repeats_for is not None and system not in args.repeats_for:
                continue
            cfg = {"corpus": args.corpus, "max_docs": args.max_docs, "system": system, "iters": args.iters,
                   "eval_every": args.eval_every, "quality_trace": args.quality_trace,
                   "initial_topics": args.initial_topics, "pam_init": args.pam_init,
                   "pam_concentration": args.pam_concentration, "engine": args.engine,
                   "repeat": rep, "seed": args.seed + rep, "threads": 1, **meta}
            print(f"[{time.strftime('%H:%M:%S')}] {system} seed={cfg['seed']} ...", end=" ", flush=True)
            r = C.run_recorded(cfg, args.timeout, __file__, quiet_cores=args.quiet_cores, max_wait=args.max_wait,
                                out=out)
            records.append(r)
            if "error" in r:
                print(f"FAILED {r['error'][:300]}", flush=True)
            else:
                sup = f"/{r['n_super']}" if "n_super" in r else ""
                print(f"{r['s_per_iter']:.3f} s/iter, K={r['n_topics']}{sup}, perplexity {r['perplexity']:.1f} "
                      f"(other load {r['other_busy_cores']:.2f})", flush=True)
    print(tables(records))


if __name__ == "__main__":
    main()
