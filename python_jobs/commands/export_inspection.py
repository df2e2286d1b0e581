"""`finrag export-inspection`: a sample of generated QA instances per topic x task cell, for human annotators.

    finrag export-inspection --out sample.csv|sample.jsonl [--dataset D] [--generation-run R] [--per-cell 5] [--seed 0]

Each row: question_id, dataset, generation_run_id, topic (English path), task, question_type, conversation (the
earlier turns, conversational only), question, answer, passages (the gold evidence the generator was given), and the
columns the annotator fills: score (1-5), corrected_question, corrected_answer, comment. The LLM inspector's verdict
is not in the file (blind annotation: the agreement in mart_qa_generation_inspection_agreement would be biased
otherwise); the sample covers instances the LLM kept and dropped alike. `finrag import-inspection` reads the file back.
"""

from __future__ import annotations

import click

from python_jobs.core.console import say
from python_jobs.core.lake import Lake
from python_jobs.qa_generation.annotation_files import export_sample


@click.command("export-inspection")
@click.option("--out", required=True, help="Output file: .csv or .jsonl.")
@click.option("--dataset", default=None, help="Only this dataset's generated instances.")
@click.option("--generation-run", "generation_run_id", default=None, help="Only this generation run.")
@click.option("--per-cell", type=int, default=5, show_default=True, help="Instances per topic x task cell.")
@click.option("--seed", type=int, default=0, show_default=True)
def command(out: str, dataset: str | None, generation_run_id: str | None, per_cell: int, seed: int) -> None:
    """Write a per-cell sample of generated QA instances for human inspection (1-5 scores, corrections)."""
    if per_cell < 1:
        raise click.UsageError("--per-cell >= 1")
    n_rows, n_cells = export_sample(Lake(), out, dataset, generation_run_id, per_cell, seed)
    say(f"{n_rows} instances from {n_cells} topic x task cells -> {out}")
