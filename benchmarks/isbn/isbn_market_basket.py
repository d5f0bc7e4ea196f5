"""Seed 002 §7 market basket, small: BiHDP fitted by the ISBN engine to IBM-Quest-style transactions.

Generator (after Agrawal & Srikant's IBM Almaden Quest generator, simplified so that the ground truth is a
partition): ``n_items`` items are split into ``n_item_groups`` disjoint item groups ("market basket
patterns") with Zipf-like popularity inside each group; ``n_customer_groups`` customer groups ("customer
patterns") each buy from on average ``groups_per_customer_group`` item groups (Poisson, at least 1) with
Dirichlet(1) habits; every customer belongs to one customer group and makes on average
``transactions_per_customer`` transactions (Poisson, at least 1), each drawing one item group from its group's
habits and on average ``items_per_transaction`` distinct items (Poisson, at least 1) from it; with probability
``corruption`` an item is replaced by a uniformly random item (Quest's corruption level).

With ``--generator quest`` the data come from ``harmonium.datasets.make_market_basket`` instead: the IBM Quest
generator as Agrawal & Srikant describe it (``--n-item-groups`` basket patterns, ``--n-customer-groups`` customer
patterns of on average ``--groups-per-customer-group`` basket patterns, ``--basket-pattern-size`` items per basket
pattern, its own corruption levels; ``--corruption`` is not used). True item group: the item's dominant basket
pattern (-1, a group of its own, for items never bought); true customer group: the dominant customer pattern.

Model: BiHDP (``isbn_examples.bihdp``): x_ji = 1 if customer j bought item i at least once, for every
(customer, item) pair, Bernoulli-Beta given (customer group, item group), HDP priors specific to the customer
(pi_{z1|j}) and to the item (pi_{z2|i}). Sampler: ``ISBNSampler`` (FFBS over z1 - x - z2 per pair, then tau), or
with ``--engine compiled`` the numba engine ``CompiledISBNSampler`` (the same sampler, draw for draw).

Score: an item's learned group is the mode of its entries' item-group states; adjusted Rand index and NMI
against the true item groups (sklearn.metrics), likewise for customers; baselines: k-means with the true number
of groups on the items' purchase columns (and on the customers' purchase rows), and random labels.

Examples::

    .venv/bin/python benchmarks/isbn/isbn_market_basket.py                       # defaults: about a minute
    .venv/bin/python benchmarks/isbn/isbn_market_basket.py --seeds 0 1 2 \
        --out /tmp/isbn_market_basket.jsonl
    .venv/bin/python benchmarks/isbn/isbn_market_basket.py --paper --dry-run     # the paper's generator parameters
    .venv/bin/python benchmarks/isbn/isbn_market_basket.py --generator quest --paper --dry-run   # IBM Quest
    .venv/bin/python benchmarks/isbn/isbn_market_basket.py --engine compiled --n-customers 1000 --n-items 200 \
        --n-item-groups 20 --n-customer-groups 10 --iters 100 --seeds 0 1 2     # larger, compiled engine
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
from harmonium.inference.mcmc.isbn.compiled import CompiledISBNSampler  # noqa: E402
from harmonium.inference.mcmc.isbn.gibbs import ISBNSampler  # noqa: E402
from harmonium.models.directed import isbn_examples  # noqa: E402

PAPER = dict(n_transactions=1_000_000, n_customers=10_000, n_items=1_000, items_per_transaction=4,
             groups_per_customer_group=4, n_item_groups=50, n_customer_groups=50)
DEFAULTS = dict(n_customers=60, n_items=40, n_item_groups=6, n_customer_groups=5, items_per_transaction=3,
                groups_per_customer_group=2, transactions_per_customer=6, corruption=0.02)


def generate(rng, *, n_customers, n_items, n_item_groups, n_customer_groups, items_per_transaction,
             groups_per_customer_group, transactions_per_customer, corruption, n_transactions=None):
    """Transactions (customer, list of items) and the true item and customer groups."""
    item_group = rng.permutation(np.arange(n_items) % n_item_groups)
    members = [np.flatnonzero(item_group == g) for g in range(n_item_groups)]
    popularity = [1.0 / np.arange(1, len(m) + 1) ** 0.8 for m in members]
    popularity = [p / p.sum() for p in popularity]
    habits = np.zeros((n_customer_groups, n_item_groups))
    for c in range(n_customer_groups):
        k = min(n_item_groups, max(1, rng.poisson(groups_per_customer_group)))
        habits[c, rng.choice(n_item_groups, k, replace=False)] = rng.dirichlet(np.ones(k))
    customer_group = rng.integers(0, n_customer_groups, n_customers)
    if n_transactions is not None:
        transactions_per_customer = n_transactions / n_customers
    baskets = []
    for j in range(n_customers):
        for _ in range(max(1, rng.poisson(transactions_per_customer))):
            g = rng.choice(n_item_groups, p=habits[customer_group[j]])
            size = min(len(members[g]), max(1, rng.poisson(items_per_transaction)))
            items = rng.choice(members[g], size, replace=False, p=popularity[g])
            noisy = rng.random(size) < corruption
            items[noisy] = rng.integers(0, n_items, int(noisy.sum()))
            baskets.append((j, np.unique(items)))
    return baskets, item_group, customer_group


def generate_quest(rng, *, n_customers, n_items, n_item_groups, n_customer_groups, items_per_transaction,
                   groups_per_customer_group, transactions_per_customer, corruption=None, n_transactions=None,
                   basket_pattern_size=1.25):
    """The same outputs from the IBM Quest generator (harmonium.datasets.make_market_basket); ``corruption`` unused."""
    if n_transactions is None:
        n_transactions = int(round(transactions_per_customer * n_customers))
    data = make_market_basket(
        n_transactions=n_transactions, n_customers=n_customers, n_items=n_items,
        mean_transaction_size=items_per_transaction, n_basket_patterns=n_item_groups,
        n_customer_patterns=n_customer_groups, mean_basket_pattern_size=basket_pattern_size,
        mean_customer_pattern_length=groups_per_customer_group, random_state=rng)
    baskets = [(int(data.customer[t]), np.unique(data.items[data.indptr[t]:data.indptr[t + 1]]))
               for t in range(data.customer.size)]
    return baskets, data.item_group, data.customer_group


def bought_matrix(baskets, n_customers, n_items):
    X = np.zeros((n_customers, n_items), dtype=np.int64)
    for j, items in baskets:
        X[j, items] = 1
    return X


def _mode_labels(z, owner, n):
    out = np.empty(n, dtype=np.int64)
    for o in range(n):
        vals, cnt = np.unique(z[owner == o], return_counts=True)
        out[o] = vals[np.argmax(cnt)]
    return out


def run(seed: int, iters: int, cfg: dict, init_groups: int, alpha: float, gamma: float, init_mode: str,
        engine_name: str = "python") -> dict:
    from sklearn.cluster import KMeans
    from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

    rng = np.random.default_rng(seed)
    baskets, item_group, customer_group = (generate_quest if cfg.get("generator") == "quest" else generate)(
        rng, **{k: v for k, v in cfg.items() if k != "generator"})
    X = bought_matrix(baskets, cfg["n_customers"], cfg["n_items"])
    cust, item = np.meshgrid(np.arange(cfg["n_customers"]), np.arange(cfg["n_items"]), indexing="ij")
    cust, item, x = cust.ravel(), item.ravel(), X.ravel()
    net = isbn_examples.bihdp(alpha=alpha, gamma=gamma)
    if init_mode == "per-index":  # every entry of a customer (an item) starts in that customer's (item's) state
        init = {"customer_group": rng.integers(0, init_groups, cfg["n_customers"])[cust],
                "item_group": rng.integers(0, init_groups, cfg["n_items"])[item]}
    else:  # every entry starts in its own random state
        init = {"customer_group": rng.integers(0, init_groups, x.size),
                "item_group": rng.integers(0, init_groups, x.size)}
    cls = CompiledISBNSampler if engine_name == "compiled" else ISBNSampler
    engine = cls(net, {"customer": cust, "item": item}, {"x": x}, init=init)
    trace, t0, b0 = [], time.perf_counter(), _busy_s()
    for _ in range(iters):
        engine.step(rng)
        trace.append(engine.n_states())
    wall = time.perf_counter() - t0
    labels = (engine.labels if engine_name == "compiled" else (lambda b: engine.lat[b].z))
    item_hat = _mode_labels(labels("item_group"), item, cfg["n_items"])
    cust_hat = _mode_labels(labels("customer_group"), cust, cfg["n_customers"])
    km = KMeans(cfg["n_item_groups"], n_init=10, random_state=seed).fit_predict(X.T.astype(float))
    km_c = KMeans(cfg["n_customer_groups"], n_init=10, random_state=seed).fit_predict(X.astype(float))
    rand_items = np.random.default_rng(seed + 1).integers(0, cfg["n_item_groups"], cfg["n_items"])
    return {
        "seed": seed, "iters": iters, "config": cfg, "alpha": alpha, "gamma": gamma, "init_groups": init_groups,
        "init": init_mode, "engine": engine_name,
        "n_pairs": int(x.size), "n_transactions": len(baskets), "density": float(x.mean()),
        "seconds": wall, "seconds_per_iter": wall / iters, "other_busy_cores": (_busy_s() - b0) / wall - 1.0,
        "n_states_final": trace[-1], "n_states_trace": trace,
        "item_ari": adjusted_rand_score(item_group, item_hat), "item_nmi": normalized_mutual_info_score(item_group,
                                                                                                      item_hat),
        "customer_ari": adjusted_rand_score(customer_group, cust_hat),
        "customer_nmi": normalized_mutual_info_score(customer_group, cust_hat),
        "kmeans_item_ari": adjusted_rand_score(item_group, km),
        "kmeans_item_nmi": normalized_mutual_info_score(item_group, km),
        "random_item_ari": adjusted_rand_score(item_group, rand_items),
        "kmeans_customer_ari": adjusted_rand_score(customer_group, km_c),
        "kmeans_customer_nmi": normalized_mutual_info_score(customer_group, km_c),
        "item_groups_learned": {int(g): np.flatnonzero(item_hat == g).tolist() for g in np.unique(item_hat)},
        "item_groups_true": {int(g): np.flatnonzero(item_group == g).tolist() for g in np.unique(item_group)},
    }


def table(path: Path) -> str:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    out = ["| engine | init | seed | iters | s/iter | K cust / item (true) | item ARI | item NMI | cust ARI | cust NMI "
           "| k-means item ARI / NMI | k-means cust ARI / NMI | random item ARI |", "|" + "---|" * 13]
    for r in rows:
        c = r["config"]
        kc_ = (f"{r['kmeans_customer_ari']:.3f} / {r['kmeans_customer_nmi']:.3f}" if "kmeans_customer_ari" in r
               else "-")
        out.append(f"| {r.get('engine', 'python')} | {r['init']} | {r['seed']} | {r['iters']} | "
                   f"{r['seconds_per_iter']:.2f} | "
                   f"{r['n_states_final']['customer_group']} / {r['n_states_final']['item_group']} "
                   f"({c['n_customer_groups']} / {c['n_item_groups']}) | {r['item_ari']:.3f} | {r['item_nmi']:.3f} | "
                   f"{r['customer_ari']:.3f} | {r['customer_nmi']:.3f} | {r['kmeans_item_ari']:.3f} / "
                   f"{r['kmeans_item_nmi']:.3f} | {kc_} | {r['random_item_ari']:.3f} |")
    for eng, init in sorted({(r.get("engine", "python"), r["init"]) for r in rows}):
        sel = [r for r in rows if r["init"] == init and r.get("engine", "python") == eng]
        ari = np.array([r["item_ari"] for r in sel])
        cari = np.array([r["customer_ari"] for r in sel])
        out.append(f"\n{eng}, {init}: item ARI {ari.mean():.3f} (min {ari.min():.3f}, max {ari.max():.3f}); "
                   f"customer ARI {cari.mean():.3f} (min {cari.min():.3f}, max {cari.max():.3f}) over {len(sel)} seeds")
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for k, v in DEFAULTS.items():
        ap.add_argument("--" + k.replace("_", "-"), type=type(v), default=v)
    ap.add_argument("--iters", type=int, default=40)
    ap.add_argument("--init-groups", type=int, default=8)
    ap.add_argument("--alpha", type=float, default=1.0)
    ap.add_argument("--gamma", type=float, default=1.0)
    ap.add_argument("--init", choices=("per-index", "per-entry"), default="per-index",
                    help="random initial states drawn per customer/item (default) or per (customer, item) entry")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--engine", choices=("python", "compiled"), default="python",
                    help="ISBNSampler (Python) or CompiledISBNSampler (numba; the same sampler)")
    ap.add_argument("--paper", action="store_true", help="the seed's generator parameters (1M transactions)")
    ap.add_argument("--generator", choices=("home", "quest"), default="home",
                    help="the simplified generator above (default) or the IBM Quest generator (make_market_basket)")
    ap.add_argument("--basket-pattern-size", type=float, default=1.25,
                    help="with --generator quest: mean items per basket pattern (|I|, Quest lit.patlen)")
    ap.add_argument("--dry-run", action="store_true", help="generate only and print the data sizes")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--table", type=Path, help="print a markdown table of a results file and exit")
    a = ap.parse_args(argv)
    if a.table:
        print(table(a.table))
        return
    cfg = {k: getattr(a, k) for k in DEFAULTS}
    if a.paper:
        cfg.update({k: v for k, v in PAPER.items() if k != "n_transactions"})
        cfg["n_transactions"] = PAPER["n_transactions"]
    if a.generator == "quest":
        cfg.update(generator="quest", basket_pattern_size=a.basket_pattern_size)
    if a.dry_run:
        gen = generate_quest if a.generator == "quest" else generate
        baskets, ig_, cg = gen(np.random.default_rng(a.seeds[0]), **{k: v for k, v in cfg.items() if k != "generator"})
        print(json.dumps({"transactions": len(baskets), "pairs": cfg["n_customers"] * cfg["n_items"],
                          "items_per_transaction": float(np.mean([len(b) for _, b in baskets]))}))
        return
    for seed in a.seeds:
        res = run(seed, a.iters, cfg, a.init_groups, a.alpha, a.gamma, a.init, a.engine)
        res.update(machine=machine(), git=git_revision(str(Path(__file__).resolve().parents[2])))
        short = {k: (round(v, 3) if isinstance(v, float) else v) for k, v in res.items()
                 if k not in ("n_states_trace", "item_groups_learned", "item_groups_true", "machine", "config")}
        print(json.dumps(short))
        if a.out:
            with open(a.out, "a") as f:
                f.write(json.dumps(res) + "\n")


if __name__ == "__main__":
    main()
