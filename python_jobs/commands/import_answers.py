"""`finrag import-answers FILE`: an answer file (schemas/answer_file.schema.json) → one answer run in the lake.

Every line is parsed and validated first (errors name file, line and field); when the dataset's questions are in
the lake every id must be one of them. Then generation_runs and answers land together (all or nothing). The run id
defaults to the file stem; importing the same file again replaces its own run.
"""

from __future__ import annotations

from pathlib import Path

import click

from python_jobs.commands._options import Produced, produces
from python_jobs.core.lake import Lake
from python_jobs.sources.answer_files import import_answer_file


@click.command("import-answers")
@produces
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--run-id", default=None, help="Answer run id (default: the file stem).")
@click.option("--dataset", required=True, help="Dataset of the questions answered.")
@click.option("--model", default="unknown", show_default=True, help="Model that wrote the answers.")
@click.option("--retrieval-run-id", default=None, help="Retrieval run the passages came from, if known.")
@click.option("--replace", is_flag=True,
              help="Replace the run even when --run-id belongs to another dataset (refused without it).")
def command(path: Path, run_id: str | None, dataset: str, model: str, retrieval_run_id: str | None,
            replace: bool) -> Produced:
    """Import an answer file (JSON Lines: id, question, answer, passages, final_prompt) as an answer run."""
    run_id, n = import_answer_file(Lake(replace_other_datasets=replace), path, run_id, dataset, model,
                                   retrieval_run_id)
    return run_id, {"run_id": run_id, "dataset": dataset, "answers": n, "file": str(path)}
