"""Seed 002 §7 at the paper's scale: the BiHDP with binomial blocks on IBM Quest market baskets.

Data: ``harmonium.datasets.make_market_basket`` (the IBM Quest generator; defaults = the seed's run: 1M
transactions, 10K customers, 1K items, 4 items a transaction, 4 item groups per customer group, 50 basket
patterns, 50 customer patterns). n_ji = how many of customer j's T_j transactions hold item i.

Model and sampler: ``harmonium.inference.mcmc.isbn.bihdp_blocks`` (one group per customer and per item, CRP
priors with Escobar-West concentrations, n_ji ~ Binomial(T_j, p_gh), p_gh ~ Beta(a, b) collapsed; an epoch is
a sweep over the customers and one over the items, cost O(purchases + (customers + items) K_c K_i)).

Scores (truth: an item's dominant basket pattern, a customer's dominant customer pattern, both from the
generator): ARI and NMI over the items ever bought (never-bought items carry no signal; all-items figures
are recorded too) and over the customers; the number of groups; Fig. 4's table (the 10 most popular learned
item groups, each against the basket pattern with the largest Jaccard overlap, mismatched items marked);
baselines from scikit-learn on the same customer x item count matrix, told the true numbers of groups:
k-means (rows L2-normalised), NMF (argmax loadings), LDA over customers (argmax), spectral co-clustering.

Examples::

    nice .venv/bin/python benchmarks/isbn/bihdp_blocks_market_basket.py --scale small --seeds 0 1 2 \
        --out benchmarks/isbn/results/bihdp-blocks-small.jsonl
    nice .venv/bin/python benchmarks/isbn/bihdp_blocks_market_basket.py --scale paper --max-seconds 100000 \
        --seeds 0 --png benchmarks/isbn/results/bihdp-blocks-paper-seed0-matching.png \
        --out benchmarks/isbn/results/bihdp-blocks-paper.jsonl
    .venv/bin/python benchmarks/isbn/bihdp_blocks_market_basket.py \
        --table benchmarks/isbn/results/bihdp-blocks-paper.jsonl
    .venv/bin/python benchmarks/isbn/bihdp_blocks_market_basket.py \
        --summary benchmarks/isbn/results/bihdp-blocks-paper.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _common import _busy_s, git_revision, machine  # noqa: E402

from harmonium.datasets import make_market_basket  # noqa: E402
from harmonium.inference.mcmc.isbn import bihdp_blocks as bb  # noqa: E402

SCALES = {
    "paper": dict(n_transactions=1_000_000, n_customers=10_000, n_items=1_000),
    "small": dict(n_transactions=100_000, n_customers=1_000, n_items=1_000),
}


def fig4_table(labels, counts_per_item, true_groups, top=10):
    """The ``top`` most popular learned groups (by purchases), each with its best Jaccard-matching true group."""
    rows = []
    groups = np.unique(labels)
    pop = np.array([counts_per_item[labels == g].sum() for g in groups])
    true_sets = [set(map(int, t)) for t in true_groups]
    for g in groups[np.argsort(-pop, kind="stable")][:top]:
        items = np.flatnonzero(labels == g)
        items = items[np.argsort(-counts_per_item[items], kind="stable")]
        bought = [int(i) for i in items if counts_per_item[i] > 0]
        ls = set(bought)
        jac = [len(ls & t) / len(ls | t) if ls | t else 0.0 for t in true_sets]
        best = int(np.argmax(jac))
        rows.append(dict(group=int(g), purchases=int(counts_per_item[items].sum()), n_items=int(items.size),
                         learned=bought, true_pattern=best, true=sorted(true_sets[best]), jaccard=float(jac[best]),
                         extra=sorted(ls - true_sets[best]), missing=sorted(true_sets[best] - ls)))
    return rows


def baselines(X, item_true, cust_true, n_item_groups, n_cust_groups, seed, bought, active):
    """k-means, NMF, LDA and spectral co-clustering on the count matrix (bought items, active customers)."""
    from sklearn.cluster import KMeans, SpectralCoclustering
    from sklearn.decomposition import NMF, LatentDirichletAllocation
    from sklearn.metrics import adjusted_rand_score as ari
    from sklearn.metrics import normalized_mutual_info_score as nmi
    from sklearn.preprocessing import normalize

    Xs = X[active][:, bought].astype(float)
    it, ct = item_true[bought], cust_true[active]
    out = {}

    def score(name, item_lab, cust_lab, t0):
        out[name] = dict(item_ari=ari(it, item_lab), item_nmi=nmi(it, item_lab), customer_ari=ari(ct, cust_lab),
                         customer_nmi=nmi(ct, cust_lab), seconds=time.perf_counter() - t0)

    t0 = time.perf_counter()
    score("kmeans", KMeans(n_item_groups, n_init=10, random_state=seed).fit_predict(normalize(Xs.T.tocsr())),
          KMeans(n_cust_groups, n_init=3, random_state=seed).fit_predict(normalize(Xs)), t0)
    t0 = time.perf_counter()
    nmf_i = NMF(n_item_groups, init="nndsvda", random_state=seed, max_iter=400).fit(Xs)
    nmf_c = NMF(n_cust_groups, init="nndsvda", random_state=seed, max_iter=400).fit(Xs)
    score("nmf", nmf_i.components_.argmax(0), nmf_c.transform(Xs).argmax(1), t0)
    t0 = time.perf_counter()
    lda_i = LatentDirichletAllocation(n_item_groups, random_state=seed, learning_method="batch", max_iter=10).fit(Xs)
    lda_c = LatentDirichletAllocation(n_cust_groups, random_state=seed, learning_method="batch", max_iter=10).fit(Xs)
    score("lda", lda_i.components_.argmax(0), lda_c.transform(Xs).argmax(1), t0)
    t0 = time.perf_counter()
    sc_i = SpectralCoclustering(n_item_groups, random_state=seed).fit(Xs)
    sc_c = SpectralCoclustering(n_cust_groups, random_state=seed).fit(Xs)
    score("spectral_coclustering", sc_i.column_labels_, sc_c.row_labels_, t0)
    return out


def run(seed, gen, epochs, max_seconds, init_groups, a, b, with_baselines=True):
    from sklearn.metrics import adjusted_rand_score as ari
    from sklearn.metrics import normalized_mutual_info_score as nmi

    t0 = time.perf_counter()
    d = make_market_basket(**gen, random_state=seed)
    X, T = bb.transaction_counts(d.customer, d.indptr, d.items, gen["n_customers"], gen["n_items"])
    data = bb.make_data(X, T)
    gen_s = time.perf_counter() - t0
    rng = np.random.default_rng(seed)
    state = bb.init(rng, data, n_customer_groups=init_groups[0], n_item_groups=init_groups[1])
    kernel = bb.build_kernel(a=a, b=b)
    trace = dict(seconds=[], cpu_seconds=[], K_customer=[], K_item=[], log_joint=[], n_changed=[], alpha=[])
    b0, w0, c0 = _busy_s(), time.perf_counter(), time.process_time()
    for _ in range(epochs):
        e0, ec0 = time.perf_counter(), time.process_time()
        state, info = kernel(rng, state, data)
        trace["seconds"].append(time.perf_counter() - e0)
        trace["cpu_seconds"].append(time.process_time() - ec0)
        trace["K_customer"].append(info.n_groups[0])
        trace["K_item"].append(info.n_groups[1])
        trace["log_joint"].append(info.log_joint)
        trace["n_changed"].append(info.n_changed)
        trace["alpha"].append(state.alpha.tolist())
        if time.perf_counter() - w0 > max_seconds:
            break
    wall = time.perf_counter() - w0
    cpu = time.process_time() - c0
    busy = (_busy_s() - b0) / wall - 1.0
    n_item = np.asarray(X.sum(axis=0)).ravel()
    bought = n_item > 0
    active = T > 0
    zi, zc = state.z[1], state.z[0]
    it, ct = d.item_group, d.customer_group
    fig4 = fig4_table(zi, n_item, d.item_groups)
    n_true_items = int(np.unique(it[bought]).size)
    n_true_cust = int(np.unique(ct[active]).size)
    rec = dict(
        seed=seed, generator=gen, init_groups=list(init_groups), a=a, b=b, generate_seconds=gen_s,
        n_purchases=int(d.items.size), n_pairs_nonzero=int(X.nnz), n_items_bought=int(bought.sum()),
        epochs=len(trace["seconds"]), seconds=wall, seconds_per_epoch=float(np.median(trace["seconds"])),
        cpu_seconds=cpu, cpu_seconds_per_epoch=float(np.median(trace["cpu_seconds"])),
        other_busy_cores=busy, trace=trace,
        K_customer=int(state.K[0]), K_item=int(state.K[1]),
        K_item_bought=int(np.unique(zi[bought]).size),
        true_item_groups_bought=n_true_items, true_customer_groups=n_true_cust,
        item_ari=ari(it[bought], zi[bought]), item_nmi=nmi(it[bought], zi[bought]),
        item_ari_all=ari(it, zi), customer_ari=ari(ct[active], zc[active]), customer_nmi=nmi(ct[active], zc[active]),
        item_share_median=float(np.median(d.item_group_share[bought])),
        customer_share_median=float(np.median(d.customer_group_share[active])),
        fig4=fig4, fig4_matched=int(sum(r["jaccard"] >= 0.5 for r in fig4)),
        fig4_exact=int(sum(r["jaccard"] == 1.0 for r in fig4)),
        item_labels=zi.tolist(), item_truth=it.tolist(), item_purchases=n_item.tolist(),
    )
    if with_baselines:
        rec["baselines"] = baselines(X, it, ct, n_true_items, n_true_cust, seed, bought, active)
    return rec, d


def fig4_markdown(rec) -> str:
    out = ["| # | purchases | learned items (by popularity; **not in the true group**) | best true pattern: items "
           "(*not learned*) | Jaccard |", "|---|---|---|---|---|"]
    for k, r in enumerate(rec["fig4"]):
        extra, missing = set(r["extra"]), set(r["missing"])
        lt = ", ".join(f"**{i}**" if i in extra else str(i) for i in r["learned"][:14])
        lt += " ..." if len(r["learned"]) > 14 else ""
        tt = ", ".join(f"*{i}*" if i in missing else str(i) for i in r["true"])
        out.append(f"| {k + 1} | {r['purchases']} | {lt} | {r['true_pattern']}: {tt} | {r['jaccard']:.2f} |")
    return "\n".join(out)


def table(path: Path) -> str:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    out = ["| setting | seed | epochs | s/epoch wall (CPU) | K cust / item (bought) | true cust / item | "
           "item ARI / NMI | cust ARI / NMI | top-10 matched (exact) | "
           "k-means item ARI | NMF | LDA | co-clust | k-means cust ARI |",
           "|" + "---|" * 14]
    for r in rows:
        bl = r.get("baselines", {})

        def g(name, key="item_ari", bl=bl):
            return f"{bl[name][key]:.3f}" if name in bl else "-"

        cpu = f" ({r['cpu_seconds_per_epoch']:.2f})" if "cpu_seconds_per_epoch" in r else ""
        out.append(
            f"| {r.get('label', '')} | {r['seed']} | {r['epochs']} | {r['seconds_per_epoch']:.2f}{cpu} | "
            f"{r['K_customer']} / {r['K_item']} ({r['K_item_bought']}) | {r['true_customer_groups']} / "
            f"{r['true_item_groups_bought']} | {r['item_ari']:.3f} / {r['item_nmi']:.3f} | "
            f"{r['customer_ari']:.3f} / {r['customer_nmi']:.3f} | {r['fig4_matched']} ({r['fig4_exact']}) | "
            f"{g('kmeans')} | {g('nmf')} | {g('lda')} | {g('spectral_coclustering')} | "
            f"{g('kmeans', 'customer_ari')} |")
    return "\n".join(out)


def _mean_sd(xs) -> str:
    xs = np.asarray(xs, float)
    return f"{xs.mean():.3f} ± {xs.std(ddof=1):.3f}" if xs.size > 1 else f"{xs[0]:.3f}"


def summary(path: Path) -> str:
    """Mean ± sd (ddof 1) over the seeds of each label; the last record of a (label, seed) wins."""
    last = {}
    for line in path.read_text().splitlines():
        if line.strip():
            r = json.loads(line)
            last[(r.get("label", ""), r["seed"])] = r
    out = []
    for label in dict.fromkeys(k[0] for k in last):
        rows = [r for (lab, _), r in sorted(last.items()) if lab == label]
        out.append(f"\n{label}: seeds {[r['seed'] for r in rows]}, epochs {[r['epochs'] for r in rows]}\n")
        out.append("| method | item ARI | item NMI | customer ARI | customer NMI |\n|---|---|---|---|---|")
        keys = ("item_ari", "item_nmi", "customer_ari", "customer_nmi")
        out.append("| BiHDP | " + " | ".join(_mean_sd([r[k] for r in rows]) for k in keys) + " |")
        for name in ("kmeans", "nmf", "lda", "spectral_coclustering"):
            if all(name in r.get("baselines", {}) for r in rows):
                out.append(f"| {name} | " + " | ".join(_mean_sd([r["baselines"][name][k] for r in rows])
                                                       for k in keys) + " |")
        for r in rows:
            cpu = r.get("cpu_seconds_per_epoch")
            cpu = "-" if cpu is None else f"{cpu:.3f}"
            out.append(f"\nseed {r['seed']}: {r['epochs']} epochs in {r['seconds']:.0f} s wall; s/epoch median wall "
                       f"{r['seconds_per_epoch']:.3f}, CPU {cpu}; other busy cores {r['other_busy_cores']:.2f}; "
                       f"groups customer {r['K_customer']} (truth {r['true_customer_groups']}), item over bought "
                       f"{r['K_item_bought']} (truth {r['true_item_groups_bought']}), item all {r['K_item']}; "
                       f"top-10 matched {r['fig4_matched']} ({r['fig4_exact']} exact)")
    return "\n".join(out)


def matching_png(rec, d, path: Path, top=20):
    """Heat map: rows the ``top`` most popular learned item groups, columns the basket patterns they match;
    cell = the share of the learned group's purchases that came from that basket pattern (purchase truth)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    zi = np.asarray(rec["item_labels"])
    lab = zi[d.items]
    pat = d.purchase_basket_pattern
    groups, pop = np.unique(lab, return_counts=True)
    groups = groups[np.argsort(-pop, kind="stable")][:top]
    M = np.array([np.bincount(pat[lab == g], minlength=d.patterns.basket_weights.size) for g in groups], float)
    M /= M.sum(axis=1, keepdims=True)
    cols = []
    for row in M:
        for c in np.argsort(-row):
            if row[c] < 0.02:
                break
            if c not in cols:
                cols.append(int(c))
    fig, ax = plt.subplots(figsize=(max(6, 0.32 * len(cols) + 2), 0.32 * len(groups) + 1.8))
    im = ax.imshow(M[:, cols], cmap="viridis", vmin=0, vmax=1, aspect="auto")
    ax.set_xticks(range(len(cols)), [str(c) for c in cols], rotation=90, fontsize=7)
    ax.set_yticks(range(len(groups)), [f"{k + 1}" for k in range(len(groups))], fontsize=7)
    ax.set_xlabel("true basket pattern (generator)")
    ax.set_ylabel("learned item group, by popularity")
    g = rec["generator"]
    ax.set_title(f"BiHDP (binomial blocks), {g['n_transactions']:,} transactions, seed {rec['seed']}, "
                 f"{rec['epochs']} epochs\nshare of each learned group's purchases from each true pattern",
                 fontsize=8)
    fig.colorbar(im, ax=ax, fraction=0.04)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", choices=tuple(SCALES), default="small")
    ap.add_argument("--basket-pattern-size", type=float, default=None,
                    help="mean items per basket pattern (|I|, Quest lit.patlen); default the generator's 1.25")
    ap.add_argument("--customer-corruption", type=float, default=None, help="customer_corruption_mean")
    ap.add_argument("--epochs", type=int, default=1000)
    ap.add_argument("--max-seconds", type=float, default=120.0, help="stop after the epoch that passes this")
    ap.add_argument("--init-groups", type=int, nargs=2, default=(10, 10), metavar=("CUSTOMER", "ITEM"))
    ap.add_argument("--a", type=float, default=1.0)
    ap.add_argument("--b", type=float, default=1.0)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--no-baselines", action="store_true")
    ap.add_argument("--label", default="")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--png", type=Path, help="matching heat map of the first seed")
    ap.add_argument("--table", type=Path, help="print the markdown table of a results file and exit")
    ap.add_argument("--summary", type=Path, help="print mean ± sd over the seeds of each label of a results file")
    ap.add_argument("--fig4", type=Path, help="print Fig. 4's table of each record of a results file and exit")
    a = ap.parse_args(argv)
    if a.table:
        print(table(a.table))
        return
    if a.summary:
        print(summary(a.summary))
        return
    if a.fig4:
        for line in a.fig4.read_text().splitlines():
            r = json.loads(line)
            print(f"\n{r.get('label', '')} seed {r['seed']}, {r['epochs']} epochs\n\n{fig4_markdown(r)}")
        return
    gen = dict(SCALES[a.scale])
    if a.basket_pattern_size is not None:
        gen["mean_basket_pattern_size"] = a.basket_pattern_size
    if a.customer_corruption is not None:
        gen["customer_corruption_mean"] = a.customer_corruption
    for k, seed in enumerate(a.seeds):
        rec, d = run(seed, gen, a.epochs, a.max_seconds, tuple(a.init_groups), a.a, a.b, not a.no_baselines)
        rec.update(label=a.label or a.scale, scale=a.scale, machine=machine(),
                   git=git_revision(str(Path(__file__).resolve().parents[2])))
        short = {k2: (round(v, 3) if isinstance(v, float) else v) for k2, v in rec.items()
                 if k2 not in ("trace", "fig4", "item_labels", "item_truth", "item_purchases", "machine",
                               "generator", "baselines")}
        print(json.dumps(short), flush=True)
        print(json.dumps({n: {m: round(v, 3) for m, v in s.items()} for n, s in rec.get("baselines", {}).items()}))
        print(fig4_markdown(rec), flush=True)
        if a.out:
            with open(a.out, "a") as f:
                f.write(json.dumps(rec) + "\n")
        if a.png and k == 0:
            matching_png(rec, d, a.png)


if __name__ == "__main__":
    main()
