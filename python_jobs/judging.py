"""Shared judging rules (not a job verb): the judged metrics' scales, read from the seed `judge_metrics` (the one
place they live), and the strict reading of a judge's reply.

Used by `finrag judge` (python_jobs/judge.py) and `finrag import-human-labels` (python_jobs/import_human_labels.py).

The reply rule (docs/judges.md): the reply must hold exactly ONE JSON object `{"score": ..., "rationale": ...}`.
Prose or a ```json code fence around it is tolerated (small models add them), two or more objects are not (which one
would be the verdict?). `score` must be a JSON number on the metric's scale (integers only for discrete metrics, any
number in [min, max] for continuous ones), or the metric's not-applicable value / the string "N/A" for metrics that
have one. Anything else is `failed` with the reason: a judgment is never guessed or clamped into a score.
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, StrictFloat, StrictInt, StrictStr, ValidationError

from .config import PROJECT_DIR

SEED = PROJECT_DIR / "seeds" / "judge_metrics.csv"
NA_STRINGS = {"n/a", "na", "not applicable", "not_applicable"}
# the answer-file guideline: only the first 300 words of an answer and the first 10 passages are judged
ANSWER_FILE_WORDS = 300
MAX_PASSAGES = 10


@dataclass(frozen=True)
class MetricSpec:
    metric: str
    family: str
    label: str
    scale_min: float
    scale_max: float
    na_value: float | None
    needs_passages: bool
    needs_numeric_reference: bool
    continuous: bool
    higher_is_better: bool
    description: str

    def allowed(self) -> str:
        if self.continuous:
            return f"a number in [{_fmt(self.scale_min)}, {_fmt(self.scale_max)}]"
        return "one of " + ", ".join(_fmt(v) for v in range(int(self.scale_min), int(self.scale_max) + 1))

    def on_scale(self, value: float) -> bool:
        if not math.isfinite(value) or not self.scale_min <= value <= self.scale_max:
            return False
        return self.continuous or float(value).is_integer()

    def normalize(self, raw: float) -> float:
        return (raw - self.scale_min) / (self.scale_max - self.scale_min)


def _fmt(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else str(v)


def _bool(text: str, where: str) -> bool:
    if text.strip().lower() not in ("true", "false"):
        raise ValueError(f"{where}: expected true/false, got {text!r}")
    return text.strip().lower() == "true"


@lru_cache(maxsize=4)
def load_metrics(path: Path = SEED) -> dict[str, MetricSpec]:
    """The seed's metrics by name, in the seed's order."""
    out: dict[str, MetricSpec] = {}
    with open(path, newline="") as fh:
        for i, r in enumerate(csv.DictReader(fh), start=2):
            where = f"{path.name} line {i}"
            spec = MetricSpec(
                metric=r["metric"], family=r["family"], label=r["label"], scale_min=float(r["scale_min"]),
                scale_max=float(r["scale_max"]), na_value=float(r["na_value"]) if r["na_value"].strip() else None,
                needs_passages=_bool(r["needs_passages"], where),
                needs_numeric_reference=_bool(r["needs_numeric_reference"], where),
                continuous=_bool(r["continuous"], where), higher_is_better=_bool(r["higher_is_better"], where),
                description=r["description"])
            if spec.scale_max <= spec.scale_min or (spec.na_value is not None
                                                    and spec.scale_min <= spec.na_value <= spec.scale_max):
                raise ValueError(f"{where}: bad scale (max must exceed min; na_value must lie off the scale)")
            out[spec.metric] = spec
    return out


# ---- reading a judge's reply ---------------------------------------------------------------------------------------
class JudgeReply(BaseModel):
    """The reply's JSON object. Extra keys are ignored; `score` is required (null is not a score)."""

    model_config = ConfigDict(extra="ignore")
    score: StrictInt | StrictFloat | StrictStr
    rationale: StrictStr | None = None


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
        return f"score {_fmt(value) if math.isfinite(value) else value} is off the {spec.metric} scale; allowed: {spec.allowed()}"
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
