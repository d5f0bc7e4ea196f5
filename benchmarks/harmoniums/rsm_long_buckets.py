"""The long regime by test-document length: a saved RSM against LDA-50 fitted here, per length bucket (issue 17).

The RSM's AIS log Z (10 x 1,000) is reliable near D = 70 but falls tens of nats below a
10 x 14,500 reference at D = 1,000-1,901 (rsm_lda_regimes.py ``scale``), which makes the RSM's
log p of long test documents too high; the buckets of short test documents are the fair comparison.

Example::

    OPENBLAS_NUM_THREADS=1 nice -n 10 .venv/bin/python benchmarks/harmoniums/rsm_long_buckets.py \\
        --rsm-model M-long-rsm-seed2.hmn --out benchmarks/harmoniums/results/rsm-lda-regimes.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

EDGES = (50, 100, 300, 10**9)
# the LDA settings of rsm_lda_regimes.py: plain Gibbs, Minka's fixed point for alpha and beta, CVB0
LDA_SETTINGS = {"gibbs": {}, "opt": {"optimize_interval": 10, "optimize_burn_in": 50}, "cvb0": {"inference": "cvb0"}}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rsm-model", required=True)
    ap.add_argument("--seed", type=int, default=0, help="LDA seed")
    ap.add_argument("--lda", nargs="+", default=["gibbs"], choices=sorted(LDA_SETTINGS),
                    help="LDA-50 fits to score beside the RSM (rsm_lda_regimes.py's lda, lda-opt, cvb0)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)

    import rsm_lda_regimes as R

    import harmonium
    from harmonium import LDA
    from harmonium.evaluation import left_to_right

    ns = argparse.Namespace(regime="long", min_length=50, n_valid=500, chunk=25, max_train_length=0,
                            split_train_length=0)
    tr, _, te = R._data(ns)
    rsm = harmonium.load(args.rsm_model)
    t = time.perf_counter()
    r_rsm = rsm.log_likelihood_documents(te, random_state=0, progress=False)
    scored = [("rsm ais 10x1000", r_rsm)]
    for name in args.lda:
        lda = LDA(50, doc_topic_prior=0.1, topic_word_prior=0.01, n_iter=200, random_state=args.seed,
                  **LDA_SETTINGS[name]).fit(tr)
        scored.append((f"lda50 {name} ltr20", left_to_right(lda, te, n_particles=20, random_state=0)))
    n = np.asarray(te.doc_lengths)
    rows = []
    for lo, hi in zip(EDGES[:-1], EDGES[1:], strict=True):
        m = (n >= lo) & (n < hi)
        tok = int(n[m].sum())
        row = {"lo": lo, "hi": hi if hi < 10**9 else None, "n_docs": int(m.sum()), "n_tokens": tok}
        for name, r in scored:
            ll = float(np.asarray(r.log_likelihood)[m].sum())
            se = float(np.sqrt(np.sum(np.nan_to_num(np.asarray(r.std_error)[m]) ** 2)))
            row[name] = [float(np.exp(-ll / tok)), float(np.exp(-(ll + 2 * se) / tok)),
                         float(np.exp(-(ll - 2 * se) / tok))]
        rows.append(row)
        print(json.dumps(row), flush=True)
    rec = {"part": "long-buckets", "regime": "long", "rsm_model": args.rsm_model, "lda_seed": args.seed,
           "lda": args.lda, "buckets": rows, "seconds": round(time.perf_counter() - t, 1),
           "command": " ".join(sys.argv)}
    if args.out:
        with open(args.out, "a") as f:
            f.write(json.dumps(rec) + "\n")


if __name__ == "__main__":
    main()
