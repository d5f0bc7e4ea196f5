"""Why the RSM stalls on long documents: one factor at a time on a small setup (issue 17).

``N`` long Debian training documents (>= 50 tokens, 2,000-word vocabulary, the ``long`` regime of
``rsm_lda_regimes.py``), K hidden units, CD-k through the library's kernel
(:func:`harmonium.inference.learning.cd.build_kernel`), the estimator's initialisation. Every
``--every`` epochs: held-out log-likelihood per word of ``--n-valid`` long validation documents
(log Z by AIS, 5 x 100, fixed seed), minus the unigram's; mean |c|, mean |D c|, the spread of the
hidden input and the fraction of saturated hidden probabilities (< 0.01 or > 0.99) on the training
documents. ``--chunk`` cuts the training documents into pieces (the one factor "length").

Example::

    OPENBLAS_NUM_THREADS=1 nice -n 10 .venv/bin/python benchmarks/harmoniums/rsm_long_diag.py --lr 0.003
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-docs", type=int, default=2000)
    ap.add_argument("--n-valid", type=int, default=200)
    ap.add_argument("--hidden", type=int, default=20)
    ap.add_argument("--epochs", type=int, default=15)
    ap.add_argument("--every", type=int, default=5)
    ap.add_argument("--lr", type=float, default=0.003)
    ap.add_argument("--momentum", type=float, default=0.9)
    ap.add_argument("--weight-decay", type=float, default=0.001)
    ap.add_argument("--n-gibbs", type=int, default=1)
    ap.add_argument("--batch-size", type=int, default=100)
    ap.add_argument("--chunk", type=int, default=0, help="cut training documents into pieces of <= this (0: no)")
    ap.add_argument("--max-length", type=int, default=0, help="drop training documents longer than this (0: keep)")
    ap.add_argument("--with-longest", action="store_true",
                    help="add the longest document of the long training set (4,351 tokens) to the N")
    ap.add_argument("--split-over", type=int, default=0,
                    help="cut training documents longer than this into pieces (split_long_documents; 0: no)")
    ap.add_argument("--init-scale", type=float, default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)

    import rsm_lda_regimes as R

    from harmonium.estimators.efh import ReplicatedSoftmax
    from harmonium.evaluation.partition import data_means
    from harmonium.inference.learning import cd

    ns = argparse.Namespace(regime="long", min_length=50, n_valid=500, chunk=25, max_train_length=0,
                            split_train_length=0)
    tr, va, _ = R._data(ns)
    rows = np.arange(min(args.n_docs, tr.n_docs))
    if args.with_longest:
        rows = np.union1d(rows, [int(np.argmax(tr.doc_lengths))])
    if args.max_length:
        rows = rows[np.asarray(tr.doc_lengths)[rows] <= args.max_length]
    tr = tr[rows]
    va = va[np.arange(min(args.n_valid, va.n_docs))]
    if args.chunk:
        tr = R._chunked(tr, args.chunk)
    if args.split_over:
        from harmonium.corpus import split_long_documents

        tr = split_long_documents(tr, args.split_over, random_state=0)
    kw = {} if args.init_scale is None else {"init_scale": args.init_scale}
    rsm = ReplicatedSoftmax(args.hidden, n_gibbs=args.n_gibbs, learning_rate=args.lr, momentum=args.momentum,
                            weight_decay=args.weight_decay, batch_size=args.batch_size, n_iter=args.epochs,
                            validation_ais=(5, 100), random_state=args.seed, **kw)
    xs, lengths, _ = rsm._coerce(tr, None, "diag", fitting=True)
    rsm.model_ = rsm._new_model(xs)
    vxs, vlen, _ = rsm._coerce(va, None, "diag (validation)", fitting=False)
    means = data_means(rsm.model_, xs)
    rng = np.random.default_rng(args.seed)
    model = rsm._initial_model(rng, xs, means)
    score = rsm._validation_score(vxs, vlen, means, int(xs[0].shape[0]))
    uni = score(model.with_params({**model.params, "W:0": np.zeros_like(model.params["W:0"]),
                                   "h:bias": np.zeros_like(model.params["h:bias"])}))
    cfg = rsm._config()
    state = cd.init(rng, model)
    kernel = cd.build_kernel(cfg)
    data = cd.TrainingData(xs, lengths)
    rows = []

    def report(epoch, secs):
        m = state.model
        c = m.params["h:bias"]
        eta = m.hidden_eta(xs, lengths)
        p = 1.0 / (1.0 + np.exp(-eta))
        u = eta - lengths[:, None] * c
        row = {"epoch": epoch, "updates": state.n_updates, "val_minus_unigram": score(m) - uni,
               "mean_abs_c": float(np.abs(c).mean()), "mean_abs_Dc": float(np.abs(lengths[:, None] * c).mean()),
               "sd_eta": float(eta.std()), "mean_abs_eta": float(np.abs(eta).mean()),
               "sd_vW": float(u.std()), "saturated": float(((p < 0.01) | (p > 0.99)).mean()),
               "mean_p": float(p.mean()), "rms_W": float(np.sqrt((m.params["W:0"] ** 2).mean())), "s": round(secs, 1)}
        rows.append(row)
        print(json.dumps(row), flush=True)

    t = time.perf_counter()
    print(json.dumps({"n_docs": int(xs[0].shape[0]), "mean_D": float(lengths.mean()), "unigram_val": uni,
                      **vars(args)}), flush=True)
    report(0, 0.0)
    for e in range(args.epochs):
        state, _ = kernel(rng, state, data)
        if (e + 1) % args.every == 0:
            report(e + 1, time.perf_counter() - t)
    if args.out:
        with open(args.out, "a") as f:
            f.write(json.dumps({"args": vars(args), "mean_D": float(lengths.mean()), "rows": rows}) + "\n")


if __name__ == "__main__":
    main()
