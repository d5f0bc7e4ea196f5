"""Seed 000 Fig. 7 on Debian with the DWH and Bayesian DWH trained by issue 17's protocol, against LSI.

The data and the evaluation of ``bayesian_efh_debian.py`` (a seeded random ``--n-docs`` packages; the word
wing is binary occurrence of the 2,000 most frequent words; the second, Gaussian wing holds log1p of
Debian's three numeric features -- installed size, download size, number of dependencies -- and the
``--n-tags`` most frequent debtags as 0/1 columns, standardised; the label is the archive section).
Every model is fitted to all documents without labels and projects them to K dimensions; a 1-NN
classifier (cosine) and multinomial logistic regression (L2, C = 1, standardised projections;
``harmonium.evaluation.classify_projection``) trained on a random half predict the other half; accuracy
is the mean over ``--splits`` random splits (± standard error over splits).

Settings (``--settings``):

    lsi          tf-idf LSI on the words
    lsi-feat     LSI on [tf-idf words | standardised feature wing] (the DWH's data, for a fair baseline)
    dwh-old      DWH as before: CD-1, 30 epochs, lr 0.005, weight decay 0.001, batches of 100
    dwh          DWH by the new protocol: CD-k with k rising 1 -> 5 (``n_gibbs=(1, 5)``), ``--epochs``
                 epochs, lr 0.005, weight decay 0.001, batches of 100
    dwh-cd1      dwh with CD-1 throughout (training length only, against dwh-old)
    dwh-short    dwh for 30 epochs (the CD-k schedule only, against dwh-old)
    dwh-words    dwh without the feature wing (words only: the GB-EFH)
    bdwh         Bayesian DWH: the dwh stage (CD 1 -> 5, ``--epochs``) then Langevin over W (prior scale
                 0.1 words / 0.05 features, step 0.005, 2 chains x (150 warm-up + 50 draws, thin 2));
                 the projection is the predictive posterior mean (seed 000 eq. 22)

Example (K = 16 and 32, 1,000 documents, 10 splits)::

    OPENBLAS_NUM_THREADS=1 nice -n 10 .venv/bin/python benchmarks/harmoniums/fig7_protocol.py \\
        --settings lsi lsi-feat dwh-old dwh dwh-words bdwh --out benchmarks/harmoniums/results/fig7-protocol.jsonl
    .venv/bin/python benchmarks/harmoniums/fig7_protocol.py --table benchmarks/harmoniums/results/fig7-protocol.jsonl
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1]))
sys.path.insert(0, str(HERE.parent))

import _common as C  # noqa: E402
import numpy as np  # noqa: E402


def projector(setting: str, k: int, corpus, F, args):
    from harmonium.estimators.bayesian_efh import BayesianEFH
    from harmonium.estimators.efh import EFH, DualWingHarmonium
    from harmonium.evaluation import LSI

    new = dict(learning="cd", n_gibbs=(1, 5), n_iter=args.epochs, learning_rate=0.005, weight_decay=0.001,
               batch_size=100, random_state=args.model_seed)
    if setting == "lsi":
        return LSI(k, random_state=args.seed).fit_transform(corpus), {}
    if setting == "lsi-feat":
        import scipy.sparse as sp

        X = LSI(1, random_state=args.seed).fit(corpus)._weigh(corpus)  # tf-idf rows of unit length
        Fs = (F - F.mean(axis=0)) / np.where(F.std(axis=0) > 0, F.std(axis=0), 1.0) / np.sqrt(F.shape[1])
        from scipy.sparse.linalg import svds

        M = sp.hstack([X, sp.csr_matrix(Fs)]).tocsr()
        U, s, _ = svds(M, k=k, v0=np.random.default_rng(args.seed).random(min(M.shape)))
        return U * s, {}
    if setting == "dwh-old":
        m = DualWingHarmonium(k, learning="cd", n_gibbs=1, n_iter=30, learning_rate=0.005, weight_decay=0.001,
                              batch_size=100, dtype="float64", random_state=args.model_seed, evaluate_every=0)
        return m.fit(corpus, features=F).transform(corpus, features=F), {"n_updates": int(m._state.n_updates)}
    if setting == "dwh":
        m = DualWingHarmonium(k, dtype="float64", evaluate_every=0, **new)
        return m.fit(corpus, features=F).transform(corpus, features=F), {"n_updates": int(m._state.n_updates)}
    if setting in ("dwh-cd1", "dwh-short"):  # one factor of the protocol each: CD-1 for --epochs; CD 1 -> 5 for 30
        kw = {**new, "n_gibbs": 1} if setting == "dwh-cd1" else {**new, "n_iter": 30}
        m = DualWingHarmonium(k, dtype="float64", evaluate_every=0, **kw)
        return m.fit(corpus, features=F).transform(corpus, features=F), {"n_updates": int(m._state.n_updates)}
    if setting == "dwh-words":
        m = EFH(k, wings=[("words", "bernoulli")], hidden="gaussian", dtype="float64", evaluate_every=0, **new)
        return m.fit(corpus).transform(corpus), {"n_updates": int(m._state.n_updates)}
    if setting == "bdwh":
        m = BayesianEFH(k, wings=[("words", "bernoulli"), ("features", "gaussian")], prior_scale=[0.1, 0.05],
                        step_size=0.005, n_chains=2, n_warmup=150, n_samples=50, thin=2, evaluate_every=0, **new)
        m.fit(corpus, features=F)
        diag = {key: v for key, v in getattr(m, "diagnostics_", {}).items() if isinstance(v, (int, float))}
        return m.transform(corpus, features=F), diag
    raise SystemExit(f"unknown setting {setting!r}")


def table(paths) -> None:
    rows = [json.loads(line) for p in paths for line in Path(p).read_text().splitlines() if line.strip()]
    ks = sorted({r["K"] for r in rows})
    print("| setting | classifier | " + " | ".join(f"K={k}" for k in ks) + " | fit s (largest K) |")
    print("|---|---|" + "---:|" * len(ks) + "---:|")
    seen = {}
    for r in rows:
        ms = r.get("model_seed", r["seed"])
        name = r["setting"] + (f" (model seed {ms})" if ms != r["seed"] else "")
        seen.setdefault((name, r["classifier"]), {})[r["K"]] = r
    for (setting, clf), by_k in seen.items():
        cells = [f"{by_k[k]['accuracy_mean']:.3f} ± {by_k[k]['accuracy_se']:.3f}" if k in by_k else "" for k in ks]
        print(f"| {setting} | {clf} | " + " | ".join(cells) + f" | {by_k[max(by_k)]['fit_seconds']:.0f} |")
    print("\nPaired difference against LSI on the words (same splits; mean ± s.e. over splits):\n")
    print("| setting | classifier | " + " | ".join(f"K={k}" for k in ks) + " |")
    print("|---|---|" + "---:|" * len(ks))
    for (setting, clf), by_k in seen.items():
        ref = seen.get(("lsi", clf), {})
        cells = []
        for k in ks:
            if k in by_k and k in ref and setting != "lsi":
                d = np.asarray(by_k[k]["accuracies"]) - np.asarray(ref[k]["accuracies"])
                cells.append(f"{d.mean():+.3f} ± {d.std(ddof=1) / np.sqrt(d.size):.3f}")
            else:
                cells.append("")
        if setting != "lsi":
            print(f"| {setting} | {clf} | " + " | ".join(cells) + " |")
    r0 = rows[0]
    print(f"\n{r0['n_docs']:,} documents, {r0['n_words']:,} words, {r0['n_features']} features, "
          f"{r0['n_splits']} random 50/50 splits; majority class {r0['majority']:.3f}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--settings", nargs="+", default=["lsi", "lsi-feat", "dwh-old", "dwh", "dwh-words", "bdwh"])
    ap.add_argument("--topics", type=int, nargs="+", default=[16, 32])
    ap.add_argument("--n-docs", type=int, default=1000)
    ap.add_argument("--n-words", type=int, default=2000)
    ap.add_argument("--n-tags", type=int, default=50)
    ap.add_argument("--epochs", type=int, default=200)
    ap.add_argument("--splits", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0, help="seeds the document subset, the splits and the models")
    ap.add_argument("--model-seed", type=int, default=None, help="seeds the harmoniums only (default: --seed)")
    ap.add_argument("--out")
    ap.add_argument("--table", nargs="+")
    args = ap.parse_args(argv)
    if args.table:
        return table(args.table)
    if args.model_seed is None:
        args.model_seed = args.seed
    from bayesian_efh_debian import data

    from harmonium.evaluation.classification import classify_projection

    corpus, F, y = data(args.n_docs, args.n_words, args.n_tags, args.seed)
    print(f"{corpus!r}; features {F.shape}; {np.unique(y).size} sections", flush=True)
    from bayesian_efh_debian import half_splits

    splits, majority = half_splits(y, args.splits, args.seed + 1)  # the splits of bayesian_efh_debian.py
    for setting in args.settings:
        for k in args.topics:
            t0 = time.perf_counter()
            Z, extra = projector(setting, k, corpus, F, args)
            secs = time.perf_counter() - t0
            if not np.all(np.isfinite(Z)):
                print(f"{setting} K={k}: projection not finite (diverged)", flush=True)
                continue
            accs = [classify_projection(Z, y, tr, te) for tr, te in splits]
            for clf in ("1nn", "logreg"):
                acc = [a[clf] for a in accs]
                rec = {"setting": setting, "K": k, "classifier": clf, "accuracy_mean": float(np.mean(acc)),
                       "accuracy_se": float(np.std(acc, ddof=1) / np.sqrt(len(acc))), "accuracies": acc,
                       "majority": float(np.mean(majority)), "fit_seconds": secs, "n_docs": corpus.n_docs,
                       "n_words": corpus.n_words, "n_features": int(F.shape[1]), "n_splits": len(splits),
                       "epochs": args.epochs, **extra, "seed": args.seed, "model_seed": args.model_seed,
                       "command": " ".join(["python", *sys.argv]), "machine": C.machine(),
                       "time": _dt.datetime.now().isoformat(timespec="seconds"),
                       "harmonium_revision": C.git_revision(str(HERE.parents[1]))}
                print(f"{setting:<10} K={k:<3} {clf:<6} accuracy {rec['accuracy_mean']:.3f} ± {rec['accuracy_se']:.3f} "
                      f"(fit {secs:.0f} s)", flush=True)
                if args.out:
                    with open(args.out, "a") as f:
                        f.write(json.dumps(rec) + "\n")


if __name__ == "__main__":
    main()
