"""`finrag export-inspection`: a sample of generated QA instances per topic x task cell, for human annotators.

    finrag export-inspection --out sample.csv|sample.jsonl [--dataset D] [--generation-run R] [--per-cell 5] [--seed 0]

Each row: question_id, dataset, generation_run_id, topic (English path), task, question_type, conversation (the
earlier turns, conversational only), question, answer, passages (the gold evidence the generator was given), and the
columns the annotator fills: score (1-5), corrected_question, corrected_answer, comment. The LLM inspector's verdict
is not in the file (blind annotation: the agreement in mart_inspection_agreement would be biased otherwise); the
sample covers instances the LLM kept and dropped alike. `finrag import-inspection` reads the file back.
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import click
import polars as pl

from .errors import InputError
from .lake import Lake
from .qa_generation import generated_questions, seeded_shuffle

COLUMNS = ["question_id", "dataset", "generation_run_id", "topic", "task", "question_type", "conversation", "question",
           "answer", "passages", "score", "corrected_question", "corrected_answer", "comment"]


def export_sample(home: str | None, out: str, dataset: str | None, generation_run_id: str | None, per_cell: int,
                  seed: int) -> int:
    path = Path(out)
    if path.suffix not in (".csv", ".jsonl"):
        raise InputError("the inspection file is .csv or .jsonl", file=out, field="out")
    lake = Lake(home)
    qs = generated_questions(lake, dataset, generation_run_id)
    if qs.height == 0:
        raise InputError("no generated questions (run `finrag generate-qa` first)", field="dataset")
    evidence = lake.read("evidence").filter(pl.col("question_id").is_in(qs["question_id"].to_list()))
    rows = []
    cells: dict[tuple[str, str], list[dict]] = {}
    for q in qs.sort("question_id").iter_rows(named=True):
        meta = json.loads(q["meta"])
        cells.setdefault(("/".join(q["topic_path"] or []), q["task"] or ""), []).append({**q, "_meta": meta})
    for (topic, task), members in sorted(cells.items()):
        for q in sorted(seeded_shuffle(members, seed, f"inspect/{topic}/{task}")[:per_cell],
                        key=lambda x: x["question_id"]):
            ev = evidence.filter(pl.col("question_id") == q["question_id"]).sort("evidence_ordinal")
            seen: dict[str, str] = {}
            for r in ev.iter_rows(named=True):  # one passage per chunk (its evidence rows repeat it per page)
                seen.setdefault(r["chunk_id"] or r["doc_id"], f"(doc {r['doc_id']}) {r['evidence_text'] or ''}")
            conv = q["conversation"] or []
            rows.append({
                "question_id": q["question_id"], "dataset": q["dataset"], "generation_run_id": q["generation_run_id"],
                "topic": q["_meta"].get("cell", {}).get("topic_en") or topic, "task": task,
                "question_type": q["question_type"],
                "conversation": "\n".join(f"{t['role']}: {t['content']}" for t in conv[:-1]),
                "question": q["question"], "answer": (q["reference_answers"] or [""])[0],
                "passages": "\n\n".join(f"[{i}] {p}" for i, p in enumerate(seen.values(), start=1)),
                "score": "", "corrected_question": "", "corrected_answer": "", "comment": ""})
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as fh:
        if path.suffix == ".csv":
            w = csv.DictWriter(fh, fieldnames=COLUMNS)
            w.writeheader()
            w.writerows(rows)
        else:
            for r in rows:
                fh.write(json.dumps({**r, "score": None}, ensure_ascii=False) + "\n")
    tmp.replace(path)
    click.echo(f"{len(rows)} instances from {len(cells)} topic x task cells -> {out}", err=True)
    return len(rows)


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
    export_sample(None, out, dataset, generation_run_id, per_cell, seed)
    sys.stdout.flush()
