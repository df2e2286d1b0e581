"""`finrag import-inspection FILE`: land annotators' scores of generated QA instances (the file export-inspection
wrote, .csv or .jsonl) and apply them to the questions.

    finrag import-inspection sample.csv [--inspection-run-id ID]

Validation, before anything lands (errors name file, line and field): the columns question_id, score,
corrected_question, corrected_answer and comment are present; every question id is a generated instance in the
lake, and appears once; a score is an integer 1-5 (a blank score = not inspected, the row is skipped); a 3 carries a
corrected question or answer. Verdicts: 1-2 drop, 3 fix, 4-5 keep.

One atomic landing: the qa_inspections partition (inspector 'human', id human-<file sha256 10> unless given) and
every affected generation run's questions partition re-landed with the human verdicts applied
(python_jobs/qa_generation.py: apply_human): dropped -> split 'dropped'; fixed -> corrected text (original kept in
meta); accepted test instances -> 'gen_human_test'. Importing the same file again changes nothing.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections import Counter
from pathlib import Path

import click
import polars as pl

from .errors import InputError
from .lake import Lake, check_id, now_utc
from .qa_generation import HUMAN, generated_questions, human_verdict, latest_human, reland_with_human

REQUIRED = ("question_id", "score", "corrected_question", "corrected_answer", "comment")


def read_rows(path: Path) -> list[tuple[int, dict]]:
    """(line, row) pairs of a .csv (header on line 1) or .jsonl file."""
    name = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the inspection file: {exc}", file=name) from None
    if path.suffix == ".csv":
        reader = csv.DictReader(io.StringIO(text, newline=""))
        missing = [c for c in REQUIRED if c not in (reader.fieldnames or [])]
        if missing:
            raise InputError("missing column", file=name, line=1, field=missing[0])
        out, end = [], reader.line_num
        for row in reader:  # a record may span lines (passages hold newlines): report the line it starts on
            out.append((end + 1, row))
            end = reader.line_num
        return out
    if path.suffix == ".jsonl":
        rows = []
        for line, raw in enumerate(text.splitlines(), start=1):
            if not raw.strip():
                continue
            try:
                row = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise InputError(f"not JSON: {exc.msg}", file=name, line=line) from None
            if not isinstance(row, dict):
                raise InputError("a line is a JSON object", file=name, line=line)
            missing = [c for c in REQUIRED if c not in row]
            if missing:
                raise InputError("missing field", file=name, line=line, field=missing[0])
            rows.append((line, row))
        return rows
    raise InputError("the inspection file is .csv or .jsonl", file=name)


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


def import_file(home: str | None, file: str, inspection_run_id: str | None) -> dict[str, int]:
    path = Path(file)
    lake = Lake(home)
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
    frame = pl.DataFrame(out, schema={"question_id": pl.String, "inspector": pl.String, "verdict": pl.String,
                                      "score": pl.Int32, "reason": pl.String, "corrected_question": pl.String,
                                      "corrected_answer": pl.String, "comment": pl.String, "_file": pl.String,
                                      "_line": pl.Int64})
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
    click.echo(f"inspection_run_id={irid}")
    click.echo(f"landed {frame.height} human inspections (keep {counts['keep']}, fix {counts['fix']}, drop "
               f"{counts['drop']}; {len(rows) - frame.height} rows without a score skipped); re-landed "
               f"{len(relanded)} generation run(s): " + ", ".join(f"{k} {v}" for k, v in sorted(splits.items())),
               err=True)
    return dict(counts)


@click.command("import-inspection")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--inspection-run-id", default=None, help="Id of this inspection (default human-<file sha256 10>).")
def command(file: str, inspection_run_id: str | None) -> None:
    """Land human scores (1-5) of generated QA instances and apply them (drop / fix / keep) to the questions."""
    import_file(None, file, inspection_run_id)
