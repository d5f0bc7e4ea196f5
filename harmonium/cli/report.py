"""``harmonium report``: argument parsing for :func:`harmonium.report.html.write_report`."""

from __future__ import annotations

import click


@click.command()
@click.argument("model_path", metavar="MODEL", type=click.Path(dir_okay=False))
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True, help="The HTML file to write.")
@click.option("-c", "--corpus", default=None,
              help="Documents for prevalence, word frequencies and example documents (a file or 'debian').")
@click.option("--format", "fmt", default=None, help="Corpus format (lines, tsv, csv, uci, ldac, mm, npz).")
@click.option("--text-column", default="text", show_default=True, help="Text column of a TSV/CSV corpus.")
@click.option("--label-column", default=None, help="Label column of a TSV/CSV corpus.")
@click.option("--n-docs", type=click.IntRange(min=1), default=None, help="Use only the first N documents.")
@click.option("-n", "--n-words", type=click.IntRange(min=1), default=30, show_default=True, help="Words per topic.")
@click.option("--n-examples", type=click.IntRange(min=0), default=5, show_default=True,
              help="Example documents per topic.")
@click.option("--pyldavis", type=click.Path(dir_okay=False), default=None,
              help="Also write pyLDAvis's PreparedData JSON here.")
@click.option("--title", default=None, help="Title of the page.")
def report(model_path, output, corpus, fmt, text_column, label_column, n_docs, n_words, n_examples, pyldavis, title):
    """Write a self-contained HTML report of MODEL (works offline): topics with a relevance slider, prevalence,
    intertopic distance map, example documents, training traces and diagnostics, hidden-unit weights."""
    from harmonium import load
    from harmonium.cli.main import _load_corpus
    from harmonium.report.html import write_report

    model = load(model_path)
    docs = None
    if corpus is not None:
        docs = _load_corpus(corpus, fmt, text_column, label_column, vocabulary=model.vocabulary_, n_docs=n_docs)
    write_report(model, output, docs, n_words=n_words, n_examples=n_examples, title=title)
    click.echo(f"Wrote {output}")
    if pyldavis is not None:
        from harmonium.report.pyldavis import write_pyldavis

        write_pyldavis(model, pyldavis, docs, R=n_words)
        click.echo(f"Wrote {pyldavis}")
