"""Seconds per sweep of the compiled ISBN engine (CompiledISBNSampler) against the Python engine (ISBNSampler)
on Debian documents, and the compiled infinite PAM's time and memory at scale. (The compiled engine against the
dedicated HDP sampler, and the PAM against the HDP: ``engine_ratios.py``.)

    .venv/bin/python benchmarks/isbn/isbn_compiled_speed.py small --docs 200 --repeats 3
    .venv/bin/python benchmarks/isbn/isbn_compiled_speed.py pam --docs 20000 --iters 10
    .venv/bin/python benchmarks/isbn/isbn_compiled_speed.py pam --docs 20000 --iters 3 --k-super 50 --k-sub 150

``small``: one sweep of each engine from the same initial state (random labels, uniform tau), fresh each
repeat, on the HDP and the infinite-PAM declaration (Python engine: FFBS, method="auto"). ``pam``:
the compiled infinite PAM at scale, seconds per step and peak resident memory. Results (one JSON line per
measurement, with the machine's other load in cores) go to benchmarks/isbn/results/isbn-compiled.jsonl.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parents[1]  # benchmarks/, where the shared _common.py lives
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import _common as C  # noqa: E402

from harmonium.datasets import load_debian  # noqa: E402
from harmonium.inference.mcmc.isbn.compiled import CompiledISBNSampler  # noqa: E402
from harmonium.inference.mcmc.isbn.gibbs import ISBNSampler  # noqa: E402
from harmonium.models.directed import isbn_examples as ex  # noqa: E402

OUT = HERE / "isbn" / "results" / "isbn-compiled.jsonl"


def _data(n_docs):
    corpus = load_debian(n_docs=n_docs)
    tok = corpus.tokens()
    doc = np.repeat(np.arange(corpus.n_docs), np.diff(tok.doc_ptr)).astype(np.int64)
    return corpus, doc, tok.words.astype(np.int64)


def _init(name, n, rng, k_super=5, k_sub=20):
    if name == "hdp":
        return {"z": rng.integers(0, 20, n)}
    return {"super": rng.integers(0, k_super, n), "sub": rng.integers(0, k_sub, n)}


class _Load:
    def __enter__(self):
        self.b, self.t = C._busy_s(), time.perf_counter()
        return self

    def __exit__(self, *a):
        self.wall = time.perf_counter() - self.t
        self.busy = C._busy_s() - self.b


def _emit(rec):
    print(json.dumps(rec), flush=True)
    with open(OUT, "a") as f:
        f.write(json.dumps(rec) + "\n")


def small(args):
    corpus, doc, w = _data(args.docs)
    V = corpus.n_words
    for name, net in (("hdp", ex.hdp(V, 1.0, 1.0, 0.1)), ("infinite_pam", ex.infinite_pam(V, 1.0, 1.0, 0.1))):
        init = _init("hdp" if name == "hdp" else "pam", w.size, np.random.default_rng(0))
        CompiledISBNSampler(net, {"doc": doc}, {"w": w}, init=init).sweep(np.random.default_rng(0))  # JIT
        for engine in ("compiled", "python"):
            times = []
            for r in range(args.repeats):
                cls = CompiledISBNSampler if engine == "compiled" else ISBNSampler
                s = cls(net, {"doc": doc}, {"w": w}, init=init)
                rng = np.random.default_rng(r)
                with _Load() as ld:
                    s.sweep(rng)
                times.append(ld.wall)
                _emit({"bench": "small", "model": name, "engine": engine, "repeat": r, "docs": int(corpus.n_docs),
                       "tokens": int(w.size), "s_per_sweep": ld.wall, "states": s.n_states(),
                       "other_load_cores": max(ld.busy / ld.wall - 1.0, 0.0)})


def pam(args):
    corpus, doc, w = _data(args.docs)
    net = ex.infinite_pam(corpus.n_words, 1.0, 1.0, 0.1)
    rng = np.random.default_rng(0)
    C.reset_hwm()
    s = CompiledISBNSampler(net, {"doc": doc}, {"w": w}, init=_init("pam", w.size, rng, args.k_super, args.k_sub))
    for t in range(args.iters):
        with _Load() as ld:
            s.step(rng)
        n_bytes = sum(c.nbytes + tt.nbytes for c, tt in zip(s.C, s.T, strict=True)) + s.obs.nbytes
        _emit({"bench": "pam20k", "engine": "compiled", "iter": t, "init_states": [args.k_super, args.k_sub],
               "docs": int(corpus.n_docs), "tokens": int(w.size),
               "s_per_step": ld.wall, "states": s.n_states(), "caps": list(s.caps), "table_mib": n_bytes / 2**20,
               "hwm_mib": C.hwm_mib(), "other_load_cores": max(ld.busy / ld.wall - 1.0, 0.0)})


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("bench", choices=["small", "pam"])
    ap.add_argument("--docs", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--k-super", type=int, default=5, help="pam: initial super-topics (random labels)")
    ap.add_argument("--k-sub", type=int, default=20, help="pam: initial sub-topics (random labels)")
    args = ap.parse_args(argv)
    {"small": small, "pam": pam}[args.bench](args)


if __name__ == "__main__":
    main()
