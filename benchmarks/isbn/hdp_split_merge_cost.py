"""CPU seconds of the pieces of an HDP iteration on the first 20,000 Debian rows: a plain iteration, the beta
slice update, and 3 split-merge proposals with 20, 10 and 5 launch scans (benchmarks/isbn/README.md,
"Candidate defaults").

The state: 46 random initial topics and 30 plain iterations (about 70 topics); the plain-iteration timing moves
it on (kernels update the counts in place). Each split-merge timing runs on
a copy of that state (the copy's time subtracted), so every repeat proposes from the same state.

Example::

    .venv/bin/python benchmarks/isbn/hdp_split_merge_cost.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE))

import _common as C  # noqa: E402


def cpu_seconds(f, n: int) -> float:
    c = time.process_time()
    for _ in range(n):
        f()
    return (time.process_time() - c) / n


def main() -> None:
    from harmonium._kernels import hdp as khdp
    from harmonium.inference.mcmc.isbn import hdp as da
    from harmonium.models.directed.hdp import HDPModel

    data = C.load_data("debian", 20000)
    tokens = data.train.tokens()
    model = HDPModel(0.01, data.corpus.n_words)
    rng = np.random.default_rng(0)
    st = da.init(rng, tokens, model, n_topics=46, alpha=1.0, gamma=1.0)
    plain = da.build_kernel(sample_alpha=True, sample_gamma=True, compute_log_joint=False)
    for _ in range(30):
        st, _ = plain(rng, st, tokens, model)
    K = st.n_topics
    print(f"K {K}, tokens {tokens.words.shape[0]}")
    print(f"plain iteration        {cpu_seconds(lambda: plain(rng, st, tokens, model), 5):.4f} s")
    beta_s = cpu_seconds(lambda: da.resample_beta(rng, 0.05, st.n_wk, st.n_k, K, (1.0, 1.0)), 5)
    print(f"beta slice update      {beta_s:.4f} s")
    print(f"word log-likelihood    {cpu_seconds(lambda: khdp.word_log_likelihood(st.n_wk, st.n_k, K, 0.05), 20):.4f} s")
    sc = da.SplitMergeScratch.for_tokens(tokens, model.n_words)

    def copy():
        return st._replace(z=st.z.copy(), n_dk=st.n_dk.copy(), n_wk=st.n_wk.copy(), n_k=st.n_k.copy(),
                           tau=st.tau.copy())

    c0 = cpu_seconds(copy, 3)
    for launch in (20, 10, 5):
        t = cpu_seconds(lambda n=launch: da.split_merge(rng, copy(), tokens, model, 3, n, scratch=sc), 5) - c0
        print(f"split-merge 3x{launch:<2d}      {t:.4f} s")


if __name__ == "__main__":
    main()
