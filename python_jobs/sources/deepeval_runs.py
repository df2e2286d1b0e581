"""DeepEval test runs in and out: `finrag ingest deepeval FILE`, `finrag export-run --format deepeval`.

What deepeval 4.3.1 writes (read from its sources; bench/external_tools/make_fixtures.py makes a real one):
`evaluate()` / `deepeval test run` save the TestRun as `.deepeval/.latest_run_full.json` (and
`test_run_<YYYYMMDD_HHMMSS>.json` under a results folder): one JSON document, `TestRun.model_dump(by_alias=True,
exclude_none=True)` on one line: `testCases[]` (LLMApiTestCase: name, input, actualOutput, expectedOutput, context,
retrievalContext, success, metricsData[], metadata, ...), `metricsScores[]`, `testPassed`, `testFailed`, ...; each
metricsData entry (MetricData) has name, threshold, success, score, reason, strictMode, evaluationModel, error
(a metric that raised under `ignore_errors` has an error and no score). `.latest_test_run.json` wraps the same under
`testRunData`. snake_case keys (input, actual_output, retrieval_context, metrics_data, ...) are read too.

Reading: `input` is the question (required), `actualOutput` the answer, `expectedOutput` a new question's
reference, `retrievalContext` the passages, `context` a new question's reference contexts; `name` and
`metadata.question_id` decide between questions of the same text. Each metricsData entry is a judgment (ok, or
failed with DeepEval's error), `reason` its rationale, `threshold` kept in the judge run's params. A metric the
registry does not know (any GEval name) is declared with the run: scale [0, 1] (every DeepEval metric scores there)
and the direction its own verdicts show (success = score >= threshold: higher is better, the default of
BaseMetric; score <= threshold: lower, as Bias / Toxicity / Hallucination); verdicts that fit neither are refused.
Errors name the file, line (deepeval writes the document on one line: line 1; a malformed document's own line) and
the JSON path of the field (`testCases[2].metricsData[0].score`).

Repeats (the judge's noise): `deepeval test run --repeat N` (or `evaluate()` over a list of test cases holding each
N times) writes each test case N times in the one test run, each with the metricsData of its own evaluation. The
test cases of one question with the same actualOutput and retrievalContext are one answer judged N times
(sources/external_runs.py), numbered in the order they come in testCases. The same question with another
actualOutput, and questions with different numbers of repeats (every question has repeats 1..N), are refused with
the file, line and the test case's JSON path. The export writes a judge run's repeats the same way: the test case
once per repeat, in repeat order (its metadata says which).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr, ValidationError

from python_jobs.core.errors import InputError
from python_jobs.core.lake import Lake, check_id
from python_jobs.core.metrics import external_metric_name, load_metrics
from python_jobs.sources.external_exports import load_export
from python_jobs.sources.external_runs import (
    Declaration,
    ExternalRun,
    ExternalSample,
    ExternalScore,
    default_run_id,
    land_external_runs,
)
from python_jobs.sources.lines import decode_line, file_lines, json_line, validation_error

TOOL = "deepeval"
SCALE = (0.0, 1.0)  # DeepEval's metrics all score in [0, 1] (GEval's 0-10 rubric is divided by 10)
DEFAULT_THRESHOLD = 0.5  # BaseMetric's default, for metrics exported from runs that have none
_CONFIG = ConfigDict(extra="allow", validate_by_name=True, validate_by_alias=True, serialize_by_alias=True)


class DeepEvalMetricData(BaseModel):
    model_config = _CONFIG
    name: StrictStr = Field(min_length=1)
    threshold: StrictFloat | StrictInt
    success: StrictBool | None = None
    score: StrictFloat | StrictInt | None = None
    reason: StrictStr | None = None
    strict_mode: StrictBool | None = Field(None, alias="strictMode")
    evaluation_model: StrictStr | None = Field(None, alias="evaluationModel")
    error: StrictStr | None = None


class DeepEvalTestCase(BaseModel):
    model_config = _CONFIG
    name: StrictStr | None = None
    input: StrictStr = Field(min_length=1)
    actual_output: StrictStr | None = Field(None, alias="actualOutput")
    expected_output: StrictStr | None = Field(None, alias="expectedOutput")
    context: list[StrictStr] | None = None
    retrieval_context: list[StrictStr] | None = Field(None, alias="retrievalContext")
    metrics_data: list[DeepEvalMetricData] | None = Field(None, alias="metricsData")
    metadata: dict[str, Any] | None = None
    additional_metadata: dict[str, Any] | None = Field(None, alias="additionalMetadata")


class DeepEvalTestRun(BaseModel):
    model_config = _CONFIG
    test_cases: list[DeepEvalTestCase] = Field(alias="testCases")


def _document(path: Path) -> tuple[Any, int | None]:
    """The file's JSON document, and the line every field is on (1 when deepeval wrote it on one line)."""
    file = str(path)
    lines = [(n, decode_line(raw, file, n, lambda _: "<document>")) for n, raw in file_lines(path)]
    text = "\n".join(t for _, t in lines)
    if not text.strip():
        raise InputError("file is empty: expected a DeepEval test run (a JSON object with testCases)", file=file,
                         line=1, field="testCases")
    try:
        doc = json_line(text, file, 1)
    except InputError as exc:  # json_line counts columns on one line: say the line of a multi-line document
        try:
            json.loads(text)
        except json.JSONDecodeError as inner:
            raise InputError(f"malformed JSON at line {inner.lineno} column {inner.colno}: {inner.msg}", file=file,
                             line=inner.lineno, field=exc.field) from None
        raise
    content_lines = [n for n, t in lines if t.strip()]
    return doc, content_lines[0] if len(content_lines) == 1 else None


def read_deepeval_run(path: Path, run_id: str) -> ExternalRun:
    file = str(path)
    doc, line = _document(path)
    prefix = ""
    if isinstance(doc, dict) and "testRunData" in doc and "testCases" not in doc:
        doc, prefix = doc["testRunData"], "testRunData."
    if not isinstance(doc, dict):
        raise InputError(f"expected a JSON object (a DeepEval test run), got {type(doc).__name__}", file=file,
                         line=line, field="<document>")
    try:
        run = DeepEvalTestRun.model_validate(doc)
    except ValidationError as exc:
        err = validation_error(exc, file, line or 0)
        raise InputError(err.detail, file=file, line=line, field=f"{prefix}{err.field}") from None
    if not run.test_cases:
        raise InputError("the test run has no test cases", file=file, line=line, field=f"{prefix}testCases")
    known = {m.source_name for m in load_metrics(external=True).values() if m.judge_family == TOOL}
    samples, verdicts, thresholds, models = [], {}, {}, {}
    for i, case in enumerate(run.test_cases):
        at = f"{prefix}testCases[{i}]."
        scores = []
        for j, m in enumerate(case.metrics_data or []):
            scores.append(ExternalScore(source_name=m.name, score=None if m.score is None else float(m.score),
                                        field=f"{at}metricsData[{j}].score", reason=m.reason, error=m.error,
                                        evaluation_model=m.evaluation_model))
            metric = external_metric_name(TOOL, m.name)
            thresholds.setdefault(metric, float(m.threshold))
            models.setdefault(metric, m.evaluation_model)
            # verdicts on the scale tell the direction (a score off it is refused at landing, with its field)
            if m.score is not None and m.error is None and m.success is not None and SCALE[0] <= m.score <= SCALE[1]:
                verdicts.setdefault(m.name, []).append((float(m.score), float(m.threshold), m.success,
                                                        f"{at}metricsData[{j}].success"))
        hints = tuple(h for h in (case.name, (case.metadata or {}).get("question_id"),
                                  (case.additional_metadata or {}).get("question_id")) if isinstance(h, str))
        samples.append(ExternalSample(
            line=line, field_prefix=at, question=case.input, response=case.actual_output,
            reference=case.expected_output, contexts=case.retrieval_context, reference_contexts=case.context,
            question_id_hints=hints, scores=scores))
    names = dict.fromkeys(s.source_name for sample in samples for s in sample.scores)
    declarations = {n: Declaration(direction(n, verdicts.get(n, []), file, line), *SCALE,
                                   description=f"A DeepEval metric ({n}) declared with the test run {path.name}.")
                    for n in names if n not in known}
    return ExternalRun(tool=TOOL, path=path, run_id=run_id, samples=samples, declarations=declarations,
                       params={"metric_names": {external_metric_name(TOOL, n): n for n in names},
                               "thresholds": thresholds, "evaluation_models": models})


def direction(name: str, verdicts: list[tuple[float, float, bool, str]], file: str, line: int | None) -> bool:
    """Higher is better when every verdict is success = score >= threshold (BaseMetric's rule, and the default
    when the verdicts cannot tell), lower when every one is success = score <= threshold."""
    if all(ok == (score >= threshold) for score, threshold, ok, _ in verdicts):
        return True
    if all(ok == (score <= threshold) for score, threshold, ok, _ in verdicts):
        return False
    score, threshold, ok, where = next(v for v in verdicts if v[2] != (v[0] >= v[1]))
    raise InputError(f"metric {name!r}: success {ok} for score {score} and threshold {threshold} fits neither "
                     "direction of its other verdicts (score >= threshold, score <= threshold)", file=file, line=line,
                     field=where)


def ingest_deepeval(lake: Lake, path: Path, dataset: str, run_id: str | None,
                    model: str) -> list[tuple[str, str | None]]:
    run = read_deepeval_run(path, check_id(run_id, "run id") if run_id else default_run_id(path))
    return land_external_runs(lake, [run], dataset, model)


# ------------------------------------------------------------------------------------------------------- export
def export_deepeval(lake: Lake, run_id: str) -> str:
    """A run as a DeepEval test run (`.latest_run_full.json`'s shape, which deepeval's TestRun validates): one test
    case per answer (name = the question id, also in metadata), one metricsData entry per judgment: DeepEval's own
    metrics with their raw score and threshold, the others normalised to [0, 1] with threshold 0.5; success is the
    score against the threshold in the metric's direction; a failed judgment has its error and no score."""
    samples, _ = load_export(lake, run_id, TOOL)
    cases, by_metric = [], {}
    for order, s in enumerate(samples):
        data = []
        for name, v in s.scores.items():
            threshold = v["threshold"]
            score = v["score"]
            ok = score is not None and (score >= threshold if v["higher_is_better"] else score <= threshold)
            entry = {"name": name, "threshold": threshold, "success": ok, "score": score, "reason": v["reason"],
                     "strictMode": False, "evaluationModel": v["model"], "error": v["error"]}
            data.append({k: x for k, x in entry.items() if x is not None})
            tally = by_metric.setdefault(name, {"metric": name, "scores": [], "passes": 0, "fails": 0, "errors": 0})
            if v["error"] is not None or score is None:
                tally["errors"] += 1
            else:
                tally["scores"].append(score)
                tally["passes" if ok else "fails"] += 1
        case = {"name": s.question_id, "input": s.question, "actualOutput": s.response,
                "expectedOutput": s.reference, "context": s.reference_contexts, "retrievalContext": s.contexts,
                "success": all(d["success"] for d in data), "metricsData": data, "runDuration": 0.0,
                "order": order, "metadata": {"question_id": s.question_id,
                                             **({"repeat": s.repeat} if s.repeat is not None else {})}}
        cases.append({k: x for k, x in case.items() if x is not None})
    passed = sum(1 for c in cases if c["success"])
    run = {"testCases": cases, "conversationalTestCases": [], "metricsScores": list(by_metric.values()),
           "prompts": [], "testPassed": passed, "testFailed": len(cases) - passed, "runDuration": 0.0}
    return json.dumps(run, ensure_ascii=False)
