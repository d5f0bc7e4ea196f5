"""Why merges are not accepted on ``tests4`` from 10 topics: the terms of one merge's Metropolis-Hastings ratio.

Runs the HDP on the 4-topic planted corpus of ``hdp_planted.py`` from 10 initial topics with split-merge moves
(3 proposals of 20 launch scans an iteration, beta = 0.01, alpha and gamma resampled), then:

1. prints the overlap of the learned topics with the planted ones: row j, column k is the share of topic j's
   tokens that the planted model gives to planted topic k (sum over j's tokens of p(k | d, w, phi, theta));
2. takes the two largest learned topics whose main planted topic is the same, and computes the terms of the
   ratio of the merge proposal that :func:`harmonium._kernels.hdp.split_merge` would make for them:

   log a(merge) = -log [p(split) / p(merged)]           (the posterior ratio, target)
                  + log q(current split | launch)         (the reverse split reproducing the current one)
                  + log Beta(u; D_0, D_1) - log tau_m     (u's density and the Jacobian)

   with the kernel's own restricted scans (``_sm_scan``) and topic terms (``_topic_log_terms``), over
   ``--launches`` independent random launches. It also scores the split that the launch itself would
   propose, and how far it is from the current one.

Example::

    .venv/bin/python benchmarks/isbn/hdp_merge_terms.py --seed 0
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1]))

from hdp_planted import make_problem  # noqa: E402


def overlap(tokens, z, K, phi, theta) -> np.ndarray:
    """(K, K_planted): share of each learned topic's tokens given to each planted topic."""
    doc = np.repeat(np.arange(theta.shape[0]), np.diff(tokens.doc_ptr))
    p = theta[doc] * phi[:, tokens.words].T
    p /= p.sum(axis=1, keepdims=True)
    M = np.zeros((K, phi.shape[0]))
    np.add.at(M, z, p)
    return M


def merge_terms(rng, st, tokens, ki, kj, n_launch, V):
    """The terms of the merge of topics ki and kj, as split_merge computes them, for one random launch."""
    from harmonium._kernels import hdp_split_merge as ksm

    z, beta, alpha, gamma, tau = st.z, float(st.beta), float(st.alpha), float(st.gamma), st.tau
    doc_of = np.repeat(np.arange(tokens.doc_ptr.shape[0] - 1), np.diff(tokens.doc_ptr)).astype(np.int64)
    words = tokens.words.astype(np.int64)
    in_i = np.flatnonzero(z == ki)
    in_j = np.flatnonzero(z == kj)
    i, j = int(rng.choice(in_i)), int(rng.choice(in_j))
    rest = np.sort(np.concatenate([in_i[in_i != i], in_j[in_j != j]]))
    S = np.concatenate([[i, j], rest]).astype(np.int64)
    D = tokens.doc_ptr.shape[0] - 1
    ndx, nwx, nx = np.zeros((D, 2), np.int64), np.zeros((V, 2), np.int64), np.zeros(2, np.int64)
    target = (z[S] != ki).astype(np.int64)  # the current split: 0 = ki's side, 1 = kj's
    side = np.concatenate([[0, 1], (rng.random(S.shape[0] - 2) < 0.5).astype(np.int64)])
    np.add.at(ndx, (doc_of[S], side), 1)
    np.add.at(nwx, (words[S], side), 1)
    np.add.at(nx, side, 1)
    tau_m = float(tau[ki] + tau[kj])
    alpha_rho = 0.5 * alpha * tau_m
    v_beta = V * beta
    rs, rt = side[2:], target[2:]
    for _ in range(n_launch):
        ksm._sm_scan(rng, S[2:], S.shape[0] - 2, doc_of, words, rs, rt, ndx, nwx, nx, alpha_rho, beta, v_beta,
                      False)
    launch = rs.copy()
    # the split the final scan would draw (a split proposal from here), scored as drawn
    nd2, nw2, nx2, s2 = ndx.copy(), nwx.copy(), nx.copy(), rs.copy()
    logq_own = ksm._sm_scan(rng, S[2:], S.shape[0] - 2, doc_of, words, s2, rt, nd2, nw2, nx2, alpha_rho, beta,
                             v_beta, False)
    # the reverse split: the final scan forced onto the current split
    logq = ksm._sm_scan(rng, S[2:], S.shape[0] - 2, doc_of, words, rs, rt, ndx, nwx, nx, alpha_rho, beta, v_beta,
                         True)
    docs = np.unique(doc_of[S]).astype(np.int64)
    wl = np.unique(words[S]).astype(np.int64)
    D0, D1 = int(np.count_nonzero(ndx[docs, 0])), int(np.count_nonzero(ndx[docs, 1]))
    u = float(tau[ki] / tau_m)
    t0, t1 = u * tau_m, (1 - u) * tau_m

    def log_target(nd, nw, n):
        return (math.log(gamma) + math.log(tau_m) - math.log(t0) - math.log(t1)
                + ksm._topic_log_terms(docs, docs.shape[0], wl, wl.shape[0], nd, nw, n, 0, alpha * t0, beta,
                                        v_beta)
                + ksm._topic_log_terms(docs, docs.shape[0], wl, wl.shape[0], nd, nw, n, 1, alpha * t1, beta,
                                        v_beta)
                - ksm._topic_log_terms(docs, docs.shape[0], wl, wl.shape[0], nd, nw, n, 2, alpha * tau_m, beta,
                                        v_beta))

    lt = log_target(ndx, nwx, nx)
    lt_own = log_target(nd2, nw2, nx2)
    log_beta = ksm._log_beta_pdf(u, float(D0), float(D1))
    disagree = float(np.mean(launch != rt))
    return dict(n_tokens=int(S.shape[0]), log_target_split_vs_merged=lt, log_q_reverse=logq, log_beta_u=log_beta,
                log_jacobian=-math.log(tau_m), log_accept_merge=-lt + logq + log_beta - math.log(tau_m),
                launch_vs_current=min(disagree, 1 - disagree), log_target_launch_split=lt_own, log_q_launch=logq_own)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n-iter", type=int, default=200)
    ap.add_argument("--launches", type=int, default=10)
    args = ap.parse_args(argv)
    from harmonium.inference.mcmc.isbn import hdp as da
    from harmonium.models.directed.hdp import HDPModel

    corpus, phi, theta = make_problem("tests4")
    tokens = corpus.tokens()
    model = HDPModel(0.01, corpus.n_words)
    rng = np.random.default_rng(args.seed)
    st = da.init(rng, tokens, model, n_topics=10, alpha=1.0, gamma=1.0)
    kernel = da.build_kernel(sample_alpha=True, sample_gamma=True, compute_log_joint=False, split_merge_proposals=3,
                             split_merge_launch=20)
    merges = 0
    for _ in range(args.n_iter):
        st, info = kernel(rng, st, tokens, model)
        merges += info.n_merge
    st = st._replace(beta=0.01)
    K = st.n_topics
    M = overlap(tokens, st.z, K, phi, theta)
    sizes = st.n_k[:K]
    print(f"tests4 from 10 topics, seed {args.seed}, {args.n_iter} iterations: K = {K}, merges accepted {merges}, "
          f"alpha {st.alpha:.3f}, gamma {st.gamma:.3f}")
    print("overlap: share of each learned topic's tokens per planted topic (rows: learned, by size)")
    print("| topic | tokens | tau | " + " | ".join(f"planted {k}" for k in range(phi.shape[0])) + " |")
    print("|---|---|---|" + "---|" * phi.shape[0])
    for k in np.argsort(-sizes):
        print(f"| {k} | {sizes[k]} | {st.tau[k]:.3f} | " + " | ".join(f"{M[k, c] / sizes[k]:.2f}"
                                                                   for c in range(phi.shape[0])) + " |")
    main_planted = M.argmax(axis=1)
    big = [k for k in np.argsort(-sizes) if sizes[k] > 0.01 * sizes.sum()]
    for c in range(phi.shape[0]):
        pair = [k for k in big if main_planted[k] == c][:2]
        if len(pair) == 2:
            break
    ki, kj = (int(x) for x in pair)
    print(f"\nmerge of topics {ki} ({sizes[ki]} tokens) and {kj} ({sizes[kj]} tokens), both mainly planted {c}; "
          f"{args.launches} random launches of 20 scans")
    keys = ["log_target_split_vs_merged", "log_q_reverse", "log_beta_u", "log_jacobian", "log_accept_merge",
            "launch_vs_current", "log_target_launch_split", "log_q_launch"]
    both = (st.n_dk[:, ki] > 0) & (st.n_dk[:, kj] > 0)
    touched = (st.n_dk[:, ki] + st.n_dk[:, kj]) > 0
    mixed_tokens = int((st.n_dk[both, ki] + st.n_dk[both, kj]).sum())
    print(f"  documents holding topic {ki} or {kj}: {int(touched.sum())}; holding both: {int(both.sum())}, "
          f"with {mixed_tokens} of the {int(sizes[ki] + sizes[kj])} tokens")
    rows = [merge_terms(np.random.default_rng(1000 + r), st, tokens, ki, kj, 20, corpus.n_words)
            for r in range(args.launches)]
    for key in keys:
        v = np.array([r[key] for r in rows])
        print(f"  {key:28s} median {np.median(v):10.2f}   min {v.min():10.2f}   max {v.max():10.2f}")


if __name__ == "__main__":
    main()
