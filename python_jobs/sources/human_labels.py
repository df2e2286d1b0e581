"""`finrag import-human-labels FILE --label-set NAME`: OmniEval-style human judge labels, per metric, from JSONL.

One object per line (docs/judges.md):

    {"answer_run_id": "gpt-4_oracle", "question_id": "financebench_id_03029", "metric": "acc", "score": 2,
     "annotator": "a1", "label": "right"}

- `metric` must be a judged metric of seeds/metrics.csv; `score` a JSON number on the metric's scale (integers for
  discrete metrics), or its not-applicable value / "N/A" when it has one (stored as the na_value: the human said
  N/A).
  The scale rule is the judge's (python_jobs.judge.verdicts.check_score).
- The answer run must be in the lake's generation_runs and the question among that run's answers.
- One label per (answer run, question, metric) in a file. annotator and label are optional (label: the annotator's
  own wording, kept as written).
- Errors name the file, line and field; nothing of a bad file lands. The labels land in the `human_labels`
  partition `label_set = NAME`; re-importing replaces the labels of the answer runs the file names and keeps the
  set's labels of other runs (as `finrag ingest financebench-answers` does), so re-runs are idempotent.
- A file `finrag label-next` wrote (python_jobs/labelling/requests.py) carries `request_id` and a `context` object
  (the question's answer, the predictor's score, the inclusion probability) on every line, which the import does
  not read, and `score: null` until a person fills it in: a line still null is not a label and is skipped (and
  counted). Its labels are added to the set's labels of that run answer by answer (a label of an answer the file
  names is replaced, the others are kept): a request chooses among the answers without a label, so the labels the
  set had stay.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import polars as pl
from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt, StrictStr

from python_jobs.core.contracts import contract
from python_jobs.core.errors import InputError
from python_jobs.core.lake import Lake
from python_jobs.core.metrics import load_metrics
from python_jobs.judge.verdicts import check_score
from python_jobs.sources.lines import read_jsonl


class HumanLabel(BaseModel):
    model_config = ConfigDict(extra="forbid")  # a misspelt key ("scroe") is an error, not a silently missing score
    answer_run_id: StrictStr = Field(min_length=1)
    question_id: StrictStr = Field(min_length=1)
    metric: StrictStr = Field(min_length=1)
    score: StrictInt | StrictFloat | StrictStr | None  # the key is required; null: not labelled yet (label-next)
    annotator: StrictStr | None = None
    label: StrictStr | None = None
    request_id: StrictStr | None = None  # the label-next request the line came from
    context: dict | None = None  # label-next's context for the person; not read


class ReadLabels(NamedTuple):
    labels: pl.DataFrame
    unfilled: int  # lines with score null: not labelled yet
    requested_runs: set[str]  # answer runs named by lines that carry a request_id (added answer by answer)


def read_labels(lake: Lake, path: Path, label_set: str) -> ReadLabels:
    file = str(path)
    specs = load_metrics()
    rows = read_jsonl(path, HumanLabel)
    runs = set(lake.read("generation_runs", columns=["run_id"])["run_id"].to_list())
    answers: dict[str, set[str]] = {}
    seen: dict[tuple[str, str, str], int] = {}
    out = []
    unfilled, requested_runs = 0, set()
    for line, r in rows:
        if r.request_id is not None:
            requested_runs.add(r.answer_run_id)
        if r.score is None:
            unfilled += 1
            continue
        if r.metric not in specs:
            raise InputError(f"unknown metric {r.metric!r} (known: {', '.join(specs)})", file=file, line=line,
                             field="metric")
        checked = check_score(r.score, specs[r.metric])
        if isinstance(checked, str):
            raise InputError(checked, file=file, line=line, field="score")
        if r.answer_run_id not in runs:
            raise InputError(f"unknown answer run {r.answer_run_id!r} (not in the lake's generation_runs)", file=file,
                             line=line, field="answer_run_id")
        if r.answer_run_id not in answers:
            answers[r.answer_run_id] = set(
                lake.read("answers", where={"run_id": r.answer_run_id}, columns=["question_id"])["question_id"])
        if r.question_id not in answers[r.answer_run_id]:
            raise InputError(f"question {r.question_id!r} has no answer in run {r.answer_run_id!r}", file=file,
                             line=line, field="question_id")
        key = (r.answer_run_id, r.question_id, r.metric)
        if key in seen:
            raise InputError(f"duplicate label for {key} (first on line {seen[key]})", file=file, line=line,
                             field="question_id")
        seen[key] = line
        out.append({"label_set": label_set, "answer_run_id": r.answer_run_id, "question_id": r.question_id,
                    "metric": r.metric, "raw_score": checked.raw_score,
                    "label": r.label if r.label is not None else (str(r.score) if isinstance(r.score, str) else None),
                    "annotator": r.annotator, "_file": file, "_line": line})
    return ReadLabels(contract("human_labels").frame(out), unfilled, requested_runs)
