"""`finrag import-answers FILE`: an answer file (schemas/answer_file.schema.json) → one answer run in the lake.

Every line is parsed and validated first (errors name file, line and field); when the dataset's questions are in
the lake every id must be one of them. Then generation_runs and answers land together (all or nothing). The run id
defaults to the file stem; importing the same file again replaces its own run.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import click
import polars as pl

from .answer_files import JUDGED_PASSAGES, JUDGED_WORDS, read_answer_file
from .errors import InputError
from .lake import Lake, check_id


@click.command("import-answers")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--run-id", default=None, help="Answer run id (default: the file stem).")
@click.option("--dataset", required=True, help="Dataset of the questions answered.")
@click.option("--model", default="unknown", show_default=True, help="Model that wrote the answers.")
@click.option("--retrieval-run-id", default=None, help="Retrieval run the passages came from, if known.")
def command(path: Path, run_id: str | None, dataset: str, model: str, retrieval_run_id: str | None) -> None:
    """Import an answer file (JSON Lines: id, question, answer, passages, final_prompt) as an answer run."""
    run_id = check_id(run_id or path.stem, "run id")
    records = read_answer_file(path)
    if not records:
        raise InputError("the answer file holds no answers", file=str(path))
    lake = Lake()
    known = lake.read("questions", where={"dataset": dataset}, columns=["question_id"])["question_id"]
    if known.len():
        known_ids = set(known.to_list())
        for line, r in records:
            if r["id"] not in known_ids:
                raise InputError(f"unknown question {r['id']!r}: not in dataset {dataset!r}", file=str(path),
                                 line=line, field="id")
    rows = []
    for line, r in records:
        chunk_ids = [p.get("chunk_id") for p in r["passages"]]
        rows.append({
            "run_id": run_id, "question_id": r["id"], "answer": r["answer"], "prompt": r["final_prompt"],
            "context_chunk_ids": chunk_ids if chunk_ids and all(chunk_ids) else None,
            "passages": json.dumps([{"doc_ids": p["doc_IDs"], "chunk_id": p.get("chunk_id"), "text": p["passage"]}
                                    for p in r["passages"]], ensure_ascii=False),
            "error": None, "_file": str(path), "_line": line,
        })
    answers = pl.DataFrame(rows, schema={"run_id": pl.String, "question_id": pl.String, "answer": pl.String,
                                         "prompt": pl.String, "context_chunk_ids": pl.List(pl.String),
                                         "passages": pl.String, "error": pl.String, "_file": pl.String,
                                         "_line": pl.Int64})
    params = {"source": "answer_file", "file": path.name, "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
              "max_words": JUDGED_WORDS, "max_passages": JUDGED_PASSAGES}
    run = pl.DataFrame([{"run_id": run_id, "dataset": dataset, "retrieval_run_id": retrieval_run_id, "model": model,
                         "eval_mode": "answer_file", "prompt_template": None,
                         "params": json.dumps(params, sort_keys=True)}])
    lake.land([("generation_runs", run_id, run), ("answers", run_id, answers)])
    click.echo(f"landed answer run {run_id}: {answers.height} answers from {path}", err=True)
    sys.stdout.write(run_id + "\n")
