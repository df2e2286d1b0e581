"""The strict reading of a judge's reply (`finrag judge`, `finrag import-human-labels`).

The reply rule (docs/judges.md): the reply must hold exactly ONE JSON object `{"score": ..., "rationale": ...}`.
Prose or a ```json code fence around it is tolerated (small models add them), two or more objects are not (which one
would be the verdict?). `score` must be a JSON number on the metric's scale (integers only for discrete metrics, any
number in [min, max] for continuous ones), or the metric's not-applicable value / the string "N/A" for metrics that
have one. Anything else is `failed` with the reason: a judgment is never guessed or clamped into a score."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from pydantic import (
    BaseModel,
    ConfigDict,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
)

from python_jobs.core.metrics import MetricSpec, fmt_number

NA_STRINGS = {"n/a", "na", "not applicable", "not_applicable"}


# ---- reading a judge's reply ---------------------------------------------------------------------------------------
class JudgeReply(BaseModel):
    """The reply's JSON object. Extra keys are ignored; `score` is required (null is not a score)."""

    model_config = ConfigDict(extra="ignore")
    score: StrictInt | StrictFloat | StrictStr
    rationale: StrictStr | None = None


# The rationale in the reply schema: "a few words" (the rubrics), bounded so that under constrained decoding the
# object closes within the judge's --max-tokens whatever the model writes. It is printable ASCII without quotes or
# backslashes, so each character is at most one token (a run of digits is one token a digit), and its length leaves
# FRAME_TOKENS for the rest of the object (`{"score": -0.5, "rationale": "` and `"}`).
RATIONALE_MAX_CHARS = 200
RATIONALE_PATTERN = r"^[ !#-\[\]-~]*$"
FRAME_TOKENS = 24


def reply_schema(spec: MetricSpec, max_tokens: int = 128) -> dict:
    """The reply object above as a JSON schema for one metric and completion budget: `score` an integer (a number for
    continuous metrics) within the registry's scale, or the metric's not-applicable value; `rationale` bounded to fit
    `max_tokens`; nothing else. Endpoints with structured output (the embedded server's constrained decoding, OpenAI,
    vLLM) answer in it; the strict reading below applies all the same (an endpoint may ignore the schema)."""
    def num(v: float) -> int | float:
        return int(v) if float(v).is_integer() else v

    score: dict = {"type": "number" if spec.continuous else "integer",
                   "minimum": num(spec.scale_min), "maximum": num(spec.scale_max)}
    if spec.na_value is not None:
        score = {"anyOf": [score, {"const": num(spec.na_value)}]}
    rationale = {"type": "string", "maxLength": max(0, min(RATIONALE_MAX_CHARS, max_tokens - FRAME_TOKENS)),
                 "pattern": RATIONALE_PATTERN}
    return {"type": "object", "properties": {"score": score, "rationale": rationale},
            "required": ["score", "rationale"], "additionalProperties": False}


def reply_format(spec: MetricSpec, max_tokens: int = 128) -> dict:
    """The response_format a judge request of this metric and completion budget carries."""
    return {"type": "json_schema", "json_schema": {"name": "judge_verdict", "schema": reply_schema(spec, max_tokens)}}


@dataclass(frozen=True)
class Verdict:
    status: str  # ok / not_applicable / failed
    raw_score: float | None
    rationale: str | None
    error: str | None


def json_objects(text: str) -> list[dict]:
    """Every top-level JSON object in `text` (prose and code fences around them skipped)."""
    decoder = json.JSONDecoder()
    found: list[dict] = []
    i = text.find("{")
    while i != -1:
        try:
            obj, end = decoder.raw_decode(text, i)
        except json.JSONDecodeError:
            i = text.find("{", i + 1)
            continue
        if isinstance(obj, dict):
            found.append(obj)
        i = text.find("{", end)
    return found


def check_score(score: object, spec: MetricSpec) -> Verdict | str:
    """A score as given (number or N/A string) → ok / not_applicable Verdict (rationale unset), or the reason it fails.
    Shared by the judge's replies and human labels, so both obey one scale rule."""
    if isinstance(score, str):
        if score.strip().lower() in NA_STRINGS:
            if spec.na_value is None:
                return f"{spec.metric} has no not-applicable value (score {score!r}); allowed: {spec.allowed()}"
            return Verdict("not_applicable", spec.na_value, None, None)
        return f"score must be a number, got the string {score!r}"
    if isinstance(score, bool) or not isinstance(score, (int, float)):
        return f"score must be a number, got {type(score).__name__}"
    value = float(score)
    if spec.na_value is not None and value == spec.na_value:
        return Verdict("not_applicable", spec.na_value, None, None)
    if not spec.on_scale(value):
        return (f"score {fmt_number(value) if math.isfinite(value) else value} is off the {spec.metric} scale; "
                f"allowed: {spec.allowed()}")
    return Verdict("ok", value, None, None)


def parse_reply(text: str | None, spec: MetricSpec) -> Verdict:
    if text is None or not text.strip():
        return Verdict("failed", None, None, "empty reply")
    objects = json_objects(text)
    if not objects:
        return Verdict("failed", None, None, f"no JSON object in the reply: {text.strip()[:160]!r}")
    if len(objects) > 1:
        return Verdict("failed", None, None, f"{len(objects)} JSON objects in the reply (exactly one expected)")
    try:
        reply = JudgeReply.model_validate(objects[0])
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(x) for x in err["loc"][:1]) or "reply"
        return Verdict("failed", None, None, f"field {field!r}: {err['msg']}")
    checked = check_score(reply.score, spec)
    if isinstance(checked, str):
        return Verdict("failed", None, reply.rationale, checked)
    return Verdict(checked.status, checked.raw_score, reply.rationale, None)
