"""Ragas files in and out: `finrag ingest ragas FILE|DIR`, `finrag export-run --format ragas`.

What ragas 0.4.3 writes (read from its sources; bench/external_tools/make_fixtures.py makes real ones):
- `EvaluationDataset.to_jsonl`: one `SingleTurnSample.model_dump(exclude_none=True)` per line (user_input,
  retrieved_contexts, reference_contexts, retrieved_context_ids, reference_context_ids, response, reference, rubrics,
  ...); `to_csv`: the same keys as a header (the first sample's), lists written as Python reprs (`['a', 'b']`);
- a results frame (`EvaluationResult.to_pandas()`, saved with `to_csv` / `to_json(lines=True)`): the dataset's
  columns plus one column per metric (metric.name: `faithfulness`, `rouge_score(mode=fmeasure)`, ...), NaN where a
  metric failed;
- an experiment (`@experiment` ... `arun(dataset, name=N)`): a CSV or JSONL file named N in the experiments folder
  of the backend's root, one row per result the experiment function returned, its keys as columns (often
  `<metric>` and `<metric>_reason`).
A DIR is an experiments folder (or a ragas root holding `experiments/`): each `*.csv` / `*.jsonl` in it is one run.

Reading: a row's sample fields are typed as SingleTurnSample types them (a list where a string is expected, e.g. a
multi-turn `user_input`, is an error naming the file, line and field); `user_input` is required. A column is a
metric when the registry knows `ragas_<its slug>` (seed metrics, judge_family ragas) or `--metric NAME=MIN..MAX`
declares it (`:lower` when lower is better); `<metric>_reason` is its rationale. Other columns are left out with a
note. A metric cell is a number on the metric's scale, or empty / NaN (the metric failed: a failed judgment); a
number off the scale or text is refused. CSV line numbers are the physical line a record starts on (contexts span
lines).

Repeats (the judge's noise): Ragas has no repeat option of its own; a sample evaluated N times comes as N rows of
the same sample (the results frames of N `evaluate()` calls concatenated, or an experiment that returns a row per
repeat), each with that evaluation's scores. The rows of one question with the same response and retrieved contexts
are one answer judged N times (sources/external_runs.py), numbered by the optional `repeat` column (a whole number
from 1; given on every row or on none) or else in file order. Another response to the same question, a repeat
number twice, and questions with different repeats (every question has repeats 1..N) are refused with the file,
line and field. The export writes a judge run's repeats the same way: one row per repeat, with a `repeat` column.
"""

from __future__ import annotations

import ast
import csv
import io
import json
import math
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError

from python_jobs.core.console import say
from python_jobs.core.errors import InputError
from python_jobs.core.lake import Lake, check_id
from python_jobs.core.metrics import external_metric_name, load_metrics
from python_jobs.sources.external_exports import load_export
from python_jobs.sources.external_runs import (
    REPEAT_FIELD,
    Declaration,
    ExternalRun,
    ExternalSample,
    ExternalScore,
    default_run_id,
    land_external_runs,
)
from python_jobs.sources.lines import decode_line, file_lines, jsonl_lines, validation_error

TOOL = "ragas"
LIST_FIELDS = ("retrieved_contexts", "reference_contexts", "retrieved_context_ids", "reference_context_ids",
               "multi_responses")
REASON_SUFFIX = "_reason"
REPEAT_COLUMN = REPEAT_FIELD  # the optional column numbering a sample's repeats


class RagasSample(BaseModel):
    """SingleTurnSample's fields with its types (as ragas 0.4.3 declares them); user_input is required here."""

    model_config = ConfigDict(extra="allow")
    user_input: StrictStr = Field(min_length=1)
    retrieved_contexts: list[StrictStr] | None = None
    reference_contexts: list[StrictStr] | None = None
    retrieved_context_ids: list[StrictStr | StrictInt] | None = None
    reference_context_ids: list[StrictStr | StrictInt] | None = None
    response: StrictStr | None = None
    multi_responses: list[StrictStr] | None = None
    reference: StrictStr | None = None
    rubrics: dict[StrictStr, StrictStr] | None = None
    persona_name: StrictStr | None = None
    query_style: StrictStr | None = None
    query_length: StrictStr | None = None


SAMPLE_FIELDS = tuple(RagasSample.model_fields)


def parse_metric_option(text: str) -> tuple[str, Declaration]:
    """`NAME=MIN..MAX[:lower|:higher]` -> (name, declaration)."""
    m = re.fullmatch(r"(.+)=(-?\d+(?:\.\d+)?)\.\.(-?\d+(?:\.\d+)?)(?::(lower|higher))?", text.strip())
    if not m:
        raise InputError(f"{text!r}: expected NAME=MIN..MAX[:lower|:higher] (e.g. numbers_match=0..1)",
                         field="--metric")
    low, high = float(m.group(2)), float(m.group(3))
    if high <= low:
        raise InputError(f"{text!r}: the scale's max must exceed its min", field="--metric")
    return m.group(1), Declaration(higher_is_better=m.group(4) != "lower", scale_min=low, scale_max=high,
                                   description=f"A Ragas metric declared on the command line ({text}).")


def ragas_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    folder = path / "experiments" if (path / "experiments").is_dir() else path
    files = sorted(p for p in folder.iterdir() if p.suffix in (".csv", ".jsonl") and p.is_file())
    if not files:
        raise InputError("no *.csv or *.jsonl file (nor an experiments/ folder holding them)", file=str(path))
    return files


def _cell_list(value: str, file: str, line: int, name: str) -> Any:
    """A list column of a CSV: ragas' to_csv writes Python reprs (['a', 'b']); JSON lists are read too."""
    if value == "":
        return None
    try:
        parsed = ast.literal_eval(value)
    except (ValueError, SyntaxError):
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            raise InputError(f"expected a list (as ragas writes it: ['a', 'b']), got {value[:60]!r}", file=file,
                             line=line, field=name) from None
    return parsed


def _csv_records(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """(line the record starts on, {column: text}) of a CSV file; lists parsed from their reprs."""
    file = str(path)
    text = "\n".join(decode_line(raw, file, n, lambda _: "<record>") for n, raw in file_lines(path))
    reader = csv.reader(io.StringIO(text))
    try:
        header = next(reader)
    except StopIteration:
        raise InputError("file is empty: expected a header and at least one row", file=file, line=1,
                         field="user_input") from None
    if "user_input" not in header:
        raise InputError(f"no user_input column (columns: {', '.join(header)[:120]})", file=file, line=1,
                         field="user_input")
    out, start = [], reader.line_num + 1
    try:
        for cells in reader:
            if cells:
                if len(cells) != len(header):
                    raise InputError(f"expected {len(header)} cells, got {len(cells)}", file=file, line=start,
                                     field=header[min(len(cells), len(header) - 1)])
                record: dict[str, Any] = {}
                for name, value in zip(header, cells, strict=True):
                    if name in LIST_FIELDS:
                        record[name] = _cell_list(value, file, start, name)
                    elif name == "rubrics":
                        record[name] = _cell_list(value, file, start, name)
                    else:
                        record[name] = value if value != "" or name == "user_input" else None
                out.append((start, record))
            start = reader.line_num + 1
    except csv.Error as exc:
        raise InputError(f"malformed CSV: {exc}", file=file, line=reader.line_num, field="<record>") from None
    return out


def _score(value: Any, file: str, line: int, name: str) -> float | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise InputError(f"a metric score must be a number, got {value!r}", file=file, line=line, field=name)
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)  # CSV cells; 'nan' reads as NaN: the metric failed
        except ValueError:
            pass
    raise InputError(f"a metric score must be a number, got {str(value)[:60]!r}", file=file, line=line, field=name)


def read_ragas_file(path: Path, run_id: str, declared: dict[str, Declaration]) -> ExternalRun:
    file = str(path)
    if path.suffix == ".csv":
        records = _csv_records(path)
    else:
        records = []
        for line, obj in jsonl_lines(path):
            if not isinstance(obj, dict):
                raise InputError(f"expected a JSON object, got {type(obj).__name__}", file=file, line=line,
                                 field="<record>")
            records.append((line, obj))
    if not records:
        raise InputError("file is empty: expected at least one sample", file=file, line=1, field="user_input")
    known = {m.source_name for m in load_metrics(external=True).values() if m.judge_family == TOOL}
    columns = list(dict.fromkeys(k for _, r in records for k in r))
    metrics = [c for c in columns if c not in SAMPLE_FIELDS and c != REPEAT_COLUMN and (c in known or c in declared)]
    reasons = {f"{m}{REASON_SUFFIX}" for m in metrics}
    left_out = [c for c in columns if c not in SAMPLE_FIELDS and c != REPEAT_COLUMN and c not in metrics
                and c not in reasons]
    if left_out:
        say(f"note: {path.name}: columns left out (no Ragas metric of the registry; declare one with --metric "
            f"NAME=MIN..MAX): {', '.join(left_out)}")
    unknown = sorted(set(declared) - set(columns))
    if unknown:
        raise InputError(f"--metric names {unknown[0]!r}, which is no column of the file", file=file,
                         field="--metric")
    samples = []
    for line, record in records:
        try:
            s = RagasSample.model_validate({k: v for k, v in record.items() if k in SAMPLE_FIELDS})
        except ValidationError as exc:
            raise validation_error(exc, file, line) from None
        scores = [ExternalScore(source_name=m, score=_score(record.get(m), file, line, m), field=m,
                                reason=_reason(record.get(f"{m}{REASON_SUFFIX}"), file, line, m))
                  for m in metrics]
        samples.append(ExternalSample(
            line=line, field_prefix="", question=s.user_input, response=s.response, reference=s.reference,
            contexts=s.retrieved_contexts,
            context_ids=[str(i) for i in s.retrieved_context_ids] if s.retrieved_context_ids is not None else None,
            reference_contexts=s.reference_contexts,
            reference_context_ids=([str(i) for i in s.reference_context_ids]
                                   if s.reference_context_ids is not None else None),
            scores=scores, repeat=_repeat(record.get(REPEAT_COLUMN), file, line)))
    return ExternalRun(tool=TOOL, path=path, run_id=run_id, samples=samples,
                       declarations={m: d for m, d in declared.items() if m in metrics},
                       params={"metric_names": {external_metric_name(TOOL, m): m for m in metrics}})


def _repeat(value: Any, file: str, line: int) -> int | None:
    """The `repeat` cell: a whole number from 1 (CSV: its text), or empty (the row is numbered in file order)."""
    if value is None or value == "":
        return None
    number = value
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            pass
    if isinstance(number, float) and number.is_integer():
        number = int(number)  # pandas writes an int column with gaps as floats (2.0)
    if isinstance(number, bool) or not isinstance(number, int) or number < 1:
        raise InputError(f"a repeat is a whole number from 1, got {str(value)[:60]!r}", file=file, line=line,
                         field=REPEAT_COLUMN)
    return number


def _reason(value: Any, file: str, line: int, metric: str) -> str | None:
    if value is None or value == "" or (isinstance(value, float) and math.isnan(value)):
        return None
    if not isinstance(value, str):
        raise InputError(f"a reason must be text, got {str(value)[:60]!r}", file=file, line=line,
                         field=f"{metric}{REASON_SUFFIX}")
    return value


def ingest_ragas(lake: Lake, path: Path, dataset: str, run_id: str | None, model: str,
                 metric_options: tuple[str, ...]) -> list[tuple[str, str | None]]:
    declared = dict(parse_metric_option(m) for m in metric_options)
    files = ragas_files(path)
    if run_id is not None and len(files) > 1:
        raise InputError(f"--run-id names one run, and {path} holds {len(files)} files", field="--run-id")
    runs = [read_ragas_file(f, check_id(run_id, "run id") if run_id else default_run_id(f), declared)
            for f in files]
    return land_external_runs(lake, runs, dataset, model)


# ------------------------------------------------------------------------------------------------------- export
def export_ragas(lake: Lake, run_id: str, as_csv: bool) -> str:
    """A run as ragas reads it: SingleTurnSample keys (model_dump(exclude_none=True) order) and, for a judge run,
    one column per metric (and `<metric>_reason` where the judge gave reasons), as `EvaluationResult.to_pandas()`
    holds them; a judge run with repeats one row per repeat, numbered in a `repeat` column. JSONL
    (`EvaluationDataset.from_jsonl` reads it; metric keys are extra) or CSV (lists as Python reprs, as `to_csv`
    writes them)."""
    samples, _ = load_export(lake, run_id, TOOL)
    rows: list[dict[str, Any]] = []
    with_reasons = {name for s in samples for name, v in s.scores.items() if v["reason"]}
    for s in samples:
        row = {"user_input": s.question, "retrieved_contexts": s.contexts, "reference_contexts": s.reference_contexts,
               "retrieved_context_ids": s.context_ids, "response": s.response, "reference": s.reference}
        row = {k: v for k, v in row.items() if v is not None}
        if s.repeat is not None:
            row[REPEAT_COLUMN] = s.repeat
        for name, v in s.scores.items():
            row[name] = v["score"]
            if name in with_reasons:
                row[f"{name}{REASON_SUFFIX}"] = v["reason"]
        rows.append(row)
    if not as_csv:
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    names = list(dict.fromkeys(k for r in rows for k in r))
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=names, lineterminator="\n")  # str(list) is the Python repr ragas writes
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()
