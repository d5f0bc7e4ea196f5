"""harmonium's variational LDA (vb, online_vb, cvb0) against gensim and scikit-learn (issue 4).

Preparation (once per corpus, not timed): load the corpus with the benchmark
tokenizer, split 90/10 by document and each test document's tokens 50/50
(seed 0, :func:`_common.load_data`), and write

* the training documents as a harmonium on-disk corpus (``train/``) and as a
  Matrix Market file for gensim's streamed ``MmCorpus`` (``train.mm``);
* the observed and held-out test halves (``observed.npz``, ``held.npz``).

Every (system, repeat) then runs in its own subprocess that reads only those
files, so peak RSS is per system. All systems train on the same documents with
K topics, alpha = 0.1, eta (beta) = 0.01, no hyperparameter optimisation.

Measured per run:

* ``train_s``: wall time of training (for harmonium, the kernels' time; the
  held-out evaluations between steps are off the clock);
* ``perplexity``: document completion of the final topics with theta of the
  observed halves from harmonium's fixed-topics Gibbs sampler (50 sweeps) and
  harmonium's scoring, identical for every system (:func:`_common.heldout_perplexity`);
* ``trace`` (harmonium): perplexity against training seconds, from which the
  time to reach each peer's final perplexity is read;
* ``peak_train_mib``: peak RSS (VmHWM) of the process from start to the end of
  training (before any evaluation data are loaded).

Harness options of the harmonium systems (``--options``), not passed to ``LDA``: ``eval_every`` or
``eval_at`` (a list of iterations; the last is always scored), ``evals_per_pass`` (online VB),
``memmap``, and for ``harmonium-cvb0`` ``gamma_dtype`` ("float32", "uint16", "uint8": the storage
of gamma, as ``LDA(cvb0_dtype=...)``; default "float32", as in the recorded tables, while the
estimator's default is "uint8") with ``dither`` (true: the rounding offset the estimator uses;
false, the default here: the fixed offset 1/2).

Examples::

    .venv/bin/python benchmarks/lda/lda_vi_peers.py prepare --corpus debian --dir /tmp/vi-debian
    .venv/bin/python benchmarks/lda/lda_vi_peers.py run --dir /tmp/vi-debian --repeats 2 \\
        --out benchmarks/lda/results/vi-debian-k100.jsonl
    .venv/bin/python benchmarks/lda/lda_vi_peers.py table benchmarks/lda/results/vi-debian-k100.jsonl
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

HERE = Path(__file__).resolve().parents[1]  # benchmarks/, where the shared _common.py lives
sys.path.insert(0, str(HERE))

import _common as C  # noqa: E402
import numpy as np  # noqa: E402

ALPHA, BETA = 0.1, 0.01
HARMONIUM = ("harmonium-vb", "harmonium-cvb0", "harmonium-online_vb")
PEERS = ("gensim-lda", "gensim-multicore", "sklearn-batch", "sklearn-online")
SYSTEMS = HARMONIUM + PEERS


# -- preparation ----------------------------------------------------------------------------
def prepare(corpus: str, directory: str, max_docs: int | None) -> None:
    from gensim.corpora import MmCorpus
    from gensim.matutils import Sparse2Corpus

    from harmonium.corpus import write_corpus
    from harmonium.corpus.ondisk import build_ondisk_corpus

    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    data = C.load_data(corpus, max_docs)
    m = data.train.counts
    build_ondisk_corpus((m[lo:lo + 50_000] for lo in range(0, m.shape[0], 50_000)), d / "train",
                        data.train.vocabulary.terms)
    MmCorpus.serialize(str(d / "train.mm"), Sparse2Corpus(m.T.tocsc(), documents_columns=True))
    write_corpus(data.observed, d / "observed.npz", format="npz")
    write_corpus(data.held, d / "held.npz", format="npz")
    (d / "describe.json").write_text(json.dumps(data.describe(), indent=1))
    print(json.dumps(data.describe()))


class _Eval:
    """The observed/held test halves, read only after training (they are not part of the training peak)."""

    def __init__(self, directory: Path):
        from harmonium.corpus import read_corpus

        self.observed = read_corpus(directory / "observed.npz", format="npz")
        self.held = read_corpus(directory / "held.npz", format="npz")

    def __call__(self, phi: np.ndarray) -> float:
        return C.heldout_perplexity(phi, ALPHA, self)


# -- harmonium: drive the algorithms directly so evaluations stay off the clock ------------------
def _eval_marks(n: int, every: int) -> set[int]:
    return set(range(1, min(n, 10) + 1)) | set(range(every, n + 1, every)) | {n}


def run_harmonium(system: str, train, K: int, threads: int, seed: int, n_iter: int, opts: dict, evaluate):
    from harmonium.estimators import LDA
    from harmonium.estimators._lda_vi import _batch_bounds, _slice
    from harmonium.inference.vi import lda_vb as vb
    from harmonium.models.directed.lda import make_model

    inference = system.split("-", 1)[1]
    harness_only = ("evals_per_pass", "eval_every", "eval_at", "memmap", "gamma_dtype", "dither")
    quantised = inference == "cvb0" and opts.get("gamma_dtype", "float32") != "float32"
    est = LDA(K, inference=inference, doc_topic_prior=ALPHA, topic_word_prior=BETA, n_jobs=threads,
              **{k: v for k, v in opts.items() if k not in harness_only})
    rng = np.random.default_rng(seed)
    model = make_model(K, train.n_words, ALPHA, BETA)
    trace, clock = [], 0.0
    if inference == "online_vb":
        bounds = _batch_bounds(train.n_docs, est.batch_size)
        kernel = vb.build_online_kernel(total_docs=train.n_docs, tau0=est.learning_offset, kappa=est.learning_decay,
                                        max_doc_iter=est.max_doc_iter, doc_tol=est.doc_tol, n_threads=threads)
        state = vb.online_init(rng, train.n_words, model)
        n_steps = n_iter * len(bounds)
        every = max(1, len(bounds) // opts.get("evals_per_pass", 4))
        for step in range(1, n_steps + 1):
            t = time.perf_counter()
            batch = _slice(train, *bounds[(step - 1) % len(bounds)])
            state, _ = kernel(rng, state, batch, model)
            clock += time.perf_counter() - t
            if step % every == 0 or step == n_steps:
                trace.append({"iteration": step / len(bounds), "train_s": clock,
                              "perplexity": evaluate(_normalise(vb.online_lambda(state)))})
        return trace, _normalise(vb.online_lambda(state))
    data = vb.VBData.from_corpus(train)
    t = time.perf_counter()
    if quantised:  # CVB0 with gamma stored in fixed point (issue 21)
        state = vb.cvb0q_init(rng, data, model, opts["gamma_dtype"])
        kernel = vb.build_cvb0q_kernel(n_threads=threads, dither=opts.get("dither", False))
    elif inference == "cvb0":
        state, kernel = vb.cvb0_init(rng, data, model), vb.build_cvb0_kernel(n_threads=threads)
    else:
        from harmonium.estimators._lda_vi import RESTART_ITERATIONS

        state = vb.batch_init(rng, data, model)
        kernels = [vb.build_batch_kernel(max_doc_iter=est.max_doc_iter, doc_tol=est.doc_tol, n_threads=threads,
                                         warm_start=w) for w in (False, True)]
        calls = [0]

        def kernel(r, st, d, m):  # the estimator's schedule: restarts, then warm starts
            calls[0] += 1
            return kernels[calls[0] > RESTART_ITERATIONS](r, st, d, m)
    clock += time.perf_counter() - t
    marks = set(opts["eval_at"]) | {n_iter} if "eval_at" in opts else _eval_marks(n_iter, opts.get("eval_every", 5))

    def _lam(st):
        if quantised:
            return vb.cvb0q_lambda(st, model)
        return st.n_wk + BETA if inference == "cvb0" else st.lam_wk
    for it in range(1, n_iter + 1):
        t = time.perf_counter()
        state, _ = kernel(rng, state, data, model)
        clock += time.perf_counter() - t
        if it in marks:
            trace.append({"iteration": it, "train_s": clock, "perplexity": evaluate(_normalise(_lam(state)))})
    return trace, _normalise(_lam(state))


def _normalise(lam_wk: np.ndarray) -> np.ndarray:
    phi = np.ascontiguousarray(lam_wk.T, dtype=np.float64)
    return phi / phi.sum(axis=1, keepdims=True)


# -- peers ---------------------------------------------------------------------------------
def run_peer(system: str, directory: Path, train, K: int, threads: int, seed: int, n_iter: int, opts: dict):
    if system.startswith("gensim"):
        import gensim
        from gensim.corpora import MmCorpus
        from gensim.matutils import Sparse2Corpus

        id2word = dict(enumerate(train.vocabulary.terms))
        if opts.get("streamed"):
            bow = MmCorpus(str(directory / "train.mm"))
        else:
            m = train.counts
            bow = list(Sparse2Corpus(m.T.tocsc(), documents_columns=True))
        common = dict(num_topics=K, id2word=id2word, chunksize=opts.get("chunksize", 2000), passes=n_iter,
                      alpha=np.full(K, ALPHA), eta=BETA, iterations=50, gamma_threshold=1e-3, eval_every=None,
                      random_state=seed)
        t = time.perf_counter()
        if system == "gensim-multicore":
            model = gensim.models.LdaMulticore(bow, workers=opts.get("workers", 2), **common)
        else:
            model = gensim.models.LdaModel(bow, update_every=1, **common)
        train_s = time.perf_counter() - t
        phi = model.get_topics()
        settings = {**common, "alpha": ALPHA, "id2word": None, "version": gensim.__version__}
    else:
        import sklearn
        from sklearn.decomposition import LatentDirichletAllocation

        method = system.split("-", 1)[1]
        params = dict(n_components=K, doc_topic_prior=ALPHA, topic_word_prior=BETA, learning_method=method,
                      max_iter=n_iter, batch_size=opts.get("batch_size", 128), total_samples=train.n_docs,
                      evaluate_every=-1, n_jobs=threads, random_state=seed)
        X = train.counts.astype(np.float64)
        t = time.perf_counter()
        model = LatentDirichletAllocation(**params).fit(X)
        train_s = time.perf_counter() - t
        phi = model.components_
        settings = {**params, "version": sklearn.__version__}
    return train_s, np.asarray(phi, dtype=np.float64), settings


# -- one run in a subprocess ----------------------------------------------------------------
def worker(cfg: dict) -> dict:
    from harmonium.corpus.ondisk import open_ondisk_corpus

    res = dict(cfg, started=_dt.datetime.now().isoformat(timespec="seconds"))
    directory = Path(cfg["dir"])
    try:
        train = open_ondisk_corpus(directory / "train", verify=False)
        if not cfg["options"].get("memmap", cfg["system"] == "harmonium-online_vb"):
            from harmonium.corpus import Corpus

            train = Corpus(train.counts.copy(), train.vocabulary)  # in memory
        res["rss_start_mib"] = C.rss_mib()
        K, threads, seed, n_iter, opts = cfg["K"], cfg["threads"], cfg["seed"], cfg["iters"], cfg["options"]
        if cfg["system"] in HARMONIUM:
            holder = {}

            def evaluate(phi):
                if "eval" not in holder:
                    res["peak_train_mib"] = C.hwm_mib()  # peak before any test data were read
                    holder["eval"] = _Eval(directory)
                return holder["eval"](phi)

            trace, phi = run_harmonium(cfg["system"], train, K, threads, seed, n_iter, opts, evaluate)
            res["train_s"] = trace[-1]["train_s"]
            res["trace"] = trace
            res["perplexity"] = trace[-1]["perplexity"]
        else:
            res["train_s"], phi, res["settings"] = run_peer(cfg["system"], directory, train, K, threads, seed,
                                                            n_iter, opts)
            res["peak_train_mib"] = C.hwm_mib()
            res["perplexity"] = _Eval(directory)(C.check_phi(phi, K, train.n_words))
        res["peak_mib"] = C.hwm_mib()
    except Exception as exc:  # noqa: BLE001 - recorded; the harness goes on
        res["error"] = f"{type(exc).__name__}: {exc}"
        res["traceback"] = traceback.format_exc()
    return res


# -- tables ----------------------------------------------------------------------------------
def _spread(values: list[float], digits: int = 2) -> str:
    if not values:
        return "n/a"
    if len(values) == 1:
        return f"{values[0]:.{digits}f}"
    return f"{statistics.median(values):.{digits}f} ({min(values):.{digits}f}-{max(values):.{digits}f})"


def seconds_to(trace: list[dict], target: float) -> float | None:
    """First training time at which the trace's perplexity is <= target (linear in between)."""
    prev = None
    for point in trace:
        if point["perplexity"] <= target:
            if prev is None:
                return point["train_s"]
            frac = (prev["perplexity"] - target) / (prev["perplexity"] - point["perplexity"])
            return prev["train_s"] + frac * (point["train_s"] - prev["train_s"])
        prev = point
    return None


def table(records: list[dict]) -> str:
    ok = [r for r in records if "error" not in r]
    label = {}
    for r in ok:
        label.setdefault(r["label"], []).append(r)
    lines = ["| system | threads | iters | train s | held-out perplexity | peak RSS MiB (training) |",
             "|---|---|---|---|---|---|"]
    for name, rs in label.items():
        lines.append(f"| {name} | {rs[0]['threads']} | {rs[0]['iters']} | {_spread([r['train_s'] for r in rs], 1)} | "
                     f"{_spread([r['perplexity'] for r in rs], 1)} | {_spread([r['peak_train_mib'] for r in rs], 0)} |")
    ours = {n: rs for n, rs in label.items() if n.startswith("harmonium")}
    peers = {n: rs for n, rs in label.items() if not n.startswith("harmonium")}
    if ours and peers:
        lines += ["", "Time for harmonium to reach each peer's final perplexity, as a fraction of the peer's time "
                  "(median over pairs of repeats, min-max; goal <= 0.33; '-' = not reached):", "",
                  "| peer (final perplexity, s) | " + " | ".join(ours) + " |", "|---|" + "---|" * len(ours)]
        for pname, prs in peers.items():
            cells = []
            for rs in ours.values():
                ratios, missed = [], 0
                for p in prs:
                    for r in rs:
                        s = seconds_to(r["trace"], p["perplexity"])
                        if s is None:
                            missed += 1
                        else:
                            ratios.append(s / p["train_s"])
                cells.append(_spread(ratios) + (f" ({missed} not reached)" if missed else "") if ratios else "-")
            head = f"{pname} ({_spread([p['perplexity'] for p in prs], 1)}, {_spread([p['train_s'] for p in prs], 0)})"
            lines.append(f"| {head} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--corpus", choices=C.CORPORA, required=True)
    p.add_argument("--dir", required=True)
    p.add_argument("--max-docs", type=int)
    r = sub.add_parser("run")
    r.add_argument("--dir", required=True)
    r.add_argument("--systems", nargs="+", default=list(SYSTEMS))
    r.add_argument("--topics", type=int, default=100)
    r.add_argument("--repeats", type=int, default=2)
    r.add_argument("--threads", type=int, default=1)
    r.add_argument("--iters", type=json.loads, default={},
                   help='iterations/passes per system, e.g. \'{"gensim-lda": 5, "harmonium-vb": 40}\'')
    r.add_argument("--options", type=json.loads, default={}, help="per-system options (JSON)")
    r.add_argument("--label-suffix", default="")
    r.add_argument("--timeout", type=float, default=3600)
    r.add_argument("--out", required=True)
    t = sub.add_parser("table")
    t.add_argument("files", nargs="+")
    w = sub.add_parser("_worker")
    w.add_argument("cfg")
    w.add_argument("outp")
    if argv is None and len(sys.argv) > 1 and sys.argv[1] == "--_worker":
        argv = ["_worker", *sys.argv[2:]]
    args = ap.parse_args(argv)
    if args.cmd == "prepare":
        prepare(args.corpus, args.dir, args.max_docs)
    elif args.cmd == "_worker":
        cfg = json.loads(Path(args.cfg).read_text())
        Path(args.outp).write_text(json.dumps(worker(cfg)))
    elif args.cmd == "table":
        print(table([json.loads(line) for f in args.files for line in open(f) if line.strip()]))
    else:
        defaults = {"harmonium-vb": 50, "harmonium-cvb0": 50, "harmonium-online_vb": 5, "gensim-lda": 5,
                    "gensim-multicore": 5, "sklearn-batch": 10, "sklearn-online": 10}
        with open(args.out, "a") as out:
            for rep in range(args.repeats):
                for system in args.systems:
                    opts = args.options.get(system, {})
                    cfg = {"system": system, "label": system + args.label_suffix, "dir": args.dir, "K": args.topics,
                           "threads": args.threads, "seed": rep, "repeat": rep,
                           "iters": args.iters.get(system, defaults[system]), "options": opts,
                           "machine": C.machine(), "revision": C.git_revision(str(HERE.parent))}
                    quiet = C.wait_quiet(0.3, 120)
                    res = C.run_in_subprocess(cfg, args.timeout, __file__)
                    res["quiet"] = quiet
                    out.write(json.dumps(res) + "\n")
                    out.flush()
                    msg = res.get("error") or (f"train {res['train_s']:.1f} s, perplexity {res['perplexity']:.1f}, "
                                               f"peak {res.get('peak_train_mib', 0):.0f} MiB")
                    print(f"[{rep}] {system}: {msg} (other load {res['other_busy_cores']:.2f})", flush=True)


if __name__ == "__main__":
    main()
