"""RSM against LDA by estimators of measured bias, LDA fitted well, and document length as the one factor (issue 17).

Three parts, one JSON line per result (``--out``):

``bias``
    The held-out estimators against exact values on models small enough to enumerate.
    LDA (K = 3): exact log p(w_d) by dynamic programming over topic counts
    (:func:`harmonium.evaluation.exact_log_likelihood`), against left-to-right (Wallach et al.
    2009, Algorithm 3; ``--ltr-particles``, the benchmarks' 20) and annealed importance sampling
    over the topic assignments with theta integrated out (Wallach et al. 2009 §4.2;
    :func:`harmonium.evaluation.importance_sampling` ``proposal="annealed"``, ``--lda-ais``).
    Corpora: V = 5 with documents of 1-6 tokens (the brief's model), and V = 50 with documents of
    20 and 60 tokens (the length at which the real comparison is made). Replicated Softmax
    (10 hidden units, so log Z(D) = logsumexp over 1,024 hidden states is exact): AIS log Z at
    lengths 5, 20, 60, 150 with the benchmarks' setting (10 runs x 1,000 temperatures) and the
    "fast" runs count (20 x 1,000), each repeated ``--reps`` times with different seeds.
    Bias = mean over repeats of (estimate - exact) of log p(w_d); for the RSM log p = -F - log Z, so
    the error of log p is minus the error of log Z.
``fit``
    One regime (``--regime``): ``subset`` = the 10,000-training-document subset and 2,000 test
    documents of ``rsm_protocol.py`` (the same seeds and split); ``long`` = the Debian documents
    with at least 50 tokens after the 2,000-word vocabulary (training split: ``--n-valid`` held out
    for validation, the rest trains; test split: all of them). Settings (``--settings``)::

        rsm         RSM-50, rsm_protocol.py's "paper-lr003" (CD 1 -> 5, lr 0.003, momentum 0.9,
                    weight decay 0.001, batches of 100, early stopping), up to --max-epochs epochs
        lda         LDA-K collapsed Gibbs, 200 sweeps, alpha 0.1, beta 0.01 (as rsm_protocol.py)
        lda-opt     lda with Minka's fixed point for asymmetric alpha and symmetric beta every 10
                    sweeps after 50 (``optimize_interval=10``)
        cvb0        LDA-K by CVB0, 200 iterations, alpha 0.1, beta 0.01

    (``--topics`` sets K of the LDA settings.) Every model is scored on the whole test set and per
    document-length bucket (``--buckets``): RSM by AIS log Z per test length (10 x 1,000), LDA by
    left-to-right (20 particles) and by AIS over z (``--lda-ais``).
    ``long-chunked``: the long regime's training (and validation) documents with their tokens
    shuffled and cut into pieces of at most ``--chunk`` (25) tokens, the same test documents: the
    length of the training documents is the one factor changed.
``scale``
    The estimators on the K = 50 models, against stronger settings of themselves (nothing there is
    enumerable): LDA left-to-right 20 and 100 particles, AIS 10 x 200 and 10 x 1,000 on every
    ``--every``-th test document; RSM log Z by AIS 10 x 1,000 against ``--ref-runs`` x 14,500 at
    ``--lengths``.
``table``
    Markdown tables of the rows.

Example::

    OPENBLAS_NUM_THREADS=1 nice -n 10 .venv/bin/python benchmarks/harmoniums/rsm_lda_regimes.py bias \\
        --out benchmarks/harmoniums/results/rsm-lda-regimes.jsonl
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402
import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

BUCKETS = (0, 20, 50, 10**9)


def _emit(rec: dict, out: str | None) -> None:
    rec.update({"command": " ".join(sys.argv), "machine": C.machine(),
                "time": _dt.datetime.now().isoformat(timespec="seconds"),
                "harmonium_revision": C.git_revision(str(HERE.parent))})
    print(json.dumps({k: v for k, v in rec.items() if k not in ("validation_trace", "command")}), flush=True)
    if out:
        with open(out, "a") as f:
            f.write(json.dumps(rec) + "\n")


# -- part bias ----------------------------------------------------------------------------------
def _lda_corpus(rng, phi, alpha, lengths):
    from harmonium.corpus import Corpus

    K, V = phi.shape
    rows = []
    for n in lengths:
        theta = rng.dirichlet(alpha)
        z = rng.choice(K, size=n, p=theta)
        rows.append(np.bincount([rng.choice(V, p=phi[k]) for k in z], minlength=V))
    return Corpus(sp.csr_matrix(np.array(rows)), [f"w{i}" for i in range(V)])


def part_bias(args) -> None:
    from harmonium.evaluation import exact_log_likelihood, importance_sampling, left_to_right

    rng = np.random.default_rng(0)
    S, T = args.lda_ais
    for name, V, lengths, alpha0 in (("V5-N1..6", 5, np.tile(np.arange(1, 7), 10), 0.5),
                                     ("V50-N20", 50, np.full(20, 20), 0.1),
                                     ("V50-N60", 50, np.full(20, 60), 0.1)):
        K = 3
        phi = rng.dirichlet(np.full(V, 0.3), size=K)
        alpha = np.full(K, alpha0)
        corpus = _lda_corpus(rng, phi, alpha, lengths)
        exact = exact_log_likelihood((phi, alpha), corpus).log_likelihood
        n_tok = corpus.doc_lengths.astype(float)
        for est in ("left_to_right", "ais"):
            t = time.perf_counter()
            errs = []
            for r in range(args.reps):
                if est == "left_to_right":
                    res = left_to_right((phi, alpha), corpus, n_particles=args.ltr_particles, random_state=1000 + r)
                else:
                    res = importance_sampling((phi, alpha), corpus, proposal="annealed", n_samples=S,
                                              n_temperatures=T, random_state=1000 + r)
                errs.append(res.log_likelihood - exact)
            e = np.array(errs)  # (reps, D)
            setting = f"{args.ltr_particles} particles" if est == "left_to_right" else f"{S} runs x {T} temperatures"
            _emit({"part": "bias", "model": f"LDA K=3 {name} alpha={alpha0}", "estimator": f"LDA {est}",
                   "setting": setting, "reps": args.reps, "n_docs": corpus.n_docs,
                   "mean_tokens": float(n_tok.mean()),
                   "bias_per_doc": float(e.mean()), "bias_per_doc_se": float(e.mean(axis=1).std(ddof=1) / np.sqrt(
                       args.reps)),
                   "sd_per_doc": float(e.std(axis=0, ddof=1).mean()),
                   "bias_per_word": float(e.sum(axis=1).mean() / n_tok.sum()),
                   "exact_perplexity": float(np.exp(-exact.sum() / n_tok.sum())),
                   "estimated_perplexity": float(np.exp(-(exact.sum() + e.sum(axis=1).mean()) / n_tok.sum())),
                   "seconds": round(time.perf_counter() - t, 1)}, args.out)
    # Replicated Softmax with 10 hidden units: exact log Z(D) by enumeration
    import efh_peers as E

    import harmonium

    _, train, _ = E._debian("2000")
    sub = train[np.sort(np.random.default_rng(0).permutation(train.n_docs)[:2000])]
    rsm = harmonium.ReplicatedSoftmax(n_hidden=10, n_iter=20, learning_rate=0.003, n_gibbs=(1, 5),
                                      random_state=0).fit(sub)
    lens = np.array([5, 20, 60, 150])
    exact = np.asarray(rsm.log_partition(lengths=lens, method="exact").log_z)
    for runs, temps, label in ((10, 1000, "benchmarks' (10 x 1,000)"), (20, 1000, "fast runs (20 x 1,000)")):
        t = time.perf_counter()
        errs = np.array([np.asarray(rsm.log_partition(lengths=lens, n_runs=runs, n_temperatures=temps,
                                                      random_state=2000 + r, progress=False).log_z) - exact
                         for r in range(args.rsm_reps)])  # error of log Z, (reps, lengths)
        for j, n in enumerate(lens):
            e = -errs[:, j]  # error of log p = -(error of log Z)
            _emit({"part": "bias", "model": "RSM 10 hidden, 2,000 Debian docs, V=2000", "estimator": "RSM AIS",
                   "setting": label, "reps": args.rsm_reps, "n_docs": 1, "mean_tokens": float(n),
                   "bias_per_doc": float(e.mean()), "bias_per_doc_se": float(e.std(ddof=1) / np.sqrt(e.size)),
                   "sd_per_doc": float(e.std(ddof=1)), "bias_per_word": float(e.mean() / n),
                   "exact_log_z": float(exact[j]), "seconds": round(time.perf_counter() - t, 1)}, args.out)


# -- part fit -----------------------------------------------------------------------------------
def _data(args):
    import efh_peers as E

    _, train, test = E._debian("2000")
    if args.regime == "subset":  # exactly rsm_protocol.py's subsets (its --subset-seed 0)
        rng = np.random.default_rng(0)
        order = rng.permutation(train.n_docs)
        tr = train[np.sort(order[:10_000])]
        va = train[np.sort(order[10_000:11_000])]
        te = test[np.sort(rng.permutation(test.n_docs)[:2_000])]
        return tr, va, te
    long_tr = np.flatnonzero(np.asarray(train.doc_lengths) >= args.min_length)
    long_te = np.flatnonzero(np.asarray(test.doc_lengths) >= args.min_length)
    order = np.random.default_rng(0).permutation(long_tr)
    tr, va, te = train[np.sort(order[args.n_valid:])], train[np.sort(order[:args.n_valid])], test[long_te]
    if args.regime == "long-chunked":  # the same training tokens, each document cut into pieces of <= --chunk
        tr, va = _chunked(tr, args.chunk), _chunked(va, args.chunk)
    if args.max_train_length:  # rsm_long_diag.py: a few very long training documents stall CD (issue 17)
        tr = tr[np.flatnonzero(np.asarray(tr.doc_lengths) <= args.max_train_length)]
    if args.split_train_length:  # the same, keeping their tokens: cut into pieces of random tokens
        from harmonium.corpus import split_long_documents

        tr = split_long_documents(tr, args.split_train_length, random_state=0)
    return tr, va, te


def _chunked(corpus, size: int):
    """Every document's tokens in a random order, cut into ceil(N_d / size) pieces of near-equal length."""
    from harmonium.corpus import Corpus

    rng = np.random.default_rng(1)
    rows, cols = [], []
    tokens = corpus.tokens()
    for d in range(corpus.n_docs):
        w = rng.permutation(tokens.words[tokens.doc_ptr[d]:tokens.doc_ptr[d + 1]])
        for piece in np.array_split(w, -(-w.size // size)):
            rows.append(np.full(piece.size, len(cols)))
            cols.append(piece)
    r, c = np.concatenate(rows), np.concatenate(cols)
    m = sp.csr_matrix((np.ones(r.size), (r, c)), shape=(int(r.max()) + 1, corpus.n_words))
    return Corpus(m, list(corpus.vocabulary))


def _buckets(per_doc, edges=BUCKETS) -> list[dict]:
    n = np.asarray(per_doc.n_tokens)
    out = []
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        m = (n >= max(lo, 1)) & (n < hi)
        if not m.any():
            continue
        ll, tok = float(per_doc.log_likelihood[m].sum()), int(n[m].sum())
        se = float(np.sqrt(np.sum(np.nan_to_num(per_doc.std_error[m]) ** 2)))
        out.append({"lo": lo, "hi": hi if hi < 10**9 else None, "n_docs": int(m.sum()), "n_tokens": tok,
                    "perplexity": float(np.exp(-ll / tok)),
                    "perplexity_interval": [float(np.exp(-(ll + 2 * se) / tok)), float(np.exp(-(ll - 2 * se) / tok))]})
    return out


def _score(per_doc) -> dict:
    tok = int(per_doc.n_tokens.sum())
    ll, se = per_doc.total, per_doc.total_std_error
    return {"perplexity": float(np.exp(-ll / tok)),
            "perplexity_interval": [float(np.exp(-(ll + 2 * se) / tok)), float(np.exp(-(ll - 2 * se) / tok))],
            "buckets": _buckets(per_doc)}


def run_rsm(tr, va, te, args) -> dict:
    from harmonium.estimators.efh import ReplicatedSoftmax

    kw = {"learning": "cd", "n_gibbs": (1, 5), "n_iter": args.max_epochs, "learning_rate": 0.003, "momentum": 0.9,
          "weight_decay": 0.001, "batch_size": 100, "validation_every": args.validation_every,
          "patience": args.patience}
    rsm = ReplicatedSoftmax(50, **kw, evaluate_every=args.validation_every, n_ais_runs=10, n_temperatures=1000,
                            validation_ais=(5, 200), random_state=args.seed)
    t, c = time.perf_counter(), time.process_time()
    rsm.fit(tr, validation=va)
    fit_s, fit_cpu = time.perf_counter() - t, time.process_time() - c
    if args.save:
        rsm.save(f"{args.save}-{args.regime}-rsm-seed{args.seed}.hmn")
    t = time.perf_counter()
    per_doc = rsm.log_likelihood_documents(te, random_state=0, progress=False)
    val = [(e, v) for e, v in zip(rsm.trace_["epoch"], rsm.trace_["validation_loglik"], strict=True) if v == v]
    return {"setting": "rsm", "system": "rsm", "K": 50, "params": {k: list(v) if isinstance(v, tuple) else v
                                                                   for k, v in kw.items()},
            "epochs_run": int(rsm.n_iter_), "n_updates": int(rsm._state.n_updates), "best_epoch": rsm.best_iteration_,
            "validation_trace": val, "scores": {"ais 10x1000": _score(per_doc)}, "fit_s": fit_s,
            "fit_cpu_s": fit_cpu, "eval_s": time.perf_counter() - t}


def run_lda(name, tr, te, args) -> dict:
    from harmonium import LDA
    from harmonium.evaluation import importance_sampling, left_to_right

    kw = {"doc_topic_prior": 0.1, "topic_word_prior": 0.01, "n_iter": 200}
    if name == "lda-opt":
        kw.update(optimize_interval=10, optimize_burn_in=50)
    if name == "cvb0":
        kw.update(inference="cvb0")
    lda = LDA(args.topics, **kw, random_state=args.seed)
    t, c = time.perf_counter(), time.process_time()
    lda.fit(tr)
    fit_s, fit_cpu = time.perf_counter() - t, time.process_time() - c
    if args.save:
        lda.save(f"{args.save}-{args.regime}-{name}{args.topics}-seed{args.seed}.hmn")
    t = time.perf_counter()
    scores = {"left_to_right 20": _score(left_to_right(lda, te, n_particles=20, random_state=0))}
    t_ltr = time.perf_counter() - t
    S, T = args.lda_ais
    if S:
        scores[f"ais {S}x{T}"] = _score(importance_sampling(lda, te, proposal="annealed", n_samples=S,
                                                           n_temperatures=T, random_state=0))
    return {"setting": name, "system": "lda", "K": args.topics, "params": kw, "scores": scores, "fit_s": fit_s,
            "fit_cpu_s": fit_cpu, "eval_s": time.perf_counter() - t, "ltr_s": t_ltr,
            "alpha_sum": float(np.sum(lda.alpha_)), "beta": float(np.mean(lda.beta_))}


def part_fit(args) -> None:
    tr, va, te = _data(args)
    info = {"part": "fit", "regime": args.regime, "max_train_length": args.max_train_length,
            "split_train_length": args.split_train_length, "n_train": tr.n_docs, "n_valid": va.n_docs,
            "n_test": te.n_docs,
            "n_train_tokens": int(tr.n_tokens), "n_test_tokens": int(te.n_tokens), "seed": args.seed}
    print(json.dumps(info), flush=True)
    for name in args.settings:
        res = run_rsm(tr, va, te, args) if name == "rsm" else run_lda(name, tr, te, args)
        _emit({**info, **res}, args.out)


# -- part scale: the estimators against stronger settings of themselves on the K = 50 models ----------------
def part_scale(args) -> None:
    import harmonium
    from harmonium.evaluation import importance_sampling, left_to_right

    _, _, te = _data(args)
    sub = te[np.arange(0, te.n_docs, args.every)]
    lda = harmonium.load(args.lda_model) if args.lda_model else None
    estimators = () if lda is None else (
                     ("left_to_right 20", lambda: left_to_right(lda, sub, n_particles=20, random_state=0)),
                     ("left_to_right 100", lambda: left_to_right(lda, sub, n_particles=100, random_state=0)),
                     ("ais 10x200", lambda: importance_sampling(lda, sub, proposal="annealed", n_samples=10,
                                                                n_temperatures=200, random_state=0)),
                     ("ais 10x1000", lambda: importance_sampling(lda, sub, proposal="annealed", n_samples=10,
                                                                 n_temperatures=1000, random_state=0)))
    for name, fn in estimators:
        c = time.process_time()
        r = fn()
        _emit({"part": "scale", "regime": args.regime, "model": args.lda_model, "estimator": f"LDA {name}",
               "n_docs": sub.n_docs, "n_tokens": int(sub.n_tokens), "log_p_per_doc": r.total / sub.n_docs,
               "perplexity": r.perplexity, "cpu_s": round(time.process_time() - c, 1)}, args.out)
    if not args.rsm_model:
        return
    rsm = harmonium.load(args.rsm_model)
    lens = np.array(args.lengths)
    ref = rsm.log_partition(lengths=lens, n_runs=args.ref_runs, n_temperatures=14_500, random_state=1, progress=False)
    for r in range(args.rsm_reps):
        est = rsm.log_partition(lengths=lens, n_runs=10, n_temperatures=1000, random_state=100 + r, progress=False)
        _emit({"part": "scale", "regime": args.regime, "model": args.rsm_model, "estimator": "RSM AIS 10x1000",
               "reference": f"{args.ref_runs} x 14,500", "lengths": lens.tolist(),
               "log_z_minus_reference": (np.asarray(est.log_z) - np.asarray(ref.log_z)).tolist(),
               "reference_se": np.asarray(ref.std_error).tolist()}, args.out)


# -- part table ---------------------------------------------------------------------------------
def part_table(args) -> None:
    rows = [json.loads(line) for p in args.paths for line in Path(p).read_text().splitlines() if line.strip()]
    bias = [r for r in rows if r["part"] == "bias"]
    if bias:
        print("| model | estimator | setting | mean tokens | bias nats/doc [s.e.] | sd/doc | bias nats/word |")
        print("|---|---|---|---|---|---|---|")
        for r in bias:
            print(f"| {r['model']} | {r['estimator']} | {r['setting']} | {r['mean_tokens']:.1f} | "
                  f"{r['bias_per_doc']:+.4f} [{r['bias_per_doc_se']:.4f}] | {r['sd_per_doc']:.4f} | "
                  f"{r['bias_per_word']:+.5f} |")
    fits = [r for r in rows if r["part"] == "fit"]
    if fits:
        print("\n| regime | setting | K | seed | estimator | perplexity [±2 s.e.] | per bucket (<20 / 20-50 / >=50) "
              "| epochs (best) | fit s |")
        print("|---|---|---|---|---|---|---|---|---|")
        for r in fits:
            for est, s in r["scores"].items():
                b = " / ".join(f"{x['perplexity']:.1f}" for x in s["buckets"])
                ep = f"{r['epochs_run']} ({r['best_epoch']})" if r["system"] == "rsm" else ""
                lo, hi = s["perplexity_interval"]
                setting = r["setting"] + (f", drop > {r['max_train_length']}" if r.get("max_train_length") else "") + (
                    f", split > {r['split_train_length']}" if r.get("split_train_length") else "")
                print(f"| {r['regime']} | {setting} | {r['K']} | {r['seed']} | {est} | "
                      f"{s['perplexity']:.1f} [{lo:.1f}, {hi:.1f}] | {b} | {ep} | {r['fit_s']:.0f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("part", choices=("bias", "fit", "scale", "table"))
    ap.add_argument("paths", nargs="*", help="JSONL files (part table)")
    ap.add_argument("--regime", choices=("subset", "long", "long-chunked"), default="subset")
    ap.add_argument("--settings", nargs="+", default=["lda", "lda-opt", "cvb0"])
    ap.add_argument("--topics", type=int, default=50)
    ap.add_argument("--min-length", type=int, default=50)
    ap.add_argument("--max-train-length", type=int, default=0,
                    help="drop training documents longer than this (0: keep all; validation and test untouched)")
    ap.add_argument("--split-train-length", type=int, default=0,
                    help="cut training documents longer than this into pieces (split_long_documents; 0: no)")
    ap.add_argument("--n-valid", type=int, default=500)
    ap.add_argument("--chunk", type=int, default=25, help="piece length of the long-chunked regime")
    ap.add_argument("--max-epochs", type=int, default=200)
    ap.add_argument("--validation-every", type=int, default=4)
    ap.add_argument("--patience", type=int, default=6)
    ap.add_argument("--lda-ais", type=int, nargs=2, default=(10, 200), metavar=("RUNS", "TEMPERATURES"))
    ap.add_argument("--ltr-particles", type=int, default=20)
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--rsm-reps", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--lda-model", help="part scale: a saved LDA")
    ap.add_argument("--rsm-model", help="part scale: a saved ReplicatedSoftmax")
    ap.add_argument("--ref-runs", type=int, default=100, help="part scale: runs of the 14,500-temperature reference")
    ap.add_argument("--every", type=int, default=10, help="part scale: every this many test documents")
    ap.add_argument("--lengths", type=int, nargs="+", default=[10, 30, 70, 150])
    ap.add_argument("--save", help="path prefix: save every fitted model there (harmonium's format)")
    ap.add_argument("--out")
    args = ap.parse_args()
    {"bias": part_bias, "fit": part_fit, "scale": part_scale, "table": part_table}[args.part](args)


if __name__ == "__main__":
    main()
