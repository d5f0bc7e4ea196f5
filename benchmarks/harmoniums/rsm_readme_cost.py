"""CPU cost of the README's harmonium example by stages: one RSM epoch and the fast AIS evaluation.

The README's Replicated Softmax (n_hidden=50) on the full Debian training split, fitted for one
epoch (the README fits 20: multiply), then ``perplexity(rsm, test, ais="fast")`` over the 6,344
test documents. The AIS cost hardly depends on the fitted weights, so one epoch suffices.

    python benchmarks/harmoniums/rsm_readme_cost.py   # appends to benchmarks/examples/results/doc-examples.jsonl
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

import harmonium
from harmonium.corpus import train_test_split
from harmonium.datasets import load_debian
from harmonium.evaluation import perplexity

OUT = Path(__file__).resolve().parents[1] / "examples" / "results" / "doc-examples.jsonl"


def main():
    corpus = load_debian()
    train, test = train_test_split(corpus, test_size=0.1, random_state=0)
    train = train.drop_empty()
    c = time.process_time()
    rsm = harmonium.ReplicatedSoftmax(n_hidden=50, n_iter=1, random_state=0).fit(train)
    one_epoch = time.process_time() - c
    c, w = time.process_time(), time.perf_counter()
    perplexity(rsm, test, ais="fast", progress=False)
    rec = {"block": "README harmonium example, by stages", "one_epoch_cpu": round(one_epoch, 1),
           "ais_fast_cpu": round(time.process_time() - c, 1), "ais_fast_wall": round(time.perf_counter() - w, 1),
           "n_words": int(train.n_words),
           "distinct_test_lengths": int(np.unique(test.doc_lengths[test.doc_lengths > 0]).size),
           "finished": time.strftime("%Y-%m-%dT%H:%M:%S")}
    print(json.dumps(rec))
    with OUT.open("a") as f:
        f.write(json.dumps(rec) + "\n")


if __name__ == "__main__":
    main()
