"""Shared pieces of the benchmark scripts: corpora, splits, held-out scoring, memory.

Every system in a comparison sees the same training token stream and is
scored by the same code (``heldout_perplexity``), as DESIGN.md asks.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

PYPI_PATH = "/work/shared/corpora/pypi-summaries.tsv.gz"
CORPORA = ("debian", "pypi", "debian-long")
#: Packages per document of the "debian-long" corpus.
LONG_GROUP = 10


def _tokenizer():
    import harmonium

    return harmonium.Tokenizer(stop_words="english", min_df=5, max_df=0.5, min_doc_length=1)


def load_corpus(name: str, max_docs: int | None = None):
    """The benchmark corpus ``name`` (``debian``, ``pypi``, ``debian-long``, or ``debian-longG``: Debian's
    descriptions joined G to a document, :func:`long_documents`), optionally only its first ``max_docs`` rows.

    The vocabulary is learned from the rows read, with the Debian default
    tokenizer settings (English stop words, min_df=5, max_df=0.5,
    min_doc_length=1) for both corpora.
    """
    if name == "debian":
        from harmonium.datasets import load_debian

        return load_debian(n_docs=max_docs)
    if name == "pypi":
        from harmonium.corpus import read_corpus

        return read_corpus(PYPI_PATH, format="tsv", text_column="text", tokenizer=_tokenizer(), max_rows=max_docs)
    if name == "debian-long":
        return long_documents(load_corpus("debian", max_docs), LONG_GROUP)
    if name.startswith("debian-long") and name[len("debian-long"):].isdigit():  # debian-longG: G packages a document
        return long_documents(load_corpus("debian", max_docs), int(name[len("debian-long"):]))
    raise ValueError(f"unknown corpus {name!r}; one of {CORPORA}, or debian-longG (G packages a document)")


def long_documents(corpus, group: int):
    """A corpus of long documents from a corpus of short labelled ones: each section's documents in their
    order (Debian: package names, so a library and its -dev and -doc packages sit together), joined
    ``group`` at a time (a section's last document may be shorter). Debian descriptions average about 36
    tokens after tokenizing; joined by 10 they average about 360, near the UCI NYTimes bag-of-words set's
    330, where a document holds many topics (k_d near K at K = 100)."""
    import scipy.sparse as sp

    from harmonium.corpus import Corpus

    labels = np.asarray(corpus.labels, dtype=object)
    order = np.argsort(labels.astype(str), kind="stable")
    sec = labels[order].astype(str)
    starts = np.r_[0, np.flatnonzero(sec[1:] != sec[:-1]) + 1]
    rank = np.arange(len(order)) - np.repeat(starts, np.diff(np.r_[starts, len(order)]))
    new_doc = (rank % group == 0)
    row_of = np.cumsum(new_doc) - 1  # the long document of each short one, in section order
    agg = sp.csr_matrix((np.ones(len(order)), (row_of, order)), shape=(int(row_of[-1]) + 1, corpus.n_docs))
    counts = (agg @ corpus.counts).astype(np.int32)
    return Corpus(counts.tocsr(), corpus.vocabulary, labels=list(sec[new_doc]))


@dataclass
class Data:
    """A corpus split for the benchmarks: training corpus and the document-completion halves of the test set."""

    name: str
    corpus: object
    train: object
    test: object
    observed: object
    held: object
    load_s: float

    @property
    def n_train_tokens(self) -> int:
        return int(self.train.n_tokens)

    def describe(self) -> dict:
        return {
            "corpus": self.name,
            "n_docs": int(self.corpus.n_docs),
            "n_words": int(self.corpus.n_words),
            "n_tokens": int(self.corpus.n_tokens),
            "n_train_docs": int(self.train.n_docs),
            "n_train_tokens": self.n_train_tokens,
            "n_test_docs_scored": int(self.observed.n_docs),
            "n_observed_tokens": int(self.observed.n_tokens),
            "n_held_tokens": int(self.held.n_tokens),
            "load_s": round(self.load_s, 3),
        }


def load_data(name: str, max_docs: int | None = None, *, test_size: float = 0.1, split_seed: int = 0) -> Data:
    """Load, split 90/10 by document (seeded), and split each test document's tokens 50/50 (seeded).

    Test documents with an empty observed or held-out half are dropped, as in
    :func:`harmonium.evaluation.completion.document_completion`.
    """
    from harmonium.corpus import completion_split, train_test_split

    t0 = time.perf_counter()
    corpus = load_corpus(name, max_docs)
    train, test = train_test_split(corpus, test_size, random_state=split_seed)
    observed, held = completion_split(test, 0.5, random_state=split_seed)
    keep = (observed.doc_lengths > 0) & (held.doc_lengths > 0)
    observed, held = observed[keep], held[keep]
    return Data(name, corpus, train, test, observed, held, time.perf_counter() - t0)



def lda_start(name: str, K: int, seed: int = 0, *, doc_counts: bool = False, alpha: float = 0.1,
              beta: float = 0.01, max_docs: int | None = None):
    """(data, tokens, model, rng, state): the training split of corpus ``name``, an LDA model of K topics, and the
    collapsed Gibbs sampler's initial state drawn with ``rng = default_rng(seed)`` (returned for the sweeps that
    follow, so that a script's chain is the one it drew before this helper existed)."""
    from harmonium.inference.mcmc.lda import collapsed_gibbs as cgs
    from harmonium.models.directed.lda import make_model

    data = load_data(name, max_docs)
    tokens = data.train.tokens()
    model = make_model(K, data.train.n_words, alpha, beta)
    rng = np.random.default_rng(seed)
    state = cgs.init(rng, tokens, model, doc_counts=doc_counts)
    return data, tokens, model, rng, state

# -- scoring --------------------------------------------------------------------------------
def phi_from_counts(n_kw: np.ndarray, beta: float) -> np.ndarray:
    """(K, V) topic-word posterior mean (n_kw + beta) / (n_k + V beta) from (K, V) counts."""
    n_kw = np.asarray(n_kw, dtype=np.float64)
    V = n_kw.shape[1]
    return (n_kw + beta) / (n_kw.sum(axis=1, keepdims=True) + V * beta)


def check_phi(phi: np.ndarray, K: int, V: int) -> np.ndarray:
    phi = np.asarray(phi, dtype=np.float64)
    if phi.shape != (K, V):
        raise ValueError(f"phi has shape {phi.shape}, expected {(K, V)}")
    if not np.all(np.isfinite(phi)) or np.any(phi < 0):
        raise ValueError("phi has negative or non-finite entries")
    return phi / phi.sum(axis=1, keepdims=True)


def fixed_topics_theta(phi: np.ndarray, alpha: float, observed, *, n_iter: int = 50, seed: int = 0) -> np.ndarray:
    """theta of the observed halves by harmonium's fixed-topics Gibbs sampler (the same for every system)."""
    from harmonium.inference.mcmc.lda.infer import infer_fixed_topics

    K = phi.shape[0]
    rng = np.random.default_rng(seed)
    alpha_vec = np.full(K, float(alpha))
    return infer_fixed_topics(rng, observed.tokens(), np.ascontiguousarray(phi.T), alpha_vec, int(n_iter))


def heldout_perplexity(phi: np.ndarray, alpha: float, data: Data, *, n_iter: int = 50, seed: int = 0) -> float:
    """Document-completion perplexity of topics ``phi``: our theta inference, our scoring."""
    from harmonium.evaluation import completion_perplexity

    theta = fixed_topics_theta(phi, alpha, data.observed, n_iter=n_iter, seed=seed)
    return float(completion_perplexity(theta, phi, data.held).perplexity)


def perplexity_of_theta(theta: np.ndarray, phi: np.ndarray, data: Data) -> float:
    """Perplexity of the held-out halves given a system's own theta for the observed halves."""
    from harmonium.evaluation import completion_perplexity

    theta = np.asarray(theta, dtype=np.float64)
    theta = theta / theta.sum(axis=1, keepdims=True)
    return float(completion_perplexity(theta, phi, data.held).perplexity)


def doc_word_lists(corpus, terms: list[str]) -> list[list[str]]:
    """Every document of ``corpus`` as its list of word strings, in token-stream order."""
    ts = corpus.tokens()
    words = ts.words
    ptr = ts.doc_ptr
    return [[terms[w] for w in words[ptr[d] : ptr[d + 1]].tolist()] for d in range(corpus.n_docs)]


# -- memory ---------------------------------------------------------------------------------
def _status_kib(field: str) -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def rss_mib() -> float | None:
    kib = _status_kib("VmRSS")
    return None if kib is None else kib / 1024


def hwm_mib() -> float | None:
    """Peak resident set size (VmHWM) since the process start or the last :func:`reset_hwm`."""
    kib = _status_kib("VmHWM")
    return None if kib is None else kib / 1024


def reset_hwm() -> bool:
    """Reset VmHWM to the current RSS (Linux: write 5 to /proc/self/clear_refs)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def maxrss_mib() -> float:
    """ru_maxrss of this process over its whole life (never reset)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# -- subprocesses and machine load ---------------------------------------------------------
THREAD_ENV = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS", "RAYON_NUM_THREADS")


def _busy_s() -> float:
    """CPU-seconds all cores of the machine have been busy (from /proc/stat)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (sum(v[:8]) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")


def wait_quiet(max_cores: float, max_wait: float) -> dict:
    """Wait (up to ``max_wait`` s) until the machine's other load is below ``max_cores`` over a 2 s sample."""
    t0 = time.perf_counter()
    while True:
        b0, t = _busy_s(), time.perf_counter()
        time.sleep(2.0)
        load = (_busy_s() - b0) / (time.perf_counter() - t)
        waited = time.perf_counter() - t0
        if load <= max_cores or waited >= max_wait:
            return {"busy_cores_before": round(load, 2), "waited_s": round(waited, 1)}
        time.sleep(5.0)


def run_in_subprocess(cfg: dict, timeout: float, script: str) -> dict:
    """Run ``script --_worker CFG OUT`` with ``cfg['threads']`` threads everywhere; the worker's result plus load."""
    env = dict(os.environ)
    for k in THREAD_ENV:
        env[k] = str(cfg["threads"])
    with tempfile.TemporaryDirectory() as tmp:
        cfg_path, out_path = Path(tmp, "cfg.json"), Path(tmp, "out.json")
        cfg_path.write_text(json.dumps(cfg))
        t = time.perf_counter()
        b0, ru0 = _busy_s(), resource.getrusage(resource.RUSAGE_CHILDREN)
        try:
            proc = subprocess.run([sys.executable, script, "--_worker", str(cfg_path), str(out_path)],
                                  env=env, capture_output=True, text=True, timeout=timeout)
            rc, err = proc.returncode, proc.stderr
        except subprocess.TimeoutExpired as e:
            rc, err = "timeout", (e.stderr or b"").decode(errors="replace") if isinstance(e.stderr, bytes) else ""
        wall = time.perf_counter() - t
        ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        own = (ru1.ru_utime + ru1.ru_stime) - (ru0.ru_utime + ru0.ru_stime)
        busy = _busy_s() - b0
        if out_path.exists():
            res = json.loads(out_path.read_text())
        else:
            res = dict(cfg, error=f"worker exited with {rc}", stderr_tail=(err or "")[-3000:])
    res["subprocess_wall_s"] = wall
    res["subprocess_cpu_s"] = own
    res["other_busy_cores"] = max(0.0, busy - own) / wall  # other processes' load while this run ran
    return res


def run_recorded(cfg: dict, timeout: float, script: str, *, quiet_cores: float, max_wait: float,
                 out: Path | None) -> dict:
    """Wait for a quiet machine, run one configuration in a subprocess (:func:`run_in_subprocess`), add the
    load before it, and append the record to the JSONL file ``out`` (if given) at once: no lost runs."""
    quiet = wait_quiet(quiet_cores, max_wait)
    r = run_in_subprocess(cfg, timeout, script)
    r.update(quiet)
    if out:
        with Path(out).open("a") as f:
            f.write(json.dumps(r) + "\n")
    return r


def serve_worker(argv: list, worker) -> bool:
    """``script --_worker CFG OUT`` (the child side of :func:`run_in_subprocess`): run ``worker(cfg)``, write its
    record to OUT, and return True; False for any other command line."""
    if argv[:1] != ["--_worker"]:
        return False
    cfg = json.loads(Path(argv[1]).read_text())
    Path(argv[2]).write_text(json.dumps(worker(cfg)))
    return True


def add_run_options(ap, *, timeout: float, quiet_cores: float, max_wait: float) -> None:
    """The options every peer script shares: seed, per-run timeout, JSONL output, tables, waiting for quiet."""
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=timeout)
    ap.add_argument("--out", default=None)
    ap.add_argument("--table", nargs="+", metavar="JSONL")
    ap.add_argument("--quiet-cores", type=float, default=quiet_cores)
    ap.add_argument("--max-wait", type=float, default=max_wait)


def run_meta(script: str, argv: list) -> dict:
    """Provenance of one invocation: its command line, the machine and the date."""
    import datetime as _dt
    import shlex

    return {"command": "python " + " ".join(shlex.quote(a) for a in [script, *argv]), "machine": machine(),
            "date": _dt.date.today().isoformat()}


def read_records(paths) -> list[dict]:
    """The records of one or more JSONL result files, in order."""
    return [json.loads(line) for p in paths for line in Path(p).read_text().splitlines() if line.strip()]


# -- provenance -----------------------------------------------------------------------------
def machine() -> dict:
    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = None
    try:
        with open("/proc/meminfo") as f:
            mem = round(int(f.readline().split()[1]) / 2**20, 1)
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "mem_gib": mem, "python": platform.python_version()}


def git_revision(path: str) -> str | None:
    try:
        rev = subprocess.run(["git", "-C", path, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
        dirty = subprocess.run(["git", "-C", path, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True)
        return rev.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except OSError:
        return None
