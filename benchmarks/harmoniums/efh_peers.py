"""Harmoniums against peers (issue 6): binary RBMs against scikit-learn's BernoulliRBM, RSM against LDA.

``rbm``: seconds per epoch of PCD-1 learning, same architecture for both systems (binary visible
and hidden units, 100 hidden units, mini-batches of 100, one Gibbs step per update on persistent
chains, scikit-learn's update rule with the same learning rate, no momentum or weight decay), on
the Debian binary occurrence matrix (a word occurs in a package description or not) restricted
to the 2,000 most frequent words (by corpus count), or on the full vocabulary through sparse
input. Both train on the same 90 % of the documents (``train_test_split``, seed 0). Quality:
our AIS (:func:`harmonium.evaluation.partition.ais_log_partition`, base rates of the training
data) estimates log Z of *both* learned models, from scikit-learn's ``components_``,
``intercept_visible_`` and ``intercept_hidden_``; the table gives the mean held-out
log-likelihood of the 10 % test documents. Each system runs in its own subprocess with the same
number of BLAS threads. harmonium initialises the visible biases at the base rates (Hinton 2010
§8); scikit-learn at zero (it has no option).

``rsm-lda``: Replicated Softmax and LDA with the same number of topics K on the same split of
the Debian corpus restricted to the 2,000 most frequent words (as Salakhutdinov & Hinton 2009
did for 20 Newsgroups). RSM: per-word held-out perplexity with log Z(D) by AIS for every test
length (the paper's estimator). LDA (collapsed Gibbs): the left-to-right estimate of the same
quantity, p(w_d) of whole test documents (Wallach et al. 2009), and, as a different quantity,
document-completion perplexity. The estimators differ (AIS vs left-to-right); both are
stochastic lower bounds of log p on average (Jensen), so neither is favoured by construction.

Examples::

    OPENBLAS_NUM_THREADS=1 nice -n 10 .venv/bin/python benchmarks/harmoniums/efh_peers.py rbm --vocab 2000 --epochs 5 \\
        --out benchmarks/harmoniums/results/efh-rbm-debian-v2000.jsonl
    OPENBLAS_NUM_THREADS=1 nice -n 10 .venv/bin/python benchmarks/harmoniums/efh_peers.py rbm --vocab full --epochs 3 \\
        --ais-runs 50 --ais-temperatures 2000 --out benchmarks/harmoniums/results/efh-rbm-debian-full.jsonl
    OPENBLAS_NUM_THREADS=1 nice -n 10 .venv/bin/python benchmarks/harmoniums/efh_peers.py rsm-lda --topics 50 \\
        --out benchmarks/harmoniums/results/efh-rsm-lda-debian.jsonl
    OPENBLAS_NUM_THREADS=1 nice -n 10 .venv/bin/python benchmarks/harmoniums/efh_peers.py rsm-lda \\
        --corpus pypi --topics 50 \\
        --rsm-epochs 5 --lda-iters 100 --out benchmarks/harmoniums/results/efh-rsm-lda-pypi.jsonl
    .venv/bin/python benchmarks/harmoniums/efh_peers.py table benchmarks/harmoniums/results/efh-*.jsonl
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]  # benchmarks/, where the shared _common.py lives
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import _common as C  # noqa: E402
import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

RBM_SYSTEMS = ("harmonium", "sklearn-float64", "sklearn-float32", "sklearn-dense64")


# -- data -------------------------------------------------------------------------------------
def _debian(vocab: str, name: str = "debian", max_docs: int | None = None):
    """The corpus (:func:`_common.load_corpus`), its most frequent ``vocab`` words, and the 90/10 split (seed 0)."""
    from harmonium.corpus import Corpus, train_test_split

    corpus = C.load_corpus(name, max_docs)
    if vocab != "full":
        counts = corpus.counts
        top = np.sort(np.argsort(-np.asarray(counts.sum(axis=0)).ravel(), kind="stable")[: int(vocab)])
        corpus = Corpus(counts[:, top], [corpus.vocabulary[int(i)] for i in top]).drop_empty()
    train, test = train_test_split(corpus, 0.1, random_state=0)
    return corpus, train, test


def _binary(m) -> sp.csr_matrix:
    b = sp.csr_matrix((np.ones(m.nnz, dtype=np.float32), m.indices.copy(), m.indptr.copy()), shape=m.shape)
    b.eliminate_zeros()
    return b


# -- workers ------------------------------------------------------------------------------------
def _ais_quality(W, b, c, train, test, runs, temps, seed=0) -> dict:
    """Our AIS log Z for the RBM (W: V x F), and mean log p(x) of the test and (a sample of) training rows."""
    from harmonium.evaluation.partition import ais_log_partition, data_means
    from harmonium.models.undirected.variants import rbm

    model = rbm(W.shape[0], W.shape[1], params={"W:0": W, "v:0:bias": b, "h:bias": c})
    t = time.perf_counter()
    est = ais_log_partition(seed, model, n_runs=runs, n_temperatures=temps, means=data_means(model, train),
                            n_rows=train.shape[0], dtype=np.float32)
    ais_s = time.perf_counter() - t
    test_lp = model.log_unnormalized(test.astype(np.float64))
    train_lp = model.log_unnormalized(train[:5000].astype(np.float64))
    return {"log_z": float(est.log_z), "log_z_se": float(est.std_error), "ais_runs": runs, "ais_temperatures": temps,
            "ais_s": ais_s, "test_loglik": float(test_lp.mean() - est.log_z),
            "train_loglik_5000": float(train_lp.mean() - est.log_z)}


def _worker_rbm(cfg: dict) -> dict:
    data = np.load(cfg["data"])
    train = sp.csr_matrix((data["tr_data"], data["tr_indices"], data["tr_indptr"]), shape=tuple(data["tr_shape"]))
    test = sp.csr_matrix((data["te_data"], data["te_indices"], data["te_indptr"]), shape=tuple(data["te_shape"]))
    system, epochs, lr, seed = cfg["system"], cfg["epochs"], cfg["learning_rate"], cfg["seed"]
    out = {"epochs": epochs}
    if system == "harmonium":
        from harmonium.estimators.efh import EFH

        stamps = []
        est = EFH(n_hidden=100, learning="pcd", batch_size=100, n_iter=epochs, learning_rate=lr, dtype="float32",
                  evaluate_every=0, random_state=seed)
        t0 = time.perf_counter()
        est.fit(train, callback=lambda it, n, info: stamps.append((time.perf_counter(), info.seconds)) and False)
        out["fit_s"] = time.perf_counter() - t0
        out["epoch_s"] = [s for _, s in stamps]  # the kernel's own clock, one entry per epoch
        out["setup_s"] = stamps[0][0] - t0 - stamps[0][1]
        W, b, c = est.model_.W(0), est.model_.params["v:0:bias"], est.model_.params["h:bias"]
    else:
        from sklearn.neural_network import BernoulliRBM

        X = train.astype(np.float32 if system == "sklearn-float32" else np.float64)
        if system == "sklearn-dense64":
            X = X.toarray()
        rbm = BernoulliRBM(n_components=100, batch_size=100, learning_rate=lr, n_iter=epochs, random_state=seed)
        t0 = time.perf_counter()
        rbm.fit(X)
        out["fit_s"] = time.perf_counter() - t0
        out["epoch_s"] = [out["fit_s"] / epochs] * epochs  # fit() gives no per-epoch clock
        W, b, c = rbm.components_.T, rbm.intercept_visible_, rbm.intercept_hidden_
    out["per_epoch_s"] = statistics.median(out["epoch_s"])
    out.update(_ais_quality(np.ascontiguousarray(W, dtype=np.float64), np.asarray(b, np.float64),
                            np.asarray(c, np.float64), train, test, cfg["ais_runs"], cfg["ais_temperatures"]))
    return out


def _worker_rsm_lda(cfg: dict) -> dict:
    from harmonium.corpus import Corpus

    data = np.load(cfg["data"], allow_pickle=False)
    vocab = [str(t) for t in data["vocab"]]
    train = Corpus(sp.csr_matrix((data["tr_data"], data["tr_indices"], data["tr_indptr"]),
                                 shape=tuple(data["tr_shape"])), vocab)
    test = Corpus(sp.csr_matrix((data["te_data"], data["te_indices"], data["te_indptr"]),
                                shape=tuple(data["te_shape"])), vocab)
    K, seed = cfg["topics"], cfg["seed"]
    out = {"topics": K}
    if cfg["system"] == "rsm":
        from harmonium.estimators.efh import ReplicatedSoftmax

        rsm = ReplicatedSoftmax(K, learning="cd", n_gibbs=1, n_iter=cfg["rsm_epochs"], learning_rate=cfg["rsm_lr"],
                                momentum=0.9, weight_decay=0.001, batch_size=100, n_ais_runs=cfg["ais_runs"],
                                n_temperatures=cfg["ais_temperatures"], evaluate_every=0, random_state=seed)
        t = time.perf_counter()
        rsm.fit(train)
        out["fit_s"] = time.perf_counter() - t
        out["settings"] = {"epochs": cfg["rsm_epochs"], "learning_rate": cfg["rsm_lr"], "momentum": 0.9,
                           "weight_decay": 0.001, "cd": 1, "batch_size": 100}
        t = time.perf_counter()
        res = rsm.perplexity(test, random_state=0)
        out["eval_s"] = time.perf_counter() - t
        out.update({"perplexity": res.perplexity, "perplexity_interval": list(res.perplexity_interval),
                    "log_likelihood": res.log_likelihood, "std_error": res.std_error, "n_tokens": res.n_tokens,
                    "estimator": f"AIS, {cfg['ais_runs']} runs x {cfg['ais_temperatures']} temperatures per length",
                    "n_lengths": int(np.unique(test.doc_lengths).size)})
    else:
        from harmonium import LDA
        from harmonium.evaluation import perplexity

        lda = LDA(K, n_iter=cfg["lda_iters"], doc_topic_prior=0.1, topic_word_prior=0.01, random_state=seed)
        t = time.perf_counter()
        lda.fit(train)
        out["fit_s"] = time.perf_counter() - t
        out["settings"] = {"iterations": cfg["lda_iters"], "alpha": 0.1, "beta": 0.01, "inference": "collapsed_gibbs"}
        t = time.perf_counter()
        res = perplexity(lda, test, n_particles=cfg["ltr_particles"], random_state=0)
        out["eval_s"] = time.perf_counter() - t
        comp = lda.completion_perplexity(test, random_state=0)
        out.update({"perplexity": res.perplexity, "perplexity_interval": list(res.perplexity_interval),
                    "log_likelihood": res.log_likelihood, "std_error": res.std_error, "n_tokens": res.n_tokens,
                    "estimator": f"left-to-right, {cfg['ltr_particles']} particles",
                    "completion_perplexity": float(comp.perplexity)})
    return out


def _worker(cfg_path: str, out_path: str) -> None:
    cfg = json.loads(Path(cfg_path).read_text())
    fn = _worker_rbm if cfg["task"] == "rbm" else _worker_rsm_lda
    res = dict(cfg)
    res.update(fn(cfg))
    Path(out_path).write_text(json.dumps(res))


# -- drivers ------------------------------------------------------------------------------------
def _save_split(path, train, test, vocab=None):
    arrays = {}
    for name, m in (("tr", train), ("te", test)):
        arrays.update({f"{name}_data": m.data, f"{name}_indices": m.indices, f"{name}_indptr": m.indptr,
                       f"{name}_shape": np.array(m.shape)})
    if vocab is not None:
        arrays["vocab"] = np.array(vocab)
    np.savez(path, **arrays)


def _record(res: dict, args, out: str) -> None:
    res.update({"command": " ".join(sys.argv), "time": _dt.datetime.now().isoformat(timespec="seconds"),
                "machine": C.machine(), "harmonium_revision": C.git_revision(str(HERE.parent))})
    with open(out, "a") as f:
        f.write(json.dumps(res) + "\n")


def cmd_rbm(args) -> None:
    _, train_c, test_c = _debian(args.vocab)
    train, test = _binary(train_c.counts), _binary(test_c.counts)
    info = {"vocab": args.vocab, "n_words": train.shape[1], "n_train": train.shape[0], "n_test": test.shape[0],
            "train_density": train.nnz / (train.shape[0] * train.shape[1])}
    print(json.dumps(info), flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp, "data.npz"))
        _save_split(path, train, test)
        for system in args.systems:
            cfg = {"task": "rbm", "system": system, "data": path, "epochs": args.epochs, "learning_rate": args.lr,
                   "seed": args.seed, "ais_runs": args.ais_runs, "ais_temperatures": args.ais_temperatures,
                   "threads": args.threads, **info}
            res = C.run_in_subprocess(cfg, args.timeout, __file__)
            print(json.dumps({k: res.get(k) for k in ("system", "per_epoch_s", "fit_s", "test_loglik", "log_z_se",
                                                        "ais_s", "other_busy_cores", "error")}), flush=True)
            _record(res, args, args.out)


def cmd_rsm_lda(args) -> None:
    corpus, train, test = _debian(str(args.vocab), args.corpus, args.max_docs)
    f = np.asarray(train.counts.sum(axis=0)).ravel() + 0.5
    f /= f.sum()
    unigram = float(np.exp(-(test.counts @ np.log(f)).sum() / test.n_tokens))
    info = {"corpus": args.corpus, "vocab": args.vocab, "n_words": corpus.n_words, "n_train": train.n_docs,
            "n_test": test.n_docs, "n_test_tokens": int(test.n_tokens), "unigram_perplexity": unigram}
    print(json.dumps(info), flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp, "data.npz"))
        _save_split(path, train.counts, test.counts, list(train.vocabulary.terms))
        for system in args.systems:
            cfg = {"task": "rsm-lda", "system": system, "data": path, "topics": args.topics, "seed": args.seed,
                   "rsm_epochs": args.rsm_epochs, "rsm_lr": args.rsm_lr, "lda_iters": args.lda_iters,
                   "ais_runs": args.ais_runs, "ais_temperatures": args.ais_temperatures,
                   "ltr_particles": args.particles, "threads": args.threads, **info}
            res = C.run_in_subprocess(cfg, args.timeout, __file__)
            print(json.dumps({k: res.get(k) for k in ("system", "perplexity", "perplexity_interval", "fit_s",
                                                        "eval_s", "completion_perplexity", "error")}), flush=True)
            _record(res, args, args.out)


def cmd_table(args) -> None:
    rows = [json.loads(line) for p in args.files for line in Path(p).read_text().splitlines() if line.strip()]
    rbm = [r for r in rows if r.get("task") == "rbm" and "error" not in r]
    for vocab in sorted({r["vocab"] for r in rbm}):
        sel = [r for r in rbm if r["vocab"] == vocab]
        ours = [r["per_epoch_s"] for r in sel if r["system"] == "harmonium"]
        print(f"\nRBM, Debian binary occurrences, vocabulary {vocab} ({sel[0]['n_words']} words, "
              f"{sel[0]['n_train']} training / {sel[0]['n_test']} test documents), 100 hidden, batch 100, PCD-1, "
              f"lr {sel[0]['learning_rate']}, {sel[0]['threads']} thread(s)")
        print("| system | s / epoch (median) | epochs | speed-up of harmonium | held-out log-lik (AIS) "
              "| log Z s.e. | AIS runs x temps | other load (cores) |")
        print("|---|---|---|---|---|---|---|---|")
        for r in sel:
            ratio = (r["per_epoch_s"] / min(ours)) if ours else float("nan")
            print(f"| {r['system']} | {r['per_epoch_s']:.2f} | {r['epochs']} | {ratio:.2f}x | {r['test_loglik']:.2f} "
                  f"| {r['log_z_se']:.3f} | {r['ais_runs']} x {r['ais_temperatures']} "
                  f"| {r.get('other_busy_cores', float('nan')):.2f} |")
    rl = [r for r in rows if r.get("task") == "rsm-lda" and "error" not in r]
    for name in sorted({r.get("corpus", "debian") for r in rl}):
        sel = [r for r in rl if r.get("corpus", "debian") == name]
        r0 = sel[0]
        print(f"\nRSM vs LDA, {name} ({r0['n_words']} words), K = {r0['topics']}, {r0['n_train']} training / "
              f"{r0['n_test']} test documents ({r0['n_test_tokens']} tokens); unigram perplexity "
              f"{r0['unigram_perplexity']:.1f}")
        print("| model | held-out perplexity | +-2 s.e. | estimator | fit s | eval s | document completion |")
        print("|---|---|---|---|---|---|---|")
        for r in sel:
            lo, hi = r["perplexity_interval"]
            comp = r.get("completion_perplexity")
            print(f"| {r['system']} | {r['perplexity']:.1f} | [{lo:.1f}, {hi:.1f}] | {r['estimator']} "
                  f"| {r['fit_s']:.1f} | {r['eval_s']:.1f} | {'' if comp is None else f'{comp:.1f}'} |")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--_worker":
        _worker(sys.argv[2], sys.argv[3])
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("rbm")
    a.add_argument("--vocab", default="2000", help="number of most frequent words, or 'full'")
    a.add_argument("--epochs", type=int, default=5)
    a.add_argument("--lr", type=float, default=0.05)
    a.add_argument("--systems", nargs="+", default=["harmonium", "sklearn-float64", "sklearn-float32"],
                   choices=RBM_SYSTEMS)
    a.add_argument("--ais-runs", type=int, default=100)
    a.add_argument("--ais-temperatures", type=int, default=14_500)
    a.add_argument("--threads", type=int, default=1)
    a.add_argument("--seed", type=int, default=0)
    a.add_argument("--timeout", type=float, default=1800)
    a.add_argument("--out", required=True)
    b = sub.add_parser("rsm-lda")
    b.add_argument("--corpus", choices=C.CORPORA, default="debian")
    b.add_argument("--max-docs", type=int, help="first N documents of the corpus only")
    b.add_argument("--vocab", default="2000")
    b.add_argument("--topics", type=int, default=50)
    b.add_argument("--systems", nargs="+", default=["rsm", "lda"], choices=("rsm", "lda"))
    b.add_argument("--rsm-epochs", type=int, default=20)
    b.add_argument("--rsm-lr", type=float, default=0.01)
    b.add_argument("--lda-iters", type=int, default=200)
    b.add_argument("--ais-runs", type=int, default=20)
    b.add_argument("--ais-temperatures", type=int, default=1000)
    b.add_argument("--particles", type=int, default=20)
    b.add_argument("--threads", type=int, default=1)
    b.add_argument("--seed", type=int, default=0)
    b.add_argument("--timeout", type=float, default=1800)
    b.add_argument("--out", required=True)
    t = sub.add_parser("table")
    t.add_argument("files", nargs="+")
    args = ap.parse_args()
    {"rbm": cmd_rbm, "rsm-lda": cmd_rsm_lda, "table": cmd_table}[args.cmd](args)


if __name__ == "__main__":
    main()
