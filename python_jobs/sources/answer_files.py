"""The answer-file format: reading and validating a file (`finrag import-answers`), writing one (`export-answers`).

One JSON object per line: id, question, answer, passages (ordered, each with its text and doc ids), final_prompt
— validated against schemas/answer_file.schema.json. Partial files (any subset of a dataset's questions) are valid.
The evaluation guideline judges only the first 300 words of an answer and the first 10 passages: imported runs carry
params max_words = 300 and max_passages = 10, so dbt scores the cut answer.
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import polars as pl

from python_jobs.core.config import PROJECT_DIR
from python_jobs.core.contracts import contract
from python_jobs.core.errors import InputError
from python_jobs.core.lake import Lake, check_id
from python_jobs.core.metrics import ANSWER_FILE_WORDS, MAX_PASSAGES
from python_jobs.sources.lines import jsonl_lines
from python_jobs.stats.text_metrics import first_words

SCHEMA_PATH = PROJECT_DIR / "schemas" / "answer_file.schema.json"


@lru_cache(maxsize=1)
def validator():
    from jsonschema import Draft202012Validator

    schema = json.loads(SCHEMA_PATH.read_text())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def check_record(record: Any, file: str, line: int) -> dict[str, Any]:
    """Validate one line's object; the error names file, line and the JSON path of the field."""
    errors = sorted(validator().iter_errors(record), key=lambda e: list(e.absolute_path))
    if errors:
        err = errors[0]
        path = ".".join(str(p) for p in err.absolute_path)
        if err.validator == "required":
            missing = next((p for p in err.validator_value if p not in (err.instance or {})), None)
            path = f"{path}.{missing}" if path and missing else (missing or path)
        elif err.validator == "additionalProperties":
            extra = sorted(set(err.instance) - set(err.schema.get("properties", {})))
            path = f"{path}.{extra[0]}" if path and extra else (extra[0] if extra else path)
        raise InputError(err.message, file=file, line=line, field=path or "(record)")
    return record


def read_answer_file(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """Every record of the file with its line number, all validated (nothing is returned when one is bad)."""
    records: list[tuple[int, dict[str, Any]]] = []
    seen: dict[str, int] = {}
    # jsonl_lines: non-UTF-8 bytes, malformed JSON and a key given twice are errors naming the line and field
    for line_no, record in jsonl_lines(path):
        check_record(record, str(path), line_no)
        if record["id"] in seen:
            raise InputError(f"question {record['id']!r} answered twice (first on line {seen[record['id']]})",
                             file=str(path), line=line_no, field="id")
        seen[record["id"]] = line_no
        records.append((line_no, record))
    return records


def import_answer_file(lake: Lake, path: Path, run_id: str | None, dataset: str, model: str,
                       retrieval_run_id: str | None) -> tuple[str, int]:
    """An answer file → one answer run (generation_runs + answers, landed together). Returns (run id, answers)."""
    run_id = check_id(run_id or path.stem, "run id")
    records = read_answer_file(path)
    if not records:
        raise InputError("the answer file holds no answers", file=str(path))
    known = lake.read("questions", where={"dataset": dataset}, columns=["question_id"])["question_id"]
    if not known.len():
        # answers to questions the lake does not hold could never be scored (a typo in --dataset looks like this)
        have = sorted(set(lake.read("questions", columns=["dataset"])["dataset"].to_list()))
        raise InputError(f"dataset {dataset!r} has no questions in the lake; ingest its questions first "
                         f"(datasets with questions: {', '.join(have) or 'none'})", field="--dataset")
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
    answers = contract("answers").frame(rows)
    params = {"source": "answer_file", "file": path.name, "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
              "max_words": ANSWER_FILE_WORDS, "max_passages": MAX_PASSAGES}
    run = contract("generation_runs").frame([{
        "run_id": run_id, "dataset": dataset, "retrieval_run_id": retrieval_run_id, "model": model,
        "eval_mode": "answer_file", "prompt_template": None, "max_words": ANSWER_FILE_WORDS,
        "params": json.dumps(params, sort_keys=True)}])
    lake.land([("generation_runs", run_id, run), ("answers", run_id, answers)])
    return run_id, answers.height


def export_answer_file(lake: Lake, run_id: str, out_name: str = "<stdout>") -> list[str]:
    """An answer run → the lines of its answer file (failed answers left out, answers cut to the run's max_words)."""
    runs = lake.read("generation_runs", where={"run_id": run_id})
    if runs.height == 0:
        raise InputError(f"no answer run {run_id!r} in the lake", field="run_id")
    run = runs.row(0, named=True)
    max_words = run["max_words"]
    answers = lake.read_partition("answers", run_id).filter(pl.col("error").is_null() & pl.col("answer").is_not_null())
    questions = lake.read("questions", where={"dataset": run["dataset"]}, columns=["question_id", "question"])
    qtext = dict(zip(questions["question_id"], questions["question"], strict=True))
    passages = [json.loads(p) if p else [] for p in answers["passages"]]
    wanted = {p["chunk_id"] for ps in passages for p in ps if p.get("chunk_id") and p.get("text") is None}
    chunks = lake.read("chunks", where={"dataset": run["dataset"]}, columns=["chunk_id", "text"]).filter(
        pl.col("chunk_id").is_in(list(wanted)))
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
        check_record(record, out_name, len(lines) + 1)
        lines.append(json.dumps(record, ensure_ascii=False))
    return lines
