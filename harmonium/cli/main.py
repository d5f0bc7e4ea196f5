"""The ``harmonium`` command line: argument parsing only.

Each command calls the public Python API (corpus readers, estimators,
``harmonium.load``, evaluation). Errors print one line to stderr and exit
non-zero; ``harmonium --debug ...`` shows the traceback instead.
"""

from __future__ import annotations

import json
import os
import sys

import click
import numpy as np

from harmonium._version import __version__
from harmonium.errors import HarmoniumError

BUNDLED = ("debian",)


def _echo_json(obj) -> None:
    click.echo(json.dumps(obj, indent=2, default=lambda o: o.item() if isinstance(o, np.generic) else str(o)))


def _load_corpus(source: str, fmt: str | None, text_column: str, label_column: str | None,
                 vocabulary=None, n_docs: int | None = None):
    """A Corpus from a bundled dataset name or a file (tokenised over ``vocabulary`` when given)."""
    from harmonium.corpus.formats import read_corpus
    from harmonium.corpus.tokenizer import Tokenizer

    if source in BUNDLED and not os.path.exists(source):
        from harmonium.datasets import load_debian

        tok = None if vocabulary is None else Tokenizer(vocabulary=vocabulary)
        corpus = load_debian(tokenizer=tok, n_docs=n_docs)
    else:
        kwargs = {}
        fmt_ = fmt
        if fmt_ is None:
            from harmonium.corpus.formats import infer_format

            fmt_ = infer_format(source)
        if fmt_ in ("tsv", "csv"):
            kwargs.update(text_column=text_column, label_column=label_column)
        if fmt_ in ("tsv", "csv", "lines") and vocabulary is not None:
            kwargs["tokenizer"] = Tokenizer(vocabulary=vocabulary)
        corpus = read_corpus(source, format=fmt_, **kwargs)
        if n_docs is not None:
            corpus = corpus[: min(n_docs, corpus.n_docs)]
    if vocabulary is not None and corpus.vocabulary != vocabulary:
        corpus = corpus.reindex(vocabulary)
    return corpus


def _corpus_options(f):
    f = click.option("--format", "fmt", default=None,
                     help="Corpus format (lines, tsv, csv, uci, ldac, mm, npz); default: from the extension.")(f)
    f = click.option("--text-column", default="text", show_default=True, help="Text column of a TSV/CSV corpus.")(f)
    f = click.option("--label-column", default=None, help="Label column of a TSV/CSV corpus.")(f)
    f = click.option("--n-docs", type=click.IntRange(min=1), default=None, help="Use only the first N documents.")(f)
    return f


class _Progress:
    """A click progress bar driven by the estimator's per-sweep callback."""

    def __init__(self, total: int, label: str, enabled: bool):
        self.bar = click.progressbar(length=total, label=label, file=sys.stderr) if enabled else None
        self.done = 0

    def __enter__(self):
        if self.bar is not None:
            self.bar.__enter__()
        return self

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.__exit__(*exc)

    def __call__(self, iteration, total, info):
        if self.bar is not None:
            if total != self.bar.length:  # online VB counts mini-batches, not passes
                self.bar.length = total
            self.bar.update(iteration - self.done)
        self.done = iteration
        return False


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="harmonium")
@click.option("--debug", is_flag=True, help="Show full tracebacks on errors.")
@click.pass_context
def cli(ctx, debug):
    """harmonium: topic models and the inference that fits them.

    CORPUS arguments are a file (see --format) or the name of a bundled corpus: debian.
    """
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug


@cli.command()
@click.argument("corpus")
@_corpus_options
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True, help="Model file to write.")
@click.option("-k", "--n-topics", type=int, default=20, show_default=True)
@click.option("--n-iter", type=int, default=200, show_default=True,
              help="Gibbs sweeps, VB or CVB0 iterations, or online VB passes.")
@click.option("--alpha", "doc_topic_prior", type=float, default=0.1, show_default=True,
              help="Dirichlet prior on theta.")
@click.option("--beta", "topic_word_prior", type=float, default=0.01, show_default=True, help="Dirichlet prior on phi.")
@click.option("--inference",
              type=click.Choice(["collapsed_gibbs", "parallel_gibbs", "naive_gibbs", "vb", "online_vb", "cvb0"]),
              default="collapsed_gibbs", show_default=True,
              help="Gibbs samplers (seed 003) or variational inference: batch VB, online VB, CVB0 (seed 004).")
@click.option("--batch-size", type=int, default=256, show_default=True, help="Documents per online VB mini-batch.")
@click.option("--sampler", type=click.Choice(["sparse", "warp", "alias_mh", "plain", "auto"]), default="sparse",
              show_default=True,
              help="How the collapsed samplers draw each topic (all exact).")
@click.option("-j", "--n-jobs", type=int, default=1, show_default=True,
              help="Threads for parallel_gibbs, the VB E-step and CVB0, and inference on the test documents.")
@click.option("--burn-in", type=int, default=None, help="Sweeps before samples are averaged (default: n_iter // 2).")
@click.option("--thin", type=int, default=5, show_default=True, help="Average every THIN-th sweep after burn-in.")
@click.option("--optimize-interval", type=int, default=0, show_default=True,
              help="Re-estimate alpha and beta (Minka's fixed point) every N sweeps; 0: never.")
@click.option("--test-size", type=float, default=0.0, show_default=True,
              help="Hold out this fraction of documents and report their document-completion perplexity.")
@click.option("--seed", type=int, default=None, help="Random seed (default: fresh entropy, recorded in the model).")
@click.option("--checkpoint", type=click.Path(dir_okay=False), default=None, help="Checkpoint file for long runs.")
@click.option("--checkpoint-every", type=int, default=50, show_default=True)
@click.option("--resume", is_flag=True, help="Continue from --checkpoint if it exists.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON summary to stdout.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar.")
@click.option("--dask", "dask_address", default=None, metavar="ADDRESS",
              help="Train on this Dask scheduler (e.g. tcp://host:8786): parallel_gibbs (AD-LDA), vb, online_vb. "
                   "CORPUS may be an on-disk corpus directory, which the workers read themselves.")
@click.option("--dask-local", type=click.IntRange(min=1), default=None, metavar="N",
              help="Start a Dask LocalCluster of N worker processes on 127.0.0.1 and train on it.")
@click.option("--n-shards", type=click.IntRange(min=1), default=None,
              help="Shards of the corpus on the cluster (default: one per worker).")
@click.option("--sync-every", type=click.IntRange(min=1), default=1, show_default=True,
              help="AD-LDA on Dask: local sweeps between merges of the word-topic counts.")
def fit(corpus, fmt, text_column, label_column, n_docs, output, n_topics, n_iter, doc_topic_prior,
        topic_word_prior, inference, batch_size, sampler, n_jobs, burn_in, thin, optimize_interval, test_size, seed,
        checkpoint, checkpoint_every, resume, as_json, quiet, dask_address, dask_local, n_shards, sync_every):
    """Fit LDA to CORPUS and save the model to OUTPUT."""
    import contextlib

    from harmonium.corpus import train_test_split
    from harmonium.estimators import LDA

    if dask_address is not None and dask_local is not None:
        raise click.UsageError("give --dask ADDRESS or --dask-local N, not both.")
    distributed = dask_address is not None or dask_local is not None
    ondisk = os.path.isfile(os.path.join(corpus, "manifest.json"))
    if distributed and ondisk and not test_size and n_docs is None:
        from harmonium.corpus.ondisk import open_ondisk_corpus

        data, train_input = open_ondisk_corpus(corpus, verify=False), corpus  # the workers read the files
    else:
        if ondisk:
            from harmonium.corpus.ondisk import open_ondisk_corpus

            data = open_ondisk_corpus(corpus)
            data = data[: min(n_docs, data.n_docs)] if n_docs is not None else data
        else:
            data = _load_corpus(corpus, fmt, text_column, label_column, n_docs=n_docs)
        train_input = None
    test = None
    if test_size > 0:
        data, test = train_test_split(data, test_size=test_size, random_state=0 if seed is None else seed)
    if train_input is None:
        data = train_input = data.drop_empty()
    model = LDA(n_topics, doc_topic_prior=doc_topic_prior, topic_word_prior=topic_word_prior,
                inference=inference, batch_size=batch_size, sampler=sampler, n_jobs=n_jobs, burn_in=burn_in, thin=thin,
                optimize_interval=optimize_interval, n_iter=n_iter, checkpoint_path=checkpoint,
                checkpoint_every=checkpoint_every, random_state=seed)
    with contextlib.ExitStack() as stack:
        fit_kw = {}
        if distributed:
            try:
                from distributed import Client, LocalCluster
            except ImportError:
                raise click.UsageError("--dask and --dask-local need Dask: pip install 'harmonium[dask]'.") from None
            if dask_local is not None:
                cluster = stack.enter_context(LocalCluster(n_workers=dask_local, threads_per_worker=1, processes=True,
                                                           host="127.0.0.1", dashboard_address=None))
                client = stack.enter_context(Client(cluster))
            else:
                client = stack.enter_context(Client(dask_address))
            fit_kw = {"client": client, "n_shards": n_shards, "sync_every": sync_every}
        with _Progress(n_iter, "Fitting LDA", enabled=not (quiet or as_json)) as progress:
            model.fit(train_input, resume=resume, callback=progress, **fit_kw)
    model.save(output)
    if train_input is corpus:  # on disk, never loaded here: the manifest has the count
        with open(os.path.join(corpus, "manifest.json"), "rb") as f:
            n_tokens = int(json.loads(f.read().decode("utf-8"))["n_tokens"])
    else:
        n_tokens = data.n_tokens
    summary = {
        "model": os.fspath(output), "n_docs": data.n_docs, "n_words": data.n_words, "n_tokens": n_tokens,
        "n_topics": n_topics, "n_iter": model.n_iter_, "seed": model.seed_,
        "log_likelihood_per_token": model.trace_["log_likelihood_per_token"][-1],
        "seconds": model.trace_["seconds"][-1],
    }
    if test is not None:
        res = model.perplexity(test, random_state=0)
        summary.update(test_docs=res.n_docs, test_tokens=res.n_tokens, heldout_perplexity=res.perplexity)
    if as_json:
        _echo_json(summary)
    else:
        click.echo(f"Fitted LDA K={n_topics} on {summary['n_docs']} documents, {summary['n_tokens']} tokens, "
                   f"V={summary['n_words']} in {summary['seconds']:.1f} s (seed {summary['seed']}).")
        what = {"vb": "ELBO", "online_vb": "ELBO (mini-batch estimate)", "cvb0": "log p(w | theta, phi)"}
        click.echo(f"Training {what.get(inference, 'log p(w, z)')} per token: "
                   f"{summary['log_likelihood_per_token']:.4f}")
        if test is not None:
            click.echo(f"Held-out perplexity (document completion, {summary['test_docs']} documents, "
                       f"{summary['test_tokens']} tokens): {summary['heldout_perplexity']:.1f}")
        click.echo(f"Saved to {output}")


@cli.command()
@click.argument("model_path", metavar="MODEL", type=click.Path(exists=False, dir_okay=False))
@click.option("-n", "--n-words", type=click.IntRange(min=1), default=10, show_default=True)
@click.option("--json", "as_json", is_flag=True)
def topics(model_path, n_words, as_json):
    """Print the top words of every topic of MODEL."""
    from harmonium import load

    model = load(model_path)
    top = model.top_words(n_words)
    if as_json:
        _echo_json([{"topic": k, "words": [w for w, _ in t], "probabilities": [p for _, p in t]}
                    for k, t in enumerate(top)])
    else:
        for k, t in enumerate(top):
            click.echo(f"{k:3d}  " + " ".join(w for w, _ in t))


@cli.command()
@click.argument("model_path", metavar="MODEL", type=click.Path(dir_okay=False))
@click.argument("corpus")
@_corpus_options
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
              help="Write theta here (.npy or .csv); default: print CSV to stdout.")
@click.option("--n-iter", type=click.IntRange(min=1), default=None, help="Gibbs sweeps per document.")
@click.option("--seed", type=int, default=None)
@click.option("--json", "as_json", is_flag=True)
def transform(model_path, corpus, fmt, text_column, label_column, n_docs, output, n_iter, seed, as_json):
    """Topic proportions theta of the documents of CORPUS under MODEL."""
    from harmonium import load

    model = load(model_path)
    data = _load_corpus(corpus, fmt, text_column, label_column, vocabulary=model.vocabulary_, n_docs=n_docs)
    theta = model.transform(data, n_iter=n_iter, random_state=seed)
    ids = data.doc_ids if data.doc_ids is not None else np.arange(data.n_docs).astype(str)
    if output is not None:
        from harmonium.io import atomic_write_bytes

        if output.endswith(".npy"):
            import io as _io

            buf = _io.BytesIO()
            np.save(buf, theta, allow_pickle=False)
            atomic_write_bytes(output, buf.getvalue())
        else:
            lines = ["doc_id," + ",".join(f"topic_{k}" for k in range(theta.shape[1]))]
            lines += [f"{i}," + ",".join(f"{v:.6g}" for v in row) for i, row in zip(ids, theta, strict=True)]
            atomic_write_bytes(output, ("\n".join(lines) + "\n").encode())
    if as_json:
        _echo_json({"n_docs": data.n_docs, "n_topics": int(theta.shape[1]), "output": output,
                    **({} if output else {"theta": theta.tolist(), "doc_ids": ids.tolist()})})
    elif output is None:
        click.echo("doc_id," + ",".join(f"topic_{k}" for k in range(theta.shape[1])))
        for i, row in zip(ids, theta, strict=True):
            click.echo(f"{i}," + ",".join(f"{v:.6g}" for v in row))
    else:
        click.echo(f"Wrote theta for {data.n_docs} documents to {output}")


@cli.command()
@click.argument("model_path", metavar="MODEL", type=click.Path(dir_okay=False))
@click.argument("corpus")
@_corpus_options
@click.option("--observed-fraction", type=float, default=0.5, show_default=True,
              help="Fraction of each document's tokens used to infer theta; the rest is scored.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the token split.")
@click.option("--json", "as_json", is_flag=True)
def evaluate(model_path, corpus, fmt, text_column, label_column, n_docs, observed_fraction, seed, as_json):
    """Held-out perplexity of MODEL on the documents of CORPUS (document completion)."""
    from harmonium import load

    model = load(model_path)
    data = _load_corpus(corpus, fmt, text_column, label_column, vocabulary=model.vocabulary_, n_docs=n_docs)
    res = model.perplexity(data, observed_fraction=observed_fraction, random_state=seed)
    if as_json:
        _echo_json(res._asdict())
    else:
        click.echo(f"Held-out perplexity {res.perplexity:.2f} over {res.n_tokens} tokens in {res.n_docs} documents "
                   f"(log-likelihood {res.log_likelihood:.1f}).")


@cli.command()
@click.argument("path")
@click.option("--json", "as_json", is_flag=True)
def info(path, as_json):
    """Describe a model file (or a corpus: a file or the name of a bundled corpus)."""
    from harmonium.errors import ModelFileError
    from harmonium.io import read_model_file

    try:
        mf = read_model_file(path)
    except ModelFileError:
        if path in BUNDLED or (os.path.exists(path) and not path.endswith((".hmn", ".zip"))):
            corpus = _load_corpus(path, None, "text", None)
            out = {"corpus": path, "n_docs": corpus.n_docs, "n_words": corpus.n_words, "n_tokens": corpus.n_tokens,
                   "has_labels": corpus.labels is not None,
                   "features": corpus.feature_names, "n_tags": None if corpus.tags is None else corpus.tags.shape[1]}
            if as_json:
                _echo_json(out)
            else:
                for k, v in out.items():
                    click.echo(f"{k}: {v}")
            return
        raise
    m = mf.manifest
    out = {"file": os.fspath(path), "class": m["class"], "kind": m.get("kind"), "format_version": m["format_version"],
           "library_version": m.get("library_version"), "params": m.get("params"),
           "vocabulary_size": None if m.get("vocabulary") is None else len(m["vocabulary"]),
           "arrays": {k: {"dtype": str(v.dtype), "shape": list(v.shape)} for k, v in mf.arrays.items()}}
    trace = m.get("trace") or {}
    if trace.get("iteration"):
        out["iterations"] = trace["iteration"][-1]
        out["final_log_likelihood_per_token"] = trace.get("log_likelihood_per_token", [None])[-1]
    if as_json:
        _echo_json(out)
    else:
        for k, v in out.items():
            click.echo(f"{k}: {v}")


# Commands in their own modules (each imports its heavy dependencies only when run).
from harmonium.cli.compare import compare as _compare_command  # noqa: E402
from harmonium.cli.report import report as _report_command  # noqa: E402

cli.add_command(_compare_command)
cli.add_command(_report_command)


def main(argv=None) -> int:
    """Entry point: run the CLI, turning errors into one line and a non-zero exit code."""
    args = sys.argv[1:] if argv is None else list(argv)
    debug = "--debug" in args or os.environ.get("HARMONIUM_DEBUG") == "1"
    try:
        cli.main(args=args, prog_name="harmonium", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("harmonium: aborted", err=True)
        return 130
    except click.ClickException as exc:
        if debug:
            raise
        exc.show()
        return exc.exit_code
    except (HarmoniumError, OSError, ValueError) as exc:
        if debug:
            raise
        click.echo(f"harmonium: error: {exc}", err=True)
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
