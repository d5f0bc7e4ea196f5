"""Issue 18, item 4: the three engine ratios, measured in one run on the same Debian training documents.

(a) the compiled ISBN engine (``make_sampler(hdp network, engine="compiled")``) against the dedicated HDP
    sampler (``harmonium.inference.mcmc.isbn.hdp``, the kernel ``harmonium.HDP`` runs, SparseLDA buckets):
    seconds per iteration from the same random start (``--initial-topics`` labels, uniform tau,
    alpha = gamma = 1, both resampled by auxiliary variables under Gamma(1, 1), beta = 0.01);
(b) the compiled infinite PAM (``isbn_examples.infinite_pam``, both nodes' alpha and gamma resampled,
    ``--pam-init`` super x sub random labels) against the same HDP runs, seconds per iteration;
(c) the dedicated HDP against tomotopy.HDPModel (``hdp_peers.py``'s runners: ``initial_k``, ``optim_interval``
    10), iterations per second over the second half of ``--quality-iters`` iterations, and held-out perplexity
    of both scored by harmonium's code (``hdp_peers.score``: document completion, the used topics plus one
    new-topic row).

One iteration = the z sweep + tables + tau + concentrations (tomotopy: one ``train(1)``). Every
(repeat, system) is its own subprocess (1 thread) on the split of ``_common.load_data`` (first
``--max-docs`` rows of Debian, 90/10 by document, seed 0); the systems alternate within each repeat
(hdp, compiled, pam, tomotopy), repeat r uses seed r. Each run records wall and CPU (process) seconds of
every iteration; (a) and (b) compare iterations (W, W + T] (``--warmup`` W, ``--iters`` T) of each system
with the HDP run of the same repeat, (c) iterations (Q/2, Q] (``--quality-iters`` Q). Ratios per repeat, then
min / median / max over repeats, in CPU and wall seconds. Records go to ``--out`` (JSONL) as they finish;
``--table FILE`` prints the summary of a file.

tomotopy is imported from ``--tomotopy-site`` (appended to sys.path, so that harmonium's numpy is used).

    .venv/bin/python benchmarks/isbn/engine_ratios.py --out benchmarks/isbn/results/engine-ratios.jsonl
    .venv/bin/python benchmarks/isbn/engine_ratios.py --quick          # a 2,000-document smoke run
    .venv/bin/python benchmarks/isbn/engine_ratios.py --table benchmarks/isbn/results/engine-ratios.jsonl
"""

from __future__ import annotations

import argparse
import datetime as _dt
import statistics
import sys
import time
import traceback
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parents[1]  # benchmarks/, where the shared _common.py lives
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "isbn"))

import _common as C  # noqa: E402

BETA = 0.01
SYSTEMS = ("hdp", "compiled", "pam", "tomotopy")


def _token_docs(tokens) -> np.ndarray:
    return np.repeat(np.arange(tokens.doc_ptr.shape[0] - 1, dtype=np.int64), np.diff(tokens.doc_ptr))


def _start(seed: int, n: int, k: int) -> np.ndarray:
    """The random initial labels shared by the dedicated and the compiled HDP (0..K-1, all used)."""
    z = np.random.default_rng(seed).integers(0, k, n)
    return np.searchsorted(np.unique(z), z)


class DedicatedHDP:
    def prepare(self, cfg, data):
        from harmonium.inference.mcmc.isbn import hdp as da
        from harmonium.models.directed.hdp import HDPModel

        self.da = da
        self.tokens = data.train.tokens()
        self.model = HDPModel(BETA, data.corpus.n_words)
        z = _start(cfg["seed"], self.tokens.words.shape[0], cfg["initial_topics"]).astype(np.int32)
        K = int(z.max()) + 1
        self.state = da.state_from_assignments(self.tokens, self.model, z, np.full(K + 1, 1.0 / (K + 1)), 1.0, 1.0)
        self.kernel = da.build_kernel(sampler="sparse", sample_alpha=True, sample_gamma=True, compute_log_joint=False)
        self.rng = np.random.default_rng(cfg["seed"])

    def step(self):
        self.state, _ = self.kernel(self.rng, self.state, self.tokens, self.model)

    def states(self):
        return {"K": int(self.state.n_topics)}

    def perplexity(self, data):
        import hdp_peers

        st = self.state
        K = st.n_topics
        return hdp_peers.score(self.da.topic_word(st, self.model), st.alpha * st.tau[:K], st.alpha * st.tau[K], data)


class Compiled:
    def prepare(self, cfg, data):
        from harmonium.inference.mcmc.isbn.compiled import make_sampler
        from harmonium.models.directed import isbn_examples as ex

        ts = data.train.tokens()
        doc, w = _token_docs(ts), np.asarray(ts.words, dtype=np.int64)
        V = data.corpus.n_words
        if cfg["system"] == "compiled":
            net = ex.hdp(V, 1.0, 1.0, BETA)
            init = {"z": _start(cfg["seed"], w.size, cfg["initial_topics"])}
        else:
            net = ex.infinite_pam(V, 1.0, 1.0, BETA)
            r = np.random.default_rng(cfg["seed"])
            k1, k2 = cfg["pam_init"]
            init = {"super": r.integers(0, k1, w.size), "sub": r.integers(0, k2, w.size)}
        self.s = make_sampler(net, {"doc": doc}, {"w": w}, engine="compiled", init=init, sample_concentration=True)
        self.rng = np.random.default_rng(cfg["seed"])

    def step(self):
        self.s.step(self.rng)

    def states(self):
        return {f"K_{b}": k for b, k in self.s.n_states().items()}

    def perplexity(self, data):
        return None


class Tomotopy:
    def prepare(self, cfg, data):
        sys.path.append(cfg["tomotopy_site"])
        import hdp_peers

        self.t = hdp_peers.Tomotopy({"initial_topics": cfg["initial_topics"], "seed": cfg["seed"]})
        self.t.prepare(data)
        self.version = self.t.versions()

    def step(self):
        self.t.step(1)

    def states(self):
        return {"K": self.t.n_topics()}

    def perplexity(self, data):
        import hdp_peers

        return hdp_peers.score(*self.t.topics(), data)


RUNNERS = {"hdp": DedicatedHDP, "compiled": Compiled, "pam": Compiled, "tomotopy": Tomotopy}


def worker(cfg: dict) -> dict:
    """One system, one seed: prepare, iterate (wall and CPU seconds of every iteration), score."""
    res = dict(cfg)
    res["started"] = _dt.datetime.now().isoformat(timespec="seconds")
    try:
        res["git"] = C.git_revision(str(HERE.parent))
        data = C.load_data("debian", cfg["max_docs"])
        res["data"] = data.describe()
        run = RUNNERS[cfg["system"]]()
        t = time.perf_counter()
        run.prepare(cfg, data)
        res["prepare_s"] = time.perf_counter() - t
        res["versions"] = getattr(run, "version", None)
        n = cfg["n_iters"]
        wall, cpu, states = [], [], []
        for it in range(n):
            w0, c0 = time.perf_counter(), time.process_time()
            run.step()
            wall.append(time.perf_counter() - w0)
            cpu.append(time.process_time() - c0)
            if it + 1 in cfg["report_at"] or it + 1 == n:
                states.append({"iteration": it + 1, **run.states()})
        res["wall_s"], res["cpu_s"], res["states"] = wall, cpu, states
        if cfg["score"]:
            t = time.perf_counter()
            res["perplexity"] = run.perplexity(data)
            res["score_s"] = time.perf_counter() - t
        res["maxrss_mib"] = C.maxrss_mib()
    except Exception as exc:  # noqa: BLE001 - recorded, the harness goes on
        res["error"] = f"{type(exc).__name__}: {exc}"
        res["traceback"] = traceback.format_exc()
    return res


# -- summary ---------------------------------------------------------------------------------------
def _window(r: dict, lo: int, hi: int, clock: str) -> float:
    """Mean seconds per iteration over iterations (lo, hi] (1-based) of run r."""
    v = r[f"{clock}_s"][lo:hi]
    return float(sum(v) / len(v))


def _spread(v: list) -> str:
    if not v:
        return "n/a"
    s = sorted(v)
    return f"{statistics.median(s):.2f} [{s[0]:.2f}-{s[-1]:.2f}]"


def summarise(records: list[dict]) -> dict:
    """Per-repeat ratios of one invocation's records (the latest invocation in the list when several)."""
    runs = [r for r in records if "error" not in r]
    if not runs:
        return {}
    inv = runs[-1]["invocation"]
    runs = [r for r in runs if r["invocation"] == inv]
    by = {(r["repeat"], r["system"]): r for r in runs}
    reps = sorted({r["repeat"] for r in runs})
    W, T, Q = runs[0]["warmup"], runs[0]["iters"], runs[0]["quality_iters"]
    out = {"invocation": inv, "repeats": reps, "warmup": W, "iters": T, "quality_iters": Q,
           "data": runs[0]["data"], "rows": {}}
    for clock in ("cpu", "wall"):
        rows = {"compiled/hdp": [], "pam/hdp": [], "tomotopy/hdp (iter/s ratio)": []}
        for rep in reps:
            h = by.get((rep, "hdp"))
            if h is None:
                continue
            hs = _window(h, W, W + T, clock)
            for sysname, key in (("compiled", "compiled/hdp"), ("pam", "pam/hdp")):
                if (rep, sysname) in by:
                    rows[key].append(_window(by[(rep, sysname)], W, W + T, clock) / hs)
            if (rep, "tomotopy") in by:
                rows["tomotopy/hdp (iter/s ratio)"].append(
                    _window(by[(rep, "tomotopy")], Q // 2, Q, clock) / _window(h, Q // 2, Q, clock))
        out["rows"][clock] = rows
    out["s_per_iter"] = {}
    for sysname in SYSTEMS:
        lo, hi = (Q // 2, Q) if sysname == "tomotopy" else (W, W + T)
        rs = [by[(rep, sysname)] for rep in reps if (rep, sysname) in by]
        if rs:
            out["s_per_iter"][sysname] = {
                "cpu": [_window(r, lo, hi, "cpu") for r in rs], "wall": [_window(r, lo, hi, "wall") for r in rs],
                "hdp_quality_window_cpu": ([_window(by[(rep, "hdp")], Q // 2, Q, "cpu") for rep in reps
                                            if (rep, "hdp") in by] if sysname == "tomotopy" else None),
                "states_end": [r["states"][-1] for r in rs],
                "perplexity": [r.get("perplexity") for r in rs],
                "other_load": [r.get("other_busy_cores") for r in rs]}
    return out


def table(summary: dict) -> str:
    if not summary:
        return "no successful runs"
    d = summary["data"]
    W, T, Q = summary["warmup"], summary["iters"], summary["quality_iters"]
    lines = [f"Debian: {d['n_train_docs']} training documents, {d['n_train_tokens']} tokens, V = {d['n_words']}; "
             f"repeats {summary['repeats']}; (a), (b): iterations {W + 1}-{W + T}; (c): iterations {Q // 2 + 1}-{Q}",
             "", "| ratio | CPU s: median [min-max] | wall s: median [min-max] |", "|---|---|---|"]
    for key in summary["rows"]["cpu"]:
        lines.append(f"| {key} | {_spread(summary['rows']['cpu'][key])} | {_spread(summary['rows']['wall'][key])} |")
    lines += ["", "| system | CPU s/iter per repeat | wall s/iter per repeat | states at the end | perplexity | "
              "other load (cores) |", "|---|---|---|---|---|---|"]
    for sysname, v in summary["s_per_iter"].items():
        ppl = ", ".join(f"{p:.1f}" for p in v["perplexity"] if p is not None) or "-"
        lines.append(f"| {sysname} | {', '.join(f'{x:.3f}' for x in v['cpu'])} | "
                     f"{', '.join(f'{x:.3f}' for x in v['wall'])} | "
                     f"{'; '.join(' '.join(f'{k}={s[k]}' for k in s if k != 'iteration') for s in v['states_end'])} "
                     f"| {ppl} | {', '.join(f'{x:.2f}' for x in v['other_load'] if x is not None)} |")
    if "hdp" in summary["s_per_iter"] and "tomotopy" in summary["s_per_iter"]:
        h = summary["s_per_iter"]["tomotopy"]["hdp_quality_window_cpu"]
        lines.append(f"\nhdp CPU s/iter over iterations {Q // 2 + 1}-{Q} (for (c)): {', '.join(f'{x:.3f}' for x in h)}")
    return "\n".join(lines)


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if C.serve_worker(argv, worker):
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: 2,000 documents, 1 repeat, 2 + 3 iterations, 10 quality iterations")
    ap.add_argument("--max-docs", type=int, default=20000)
    ap.add_argument("--systems", nargs="+", default=list(SYSTEMS), choices=SYSTEMS)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=5, help="untimed iterations before the (a)/(b) window")
    ap.add_argument("--iters", type=int, default=20, help="iterations in the (a)/(b) window")
    ap.add_argument("--quality-iters", type=int, default=100,
                    help="hdp and tomotopy: iterations before scoring; (c) times the second half")
    ap.add_argument("--initial-topics", type=int, default=100)
    ap.add_argument("--pam-init", type=int, nargs=2, default=[5, 100], metavar=("SUPER", "SUB"))
    ap.add_argument("--tomotopy-site", default="/tmp/tt/lib/python3.11/site-packages")
    C.add_run_options(ap, timeout=900, quiet_cores=0.7, max_wait=20)
    args = ap.parse_args(argv)
    if args.table:
        print(table(summarise(C.read_records(args.table))))
        return
    if args.quick:
        args.max_docs, args.repeats, args.warmup, args.iters, args.quality_iters = 2000, 1, 2, 3, 10
        args.max_wait = 0.0
    meta = C.run_meta("benchmarks/isbn/engine_ratios.py", argv)
    inv = _dt.datetime.now().isoformat(timespec="seconds")
    out = Path(args.out) if args.out else None
    W, T, Q = args.warmup, args.iters, max(args.quality_iters, args.warmup + args.iters)
    records = []
    for rep in range(args.repeats):
        for system in args.systems:
            quality = system in ("hdp", "tomotopy")
            n = Q if quality else W + T
            cfg = {"invocation": inv, "system": system, "repeat": rep, "seed": args.seed + rep,
                   "max_docs": args.max_docs, "warmup": W, "iters": T, "quality_iters": Q, "n_iters": n,
                   "score": quality, "report_at": [W, W + T, Q],
                   "initial_topics": args.initial_topics, "pam_init": args.pam_init,
                   "tomotopy_site": args.tomotopy_site, "threads": 1, **meta}
            print(f"[{time.strftime('%H:%M:%S')}] {system} rep={rep} ...", end=" ", flush=True)
            r = C.run_recorded(cfg, args.timeout, __file__, quiet_cores=args.quiet_cores, max_wait=args.max_wait,
                                out=out)
            records.append(r)
            if "error" in r:
                print(f"FAILED {r['error'][:300]}", flush=True)
            else:
                lo, hi = (Q // 2, Q) if system == "tomotopy" else (W, W + T)
                ppl = f", perplexity {r['perplexity']:.1f}" if r.get("perplexity") else ""
                print(f"{_window(r, lo, hi, 'cpu'):.3f} CPU s/iter, {r['states'][-1]}{ppl} "
                      f"(other load {r['other_busy_cores']:.2f}, {r['subprocess_wall_s']:.0f} s)", flush=True)
    print(table(summarise(records)))


if __name__ == "__main__":
    main()
