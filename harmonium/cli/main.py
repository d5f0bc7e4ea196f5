"""The ``harmonium`` command line: argument parsing only.

Each command calls the public Python API (corpus readers, estimators,
``harmonium.load``, evaluation). Errors print one line to stderr and exit
non-zero; ``harmonium --debug ...`` shows the traceback instead.
"""

from __future__ import annotations

import json
import os
import sys
import warnings

import click
import numpy as np

from harmonium._version import __version__
from harmonium.cli._options import BUNDLED, cli_message, corpus_options, load_corpus, reader_options
from harmonium.errors import HarmoniumError, HarmoniumWarning
from harmonium.estimators.registry import ESTIMATORS, estimator_params
from harmonium.estimators.workflow import MEASURES


def _echo_json(obj) -> None:
    click.echo(json.dumps(obj, indent=2, default=lambda o: o.item() if isinstance(o, np.generic) else str(o)))


def _read_seed_words(path: str | None):
    """The JSON object of a --seed-words file (its content is checked by LDA, which names the bad entry)."""
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8") as f:
            value = json.load(f)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise click.BadParameter(f"{path!r} is not valid JSON ({exc}); expected an object such as "
                                 '{"0": ["word", ...], "3": ["other", ...]}.', param_hint="'--seed-words'") from None
    if not isinstance(value, dict):
        raise click.BadParameter(f"{path!r} holds a JSON {type(value).__name__}, not an object mapping topic "
                                 'indices to word lists, e.g. {"0": ["word", ...]}.', param_hint="'--seed-words'")
    return value


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


# -- fit: the model's options ------------------------------------------------------------------------
# dest of the click option -> (flag, constructor argument); an option applies to the models whose estimator takes
# the argument (read from the signatures of the registry's classes), any other parameter goes through --param.
_MODEL_OPTIONS = {
    "n_iter": ("--n-iter", "n_iter"),
    "doc_topic_prior": ("--alpha", "doc_topic_prior"),
    "topic_word_prior": ("--beta", "topic_word_prior"),
    "inference": ("--inference", "inference"),
    "batch_size": ("--batch-size", "batch_size"),
    "sampler": ("--sampler", "sampler"),
    "n_jobs": ("--n-jobs", "n_jobs"),
    "burn_in": ("--burn-in", "burn_in"),
    "thin": ("--thin", "thin"),
    "optimize_interval": ("--optimize-interval", "optimize_interval"),
    "learning_rate": ("--learning-rate", "learning_rate"),
    "checkpoint": ("--checkpoint", "checkpoint_path"),
    "checkpoint_every": ("--checkpoint-every", "checkpoint_every"),
    "seed": ("--seed", "random_state"),
    "seed_words": ("--seed-words", "seed_words"),
    "seed_weight": ("--seed-weight", "seed_weight"),
}
_CLI_MODELS = [name for name, spec in ESTIMATORS.items() if spec.cli]


def _parse_params(items) -> dict:
    """--param NAME=VALUE (repeatable): VALUE as JSON when it is JSON (numbers, true, null, lists), else a string."""
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise click.BadParameter(f"expected NAME=VALUE (e.g. n_gibbs=5); got {item!r}.", param_hint="'--param'")
        try:
            out[name.strip()] = json.loads(value)
        except json.JSONDecodeError:
            out[name.strip()] = value
    return out


def _model_params(model: str, size, options: dict, params: dict) -> dict:
    """The constructor arguments of ``model`` from the fit command's options (a usage error for one it lacks)."""
    spec = ESTIMATORS[model]
    valid = set(estimator_params(model))
    out = {}
    if size is not None:
        out[spec.size] = size
    for dest, value in options.items():
        if value is None:
            continue
        flag, param = _MODEL_OPTIONS[dest]
        if param not in valid:
            takers = [m for m in _CLI_MODELS if param in estimator_params(m)]
            raise click.UsageError(f"{flag} applies to --model {'/'.join(takers)}, not to --model {model} "
                                   f"({spec.cls}); its parameters: {', '.join(sorted(valid))} (--param NAME=VALUE).")
        out[param] = value
    for name, value in params.items():
        if name not in valid:
            raise click.UsageError(f"--param {name}: {spec.cls} (--model {model}) has no parameter {name!r}; its "
                                   f"parameters: {', '.join(sorted(valid))}.")
        out[name] = value
    return out


def _describe_heldout(res, measure: str) -> str:
    """How a held-out number was computed, in words."""
    if measure == "completion":
        return "document completion: part of each document predicts the rest"
    per = res.per_document
    if res.method.startswith("left_to_right"):
        return f"whole documents, left-to-right with {per.n_particles} particles"
    if res.method.endswith(".ais"):
        return f"whole documents, log Z by AIS with {per.n_particles} runs"
    return f"whole documents, {res.method}"


def _heldout_json(res, measure: str) -> dict:
    out = {"measure": measure, "perplexity": res.perplexity, "log_likelihood": res.log_likelihood,
           "n_tokens": res.n_tokens, "n_docs": res.n_docs}
    if measure == "whole":
        out.update(std_error=res.std_error, method=res.method, estimator=res.estimator,
                   perplexity_interval=list(res.perplexity_interval))
    return out


def heldout_options(f):
    """The options of the held-out score, shared by ``fit --test-size`` and ``evaluate``."""
    f = click.option("--ais-temperatures", type=click.IntRange(min=1), default=1000, show_default=True,
                     help="Harmoniums: AIS temperatures of log Z (the model's own setting: --ais-temperatures 14500; "
                          "fewer are faster and biased low).")(f)
    f = click.option("--ais-runs", type=click.IntRange(min=2), default=20, show_default=True,
                     help="Harmoniums: AIS runs of log Z (the model's own setting: 100).")(f)
    f = click.option("--particles", "n_particles", type=click.IntRange(min=1), default=20, show_default=True,
                     help="LDA, HDP: left-to-right particles per document.")(f)
    return click.option("--measure", type=click.Choice(MEASURES), default="whole", show_default=True,
                        help="whole: per-word perplexity of whole held-out documents, the number every model "
                             "reports (model.perplexity); completion: document completion (LDA, HDP).")(f)


@cli.command()
@click.argument("corpus")
@corpus_options
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True, help="Model file to write.")
@click.option("-m", "--model", type=click.Choice(_CLI_MODELS), default="lda", show_default=True,
              help="; ".join(f"{name}: {ESTIMATORS[name].summary}" for name in _CLI_MODELS) + ".")
@click.option("-k", "--n-topics", "--n-hidden", "size", type=int, default=None,
              help="Number of topics (lda; hdp: the initial number) or hidden units (harmoniums); default: the "
                   "model's own (lda 10, hdp 10, rsm 50, ...).")
@click.option("--n-iter", type=int, default=None,
              help="Gibbs sweeps, VB or CVB0 iterations, online VB passes, or epochs (harmoniums).")
@click.option("--alpha", "doc_topic_prior", type=float, default=None, help="lda: Dirichlet prior on theta (0.1).")
@click.option("--beta", "topic_word_prior", type=float, default=None, help="lda, hdp: Dirichlet prior on phi (0.01).")
@click.option("--inference", default=None,
              help="lda: collapsed_gibbs (default), parallel_gibbs, naive_gibbs (seed 003), or variational inference: "
                   "vb, online_vb, cvb0 (seed 004).")
@click.option("--batch-size", type=int, default=None,
              help="Documents per mini-batch (lda online VB: 256; harmoniums: 100).")
@click.option("--sampler", default=None, help="lda, hdp: how the collapsed samplers draw each topic (all exact): "
                                              "lda: auto (default), sparse, fplus, warp, plain; hdp: sparse "
                                              "(default), plain")
@click.option("-j", "--n-jobs", type=int, default=None,
              help="lda: threads for parallel_gibbs, the VB E-step and CVB0, and inference on new documents.")
@click.option("--burn-in", type=int, default=None,
              help="lda: sweeps before samples are averaged (default: the last tenth of the sweeps averaged).")
@click.option("--thin", type=int, default=None, help="lda: average every THIN-th sweep after burn-in (5).")
@click.option("--optimize-interval", type=int, default=None,
              help="lda: re-estimate alpha and beta (Minka's fixed point) every N sweeps (0: never).")
@click.option("--learning-rate", type=float, default=None, help="Harmoniums: the CD learning rate.")
@click.option("--param", "params", multiple=True, metavar="NAME=VALUE",
              help="Any other parameter of the model's estimator, e.g. --param n_gibbs=5 (repeatable; values as "
                   "JSON: numbers, true/false, null, lists; else text).")
@click.option("--test-size", type=float, default=0.0, show_default=True,
              help="Hold out this fraction of documents and report their held-out perplexity (see --measure).")
@heldout_options
@click.option("--seed", type=int, default=None, help="Random seed (default: fresh entropy, recorded in the model).")
@click.option("--checkpoint", type=click.Path(dir_okay=False), default=None, help="Checkpoint file for long runs.")
@click.option("--checkpoint-every", type=int, default=None, help="Iterations between checkpoints.")
@click.option("--resume", is_flag=True, help="Continue from --checkpoint if it exists.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON summary to stdout.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar.")
@click.option("--dask", "dask_address", default=None, metavar="ADDRESS",
              help="Train on this Dask scheduler (e.g. tcp://host:8786): lda parallel_gibbs (AD-LDA), vb, online_vb; "
                   "harmoniums. CORPUS may be an on-disk corpus directory, which the workers read themselves.")
@click.option("--dask-local", type=click.IntRange(min=1), default=None, metavar="N",
              help="Start a Dask LocalCluster of N worker processes on 127.0.0.1 and train on it.")
@click.option("--n-shards", type=click.IntRange(min=1), default=None,
              help="Shards of the corpus on the cluster (default: one per worker).")
@click.option("--sync-every", type=click.IntRange(min=1), default=None,
              help="AD-LDA on Dask: local sweeps between merges of the word-topic counts (1).")
@click.option("--seed-words", type=click.Path(exists=True, dir_okay=False), default=None,
              callback=lambda ctx, param, value: _read_seed_words(value),
              help='lda: seeded topics, a JSON file {"topic index": ["word", ...], ...}.')
@click.option("--seed-weight", type=click.IntRange(min=1), default=None,
              help="lda: pseudo-counts given to each seed word in its topic (10; see --seed-words).")
def fit(corpus, reader, n_docs, output, model, size, params, test_size, measure, n_particles, ais_runs,
        ais_temperatures, resume, as_json, quiet, dask_address, dask_local, n_shards, sync_every, **options):
    """Fit a model (--model, default LDA) to CORPUS and save it to OUTPUT."""
    from harmonium.estimators.registry import make_estimator
    from harmonium.estimators.workflow import fit_and_score
    from harmonium.io import check_writable
    from harmonium.parallel import dask_client

    if dask_address is not None and dask_local is not None:
        raise click.UsageError("give --dask ADDRESS or --dask-local N, not both.")
    if resume and options["checkpoint"] is None:
        raise click.UsageError("--resume needs --checkpoint FILE (the checkpoint to continue from).")
    if measure == "completion" and ESTIMATORS[model].latent != "topics":
        raise click.UsageError(f"--measure completion (document completion) applies to topic models "
                               f"(lda, hdp), not to --model {model}; use --measure whole.")
    est = make_estimator(model, **_model_params(model, size, options, _parse_params(params)))
    spec = ESTIMATORS[model]
    check_writable(output)  # before the fit, not after it
    if options["checkpoint"] is not None:
        check_writable(options["checkpoint"])
    distributed = dask_address is not None or dask_local is not None
    data = load_corpus(corpus, reader, n_docs=n_docs, verify=not distributed)  # the workers check their shards
    existed = options["checkpoint"] is not None and os.path.exists(options["checkpoint"])
    with dask_client(dask_address, n_workers=dask_local) as client, \
            _Progress(est.n_iter, f"Fitting {spec.cls}", enabled=not (quiet or as_json)) as progress:
        split_seed = 0 if options["seed"] is None else options["seed"]
        rep = fit_and_score(est, data, test_size=test_size, split_seed=split_seed, resume=resume, callback=progress,
                            client=client, n_shards=n_shards,
                            sync_every=sync_every, measure=measure, n_particles=n_particles, ais_runs=ais_runs,
                            ais_temperatures=ais_temperatures)
    est.save(output)
    checkpoint, resumed = options["checkpoint"], rep.resumed_from  # the Dask drivers resume without resumed_from_
    if resume and resumed is not None:
        click.echo(f"harmonium: resumed from checkpoint {checkpoint} at iteration {resumed} (seed {est.seed_})",
                   err=True)
    elif resume:
        click.echo(f"harmonium: resumed from checkpoint {checkpoint}" if existed
                   else f"harmonium: no checkpoint at {checkpoint} yet; started a new run", err=True)
    size_name = "n_topics" if spec.latent == "topics" else "n_hidden"
    size_value = getattr(est, "n_topics_", None) or getattr(est, spec.size)
    summary = {
        "model": os.fspath(output), "class": spec.cls, "n_docs": rep.n_docs, "n_words": rep.n_words,
        "n_tokens": rep.n_tokens, size_name: size_value, "n_iter": est.n_iter_, "seed": est.seed_,
        "log_likelihood_per_token": rep.last.get("log_likelihood_per_token"),
        "reconstruction_error": rep.last.get("reconstruction_error"),
        "seconds": rep.seconds, "resumed_from": resumed,
    }
    summary = {k: v for k, v in summary.items() if v is not None or k in ("resumed_from", "seconds")}
    if rep.heldout is not None:
        res = rep.heldout
        summary.update(test_docs=res.n_docs, test_tokens=res.n_tokens, heldout_perplexity=res.perplexity,
                       heldout_measure=measure, heldout=_heldout_json(res, measure))
    if as_json:
        _echo_json(summary)
        return
    seconds = "" if rep.seconds is None else f" in {rep.seconds:.1f} s"
    what_size = "K" if spec.latent == "topics" else "hidden units"
    click.echo(f"Fitted {spec.cls} {what_size}={size_value} on {rep.n_docs} documents, {rep.n_tokens} tokens, "
               f"V={rep.n_words}{seconds} (seed {est.seed_}"
               + (f"; resumed at iteration {resumed}, the time includes the run before" if resumed is not None
                  else "") + ").")
    if "log_likelihood_per_token" in rep.last:
        what = {"vb": "ELBO", "online_vb": "ELBO (mini-batch estimate)", "cvb0": "log p(w | theta, phi)"}
        trained = what.get(getattr(est, "inference", None), "log p(w, z)" if model == "lda" else "log p(w | z)")
        click.echo(f"Training {trained} per token: {rep.last['log_likelihood_per_token']:.4f}")
    elif "reconstruction_error" in rep.last:
        click.echo(f"Training reconstruction error: {rep.last['reconstruction_error']:.4f}")
    if rep.heldout is not None:
        res = rep.heldout
        click.echo(f"Held-out perplexity ({_describe_heldout(res, measure)}; {res.n_docs} documents, "
                   f"{res.n_tokens} tokens): {res.perplexity:.1f}")
    click.echo(f"Saved to {output}")


@cli.command()
@click.argument("model_path", metavar="MODEL", type=click.Path(exists=False, dir_okay=False))
@click.option("-n", "--n-words", type=click.IntRange(min=1), default=10, show_default=True)
@click.option("--json", "as_json", is_flag=True)
def topics(model_path, n_words, as_json):
    """Print the top words of every topic (or hidden unit) of MODEL."""
    from harmonium import load
    from harmonium.report.data import top_words

    top = top_words(load(model_path), n_words)
    if as_json:
        _echo_json([{"topic": k, "words": [w for w, _ in t], "probabilities": [p for _, p in t]}
                    for k, t in enumerate(top)])
    else:
        for k, t in enumerate(top):
            click.echo(f"{k:3d}  " + " ".join(w for w, _ in t))


@cli.command()
@click.argument("model_path", metavar="MODEL", type=click.Path(dir_okay=False))
@click.argument("corpus")
@corpus_options
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
              help="Write theta (or the hidden units' means) here (.npy or .csv); default: print CSV to stdout.")
@click.option("--n-iter", type=click.IntRange(min=1), default=None, help="LDA, HDP: Gibbs sweeps per document.")
@click.option("--seed", type=int, default=None, help="LDA, HDP: seed of the sweeps.")
@click.option("--json", "as_json", is_flag=True)
def transform(model_path, corpus, reader, n_docs, output, n_iter, seed, as_json):
    """Topic proportions theta (or hidden-unit means) of the documents of CORPUS under MODEL.

    Words MODEL does not know are dropped."""
    import inspect

    from harmonium import load
    from harmonium.estimators.registry import spec_of
    from harmonium.io import atomic_write_bytes, check_writable

    if output is not None:
        check_writable(output)
    model = load(model_path)
    kw = {}
    takes = inspect.signature(model.transform).parameters
    for flag, key, value in (("--n-iter", "n_iter", n_iter), ("--seed", "random_state", seed)):
        if value is not None:
            if key not in takes:
                raise click.UsageError(f"{flag} applies to Gibbs inference of topic proportions (LDA, HDP); "
                                       f"{type(model).__name__}.transform is deterministic.")
            kw[key] = value
    data = load_corpus(corpus, reader, vocabulary=model.vocabulary_, n_docs=n_docs)
    theta = model.transform(data, **kw)
    unit = "topic" if spec_of(type(model).__name__).latent == "topics" else "hidden"
    ids = data.doc_ids if data.doc_ids is not None else np.arange(data.n_docs).astype(str)
    header = "doc_id," + ",".join(f"{unit}_{k}" for k in range(theta.shape[1]))
    if output is not None:
        if output.endswith(".npy"):
            import io as _io

            buf = _io.BytesIO()
            np.save(buf, theta, allow_pickle=False)
            atomic_write_bytes(output, buf.getvalue())
        else:
            lines = [header]
            lines += [f"{i}," + ",".join(f"{v:.6g}" for v in row) for i, row in zip(ids, theta, strict=True)]
            atomic_write_bytes(output, ("\n".join(lines) + "\n").encode())
    if as_json:
        _echo_json({"n_docs": data.n_docs, "n_topics": int(theta.shape[1]), "output": output,
                    **({} if output else {"theta": theta.tolist(), "doc_ids": ids.tolist()})})
    elif output is None:
        click.echo(header)
        for i, row in zip(ids, theta, strict=True):
            click.echo(f"{i}," + ",".join(f"{v:.6g}" for v in row))
    else:
        click.echo(f"Wrote theta for {data.n_docs} documents to {output}")


@cli.command()
@click.argument("model_path", metavar="MODEL", type=click.Path(dir_okay=False))
@click.argument("corpus")
@corpus_options
@heldout_options
@click.option("--observed-fraction", type=float, default=None,
              help="--measure completion: the fraction of each document's tokens that infers theta; the rest is "
                   "scored (0.5).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the estimate (and the token split).")
@click.option("--json", "as_json", is_flag=True)
def evaluate(model_path, corpus, reader, n_docs, measure, n_particles, ais_runs, ais_temperatures, observed_fraction,
             seed, as_json):
    """Held-out perplexity of MODEL on the documents of CORPUS (whole documents; --measure completion: document
    completion)."""
    from harmonium import load
    from harmonium.estimators.workflow import heldout_perplexity

    if observed_fraction is not None and measure != "completion":
        raise click.UsageError("--observed-fraction applies to --measure completion (document completion).")
    model = load(model_path)
    data = load_corpus(corpus, reader, vocabulary=model.vocabulary_, n_docs=n_docs)
    res = heldout_perplexity(model, data, measure=measure, n_particles=n_particles, ais_runs=ais_runs,
                             ais_temperatures=ais_temperatures,
                             observed_fraction=0.5 if observed_fraction is None else observed_fraction,
                             random_state=seed)
    if as_json:
        _echo_json(_heldout_json(res, measure))
    else:
        click.echo(f"Held-out perplexity {res.perplexity:.2f} ({_describe_heldout(res, measure)}) over "
                   f"{res.n_tokens} tokens in {res.n_docs} documents (log-likelihood {res.log_likelihood:.1f}).")


@cli.command()
@click.argument("path")
@reader_options
@click.option("--json", "as_json", is_flag=True)
def info(path, reader, as_json):
    """Describe a model file (or a corpus: a file or the name of a bundled corpus)."""
    from harmonium.errors import ModelFileError
    from harmonium.io import read_model_file

    try:
        mf = read_model_file(path)
    except ModelFileError:
        if path in BUNDLED or (os.path.exists(path) and not path.endswith((".hmn", ".zip"))):
            corpus = load_corpus(path, reader)
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
    steps = trace.get("iteration") or trace.get("epoch")
    if steps:
        out["iterations"] = steps[-1]
        for key in ("log_likelihood_per_token", "reconstruction_error"):
            if trace.get(key):
                out[f"final_{key}"] = trace[key][-1]
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
    shown: set[str] = set()

    def show_warning(message, category, filename, lineno, file=None, line=None):
        text = cli_message(str(message))
        if text not in shown:  # once, however many times the library warns
            shown.add(text)
            click.echo(f"harmonium: warning: {text}", err=True)

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always", HarmoniumWarning)
            warnings.showwarning = show_warning
            cli.main(args=args, prog_name="harmonium", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("harmonium: aborted", err=True)
        return 130
    except click.ClickException as exc:
        if debug:
            raise
        exc.show()
        return exc.exit_code
    except (HarmoniumError, OSError, ValueError, ImportError) as exc:
        if debug:
            raise
        click.echo(f"harmonium: error: {cli_message(str(exc))}", err=True)
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
