"""Bias of the fast AIS setting (AIS_SETTINGS["fast"]) against exact log Z and against the default.

Part "exact": a small Replicated Softmax (n_hidden=10, 1,024 hidden states, so log Z(D) is
enumerable) fitted on the first 2,000 Debian packages; log Z at every distinct test length by
exact enumeration, by the fast setting (20 runs, 1,000 temperatures, 12 length groups,
interpolated), by the fast setting without length groups, and by the default temperatures
(14,500; 100 runs) at a few lengths. Reports the errors of log Z and the held-out perplexity
with each.

Part "real": the README's Replicated Softmax (n_hidden=50, full Debian training split, or
``--model`` a saved one): the fast setting at every test length against 14,500 temperatures
(``--ref-runs`` runs) at ``--ref-lengths`` lengths that are not on the fast grid (so the
interpolation is part of the difference), at quantiles 0.25-0.75 of the test lengths, or with
``--ref-near L ...`` at the off-grid test lengths nearest those values (long documents); also the
CPU time of the fit and of the fast AIS.

    python benchmarks/ais_fast_bias.py exact
    python benchmarks/ais_fast_bias.py real --model rsm-debian.hmn --ref-runs 10 --ref-lengths 2
    python benchmarks/ais_fast_bias.py real --model rsm-debian.hmn --ref-runs 10 --ref-near 100 300 600 1500

One JSON line per part goes to benchmarks/harmoniums/results/ais-fast-bias.jsonl.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

import harmonium
from harmonium.corpus import train_test_split
from harmonium.datasets import load_debian
from harmonium.evaluation.partition import AIS_SETTINGS, length_grid

OUT = Path(__file__).resolve().parent / "results" / "ais-fast-bias.jsonl"


def _split(n_docs):
    corpus = load_debian(n_docs=n_docs)
    train, test = train_test_split(corpus, test_size=0.1, random_state=0)
    return train.drop_empty(), test


def _perplexity(rsm, test, log_z_at):
    """exp(-sum_d (log p*(x_d) - log Z(D_d)) / N) with log Z from ``log_z_at`` (dict length -> value)."""
    keep = test.doc_lengths > 0
    d = np.asarray(test.doc_lengths)[keep].astype(np.int64)
    neg_f = -rsm.free_energy(test)[keep]
    lz = np.array([log_z_at[int(x)] for x in d])
    return float(np.exp(-(neg_f - lz).sum() / d.sum()))


def _record(rec):
    print(json.dumps(rec), flush=True)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with OUT.open("a") as f:
        f.write(json.dumps(rec) + "\n")


def part_exact(args):
    fast = AIS_SETTINGS["fast"]
    train, test = _split(2000)
    rsm = harmonium.ReplicatedSoftmax(n_hidden=10, n_iter=10, random_state=0).fit(train)
    lens = np.unique(test.doc_lengths[test.doc_lengths > 0])
    t = time.perf_counter()
    ex = rsm.log_partition(lengths=lens, method="exact")
    t_exact = time.perf_counter() - t
    t = time.perf_counter()
    fa = rsm.log_partition(lengths=lens, **fast, progress=False)
    t_fast = time.perf_counter() - t
    err = np.asarray(fa.log_z) - np.asarray(ex.log_z)
    print(f"fast - exact over {lens.size} lengths: mean {err.mean():.4f}, max |.| {np.abs(err).max():.4f} "
          f"({t_fast:.0f} s)", flush=True)
    t = time.perf_counter()
    fa_all = rsm.log_partition(lengths=lens, n_runs=fast["n_runs"], n_temperatures=fast["n_temperatures"],
                               random_state=1, progress=False)
    t_fast_all = time.perf_counter() - t
    print(f"fast without groups - exact: max |.| {np.abs(np.asarray(fa_all.log_z) - ex.log_z).max():.4f}",
          flush=True)
    ref_lens = lens[np.linspace(0, lens.size - 1, args.ref_lengths).round().astype(int)]
    t = time.perf_counter()
    de = rsm.log_partition(lengths=ref_lens, n_runs=args.ref_runs, n_temperatures=14_500, progress=False)
    t_default = time.perf_counter() - t
    exact_at = dict(zip(lens.tolist(), np.asarray(ex.log_z).tolist(), strict=True))
    err_all = np.asarray(fa_all.log_z) - np.asarray(ex.log_z)
    err_def = np.asarray(de.log_z) - np.array([exact_at[int(x)] for x in ref_lens])
    rec = {
        "part": "exact", "model": "ReplicatedSoftmax(n_hidden=10, n_iter=10), Debian first 2000, 90/10 split seed 0",
        "n_words": int(train.n_words), "n_test_docs": int(test.n_docs), "n_distinct_lengths": int(lens.size),
        "max_length": int(lens.max()), "fast": fast, "fast_grid": length_grid(lens, fast["n_length_groups"]).tolist(),
        "fast_minus_exact_mean": float(err.mean()), "fast_minus_exact_max_abs": float(np.abs(err).max()),
        "fast_minus_exact_max_abs_per_token": float(np.max(np.abs(err) / lens)),
        "fast_se_mean": float(np.mean(fa.std_error)),
        "fast_no_groups_minus_exact_mean": float(err_all.mean()),
        "fast_no_groups_minus_exact_max_abs": float(np.abs(err_all).max()),
        "default_lengths": ref_lens.tolist(), "default_runs": args.ref_runs,
        "default_minus_exact": err_def.tolist(),
        "perplexity_exact": _perplexity(rsm, test, exact_at),
        "perplexity_fast": _perplexity(rsm, test, dict(zip(lens.tolist(), np.asarray(fa.log_z).tolist(),
                                                            strict=True))),
        "seconds": {"exact": round(t_exact, 1), "fast": round(t_fast, 1), "fast_no_groups": round(t_fast_all, 1),
                    f"default_{args.ref_lengths}_lengths": round(t_default, 1)},
    }
    _record(rec)


def part_real(args):
    fast = AIS_SETTINGS["fast"]
    train, test = _split(None)
    c0 = time.process_time()
    if args.model and Path(args.model).exists():
        rsm = harmonium.load(args.model)
    else:  # the README's model
        rsm = harmonium.ReplicatedSoftmax(n_hidden=50, random_state=0).fit(train)
        if args.model:
            rsm.save(args.model)
    cpu_fit = time.process_time() - c0
    print(f"fit: {cpu_fit:.0f} s CPU", flush=True)
    lens = np.unique(test.doc_lengths[test.doc_lengths > 0])
    grid = length_grid(lens, fast["n_length_groups"])
    c0, t = time.process_time(), time.perf_counter()
    fa = rsm.log_partition(lengths=lens, **fast, progress=False)
    cpu_fast, t_fast = time.process_time() - c0, time.perf_counter() - t
    neg_f = -rsm.free_energy(test)[test.doc_lengths > 0]
    fast_at = dict(zip(lens.tolist(), np.asarray(fa.log_z).tolist(), strict=True))
    fast_se_at = dict(zip(lens.tolist(), np.atleast_1d(fa.std_error).tolist(), strict=True))
    d = np.asarray(test.doc_lengths)[test.doc_lengths > 0].astype(np.int64)
    ppl_fast = float(np.exp(-(neg_f - np.array([fast_at[int(x)] for x in d])).sum() / d.sum()))
    print(f"fast AIS over {lens.size} lengths ({grid.size} annealed): {cpu_fast:.0f} s CPU, {t_fast:.0f} s wall; "
          f"perplexity {ppl_fast:.1f}", flush=True)
    off = np.setdiff1d(lens, grid)
    # reference lengths: off the fast grid, at quantiles of the test documents' lengths
    q = args.ref_near if args.ref_near else np.quantile(d, np.linspace(0.25, 0.75, args.ref_lengths))
    ref_lens = np.unique([int(off[np.argmin(np.abs(off - v))]) for v in q])
    c0 = time.process_time()
    de = rsm.log_partition(lengths=ref_lens, n_runs=args.ref_runs, n_temperatures=14_500, random_state=1,
                           progress=False)
    cpu_ref = time.process_time() - c0
    diff = np.array([fast_at[int(x)] for x in ref_lens]) - np.asarray(de.log_z)
    rec = {
        "part": "real", "model": "ReplicatedSoftmax(n_hidden=50), full Debian 90/10 split seed 0 (the README's)",
        "n_words": int(train.n_words), "n_test_docs": int(test.n_docs), "test_tokens": int(d.sum()),
        "n_distinct_lengths": int(lens.size), "max_length": int(lens.max()), "fast": fast, "fast_grid": grid.tolist(),
        "perplexity_fast": ppl_fast,
        "reference": {"n_runs": args.ref_runs, "n_temperatures": 14_500, "lengths": ref_lens.tolist()},
        # the fast estimate's standard errors are already at every test length (interpolated between the grid)
        "fast_minus_reference": diff.tolist(), "fast_se": [fast_se_at[int(x)] for x in ref_lens],
        "reference_se": np.asarray(de.std_error).tolist(),
        "fast_minus_reference_per_token": (diff / ref_lens).tolist(),
        "cpu_seconds": {"fit": round(cpu_fit, 1), "fast_all_lengths": round(cpu_fast, 1),
                        "reference": round(cpu_ref, 1)},
        "wall_seconds_fast": round(t_fast, 1),
    }
    _record(rec)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("part", choices=("exact", "real"))
    ap.add_argument("--model", help="a saved ReplicatedSoftmax (part real)")
    ap.add_argument("--ref-runs", type=int, default=100)
    ap.add_argument("--ref-lengths", type=int, default=4)
    ap.add_argument("--ref-near", type=int, nargs="+", help="part real: reference at the off-grid test lengths "
                    "nearest these (instead of --ref-lengths quantiles)")
    args = ap.parse_args(argv)
    (part_exact if args.part == "exact" else part_real)(args)


if __name__ == "__main__":
    main()
