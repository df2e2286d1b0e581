"""Annotation files for human inspection of generated QA instances: a per-cell sample for annotators
(`finrag export-inspection`), and their scores back into the lake (`finrag import-inspection`).

Export: each row holds question_id, dataset, generation_run_id, topic (English path), task, question_type,
conversation (the earlier turns, conversational only), question, answer, passages (the gold evidence the generator
was given), and the columns the annotator fills: score (1-5), corrected_question, corrected_answer, comment. The LLM
inspector's verdict is not in the file (blind annotation: the agreement in mart_qa_generation_inspection_agreement
would be biased otherwise); the sample covers instances the LLM kept and dropped alike.

Import, validated before anything lands (errors name file, line and field): the columns question_id, score,
corrected_question, corrected_answer and comment are present; every question id is a generated instance in the
lake, and appears once; a score is an integer 1-5 (a blank score = not inspected, the row is skipped); a 3 carries a
corrected question or answer. One atomic landing: the qa_inspections partition (inspector 'human', id
human-<file sha256 10> unless given) and every affected generation run's questions partition re-landed with the
human verdicts applied (qa_generation/human_inspection.py). Importing the same file again changes nothing.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from python_jobs.core.contracts import contract
from python_jobs.core.errors import InputError
from python_jobs.core.lake import Lake, check_id, now_utc
from python_jobs.qa_generation.human_inspection import (
    generated_questions,
    human_verdict,
    latest_human,
    reland_with_human,
)
from python_jobs.qa_generation.tasks import HUMAN, seeded_shuffle
from python_jobs.sources.lines import jsonl_lines

COLUMNS = ["question_id", "dataset", "generation_run_id", "topic", "task", "question_type", "conversation", "question",
           "answer", "passages", "score", "corrected_question", "corrected_answer", "comment"]


def export_sample(lake: Lake, out: str, dataset: str | None, generation_run_id: str | None, per_cell: int,
                  seed: int) -> tuple[int, int]:
    path = Path(out)
    if path.suffix not in (".csv", ".jsonl"):
        raise InputError("the inspection file is .csv or .jsonl", file=out, field="out")
    qs = generated_questions(lake, dataset, generation_run_id)
    if qs.height == 0:
        raise InputError("no generated questions (run `finrag generate-qa` first)", field="dataset")
    evidence = lake.read("evidence").join(qs.select("dataset", "question_id"), on=["dataset", "question_id"],
                                          how="semi")
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
    return len(rows), len(cells)


REQUIRED = ("question_id", "score", "corrected_question", "corrected_answer", "comment")


def read_rows(path: Path) -> list[tuple[int, dict]]:
    """(line, row) pairs of a .csv (header on line 1) or .jsonl file."""
    name = str(path)
    if path.suffix == ".jsonl":
        rows = []
        for line, row in jsonl_lines(path):  # malformed JSON or a key given twice: an error naming line and key
            if not isinstance(row, dict):
                raise InputError("a line is a JSON object", file=name, line=line)
            missing = [c for c in REQUIRED if c not in row]
            if missing:
                raise InputError("missing field", file=name, line=line, field=missing[0])
            rows.append((line, row))
        return rows
    if path.suffix != ".csv":
        raise InputError("the inspection file is .csv or .jsonl", file=name)
    try:
        text = path.read_text(encoding="utf-8-sig")  # a BOM (Excel's CSVs) dropped, as every reader does
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the inspection file: {exc}", file=name) from None
    # no cap on a cell's length (csv's default 131,072 characters failed with a traceback on a long answer)
    limit, end = csv.field_size_limit(sys.maxsize), 0
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        missing = [c for c in REQUIRED if c not in (reader.fieldnames or [])]
        if missing:
            raise InputError("missing column", file=name, line=1, field=missing[0])
        out: list[tuple[int, dict]] = []
        end = reader.line_num
        for row in reader:  # a record may span lines (passages hold newlines): report the line it starts on
            out.append((end + 1, row))
            end = reader.line_num
        return out
    except csv.Error as exc:
        raise InputError(f"not readable as CSV: {exc}", file=name, line=end + 1) from None
    finally:
        csv.field_size_limit(limit)


def _text(v: object) -> str:
    return "" if v is None else str(v).strip()


def parse_score(v: object, name: str, line: int) -> int | None:
    if v is None or (isinstance(v, str) and not v.strip()):
        return None
    if isinstance(v, bool):
        raise InputError("score must be an integer 1-5", file=name, line=line, field="score")
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    try:
        score = int(v) if isinstance(v, int) else int(str(v).strip())
    except ValueError:
        raise InputError(f"score must be an integer 1-5, got {str(v)[:20]!r}", file=name, line=line,
                         field="score") from None
    if not 1 <= score <= 5:
        raise InputError(f"score must be 1-5, got {score}", file=name, line=line, field="score")
    return score


@dataclass(frozen=True)
class ImportSummary:
    inspection_run_id: str
    verdicts: dict[str, int]  # keep / fix / drop counts
    skipped: int  # rows without a score
    generation_runs: int  # generation runs whose questions were re-landed
    splits: dict[str, int]  # their questions per split, after the verdicts


def import_file(lake: Lake, file: str, inspection_run_id: str | None) -> ImportSummary:
    path = Path(file)
    rows = read_rows(path)
    known = generated_questions(lake).select("question_id", "generation_run_id")
    run_of = dict(known.iter_rows())
    out, seen = [], {}
    for line, row in rows:
        qid = _text(row.get("question_id"))
        if not qid:
            raise InputError("question_id is empty", file=file, line=line, field="question_id")
        if qid not in run_of:
            raise InputError(f"unknown question id {qid!r} (not a generated instance in the lake)", file=file,
                             line=line, field="question_id")
        if qid in seen:
            raise InputError(f"question {qid!r} appears twice (first on line {seen[qid]})", file=file, line=line,
                             field="question_id")
        seen[qid] = line
        score = parse_score(row.get("score"), file, line)
        if score is None:
            continue  # not inspected
        cq, ca, comment = (_text(row.get(c)) for c in ("corrected_question", "corrected_answer", "comment"))
        if score == 3 and not (cq or ca):
            raise InputError("a score of 3 (fix) needs a corrected_question or corrected_answer", file=file, line=line,
                             field="corrected_answer")
        verdict = human_verdict(score)
        out.append({"question_id": qid, "inspector": HUMAN, "verdict": verdict, "score": score,
                    "reason": comment or None, "corrected_question": (cq or None) if verdict == "fix" else None,
                    "corrected_answer": (ca or None) if verdict == "fix" else None, "comment": comment or None,
                    "_file": file, "_line": line})
    if not out:
        raise InputError("no scored rows (fill the score column, 1-5)", file=file, field="score")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:10]
    irid = check_id(inspection_run_id or f"human-{digest}", "inspection run id")
    frame = contract("qa_inspections").frame(out)
    # the verdicts that apply: every other human inspection in the lake, and this one (newest)
    now = now_utc()
    others = latest_human(lake).filter(pl.col("inspection_run_id") != irid)
    mine = frame.drop("_file", "_line").with_columns(pl.lit(irid).alias("inspection_run_id"),
                                                     pl.lit(now).cast(pl.Datetime("us", "UTC")).alias("created_at"))
    human = pl.concat([others.select(mine.columns), mine.select(mine.columns)], how="vertical_relaxed")
    human = human.sort(["created_at", "inspection_run_id"]).unique("question_id", keep="last")
    runs = {run_of[q] for q in frame["question_id"]}
    relanded = reland_with_human(lake, runs, human, extra=[("qa_inspections", irid, frame)])
    counts = Counter(frame["verdict"])
    splits = Counter(s for _, qs in relanded for s in qs["split"])
    return ImportSummary(irid, dict(counts), len(rows) - frame.height, len(relanded), dict(sorted(splits.items())))
