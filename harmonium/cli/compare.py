"""``harmonium compare``: argument parsing for :func:`harmonium.experiments.compare.compare`."""

from __future__ import annotations

import json
import sys

import click

from harmonium.cli._options import reader_options


def _ints(text: str, what: str) -> list[int]:
    try:
        return [int(v) for v in text.replace(",", " ").split()]
    except ValueError:
        raise click.BadParameter(f"{what} must be integers separated by commas, e.g. 4,8,16,32; got {text!r}.") \
            from None


def _model_params(items) -> dict:
    out: dict = {}
    for item in items:
        try:
            name, rest = item.split(":", 1)
            key, value = rest.split("=", 1)
        except ValueError:
            raise click.BadParameter(f"--set takes MODEL:PARAM=VALUE (e.g. lda-gibbs:n_iter=100); got {item!r}.",
                                     param_hint="--set") from None
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            parsed = value
        out.setdefault(name, {})[key] = parsed
    return out


@click.command()
@click.argument("corpus")
@reader_options
@click.option("--n-docs", type=click.IntRange(min=1), default=None,
              help="Use a seeded random subset of N documents (--split-seed).")
@click.option("-o", "--out-dir", type=click.Path(file_okay=False), required=True,
              help="Folder for the cells, results.csv, results.json and the PNGs.")
@click.option("-m", "--models", default="lsi,lda-gibbs,lda-vb,rsm", show_default=True,
              help="Comma-separated: lsi, lda-gibbs, lda-vb, lda-cvb0, lda-online-vb, rsm, dwh (words + features).")
@click.option("-k", "--n-topics", default="4,8,16,32", show_default=True, help="Comma-separated numbers of topics.")
@click.option("--seeds", default="0", show_default=True, help="Comma-separated model seeds.")
@click.option("--tasks", type=click.Choice(["both", "perplexity", "classification"]), default="both",
              show_default=True)
@click.option("--test-size", type=float, default=0.1, show_default=True,
              help="Held-out fraction of documents for perplexity (one split for all models).")
@click.option("--split-seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Seeds the subset, the perplexity split and the 50/50 classification split.")
@click.option("--max-words", type=click.IntRange(min=1), default=None,
              help="Keep only the N most frequent words (every model alike).")
@click.option("--particles", type=click.IntRange(min=1), default=5, show_default=True,
              help="Left-to-right particles for LDA's held-out likelihood.")
@click.option("--set", "settings", multiple=True, metavar="MODEL:PARAM=VALUE",
              help="A model setting, e.g. lda-gibbs:n_iter=100 or rsm:n_temperatures=2000 (repeatable).")
@click.option("--no-plots", is_flag=True, help="Do not write the PNGs (they need matplotlib, the 'plot' extra).")
@click.option("--json", "as_json", is_flag=True, help="Print the results table as JSON to stdout.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar.")
def compare(corpus, reader, n_docs, out_dir, models, n_topics, seeds, tasks, test_size,
            split_seed, max_words, particles, settings, no_plots, as_json, quiet):
    """Fit a grid of models x K x seeds on CORPUS; perplexity, accuracy and time tables and plots.

    Resumable: finished cells in OUT_DIR are skipped when run again with the same settings.
    The classification labels come from --label-column (TSV/CSV) or the bundled corpus.
    """
    from harmonium.cli._options import load_corpus
    from harmonium.experiments.compare import compare as run_compare
    from harmonium.io import check_writable_folder

    check_writable_folder(out_dir)  # before the grid, not after it
    data = load_corpus(corpus, reader)
    task_list = ("perplexity", "classification") if tasks == "both" else (tasks,)
    names = [m.strip() for m in models.split(",") if m.strip()]
    bar = None
    if not (quiet or as_json):
        n_cells = len(names) * len(_ints(n_topics, "--n-topics")) * len(_ints(seeds, "--seeds"))
        bar = click.progressbar(length=n_cells, label="compare", file=sys.stderr,
                                item_show_func=lambda s: s)

    def progress(ev):
        if bar is None:
            return
        what = f"{ev['model']} K={ev['n_topics']} seed={ev['seed']}"
        if ev["event"] == "start":
            bar.current_item = f"{what} ..."
            bar.render_progress()
        else:
            bar.current_item = f"{what} {ev['event']}"
            bar.update(1)

    if bar is not None:
        bar.__enter__()
    try:
        res = run_compare(data, names, _ints(n_topics, "--n-topics"), _ints(seeds, "--seeds"), out_dir=out_dir,
                          n_docs=n_docs, tasks=task_list, test_size=test_size, split_seed=split_seed,
                          max_words=max_words, n_particles=particles, model_params=_model_params(settings),
                          progress=progress, plots=not no_plots)
    finally:
        if bar is not None:
            bar.__exit__(None, None, None)
    pngs = res.plots
    if as_json:
        click.echo(json.dumps({"config": res.config, "records": res.records,
                               "files": [str(res.csv_path), str(res.json_path), *map(str, pngs.values())]}, indent=1))
        return
    click.echo(f"{len(res.records)} cells ({res.n_computed} computed, {res.n_skipped} resumed); corpus "
               f"{res.config['corpus']['n_docs']} documents, {res.config['corpus']['n_words']} words, "
               f"{res.config['corpus']['n_tokens']} tokens.")
    if "classification" in task_list:
        maj = next((r["majority"] for r in res.records if r.get("majority") is not None), None)
        click.echo(f"\nAccuracy on latent projections, 1-NN (cosine), 50/50 split; majority class {maj:.3f}\n")
        click.echo(res.accuracy_table("1nn"))
        click.echo("\nAccuracy, logistic regression (L2, C = 1)\n")
        click.echo(res.accuracy_table("logreg"))
    if "perplexity" in task_list:
        many = len({r["seed"] for r in res.records}) > 1
        click.echo("\nHeld-out perplexity (" + ("mean (min-max) over seeds" if many else "± 1 standard error") + ")\n")
        click.echo(res.perplexity_table())
    where = "training split" if "perplexity" in task_list else "all documents"
    many = len({r["seed"] for r in res.records}) > 1
    click.echo(f"\nFit seconds ({where}" + ("; mean over seeds)" if many else ")") + "\n")
    click.echo(res.time_table())
    click.echo(f"\nWrote {res.csv_path}, {res.json_path}" + "".join(f", {p}" for p in pngs.values()))
