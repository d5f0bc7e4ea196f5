"""Peak memory of online VB over a corpus on disk: harmonium's LDA estimator against gensim's LdaModel.

Both read the training documents prepared by ``lda_vi_peers.py prepare`` from disk
and never hold the corpus in memory: harmonium memory-maps its on-disk corpus
(``open_ondisk_corpus``) and ``LDA(inference="online_vb").fit`` streams it batch
by batch; gensim streams the Matrix Market copy through ``MmCorpus``. Each run
is its own process; the figure is VmHWM (peak RSS) at the end of ``fit``, plus
the RSS after the imports (the baseline each library brings).

    .venv/bin/python benchmarks/lda/lda_vi_memory.py --dir /tmp/vi-pypi \
        --out benchmarks/lda/results/vi-pypi-memory.jsonl
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]  # benchmarks/, where the shared _common.py lives
sys.path.insert(0, str(HERE))

import _common as C  # noqa: E402


def run_one(system: str, directory: Path, K: int, batch: int) -> dict:
    import numpy as np

    res = {"system": system}
    if system == "harmonium":
        from harmonium.corpus.ondisk import open_ondisk_corpus
        from harmonium.estimators import LDA

        res["rss_imports_mib"] = C.rss_mib()
        corpus = open_ondisk_corpus(directory / "train", verify=False)
        t = time.perf_counter()
        LDA(K, inference="online_vb", n_iter=1, batch_size=batch, doc_topic_prior=0.1, topic_word_prior=0.01,
            evaluate_every=10**9, random_state=0).fit(corpus)
    else:
        import gensim
        from gensim.corpora import MmCorpus

        res["rss_imports_mib"] = C.rss_mib()
        from harmonium.corpus.ondisk import open_ondisk_corpus  # only for the vocabulary size

        V = open_ondisk_corpus(directory / "train", verify=False).n_words
        t = time.perf_counter()
        gensim.models.LdaModel(MmCorpus(str(directory / "train.mm")), num_topics=K,
                               id2word={i: str(i) for i in range(V)}, chunksize=batch, passes=1,
                               alpha=np.full(K, 0.1), eta=0.01, eval_every=None, random_state=0)
    res["fit_s"] = time.perf_counter() - t
    res["peak_mib"] = C.hwm_mib()
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--topics", type=int, default=100)
    ap.add_argument("--batch", type=int, nargs="+", default=[256, 2000])
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--out")
    ap.add_argument("--_one", nargs=2)
    args = ap.parse_args()
    if args._one:
        print(json.dumps(run_one(args._one[0], Path(args.dir), args.topics, int(args._one[1]))))
        return
    rows = []
    for rep in range(args.repeats):
        for batch in args.batch:
            for system in ("harmonium", "gensim"):
                out = subprocess.run([sys.executable, __file__, "--dir", args.dir, "--topics", str(args.topics),
                                      "--_one", system, str(batch)], capture_output=True, text=True)
                if out.returncode:
                    row = {"system": system, "error": out.stderr[-2000:]}
                else:
                    row = json.loads(out.stdout.strip().splitlines()[-1])
                row.update(batch=batch, repeat=rep, K=args.topics, machine=C.machine(),
                           revision=C.git_revision(str(HERE.parent)))
                rows.append(row)
                print(json.dumps(row), flush=True)
    if args.out:
        with open(args.out, "a") as f:
            for row in rows:
                f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
