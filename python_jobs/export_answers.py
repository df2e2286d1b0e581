"""`finrag export-answers --run-id ID [--out FILE]`: an answer run → an answer file (JSON Lines, one line per
answered question, validated against schemas/answer_file.schema.json before it is written).

Failed answers (no answer, error set) are left out: the file is partial, which the format allows. Answers are cut
to the run's max_words when its params ask for it. Passage texts come from the answer run itself (imported files)
or from the lake's chunks (runs made by `finrag answer`).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import click
import polars as pl

from .answer_files import check_record
from .errors import InputError
from .lake import Lake
from .text_metrics import first_words


@click.command("export-answers")
@click.option("--run-id", required=True, help="Answer run to export.")
@click.option("--out", "out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Output file (default: stdout).")
def command(run_id: str, out: Path | None) -> None:
    """Write an answer run as an answer file."""
    lake = Lake()
    runs = lake.read("generation_runs", where={"run_id": run_id})
    if runs.height == 0:
        raise InputError(f"no answer run {run_id!r} in the lake", field="run_id")
    run = runs.row(0, named=True)
    max_words = json.loads(run["params"] or "{}").get("max_words")
    answers = lake.read_partition("answers", run_id).filter(pl.col("error").is_null() & pl.col("answer").is_not_null())
    questions = lake.read("questions", columns=["question_id", "question"])
    qtext = dict(zip(questions["question_id"], questions["question"], strict=True))
    passages = [json.loads(p) if p else [] for p in answers["passages"]]
    wanted = {p["chunk_id"] for ps in passages for p in ps if p.get("chunk_id") and p.get("text") is None}
    chunks = lake.read("chunks", columns=["chunk_id", "text"]).filter(pl.col("chunk_id").is_in(list(wanted)))
    ctext = dict(zip(chunks["chunk_id"], chunks["text"], strict=True))
    lines: list[str] = []
    for a, ps in zip(answers.sort("question_id").iter_rows(named=True),
                     [passages[i] for i in answers.with_row_index("_i").sort("question_id")["_i"]], strict=True):
        if a["question_id"] not in qtext:
            raise InputError(f"question {a['question_id']!r} of run {run_id!r} is not in the lake", field="question_id")
        record: dict[str, Any] = {
            "id": a["question_id"], "question": qtext[a["question_id"]],
            "answer": first_words(a["answer"], max_words),
            "passages": [{"passage": p.get("text") if p.get("text") is not None else ctext.get(p.get("chunk_id"), ""),
                          "doc_IDs": p["doc_ids"], "chunk_id": p.get("chunk_id")} for p in ps],
            "final_prompt": a["prompt"] or "",
        }
        check_record(record, out.name if out else "<stdout>", len(lines) + 1)
        lines.append(json.dumps(record, ensure_ascii=False))
    text = "".join(x + "\n" for x in lines)
    if out is None:
        sys.stdout.write(text)
    else:
        tmp = out.with_name(out.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, out)
    click.echo(f"exported {len(lines)} answers of run {run_id}" + (f" to {out}" if out else ""), err=True)
