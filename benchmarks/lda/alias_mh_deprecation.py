"""Why ``sampler="alias_mh"`` is deprecated: CPU seconds and held-out quality against sparse and warp.

Debian, the first 20,000 documents, a 90/10 split (seed 0), K = 1000, 60 sweeps, default priors,
each sampler twice in alternation (same seed, so the two runs of a sampler give the same perplexity;
the CPU times show the noise). Quality: document-completion perplexity of the held-out 10%
(``LDA.completion_perplexity``, harmonium's own code for every sampler).

    nice .venv/bin/python benchmarks/lda/alias_mh_deprecation.py
"""

from __future__ import annotations

import time
import warnings

from harmonium.corpus import train_test_split
from harmonium.datasets import load_debian
from harmonium.estimators import LDA


def main() -> None:
    corpus = load_debian(n_docs=20000)
    train, test = train_test_split(corpus, test_size=0.1, random_state=0)
    warnings.simplefilter("ignore", FutureWarning)
    for sampler in ("sparse", "alias_mh", "warp") * 2:
        LDA(1000, n_iter=2, sampler=sampler, random_state=0).fit(train[:200])  # compile / load the kernels
        t = time.process_time()
        m = LDA(1000, n_iter=60, sampler=sampler, random_state=0).fit(train)
        cpu = time.process_time() - t
        print(f"{sampler:9s} CPU s {cpu:6.1f}   completion perplexity {m.completion_perplexity(test).perplexity:7.1f}",
              flush=True)


if __name__ == "__main__":
    main()
