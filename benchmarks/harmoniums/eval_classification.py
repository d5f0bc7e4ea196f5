"""The seed 000 §5.2 / Fig. 7 experiment on Debian, and held-out perplexity of the same models (issue 5).

Classification (``harmonium.evaluation.latent_classification``): a seeded
random subset of the Debian package descriptions (``--n-docs``, 0 for all),
labelled by archive section. Each model is fitted to all those documents
without labels and projects them (LSI: tf-idf truncated SVD, U_k S_k; LDA:
Rao-Blackwellised theta of the training run, collapsed Gibbs or batch VB); one
seeded 50/50 split; a 1-nearest-neighbour classifier (cosine distance) and
multinomial logistic regression (L2, C = 1, standardised features) trained on
one half predict the other. Accuracy against K.

Perplexity (``harmonium.evaluation.perplexity``): one shared document split of
the same subset (``--test-size``, seed ``--seed``); the LDA models are fitted
again to the training documents only, and the test documents are scored by the
left-to-right estimator (``--particles`` particles, cumulative combination).
LSI is not a probability model of counts and has no perplexity. The same fits
get UMass and NPMI coherence (reference: the training documents) and topic
diversity.

Example (about 5 minutes on 2 cores)::

    nice -n 10 .venv/bin/python benchmarks/harmoniums/eval_classification.py \\
        --out benchmarks/harmoniums/results/eval-classification.jsonl
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]  # benchmarks/, where the shared _common.py lives
sys.path.insert(0, str(HERE))

import _common as C  # noqa: E402
import numpy as np  # noqa: E402


def _models(args):
    from harmonium.estimators import LDA
    from harmonium.evaluation import LSI

    return {
        "LSI": lambda k: LSI(k, random_state=args.seed),
        "LDA (collapsed Gibbs)": lambda k: LDA(k, n_iter=args.gibbs_iter, random_state=args.seed),
        "LDA (VB)": lambda k: LDA(k, inference="vb", n_iter=args.vb_iter, random_state=args.seed),
    }


def perplexity_table(rows, ks) -> str:
    head = "| model | " + " | ".join(f"K={k}" for k in ks) + " |"
    lines = [head, "|---|" + "---:|" * len(ks)]
    for model in dict.fromkeys(r["model"] for r in rows):
        cells = []
        for k in ks:
            r = next((r for r in rows if r["model"] == model and r["n_topics"] == k), None)
            cells.append("" if r is None else f"{r['perplexity']:.1f} ± {r['perplexity_se']:.1f}")
        lines.append(f"| {model} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n-docs", type=int, default=10000, help="random subset of Debian (0: all 63,439 documents)")
    p.add_argument("--topics", type=int, nargs="+", default=[4, 8, 16, 32])
    p.add_argument("--gibbs-iter", type=int, default=200)
    p.add_argument("--vb-iter", type=int, default=50)
    p.add_argument("--particles", type=int, default=5)
    p.add_argument("--test-size", type=float, default=0.1, help="held-out documents for the perplexity table")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-perplexity", action="store_true")
    p.add_argument("--out", default=None, help="append raw records (JSON lines) here")
    args = p.parse_args(argv)

    from harmonium.corpus import train_test_split
    from harmonium.datasets import load_debian
    from harmonium.evaluation import accuracy_table, coherence, latent_classification, perplexity, topic_diversity

    t0 = time.perf_counter()
    corpus = load_debian()
    if args.n_docs and args.n_docs < corpus.n_docs:
        rng = np.random.default_rng(args.seed)
        corpus = corpus[np.sort(rng.permutation(corpus.n_docs)[: args.n_docs])]
    labels, counts = np.unique(corpus.labels, return_counts=True)
    common = {
        "command": " ".join(["python", *sys.argv]),
        "revision": C.git_revision(str(HERE.parent)),
        "machine": C.machine(),
        "started": _dt.datetime.now().isoformat(timespec="seconds"),
        "n_docs": corpus.n_docs,
        "n_words": corpus.n_words,
        "n_tokens": corpus.n_tokens,
        "n_labels": int(labels.shape[0]),
        "seed": args.seed,
        "gibbs_iter": args.gibbs_iter,
        "vb_iter": args.vb_iter,
    }
    print(f"Debian subset: {corpus!r}, {labels.shape[0]} sections (largest {counts.max() / counts.sum():.3f}), "
          f"loaded in {time.perf_counter() - t0:.1f} s", flush=True)
    out = open(args.out, "a") if args.out else None  # noqa: SIM115

    def emit(rec):
        rec = {**common, **rec}
        if out is not None:
            out.write(json.dumps(rec) + "\n")
            out.flush()
        return rec

    def progress(rec):
        emit({"kind": "classification", **rec})
        print(f"  {rec['model']:<22} K={rec['n_topics']:<3} {rec['classifier']:<6} accuracy {rec['accuracy']:.3f} "
              f"(fit {rec['fit_seconds']:.1f} s)", flush=True)

    models = _models(args)
    t = time.perf_counter()
    records = latent_classification(corpus, models, n_topics=args.topics, random_state=args.seed, callback=progress)
    print(f"classification: {time.perf_counter() - t:.1f} s", flush=True)

    rows = []
    if not args.no_perplexity:
        train, test = train_test_split(corpus, args.test_size, random_state=args.seed)
        print(f"perplexity split: {train.n_docs} training, {test.n_docs} test documents ({test.n_tokens} tokens)",
              flush=True)
        for name, factory in models.items():
            if name == "LSI":
                continue
            for k in args.topics:
                t = time.perf_counter()
                model = factory(k).fit(train)
                fit_s = time.perf_counter() - t
                t = time.perf_counter()
                res = perplexity(model, test, method="left_to_right", n_particles=args.particles,
                                 random_state=args.seed)
                ltr_s = time.perf_counter() - t
                se = res.perplexity * res.std_error / res.n_tokens  # delta method
                gap = res.per_document.jensen_gap
                umass = coherence(model, train, measure="u_mass", top_n=10)
                npmi = coherence(model, train, measure="c_npmi", top_n=10)
                row = emit({"kind": "perplexity", "model": name, "n_topics": k, "perplexity": res.perplexity,
                            "u_mass": umass.mean, "c_npmi": npmi.mean, "diversity": topic_diversity(model, 25),
                            "perplexity_se": se, "log_likelihood": res.log_likelihood,
                            "log_likelihood_se": res.std_error, "jensen_gap": gap,
                            "perplexity_gap_corrected": float(np.exp(-(res.log_likelihood + gap) / res.n_tokens)),
                            "n_test_docs": res.n_docs,
                            "n_test_tokens": res.n_tokens, "n_particles": args.particles, "method": res.method,
                            "fit_seconds": fit_s, "ltr_seconds": ltr_s})
                rows.append(row)
                print(f"  {name:<22} K={k:<3} perplexity {res.perplexity:.1f} ± {se:.1f} "
                      f"(fit {fit_s:.1f} s, left-to-right {ltr_s:.1f} s)", flush=True)
    if out is not None:
        out.close()

    majority = records[0]["majority"]
    print(f"\n### Accuracy on latent projections (Debian, {corpus.n_docs} documents, {labels.shape[0]} sections; "
          f"50/50 split, majority class {majority:.3f})\n")
    print(accuracy_table(records))
    if rows:
        print(f"\n### Held-out perplexity, left-to-right with {args.particles} particles "
              f"({rows[0]['n_test_docs']} test documents, {rows[0]['n_test_tokens']} tokens; ± 1 standard error)\n")
        print(perplexity_table(rows, args.topics))
        print("\n### Topic quality of the same models (reference: the training documents, document co-occurrence; "
              "top 10 words; diversity over the top 25)\n")
        print("| model | K | UMass | NPMI | diversity |\n|---|---:|---:|---:|---:|")
        for r in rows:
            print(f"| {r['model']} | {r['n_topics']} | {r['u_mass']:.3f} | {r['c_npmi']:.3f} | {r['diversity']:.3f} |")
        worst = max(rows, key=lambda r: r["jensen_gap"])
        print(f"\nThe log-scale estimate lies below log p(w) by about sum_d se_d^2 / 2 (Jensen): at most "
              f"{worst['jensen_gap']:.1f} nats here ({worst['model']}, K={worst['n_topics']}), which overstates "
              f"its perplexity by {100 * (worst['perplexity'] / worst['perplexity_gap_corrected'] - 1):.2f}%.")
    print(f"\ntotal {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
