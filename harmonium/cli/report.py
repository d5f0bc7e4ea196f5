"""``harmonium report``: argument parsing for :func:`harmonium.report.html.write_report`."""

from __future__ import annotations

import click

from harmonium.cli._options import corpus_options


@click.command()
@click.argument("model_path", metavar="MODEL", type=click.Path(dir_okay=False))
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True, help="The HTML file to write.")
@click.option("-c", "--corpus", default=None,
              help="Documents for prevalence, word frequencies and example documents (a file or 'debian').")
@corpus_options
@click.option("-n", "--n-words", type=click.IntRange(min=1), default=30, show_default=True, help="Words per topic.")
@click.option("--n-examples", type=click.IntRange(min=0), default=5, show_default=True,
              help="Example documents per topic.")
@click.option("--pyldavis", type=click.Path(dir_okay=False), default=None,
              help="Also write pyLDAvis's PreparedData JSON here.")
@click.option("--title", default=None, help="Title of the page.")
def report(model_path, output, corpus, reader, n_docs, n_words, n_examples, pyldavis, title):
    """Write a self-contained HTML report of MODEL (works offline): topics with a relevance slider, prevalence,
    intertopic distance map, example documents, training traces and diagnostics, hidden-unit weights."""
    from harmonium import load
    from harmonium.cli._options import load_corpus
    from harmonium.io import check_writable
    from harmonium.report.html import write_report

    for path in (output, pyldavis):
        if path is not None:
            check_writable(path)
    model = load(model_path)
    docs = None
    if corpus is not None:
        docs = load_corpus(corpus, reader, vocabulary=model.vocabulary_, n_docs=n_docs)
    write_report(model, output, docs, n_words=n_words, n_examples=n_examples, title=title)
    click.echo(f"Wrote {output}")
    if pyldavis is not None:
        from harmonium.report.pyldavis import write_pyldavis

        write_pyldavis(model, pyldavis, docs, R=n_words)
        click.echo(f"Wrote {pyldavis}")
