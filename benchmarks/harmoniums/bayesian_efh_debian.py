"""Seed 000 §5.2 / Fig. 7 on Debian: Bayesian dual-wing harmonium vs DWH by ML, LSI and LDA.

    nice -n 5 .venv/bin/python benchmarks/harmoniums/bayesian_efh_debian.py [--n-docs 2000] [--splits 10]

The paper's TRECVID'03 news-video collection is not available; the bundled Debian package corpus
plays its part (issue 7): a seeded random subset of ``--n-docs`` packages, the text wing is binary
occurrence of the 2,000 most frequent words (total count in the subset), the second (Gaussian) wing
holds log1p of the three numeric features and the ``--n-tags`` most frequent debtags as 0/1 columns
(standardised by the DWH estimators), the label is the archive section. Every model is fitted to
all documents without labels and projects them to K dimensions (LSI: tf-idf truncated SVD on the
words; LDA: collapsed Gibbs theta on the words; DWH: E[h | x, z] with W by CD; Bayesian DWH: the
predictive posterior mean, eq. 22, with a Gaussian prior per wing and Langevin sampling). A 1-NN
classifier (cosine) trained on a random half predicts the other half; accuracy is averaged over
``--splits`` random splits (mean and standard error over splits). LSI and LDA see only the words:
the comparison with the DWHs mixes "model" and "which data" effects, as in the paper.
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

from harmonium.corpus.vocabulary import Vocabulary  # noqa: E402
from harmonium.datasets import load_debian  # noqa: E402
from harmonium.estimators.bayesian_efh import BayesianEFH  # noqa: E402
from harmonium.estimators.efh import DualWingHarmonium  # noqa: E402
from harmonium.evaluation.classification import classify_projection  # noqa: E402


def data(n_docs, n_words, n_tags, seed):
    corpus = load_debian()
    rng = np.random.default_rng(seed)
    corpus = corpus[np.sort(rng.permutation(corpus.n_docs)[:n_docs])]
    totals = np.asarray(corpus.counts.sum(axis=0)).ravel()
    keep = np.argsort(-totals, kind="stable")[:n_words]
    vocab = Vocabulary([corpus.vocabulary.terms[i] for i in sorted(keep)])
    sub = corpus.reindex(vocab)
    tags = corpus.tags.tocsc() if hasattr(corpus.tags, "tocsc") else np.asarray(corpus.tags)
    freq = np.asarray(tags.sum(axis=0)).ravel()
    top = np.argsort(-freq, kind="stable")[:n_tags]
    T = tags[:, top]
    T = T.toarray() if hasattr(T, "toarray") else np.asarray(T)
    F = np.hstack([np.log1p(np.asarray(corpus.features, dtype=np.float64)), T.astype(np.float64)])
    nonempty = np.asarray(sub.counts.sum(axis=1)).ravel() > 0
    return sub[np.flatnonzero(nonempty)], F[nonempty], np.asarray(corpus.labels)[nonempty]


def fig6_real(args):
    """Seed 000 Fig. 6(b): 100 naive Monte Carlo estimates (1,000 samples each) of Z of the DWH (ML) on Debian."""
    from harmonium.evaluation.partition import naive_mc_log_partition

    corpus, F, _ = data(args.n_docs, args.n_words, args.n_tags, args.seed)
    est = DualWingHarmonium(16, learning="cd", dtype="float64", n_iter=30, learning_rate=0.005, weight_decay=0.001,
                            batch_size=100, random_state=args.seed).fit(corpus, features=F)
    lz = np.array([naive_mc_log_partition(np.random.default_rng([6, r]), est.model_, 1000).log_z for r in range(100)])
    z = np.exp(lz - lz.max())
    rec = {"exp": "fig6_real", "model": "DWH (ML, CD), K=16", "n_docs": corpus.n_docs, "log_z": lz.tolist(),
           "log_z_mean": float(lz.mean()), "log_z_sd": float(lz.std(ddof=1)),
           "z_sd_over_mean": float(z.std(ddof=1) / z.mean()), "argv": sys.argv,
           "time": time.strftime("%Y-%m-%dT%H:%M:%S"), "load": os.getloadavg()[0]}
    with open(args.out, "a") as fh:
        fh.write(json.dumps(rec) + "\n")
    print(f"Fig. 6(b): log Z naive MC mean {rec['log_z_mean']:.2f} sd {rec['log_z_sd']:.2f}; sd(Z)/mean(Z) "
          f"{rec['z_sd_over_mean']:.2f}", flush=True)
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, ax = plt.subplots(figsize=(5, 3.5))
    ax.hist(np.exp(lz - lz.mean()), bins=20)
    ax.set_xlabel("Z / exp(mean log Z)")
    ax.set_title("naive MC estimates of Z, DWH on Debian (100 x 1000)")
    fig.tight_layout()
    fig.savefig(os.path.splitext(args.out)[0] + "-fig6b.png", dpi=120)



def half_splits(y, n_splits: int, seed: int) -> tuple[list, list]:
    """``n_splits`` random halvings (train, test) of the documents, and the majority-class accuracy of each."""
    rng = np.random.default_rng(seed)
    n = len(y)
    splits = []
    for _ in range(n_splits):
        perm = rng.permutation(n)
        splits.append((np.sort(perm[n // 2:]), np.sort(perm[:n // 2])))
    majority = []
    for tr, te in splits:
        vals, cnt = np.unique(y[tr], return_counts=True)
        majority.append(float(np.mean(y[te] == vals[np.argmax(cnt)])))
    return splits, majority

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-docs", type=int, default=2000)
    ap.add_argument("--n-words", type=int, default=2000)
    ap.add_argument("--n-tags", type=int, default=50)
    ap.add_argument("--topics", type=int, nargs="+", default=[4, 8, 16, 32])
    ap.add_argument("--splits", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="benchmarks/harmoniums/results/bayesian-efh-debian.jsonl")
    ap.add_argument("--fig6", action="store_true", help="only Fig. 6(b): naive MC estimates of Z of a DWH (K=16)")
    args = ap.parse_args(argv)
    if args.fig6:
        return fig6_real(args)
    from harmonium.estimators import LDA
    from harmonium.evaluation import LSI

    corpus, F, y = data(args.n_docs, args.n_words, args.n_tags, args.seed)
    print(f"{corpus!r}; features {F.shape}; {np.unique(y).size} sections", flush=True)
    dwh_kw = dict(n_iter=30, learning_rate=0.005, weight_decay=0.001, batch_size=100, random_state=args.seed)
    models = {
        "LSI": lambda k: LSI(k, random_state=args.seed).fit_transform(corpus),
        "LDA (collapsed Gibbs)": lambda k: LDA(k, n_iter=200, random_state=args.seed).fit_transform(corpus),
        "DWH (ML, CD)": lambda k: DualWingHarmonium(k, learning="cd", dtype="float64", **dwh_kw)
        .fit(corpus, features=F).transform(corpus, features=F),
        "Bayesian DWH": lambda k: BayesianEFH(k, wings=[("words", "bernoulli"), ("features", "gaussian")],
                                              prior_scale=[0.1, 0.05], step_size=0.005, n_chains=2, n_warmup=150,
                                              n_samples=50, thin=2, **dwh_kw)
        .fit(corpus, features=F).transform(corpus, features=F),
    }
    splits, majority = half_splits(y, args.splits, args.seed + 1)
    with open(args.out, "a") as fh:
        for name, project in models.items():
            for k in args.topics:
                t0 = time.perf_counter()
                Z = project(k)
                secs = time.perf_counter() - t0
                acc = [classify_projection(Z, y, tr, te, classifiers=("1nn",))["1nn"] for tr, te in splits]
                rec = {"time": time.strftime("%Y-%m-%dT%H:%M:%S"), "host": platform.node(),
                       "load": os.getloadavg()[0], "model": name, "K": k, "accuracy_mean": float(np.mean(acc)),
                       "accuracy_se": float(np.std(acc, ddof=1) / np.sqrt(len(acc))), "accuracies": acc,
                       "majority": float(np.mean(majority)), "fit_seconds": secs, "n_docs": corpus.n_docs,
                       "n_words": corpus.n_words, "n_features": F.shape[1], "argv": sys.argv}
                fh.write(json.dumps(rec) + "\n")
                fh.flush()
                print(f"{name:<22} K={k:<3} 1-NN accuracy {rec['accuracy_mean']:.3f} +- {rec['accuracy_se']:.3f} "
                      f"(majority {rec['majority']:.3f}; fit {secs:.1f} s)", flush=True)


if __name__ == "__main__":
    main()
