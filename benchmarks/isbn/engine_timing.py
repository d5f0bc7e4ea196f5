"""Seconds per iteration of each HDP-family engine before and after the engine package (issue 18 item 4), timed
in one process, alternating old and new, on the same data and the same initial state.

    git archive 53e1907 | tar -x -C /tmp/engine_base   # the code before the engine package
    .venv/bin/python benchmarks/isbn/engine_timing.py --before /tmp/engine_base --docs 2000 --repeats 9

The "before" modules (``hdp.py``, ``compiled.py``, ``gibbs.py`` of that tree) are loaded under other names next to
today's; the kernels (``_kernels``) are today's for both, unchanged by the engine package. Engines and
workloads: the direct-assignment kernel (the ``HDP`` estimator's iteration: sparse sweep, tables, alpha, gamma,
tau) and the compiled engine's ``step`` on the HDP and the infinite-PAM declarations over ``--docs`` Debian
documents; the Python engine's ``step`` on the HDP declaration over ``--small-docs`` documents; and today's
``make_sampler`` choice for the HDP topic model (the direct-assignment engine behind the compiled interface)
against the compiled engine on the same network. Each pair starts from identical states with identical seeds; in
every repeat both take one iteration, in alternating order; the median and the range of new / old are printed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import types
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(HERE))

from harmonium.datasets import load_debian  # noqa: E402
from harmonium.inference.mcmc.isbn import hdp as da  # noqa: E402
from harmonium.inference.mcmc.isbn.compiled import CompiledISBNSampler  # noqa: E402
from harmonium.inference.mcmc.isbn.engine import DirectAssignmentEngine  # noqa: E402
from harmonium.inference.mcmc.isbn.gibbs import ISBNSampler  # noqa: E402
from harmonium.models.directed import isbn_examples as ex  # noqa: E402
from harmonium.models.directed.hdp import HDPModel  # noqa: E402

_MOVED = ("from harmonium.inference.mcmc.isbn.hdp import resample_alpha, resample_gamma",
          "from harmonium.inference.mcmc.isbn.hyper import resample_alpha, resample_gamma")


def _load(path: Path, name: str):
    """A module of the old tree under a new name (its import of the functions that moved to hyper.py, which
    moved verbatim, redirected)."""
    src = path.read_text().replace(*_MOVED)
    mod = types.ModuleType(name)
    mod.__file__ = str(path)
    sys.modules[name] = mod
    exec(compile(src, str(path), "exec"), mod.__dict__)
    return mod


def _pair(make_old, make_new, step_old, step_new, repeats, warmup=2):
    old, new = make_old(), make_new()
    ro, rn = np.random.default_rng(1), np.random.default_rng(1)
    for _ in range(warmup):
        old = step_old(old, ro)
        new = step_new(new, rn)
    t_old, t_new = [], []
    for r in range(repeats):
        order = ((old, step_old, ro, t_old), (new, step_new, rn, t_new))
        out = {}
        for obj, step, rng, acc in (order if r % 2 == 0 else order[::-1]):
            t = time.perf_counter()
            out[id(acc)] = step(obj, rng)
            acc.append(time.perf_counter() - t)
        old, new = out[id(t_old)], out[id(t_new)]
    ratios = [n / o for n, o in zip(t_new, t_old, strict=True)]
    return statistics.median(t_old), statistics.median(t_new), statistics.median(ratios), min(ratios), max(ratios)


def _engine_step(e, rng):
    e.step(rng)
    return e


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True, help="root of a tree of the code before the engine package")
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--small-docs", type=int, default=30)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--fast-repeats", type=int, default=41, help="repeats of the millisecond direct-assignment pairs")
    args = ap.parse_args(argv)
    base = Path(args.before) / "harmonium" / "inference" / "mcmc" / "isbn"
    old_da = _load(base / "hdp.py", "_before_isbn_hdp")
    old_compiled = _load(base / "compiled.py", "_before_isbn_compiled")
    old_gibbs = _load(base / "gibbs.py", "_before_isbn_gibbs")

    corpus = load_debian(n_docs=args.docs)
    tokens = corpus.tokens()
    doc = np.repeat(np.arange(corpus.n_docs), np.diff(tokens.doc_ptr)).astype(np.int64)
    w = tokens.words.astype(np.int64)
    V, N = corpus.n_words, w.size
    print(f"Debian {corpus.n_docs} documents, {N} tokens, V = {V}; {args.repeats} alternating repeats; "
          "seconds per iteration (median), new / old (median, min-max)")
    model = HDPModel(0.01, V)
    rng = np.random.default_rng(0)
    z20 = rng.integers(0, 20, N)

    def da_state():
        return da.state_from_assignments(tokens, model, z20, np.full(21, 1 / 21), 1.0, 1.0)

    rows = []
    for label, mod_old, mod_new in [("direct-assignment kernel (HDP estimator)", old_da, da)]:
        ko = mod_old.build_kernel(sample_alpha=True, sample_gamma=True, compute_log_joint=False)
        kn = mod_new.build_kernel(sample_alpha=True, sample_gamma=True, compute_log_joint=False)
        rows.append((label, *_pair(da_state, da_state, lambda s, r, k=ko: k(r, s, tokens, model)[0],
                                   lambda s, r, k=kn: k(r, s, tokens, model)[0], args.fast_repeats)))
    hdp_net = ex.hdp(V, beta=0.01)
    for name, net, init in [("hdp", hdp_net, {"z": z20}),
                            ("pam", ex.infinite_pam(V, beta=0.01),
                             {"super": rng.integers(0, 5, N), "sub": rng.integers(0, 20, N)})]:
        kw = dict(init=init, sample_concentration=True)
        rows.append((f"compiled engine step, {name}",
                     *_pair(lambda net=net, kw=kw: old_compiled.CompiledISBNSampler(net, {"doc": doc}, {"w": w}, **kw),
                            lambda net=net, kw=kw: CompiledISBNSampler(net, {"doc": doc}, {"w": w}, **kw),
                            _engine_step, _engine_step, args.repeats)))
    small = load_debian(n_docs=args.small_docs)
    st = small.tokens()
    sdoc = np.repeat(np.arange(small.n_docs), np.diff(st.doc_ptr)).astype(np.int64)
    sw = st.words.astype(np.int64)
    sinit = {"z": rng.integers(0, 5, sw.size)}
    snet = ex.hdp(small.n_words, beta=0.01)
    rows.append((f"Python engine step, hdp ({small.n_docs} docs, {sw.size} tokens)",
                 *_pair(lambda: old_gibbs.ISBNSampler(snet, {"doc": sdoc}, {"w": sw}, init=sinit,
                                                      sample_concentration=True),
                        lambda: ISBNSampler(snet, {"doc": sdoc}, {"w": sw}, init=sinit, sample_concentration=True),
                        _engine_step, _engine_step, max(3, args.repeats // 2), warmup=1)))
    kw = dict(init={"z": z20}, sample_concentration=True)
    rows.append(("make_sampler(hdp): direct-assignment engine (new) vs compiled engine (old column)",
                 *_pair(lambda: CompiledISBNSampler(hdp_net, {"doc": doc}, {"w": w}, **kw),
                        lambda: DirectAssignmentEngine(hdp_net, {"doc": doc}, {"w": w}, **kw),
                        _engine_step, _engine_step, args.fast_repeats)))
    for label, t_old, t_new, med, lo, hi in rows:
        print(f"{label:<90s} old {t_old:8.4f} s  new {t_new:8.4f} s  new/old {med:5.3f} ({lo:5.3f}-{hi:5.3f})")


if __name__ == "__main__":
    main()
