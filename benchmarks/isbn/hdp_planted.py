"""The HDP on planted topics: how many topics does the posterior hold, and why the extra ones?

Two corpora drawn from the LDA generative process with a known number of topics:

* ``tests4``: the 4-topic corpus of tests/unit/evaluation/test_classification.py
  (``lda_corpus(seed=4, n_docs=400, n_topics=4)`` of tests/conftest.py, regenerated here
  with the same code: V = 60, 400 documents of 50 tokens, phi ~ Dir(0.1), theta ~ Dir(0.2));
* ``lda20``: 20 topics, V = 2,000, 1,000 documents of Poisson(100) tokens, phi ~ Dir(0.05),
  theta ~ Dir(0.1) (seed 20).

Each configuration changes one factor from a baseline (``--baseline``: the estimator's
defaults) and runs 3 seeds. Over the kept iterations (the second half) it reports the number
of used topics K (mean and standard deviation) and of "effective" topics (holding more than 1%
of the tokens), the concentrations, the log joint and the seconds. ``tomotopy`` runs
tomotopy.HDPModel on the same token stream with the same hyperparameters in a separate venv
(``--tomotopy-python``), its own way of resampling alpha and gamma (``optim_interval``).

Example::

    .venv/bin/python benchmarks/isbn/hdp_planted.py --problem tests4 --out benchmarks/isbn/results/hdp-planted.jsonl
    .venv/bin/python benchmarks/isbn/hdp_planted.py --table benchmarks/isbn/results/hdp-planted.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

PROBLEMS = {
    "tests4": dict(seed=4, n_topics=4, n_words=60, n_docs=400, doc_length=50, a=0.2, b=0.1, poisson=False),
    "lda20": dict(seed=20, n_topics=20, n_words=2000, n_docs=1000, doc_length=100, a=0.1, b=0.05, poisson=True),
}

# one factor at a time, from the baseline (the estimator before split-merge moves were added)
BASELINE = dict(beta=0.01, alpha_prior=(1.0, 1.0), gamma_prior=(1.0, 1.0), sample=True, alpha=1.0, gamma=1.0,
                init_k=10, n_iter=200, sm=0, launch=3, seq=False, sample_beta=False, sm_until=None, sm_every=1,
                unit="token")
CONFIGS = {
    "baseline": {},
    "beta=0.1": dict(beta=0.1),
    "beta=0.5": dict(beta=0.5),
    "gamma~G(1,10)": dict(gamma_prior=(1.0, 10.0)),
    "alpha~G(1,10)": dict(alpha_prior=(1.0, 10.0)),
    "fixed a=g=1": dict(sample=False),
    "init 1": dict(init_k=1),
    "init 50": dict(init_k=50),
    "oracle init": dict(init_k=0),
    "2000 iter": dict(n_iter=2000),
    "split-merge 10": dict(sm=10),
    "split-merge 10, init 1": dict(sm=10, init_k=1),
    "split-merge 10, init 50": dict(sm=10, init_k=50),
    # launch states by sequential allocation (Dahl 2003) instead of at random
    "sams 10, init 1": dict(sm=10, init_k=1, seq=True),
    "sams 10, init 10": dict(sm=10, seq=True),
    "sams 10, init 50": dict(sm=10, init_k=50, seq=True),
    # 3 proposals an iteration, each launched by 20 restricted scans (random launch)
    "sm 3x20, init 1": dict(sm=3, launch=20, init_k=1),
    "sm 3x20, init 10": dict(sm=3, launch=20),
    "sm 3x20, init 1, beta~": dict(sm=3, launch=20, init_k=1, sample_beta=True),
    "sm 3x20, init 10, beta~": dict(sm=3, launch=20, sample_beta=True),
    "sams 3x20, init 1": dict(sm=3, launch=20, init_k=1, seq=True),
    # candidate defaults (issue 18 item 3): fewer proposals, shorter launches, or split-merge only in the first half
    "sm 1x20, init 1, beta~": dict(sm=1, launch=20, init_k=1, sample_beta=True),
    "sm 3x10, init 1, beta~": dict(sm=3, launch=10, init_k=1, sample_beta=True),
    "sm 1x10, init 1, beta~": dict(sm=1, launch=10, init_k=1, sample_beta=True),
    "sm 3x20 first half, init 1, beta~": dict(sm=3, launch=20, init_k=1, sample_beta=True, sm_until=0.5),
    "sm 1x20 first half, init 1, beta~": dict(sm=1, launch=20, init_k=1, sample_beta=True, sm_until=0.5),
    "sm 3x10 first half, init 1, beta~": dict(sm=3, launch=10, init_k=1, sample_beta=True, sm_until=0.5),
    "sm 3x10 first quarter, init 1, beta~": dict(sm=3, launch=10, init_k=1, sample_beta=True, sm_until=0.25),
    "sm 3x20 first quarter, init 1, beta~": dict(sm=3, launch=20, init_k=1, sample_beta=True, sm_until=0.25),
    # split-merge every 5th or 10th iteration only (iterations 0, 5, 10, ...: a fixed schedule)
    "sm 3x10 every 5th, init 1, beta~": dict(sm=3, launch=10, init_k=1, sample_beta=True, sm_every=5),
    "sm 3x10 every 10th, init 1, beta~": dict(sm=3, launch=10, init_k=1, sample_beta=True, sm_every=10),
    "sm 3x20 every 10th, init 1, beta~": dict(sm=3, launch=20, init_k=1, sample_beta=True, sm_every=10),
    # proposals whose unit is a document's block of the two topics' tokens (split_merge_unit="document"), alone
    # or in turn with the token proposals ("alternate"); issue 18 item 3, merges from above
    "sm 3x20 doc, init 10": dict(sm=3, launch=20, unit="document"),
    "sm 3x20 doc, init 1": dict(sm=3, launch=20, init_k=1, unit="document"),
    "sm 3x20 alt, init 10": dict(sm=3, launch=20, unit="alternate"),
    "sm 3x20 alt, init 1": dict(sm=3, launch=20, init_k=1, unit="alternate"),
    # each document's block drawn from a mixture: as a whole (rho = 1/2) or token by token, q summing both paths
    # (split_merge_unit="mixed")
    "sm 3x20 mixed, init 10": dict(sm=3, launch=20, unit="mixed"),
    "sm 3x20 mixed, init 1": dict(sm=3, launch=20, init_k=1, unit="mixed"),
}


def make_problem(name: str):
    """(corpus, phi, theta, z): the planted corpus and the topic of every token."""
    import scipy.sparse as sp

    from harmonium.corpus import Corpus

    p = PROBLEMS[name]
    rng = np.random.default_rng(p["seed"])
    K, V, D = p["n_topics"], p["n_words"], p["n_docs"]
    phi = rng.dirichlet(np.full(V, p["b"]), size=K)
    theta = rng.dirichlet(np.full(K, p["a"]), size=D)
    if not p["poisson"]:  # tests/conftest.py lda_corpus, draw for draw
        X = np.stack([rng.multinomial(p["doc_length"], theta[d] @ phi) for d in range(D)])
        return Corpus(sp.csr_matrix(X), [f"w{i:03d}" for i in range(V)]), phi, theta
    lengths = np.maximum(rng.poisson(p["doc_length"], size=D), 1)
    X = np.zeros((D, V), dtype=np.int64)
    for d in range(D):
        zk = rng.choice(K, size=lengths[d], p=theta[d])
        for k in np.unique(zk):
            X[d] += rng.multinomial(np.count_nonzero(zk == k), phi[k])
    return Corpus(sp.csr_matrix(X), [f"w{i:04d}" for i in range(V)]), phi, theta


def oracle_assignments(corpus, phi, theta, seed):
    """z_i ~ p(z_i | d, w, phi, theta): a draw near the planted truth."""
    tokens = corpus.tokens()
    rng = np.random.default_rng(seed)
    doc = np.repeat(np.arange(corpus.n_docs), np.diff(tokens.doc_ptr))
    p = theta[doc] * phi[:, tokens.words].T
    p /= p.sum(axis=1, keepdims=True)
    return (p.cumsum(axis=1) < rng.random(p.shape[0])[:, None]).sum(axis=1).astype(np.int32)


def run_harmonium(corpus, phi, theta, cfg: dict, seed: int) -> dict:
    from harmonium.inference.mcmc.isbn import hdp as da
    from harmonium.models.directed.hdp import HDPModel

    tokens = corpus.tokens()
    N = int(tokens.words.shape[0])
    model = HDPModel(cfg["beta"], corpus.n_words, tuple(cfg["alpha_prior"]), tuple(cfg["gamma_prior"]))
    rng = np.random.default_rng(seed)
    if cfg["init_k"] == 0:
        z = oracle_assignments(corpus, phi, theta, seed)
        used = np.unique(z)
        K = used.shape[0]
        st = da.state_from_assignments(tokens, model, np.searchsorted(used, z), np.full(K + 1, 1 / (K + 1)),
                                       cfg["alpha"], cfg["gamma"])
    else:
        st = da.init(rng, tokens, model, n_topics=cfg["init_k"], alpha=cfg["alpha"], gamma=cfg["gamma"])
    kernel = da.build_kernel(sample_alpha=cfg["sample"], sample_gamma=cfg["sample"], compute_log_joint=False,
                             split_merge_proposals=cfg["sm"], split_merge_launch=cfg["launch"],
                             split_merge_sequential=cfg["seq"], split_merge_unit=cfg.get("unit", "token"),
                             sample_beta=cfg["sample_beta"])
    # sm_until: split-merge only in this first fraction of the iterations, and only every sm_every-th one
    # (a fixed schedule: each kernel is exact)
    plain = da.build_kernel(sample_alpha=cfg["sample"], sample_gamma=cfg["sample"], compute_log_joint=False,
                            sample_beta=cfg["sample_beta"])
    sm_iters = cfg["n_iter"] if cfg.get("sm_until") is None else int(cfg["sm_until"] * cfg["n_iter"])
    keep = cfg["n_iter"] // 2
    Ks, Es, alphas, gammas, betas, lj = [], [], [], [], [], []
    n_split = n_merge = 0
    t0 = time.perf_counter()
    for it in range(cfg["n_iter"]):
        st, info = (kernel if it < sm_iters and it % cfg["sm_every"] == 0 else plain)(rng, st, tokens, model)
        n_split += info.n_split
        n_merge += info.n_merge
        if it >= cfg["n_iter"] - keep:
            K = st.n_topics
            Ks.append(K)
            Es.append(int(np.count_nonzero(st.n_k[:K] > 0.01 * N)))
            alphas.append(st.alpha)
            gammas.append(st.gamma)
            betas.append(model.beta if st.beta is None else st.beta)
    seconds = time.perf_counter() - t0
    from harmonium._kernels import hdp as khdp

    K = st.n_topics
    lj = float(khdp.word_log_likelihood(st.n_wk, st.n_k, K, betas[-1])
               + khdp.assignment_log_prior(tokens.doc_ptr, st.n_dk, K, st.alpha, st.tau))
    # pairs of topics (of > 1% of the tokens) that no document holds both of: the only pairs a block merge
    # (split_merge_unit="document") can merge
    big = np.flatnonzero(st.n_k[:K] > 0.01 * N)
    held = (st.n_dk[:, big] > 0).astype(np.int64)
    shared = held.T @ held
    n_pairs = big.shape[0] * (big.shape[0] - 1) // 2
    aligned = int(np.count_nonzero(np.triu(shared == 0, 1)))
    return dict(K=Ks, E=Es, alpha=float(np.mean(alphas)), gamma=float(np.mean(gammas)), beta=float(np.mean(betas)),
                log_joint_last=lj, effective_pairs_last=n_pairs, aligned_pairs_last=aligned,
                n_split=n_split, n_merge=n_merge, seconds=seconds,
                sizes_last=sorted(st.n_k[:K].tolist(), reverse=True))


_TOMOTOPY = r"""
import json, sys, numpy as np, tomotopy as tp
a = json.load(open(sys.argv[1]))
m = tp.HDPModel(initial_k=a["init_k"], alpha=a["alpha"], eta=a["beta"], gamma=a["gamma"], seed=a["seed"])
for doc in a["docs"]:
    m.add_doc(doc)
m.optim_interval = a["optim_interval"]
m.burn_in = 0
N = sum(len(d) for d in a["docs"])
K, E = [], []
for it in range(a["n_iter"]):
    m.train(1, workers=1)
    if it >= a["n_iter"] - a["n_iter"] // 2:
        counts = np.asarray(m.get_count_by_topics())
        live = np.array([m.is_live_topic(k) for k in range(m.k)])
        K.append(int(m.live_k))
        E.append(int(np.count_nonzero(counts[live] > 0.01 * N)))
print(json.dumps({"K": K, "E": E, "alpha": m.alpha, "gamma": m.gamma}))
"""


def run_tomotopy(corpus, cfg: dict, seed: int, python: str, optim_interval: int) -> dict:
    tokens = corpus.tokens()
    docs = [[corpus.vocabulary[w] for w in tokens.words[tokens.doc_ptr[d]:tokens.doc_ptr[d + 1]]]
            for d in range(corpus.n_docs)]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "args.json")
        with open(path, "w") as f:
            json.dump(dict(docs=docs, init_k=max(cfg["init_k"], 1), alpha=cfg["alpha"], beta=cfg["beta"],
                           gamma=cfg["gamma"], seed=seed, n_iter=cfg["n_iter"], optim_interval=optim_interval), f)
        t0 = time.perf_counter()
        out = subprocess.run([python, "-c", _TOMOTOPY, path], capture_output=True, text=True, check=True)
        seconds = time.perf_counter() - t0
    r = json.loads(out.stdout.strip().splitlines()[-1])
    r["seconds"] = seconds
    return r


def summarise(rows: list[dict]) -> str:
    """Markdown table: per (problem, system, config), K and effective K over the kept iterations of all seeds."""
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault((r["problem"], r["system"], r["config"]), []).append(r)
    out = ["| problem (planted K) | system | configuration | seeds | K mean (sd) | K per seed | effective K mean (sd) "
           "| effective per seed | alpha, gamma, beta | s/run |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for (problem, system, config), rs in groups.items():
        K = np.concatenate([r["K"] for r in rs])
        E = np.concatenate([r["E"] for r in rs])
        per_k = " / ".join(f"{np.mean(r['K']):.1f}" for r in rs)
        per_e = " / ".join(f"{np.mean(r['E']):.1f}" for r in rs)
        ag = (f"{np.mean([r['alpha'] for r in rs]):.2f}, {np.mean([r['gamma'] for r in rs]):.2f}, "
              f"{np.mean([r.get('beta', r['settings']['beta']) for r in rs]):.3g}")
        out.append(f"| {problem} ({PROBLEMS[problem]['n_topics']}) | {system} | {config} | {len(rs)} | "
                   f"{K.mean():.2f} ({K.std():.2f}) | {per_k} | {E.mean():.2f} ({E.std():.2f}) | {per_e} | {ag} | "
                   f"{np.mean([r['seconds'] for r in rs]):.1f} |")
    return "\n".join(out)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--problem", choices=sorted(PROBLEMS), default="tests4")
    ap.add_argument("--configs", nargs="+", default=list(CONFIGS), help=f"of {list(CONFIGS)}")
    ap.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE",
                    help="change the baseline for every configuration, e.g. n_iter=400 (JSON values)")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--tomotopy-python", default=None, help="python of a venv with tomotopy (runs it too)")
    ap.add_argument("--optim-interval", type=int, default=10, help="tomotopy's hyperparameter optimisation interval")
    ap.add_argument("--out", default=None, help="append one JSON line per run")
    ap.add_argument("--table", default=None, help="only print the table of this JSONL file")
    args = ap.parse_args(argv)
    if args.table:
        rows = [json.loads(line) for line in open(args.table) if line.strip()]
        print(summarise(rows))
        return
    base = dict(BASELINE)
    for kv in args.set:
        k, v = kv.split("=", 1)
        if k not in base:
            ap.error(f"--set {kv}: unknown key {k!r}; one of {sorted(base)}")
        base[k] = json.loads(v)
    corpus, phi, theta = make_problem(args.problem)
    print(f"{args.problem}: {corpus.n_docs} documents, V = {corpus.n_words}, {corpus.n_tokens} tokens", flush=True)
    rows = []
    jobs = [("harmonium", c) for c in args.configs]
    if args.tomotopy_python:
        jobs.append(("tomotopy", "baseline"))
    for system, name in jobs:
        if name not in CONFIGS:
            ap.error(f"--configs: unknown {name!r}; one of {list(CONFIGS)}")
        cfg = {**base, **CONFIGS[name]}
        for seed in range(args.seeds):
            if system == "harmonium":
                r = run_harmonium(corpus, phi, theta, cfg, seed)
            else:
                r = run_tomotopy(corpus, cfg, seed, args.tomotopy_python, args.optim_interval)
            r.update(problem=args.problem, system=system, config=name, seed=seed,
                     settings={k: v for k, v in cfg.items()}, optim_interval=args.optim_interval)
            rows.append(r)
            print(f"{system:9s} {name:26s} seed {seed}: K {np.mean(r['K']):.2f} effective {np.mean(r['E']):.2f} "
                  f"splits {r.get('n_split')} merges {r.get('n_merge')} aligned pairs {r.get('aligned_pairs_last')}"
                  f"/{r.get('effective_pairs_last')} ({r['seconds']:.1f} s)", flush=True)
            if args.out:
                with open(args.out, "a") as f:
                    f.write(json.dumps(r) + "\n")
    print(summarise(rows))


if __name__ == "__main__":
    main()
