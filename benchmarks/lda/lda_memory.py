"""Peak memory of harmonium's LDA fits (issue 21, item 2), each case in a fresh process.

Cases (``--cases``):

* ``import``: ``import harmonium`` alone;
* ``tiny``: ``import harmonium`` and a 5-topic, 5-sweep fit on 200 Debian documents;
* ``gibbs``: collapsed Gibbs on the bundled Debian corpus (``load_debian()``, all 63,439 documents),
  ``--topics`` K, ``--sweeps`` sweeps, with the default burn-in (n_iter // 2, thin 1) and with
  ``burn_in = n_iter`` (no sample averaged);
* ``parallel``: the same with ``inference="parallel_gibbs", n_jobs=2``;
* ``accumulate``: the median CPU seconds of adding one sample to the Rao-Blackwellised sums
  (``ChainAverage.add``, after each of ``--sweeps`` sweeps) and of reading ``topic_word()``;
* ``cvb0``: CVB0 on the PyPI summaries (``--pypi-docs`` rows, all by default), K = 100, ``--cvb0-iters``,
  once for each ``--cvb0-dtype`` (the storage of gamma);
* ``transform``: ``LDA.transform`` of a model fitted by ``--sweeps`` sweeps on the 90% training split
  (``_common.load_data``, seed 0): the peak over the RSS the call starts from, for one test document and
  for the observed halves of all test documents (``transform_one_mib``, ``transform_all_mib``), and the peak
  of the bytes numpy allocates in a second call (tracemalloc: ``transform_*_traced_mib``, which reuse of
  freed heap cannot hide as it can an RSS step);
* ``tomotopy``: tomotopy's LDAModel on the same Debian token stream, run by ``--tomotopy-python`` (a
  separate virtual environment; the stream is written to a text file that it reads).

The figure is VmHWM (peak RSS of the process image) read at three points: after the
imports, after the corpus is loaded, and after ``fit``; the peak is reset after loading
(``peak_reset``), so ``peak_mib`` is the peak during ``fit`` (the loaded data included), not the
loader's; ``rss_after_load_mib`` is the RSS the fit starts from. ``fit_s`` is the wall time of
``fit``; ``sweep_s`` and ``sweep_cpu_s`` the median wall and CPU seconds of sweeps 2..n (Gibbs,
from a callback; CPU time is the steadier figure on a shared machine).

    .venv/bin/python benchmarks/lda/lda_memory.py --cases import tiny gibbs tomotopy --topics 100 1000 \
        --tomotopy-python /tmp/tt/bin/python --out benchmarks/lda/results/memory.jsonl
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path


def rss() -> float:
    """Current RSS (VmRSS) in MiB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def reset_peak() -> bool:
    """Reset VmHWM to the current RSS (Linux: 5 into /proc/self/clear_refs), so that the next peak is the fit's."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


TOKENS = Path("/tmp/harmonium-debian-tokens.txt")


def tokens_file(corpus: str) -> Path:
    """The token stream of ``corpus`` as text (one document a line), what tomotopy reads."""
    return TOKENS if corpus == "debian" else Path(f"/tmp/harmonium-{corpus}-tokens.txt")


def load(corpus: str):
    if corpus == "debian":
        from harmonium.datasets import load_debian

        return load_debian()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import _common as C

    return C.load_corpus(corpus, None)


def maxrss() -> float:
    """Peak RSS of this process image in MiB: VmHWM, which starts afresh at exec. (ru_maxrss does not: Linux
    carries it over from the process that forked and exec'd this one, so a small child reports its parent's peak.)"""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def worker(cfg: dict) -> dict:
    case = cfg["case"]
    res = dict(cfg)
    if case == "tomotopy":
        import tomotopy as tp

        res["rss_imports_mib"] = maxrss()
        mdl = tp.LDAModel(k=cfg["K"], alpha=0.1, eta=0.01, seed=0)
        with tokens_file(cfg.get("corpus", "debian")).open() as f:
            for line in f:
                mdl.add_doc(line.split())
        res["rss_loaded_mib"] = maxrss()
        res["rss_after_load_mib"] = rss()
        res["peak_reset"] = reset_peak()
        t = time.perf_counter()
        mdl.train(cfg["sweeps"], workers=1)
        res["fit_s"] = time.perf_counter() - t
        res["peak_mib"] = maxrss()
        return res
    import harmonium

    res["rss_imports_mib"] = maxrss()
    res["numba_imported"] = "numba" in sys.modules
    if case == "import":
        return res

    if case == "tiny":  # 200 documents of 30 tokens over 500 words, made here: no loader in the figure
        import numpy as np

        counts = np.random.default_rng(0).multinomial(30, np.full(500, 1 / 500), size=200)
        harmonium.LDA(5, n_iter=5, random_state=0).fit(counts)
        res["peak_mib"] = maxrss()
        return res
    if case == "cvb0":
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        import _common as C

        corpus = C.load_corpus("pypi", cfg.get("pypi_docs"))
        res["n_docs"], res["n_words"], res["nnz"] = corpus.n_docs, corpus.n_words, int(corpus.counts.nnz)
        res["rss_loaded_mib"] = maxrss()
        res["rss_after_load_mib"] = rss()
        res["peak_reset"] = reset_peak()
        t = time.perf_counter()
        lda = harmonium.LDA(cfg["K"], inference="cvb0", n_iter=cfg["sweeps"], evaluate_every=10**6, random_state=0,
                            cvb0_dtype=cfg.get("cvb0_dtype", "float32"))
        lda.fit(corpus)
        res["fit_s"] = time.perf_counter() - t
        res["peak_mib"] = maxrss()
        res["trace_ll"] = lda.trace_["log_likelihood_per_token"][-1]
        return res
    if case == "transform":
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        import _common as C

        data = C.load_data(cfg.get("corpus", "debian"))
        lda = harmonium.LDA(cfg["K"], n_iter=cfg["sweeps"], evaluate_every=10**6, random_state=0).fit(data.train)
        lda.transform(data.observed[:1])  # the kernels loaded before the peaks are read
        import tracemalloc

        for name, docs in (("one", data.observed[:1]), ("all", data.observed)):
            start = rss()
            reset_peak()
            lda.transform(docs)
            res[f"transform_{name}_mib"] = maxrss() - start
            tracemalloc.start()  # numpy's buffers: not hidden by reuse of freed heap, as RSS can be
            lda.transform(docs)
            res[f"transform_{name}_traced_mib"] = tracemalloc.get_traced_memory()[1] / 2**20
            tracemalloc.stop()
        res["topic_word_mib"] = lda.topic_word_.nbytes / 2**20
        res["n_test_docs"] = int(data.observed.n_docs)
        return res
    corpus = load(cfg.get("corpus", "debian"))
    if case == "accumulate":  # CPU seconds to add one retained sample to the Rao-Blackwellised sums
        import numpy as np

        from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs
        from harmonium.inference.mcmc.lda.estimates import ChainAverage
        from harmonium.models.directed.lda import make_model

        tokens = corpus.tokens()
        model = make_model(cfg["K"], corpus.n_words, 0.1, 0.01)
        rng = np.random.default_rng(0)
        state = cgs.init(rng, tokens, model)
        kernel = cgs.build_kernel(sampler="sparse", compute_log_joint=False)
        average = ChainAverage(corpus.n_docs, corpus.n_words, cfg["K"])
        times = []
        for _ in range(cfg["sweeps"]):
            state, _ = kernel(rng, state, tokens, model)
            t = time.process_time()
            average.add(state.n_dk, state.n_wk, state.n_k, model.alpha, model.beta)
            times.append(time.process_time() - t)
        t = time.process_time()
        average.topic_word()
        res["topic_word_cpu_s"] = time.process_time() - t
        res["add_cpu_s"] = sorted(times[1:])[len(times[1:]) // 2]  # the first add compiles or loads
        return res
    res["rss_loaded_mib"] = maxrss()
    res["rss_after_load_mib"] = rss()
    res["peak_reset"] = reset_peak()
    kw = {"inference": "parallel_gibbs", "n_jobs": 2} if case == "parallel" else {}
    n_iter = cfg["sweeps"]
    lda = harmonium.LDA(cfg["K"], n_iter=n_iter, burn_in=cfg["burn_in"], thin=1, evaluate_every=10**6,
                        random_state=0, **kw)
    marks = []

    def on_sweep(it, n, info):  # wall and CPU clocks after each sweep (and its sample accumulation)
        marks.append((time.perf_counter(), time.process_time()))

    t = time.perf_counter()
    lda.fit(corpus, callback=on_sweep)
    res["fit_s"] = time.perf_counter() - t
    res["peak_mib"] = maxrss()
    # sweeps 2..n (the first loads the compiled kernels): median wall and CPU seconds a sweep
    walls = sorted(b[0] - a[0] for a, b in zip(marks, marks[1:], strict=False))
    cpus = sorted(b[1] - a[1] for a, b in zip(marks, marks[1:], strict=False))
    res["sweep_s"], res["sweep_cpu_s"] = walls[len(walls) // 2], cpus[len(cpus) // 2]
    res["n_samples"] = lda.n_samples_
    source = lda.__dict__.get("_doc_topic_source")  # the sparse theta sums (after issue 21), before doc_topic_
    res["theta_sums_mib"] = None if source is None else source.nbytes / 2**20
    res["dense_doc_topic_mib"] = corpus.n_docs * cfg["K"] * 4 / 2**20
    return res


def write_tokens(name: str = "debian") -> None:
    corpus = load(name)
    ts = corpus.tokens()
    terms = list(corpus.vocabulary)
    with tokens_file(name).open("w") as f:
        for d in range(corpus.n_docs):
            f.write(" ".join(terms[w] for w in ts.words[ts.doc_ptr[d]:ts.doc_ptr[d + 1]]) + "\n")


def run_case(cfg: dict, python: str) -> dict:
    proc = subprocess.run([python, __file__, "--_worker", json.dumps(cfg)], capture_output=True, text=True,
                          timeout=1800)
    if proc.returncode != 0:
        return dict(cfg, error=proc.stderr[-2000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    if sys.argv[1:2] == ["--_worker"]:
        print(json.dumps(worker(json.loads(sys.argv[2]))))
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", nargs="+", default=["import", "tiny", "gibbs"])
    ap.add_argument("--topics", nargs="+", type=int, default=[100, 1000])
    ap.add_argument("--sweeps", type=int, default=4)
    ap.add_argument("--cvb0-iters", type=int, default=2)
    ap.add_argument("--pypi-docs", type=int, default=None)
    ap.add_argument("--corpus", choices=("debian", "pypi", "debian-long"), default="debian",
                    help="corpus of the gibbs, parallel, transform and tomotopy cases")
    ap.add_argument("--cvb0-dtype", nargs="+", default=["float32"], choices=["float32", "uint16", "uint8"],
                    help="cvb0: LDA(cvb0_dtype=...), one fresh process each")
    ap.add_argument("--tomotopy-python", default="/tmp/tt/bin/python")
    ap.add_argument("--label", default="")
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    cfgs = []
    for case in a.cases:
        if case in ("import", "tiny"):
            cfgs.append({"case": case})
        elif case == "accumulate":
            cfgs += [{"case": case, "K": K, "sweeps": a.sweeps} for K in a.topics]
        elif case == "transform":
            cfgs += [{"case": case, "K": K, "sweeps": a.sweeps, "corpus": a.corpus} for K in a.topics]
        elif case in ("gibbs", "parallel"):
            for K in a.topics:
                for burn_in in (None, a.sweeps):
                    cfgs.append({"case": case, "K": K, "sweeps": a.sweeps, "burn_in": burn_in, "corpus": a.corpus})
        elif case == "cvb0":
            cfgs += [{"case": case, "K": 100, "sweeps": a.cvb0_iters, "pypi_docs": a.pypi_docs, "cvb0_dtype": dt}
                     for dt in a.cvb0_dtype]
        elif case == "tomotopy":
            if not tokens_file(a.corpus).exists():
                write_tokens(a.corpus)
            cfgs += [{"case": case, "K": K, "sweeps": a.sweeps, "corpus": a.corpus} for K in a.topics]
    for cfg in cfgs:
        python = a.tomotopy_python if cfg["case"] == "tomotopy" else sys.executable
        r = run_case(cfg, python)
        r["label"] = a.label
        print(json.dumps(r), flush=True)
        if a.out:
            with a.out.open("a") as f:
                f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
