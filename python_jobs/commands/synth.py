"""`finrag synth`: the project's own demo corpus, written in FinanceBench's file formats.

    DIR/questions.jsonl   one FinanceBench question per line (financebench_open_source.jsonl schema)
    DIR/documents.jsonl   one document per line (financebench_document_information.jsonl schema)
    DIR/pdfs/<doc_name>.pdf

The rules and decisions are documented in python_jobs/demo/synthetic_corpus.py.
"""

from __future__ import annotations

from pathlib import Path

import click

from python_jobs.demo.synthetic_corpus import COMPANIES, synthesize


@click.command("synth")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Directory to write questions.jsonl, documents.jsonl and pdfs/ into.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--companies", type=int, default=6, show_default=True, help=f"1 to {len(COMPANIES)}.")
@click.option("--questions-per-doc", type=int, default=5, show_default=True)
def command(out_dir: Path, seed: int, companies: int, questions_per_doc: int) -> None:
    """Write a synthetic FinanceBench-format corpus of fictional filings (PDFs) and questions with gold pages."""
    res = synthesize(out_dir, seed, companies, questions_per_doc)
    click.echo(f"wrote {res.documents} documents ({res.pages} pages) and {res.questions} questions "
               f"({res.two_page_questions} with two evidence pages) to {out_dir}")
