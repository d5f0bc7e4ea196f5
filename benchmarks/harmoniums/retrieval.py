"""Document retrieval on Debian sections: RSM, DWH, LDA (theta), LSI and tf-idf (issue 17, item 3).

The protocol of Salakhutdinov & Hinton (2009, "Replicated Softmax: an Undirected Topic Model", the
retrieval experiment and its precision-recall figure): every query document (from the test split) is
compared with every database document (from the training split) by the cosine of the angle between their
representations; a database document is relevant when it has the query's label (here the Debian archive
section); precision at fixed recall levels is averaged over the queries
(``harmonium.evaluation.retrieval_precision``).

Data: the bundled Debian corpus over its 2,000 most frequent words (``--words``; as the RSM paper
restricts the vocabulary), split 90/10 (seed 0); a seeded random ``--n-train`` documents of the training
split form the database and the training set of every model, a seeded random ``--n-test`` documents of
the test split are the queries. Every model is fitted to the database documents only and represents both
sides the same way (its ``transform``):

    rsm     Replicated Softmax, K hidden units, trained as in the paper (CD-k with k rising 1 -> 5,
            batches of 100, learning rate 0.003, momentum 0.9, weight decay 0.001; ``--rsm-epochs``
            epochs, no early stopping); representation p(h = 1 | v) (``--representations sample``: one
            draw h ~ p(h | v); ``centered``: minus the database mean, for every system)
    dwh     dual-wing harmonium (Xing, Yan & Hauptmann 2005): binary word occurrences + a Gaussian wing of
            log1p(installed size, download size, dependency count) and the 50 most frequent debtags (0/1),
            standardised; CD-k 1 -> 5, learning rate 0.005, weight decay 0.001, ``--dwh-epochs``;
            representation E[h | x, z]
    lda     LDA by collapsed Gibbs (200 sweeps, alpha 0.1, beta 0.01); representation theta by
            ``LDA.transform`` (the same estimator for database and queries)
    lsi     tf-idf truncated SVD (``harmonium.evaluation.LSI``), K dimensions
    lsi-feat  truncated SVD of [tf-idf words | the DWH's feature wing, standardised, / sqrt(#features)]:
            LSI on the DWH's data, which tells the model from the data
    tfidf   tf-idf vectors of the words (scikit-learn's ``TfidfTransformer``, fitted on the database)

Run (each system appends one JSON line; about 1-3 minutes each on the shared 2-core machine)::

    OPENBLAS_NUM_THREADS=1 nice -n 10 .venv/bin/python benchmarks/harmoniums/retrieval.py run \\
        --systems rsm dwh lda lsi tfidf --out benchmarks/harmoniums/results/retrieval-debian.jsonl
    .venv/bin/python benchmarks/harmoniums/retrieval.py report benchmarks/harmoniums/results/retrieval-debian.jsonl \\
        --plot benchmarks/harmoniums/results/retrieval-debian.png

Settings that change one factor (``--setting`` names the row): ``--rsm-epochs``, ``--k``, ``--words``,
``--representations`` (several forms of one fit).
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

import _common as C  # noqa: E402
import numpy as np  # noqa: E402

SYSTEMS = ("rsm", "dwh", "lda", "lsi", "lsi-feat", "tfidf")


def load(args):
    """(database Corpus, query Corpus, database features, query features) as in the module docstring."""
    from harmonium.corpus import train_test_split
    from harmonium.datasets import load_debian
    from harmonium.experiments.compare import restrict_vocabulary

    corpus = load_debian()
    if args.words:
        corpus = restrict_vocabulary(corpus, args.words)
    train, test = train_test_split(corpus, 0.1, random_state=0)
    rng = np.random.default_rng(args.subset_seed)
    db = train[np.sort(rng.permutation(train.n_docs)[:args.n_train])]
    qs = test[np.sort(rng.permutation(test.n_docs)[:args.n_test])] if args.n_test else test
    tags = db.tags.tocsc()
    top = np.sort(np.argsort(-np.asarray(tags.sum(axis=0)).ravel(), kind="stable")[:args.n_tags])

    def feats(c):
        T = c.tags.tocsc()[:, top].toarray().astype(np.float64)
        return np.hstack([np.log1p(np.asarray(c.features, dtype=np.float64)), T])

    return db, qs, feats(db), feats(qs)


def represent(system: str, args, db, qs, f_db, f_qs):
    """(database representation, query representation, fit seconds, details)."""
    k = args.k
    t = time.perf_counter()
    if system == "rsm":
        from harmonium.estimators.efh import ReplicatedSoftmax

        m = ReplicatedSoftmax(k, n_gibbs=tuple(args.cd_k), n_iter=args.rsm_epochs, learning_rate=0.003, momentum=0.9,
                              weight_decay=0.001, batch_size=100, evaluate_every=0, random_state=args.seed).fit(db)
        A, B = m.transform(db), m.transform(qs)
        extra = {"epochs": args.rsm_epochs, "n_updates": int(m._state.n_updates), "cd_k": list(args.cd_k)}
    elif system == "dwh":
        from harmonium.estimators.efh import DualWingHarmonium

        m = DualWingHarmonium(k, learning="cd", n_gibbs=tuple(args.cd_k), n_iter=args.dwh_epochs,
                              learning_rate=0.005, weight_decay=0.001, batch_size=100, dtype="float64",
                              evaluate_every=0, random_state=args.seed).fit(db, features=f_db)
        A, B = m.transform(db, features=f_db), m.transform(qs, features=f_qs)
        extra = {"epochs": args.dwh_epochs, "n_updates": int(m._state.n_updates), "cd_k": list(args.cd_k),
                 "n_features": int(f_db.shape[1])}
    elif system == "lda":
        from harmonium import LDA

        m = LDA(k, n_iter=args.lda_iter, doc_topic_prior=0.1, topic_word_prior=0.01, random_state=args.seed).fit(db)
        A, B = m.transform(db), m.transform(qs)
        extra = {"sweeps": args.lda_iter}
    elif system == "lsi":
        from harmonium.evaluation import LSI

        m = LSI(k, random_state=args.seed).fit(db)
        A, B = m.transform(db), m.transform(qs)
        extra = {}
    elif system == "lsi-feat":
        import scipy.sparse as sp
        from scipy.sparse.linalg import svds

        from harmonium.evaluation import LSI

        lsi = LSI(1, random_state=args.seed).fit(db)
        mu, sd = f_db.mean(axis=0), np.where(f_db.std(axis=0) > 0, f_db.std(axis=0), 1.0)

        def joint(c, f):
            return sp.hstack([lsi._weigh(c), sp.csr_matrix((f - mu) / sd / np.sqrt(f.shape[1]))]).tocsr()

        M = joint(db, f_db)
        _, s, Vt = svds(M, k=k, v0=np.random.default_rng(args.seed).random(min(M.shape)))
        A, B = M @ Vt.T, joint(qs, f_qs) @ Vt.T
        extra = {"n_features": int(f_db.shape[1])}
    elif system == "tfidf":
        from sklearn.feature_extraction.text import TfidfTransformer

        m = TfidfTransformer().fit(db.counts)
        A, B = m.transform(db.counts), m.transform(qs.counts)
        extra = {"dimensions": int(db.n_words)}
    else:
        raise SystemExit(f"unknown system {system!r}; choose from {SYSTEMS}")
    fit_s = time.perf_counter() - t
    return A, B, fit_s, extra


def representations(system: str, A, B, names, seed: int):
    """(name, database rows, query rows) for each requested form of the representation.

    prob: as the model gives it (p(h = 1 | v), E[h | x], theta, ...); sample: one draw of the hidden units
    (RSM: h ~ Bernoulli(p); DWH: h ~ N(E[h | x], 1); other systems have none); centered: minus the
    database mean (cosine then measures the angle around the mean document instead of around the origin).
    """
    for name in names:
        if name == "prob":
            yield name, A, B
        elif name == "centered":
            mu = np.asarray(A.mean(axis=0)).ravel()
            A2 = A.toarray() if hasattr(A, "toarray") else A
            B2 = B.toarray() if hasattr(B, "toarray") else B
            yield name, A2 - mu, B2 - mu
        elif name == "sample" and system in ("rsm", "dwh"):
            rng = np.random.default_rng([seed, 17])
            if system == "rsm":
                yield name, (rng.random(A.shape) < A).astype(float), (rng.random(B.shape) < B).astype(float)
            else:
                yield name, A + rng.standard_normal(A.shape), B + rng.standard_normal(B.shape)


def run(args) -> None:
    t0 = time.perf_counter()
    db, qs, f_db, f_qs = load(args)
    info = {"n_database": db.n_docs, "n_queries": qs.n_docs, "n_words": db.n_words,
            "n_sections": int(np.unique(db.labels).size)}
    print(json.dumps(info), f"loaded in {time.perf_counter() - t0:.1f} s", flush=True)
    for system in args.systems:
        A0, B0, fit_s, extra = represent(system, args, db, qs, f_db, f_qs)
        for rep, A, B in representations(system, A0, B0, args.representations, args.seed):
            emit(system, rep, A, B, fit_s, extra, info, db, qs, args)


def emit(system, rep, A, B, fit_s, extra, info, db, qs, args) -> None:
    from harmonium.evaluation import RECALL_LEVELS, retrieval_precision

    t = time.perf_counter()
    res = retrieval_precision(B, A, qs.labels, db.labels, recall_levels=RECALL_LEVELS)
    rec = {"setting": args.setting or "default", "system": system, "k": None if system == "tfidf" else args.k,
           "representation": rep,
           **info, **extra, "seed": args.seed, "subset_seed": args.subset_seed,
           "recall_levels": res.recall_levels.tolist(), "precision": res.precision.tolist(),
           "precision_se": res.precision_se.tolist(), "p10": res.precision_at_10, "p10_se": res.precision_at_10_se,
           "p10_per_query": np.round(res.per_query[:, list(res.recall_levels).index(0.1)], 6).tolist(),
           "n_scored": res.n_queries, "n_skipped": res.n_skipped, "fit_s": fit_s,
           "retrieval_s": time.perf_counter() - t, "command": " ".join(["python", *sys.argv]),
           "machine": C.machine(), "time": _dt.datetime.now().isoformat(timespec="seconds"),
           "harmonium_revision": C.git_revision(str(HERE.parent))}
    print(f"{rec['setting']:<12} {system:<8} {rep:<8} K={rec['k']} precision@10% recall {res.precision_at_10:.4f} "
          f"± {res.precision_at_10_se:.4f} (fit {fit_s:.0f} s)", flush=True)
    if args.out:
        with open(args.out, "a") as f:
            f.write(json.dumps(rec) + "\n")


def _rows(paths):
    return [json.loads(line) for p in paths for line in Path(p).read_text().splitlines() if line.strip()]


def _name(r) -> str:
    k = "" if r["k"] is None else f"-{r['k']}"
    rep = f" ({r['representation']})" if r.get("representation") not in ("", "prob", None) else ""
    return f"{r['system'].upper() if r['system'] != 'tfidf' else 'tf-idf'}{k}{rep}"


def report(args) -> None:
    rows = _rows(args.paths)
    ldas = [r for r in rows if r["system"] == "lda"]
    print("| setting | system | database / queries / words | epochs or sweeps | precision at 10% recall ± s.e. "
          "| paired difference vs LDA (same data, K and form) ± s.e. | fit s |")
    print("|---|---|---|---|---:|---:|---:|")
    for r in rows:
        # LDA on the same data and K (its representation in the same form; a sampled one against theta), this
        # setting's own fit first
        rep = r.get("representation") or "prob"
        same = [x for x in ldas if x["n_words"] == r["n_words"] and x["k"] == (r["k"] or 50)
                and (x.get("representation") or "prob") == (rep if rep != "sample" else "prob")]
        ref = next((x for x in same if x["setting"] == r["setting"]), same[0] if same else None)
        diff = ""
        if ref is not None and ref is not r and len(ref["p10_per_query"]) == len(r["p10_per_query"]):
            d = np.asarray(r["p10_per_query"]) - np.asarray(ref["p10_per_query"])
            diff = f"{d.mean():+.4f} ± {d.std(ddof=1) / np.sqrt(d.size):.4f}"
        length = r.get("epochs", r.get("sweeps", ""))
        print(f"| {r['setting']} | {_name(r)} | {r['n_database']:,} / {r['n_scored']:,} / {r['n_words']:,} | {length} "
              f"| {r['p10']:.4f} ± {r['p10_se']:.4f} | {diff} | {r['fit_s']:.0f} |")
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6.5, 4.5))
        drawn = set()
        for r in rows:
            if args.settings and r["setting"] not in args.settings:
                continue
            rep = r.get("representation") or "prob"
            if rep not in args.forms or (args.systems and r["system"] not in args.systems):
                continue
            same = (r["system"], r["k"], rep, r["n_words"], r.get("epochs"), r.get("sweeps"))
            if same in drawn:  # the same configuration under another setting name (a repeat): drawn once
                continue
            drawn.add(same)
            ax.plot(100 * np.asarray(r["recall_levels"]), 100 * np.asarray(r["precision"]), marker="o", ms=3,
                    ls="--" if r["system"] == "lda" else "-", color=f"C{len(drawn) - 1}",
                    label=_name(r) + ("" if r["setting"] in ("default", "forms") else f" [{r['setting']}]"))
        ax.set_xscale("log")
        ax.set_xlabel("recall (%)")
        ax.set_ylabel("precision (%)")
        r0 = rows[0]
        ax.set_title(f"Debian sections: {r0['n_scored']:,} queries vs {r0['n_database']:,} documents, "
                     f"{r0['n_words']:,} words", fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(args.plot, dpi=120)
        print(f"\nplot: {args.plot}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--systems", nargs="+", default=list(SYSTEMS), choices=SYSTEMS)
    r.add_argument("--setting", default="", help="name of the row (one factor changed)")
    r.add_argument("--k", type=int, default=50)
    r.add_argument("--words", type=int, default=2000, help="most frequent words kept (0: the whole vocabulary)")
    r.add_argument("--n-train", type=int, default=10_000, help="database = training documents of every model")
    r.add_argument("--n-test", type=int, default=2_000, help="queries (0: the whole test split)")
    r.add_argument("--n-tags", type=int, default=50)
    r.add_argument("--rsm-epochs", type=int, default=80)
    r.add_argument("--dwh-epochs", type=int, default=40)
    r.add_argument("--cd-k", type=int, nargs=2, default=[1, 5], help="CD-k rising from the first to the second")
    r.add_argument("--lda-iter", type=int, default=200)
    r.add_argument("--representations", nargs="+", choices=("prob", "sample", "centered"), default=["prob"])
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--subset-seed", type=int, default=0)
    r.add_argument("--out")
    p = sub.add_parser("report")
    p.add_argument("paths", nargs="+")
    p.add_argument("--plot")
    p.add_argument("--settings", nargs="*", help="only these settings in the plot")
    p.add_argument("--forms", nargs="*", default=["prob"], help="only these representations in the plot")
    p.add_argument("--systems", nargs="*", help="only these systems in the plot")
    args = ap.parse_args(argv)
    run(args) if args.cmd == "run" else report(args)


if __name__ == "__main__":
    main()
