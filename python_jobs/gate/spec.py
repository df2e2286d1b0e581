"""The gate file (`finrag gate GATE_FILE`), validated with pydantic; every error names the file and the field.

    dataset: financebench          # optional: the candidate (and baseline) must be runs of this dataset
    kind: retrieval                # optional: ... and of this kind (retrieval, generation, judge)
    baseline: best                 # optional when --baseline is given: a run id, best, sweep or sweep:<sweep id>
    alpha: 0.05                    # optional: default var run_comparison_alpha
    min_questions: 10              # a slice with fewer shared questions is reported, not tested
    slices: [doc_type, question_type, company]   # the rules' slice dimensions (python_jobs/core/rules.yml)
    metrics:
      - {metric: ndcg, granularity: doc, k: 10, margin: 0.02}   # retrieval: granularity and k
      - {metric: correctness, margin: 0.25}                      # margin on the metric's own scale

What only the published marts know (the metric registry, the runs) is checked in python_jobs/gate/evaluation.py,
with the same file and field names.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from python_jobs.core.errors import InputError, validation_error
from python_jobs.core.rules import SLICE_DIMENSIONS

WHOLE_SET = "all"  # the slice every gate tests: every shared question
KINDS = ("retrieval", "generation", "judge")  # fct_question_metric_scores.run_kind


class GateMetric(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    metric: str = Field(min_length=1)
    granularity: str | None = None
    k: int | None = Field(None, ge=0)
    margin: float = Field(ge=0, allow_inf_nan=False,
                          description="The largest loss that does not matter, on the metric's own scale.")


class GateFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    metrics: list[GateMetric] = Field(min_length=1)
    slices: list[str] = Field(default_factory=list)
    alpha: float | None = Field(None, gt=0, lt=1)
    min_questions: int = Field(10, ge=2)
    baseline: str | None = Field(None, min_length=1)
    dataset: str | None = Field(None, min_length=1)
    kind: Literal["retrieval", "generation", "judge"] | None = None

    @field_validator("slices")
    @classmethod
    def known_slices(cls, slices: list[str]) -> list[str]:
        for i, name in enumerate(slices):
            if name not in SLICE_DIMENSIONS:
                # pydantic names the list, not the item: raised as the item's own error by read_gate
                raise ValueError(f"slices[{i}]: unknown slice dimension {name!r}; the rules' slice dimensions: "
                                 f"{', '.join(SLICE_DIMENSIONS)}")
        if len(set(slices)) < len(slices):
            raise ValueError("slices: a dimension is named twice")
        return slices


def parse_gate(text: str, file: str) -> GateFile:
    """A gate file's text, validated; InputError naming `file` and the field."""
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise InputError(f"not valid YAML: {getattr(exc, 'problem', None) or exc}", file=file,
                         line=mark.line + 1 if mark else None) from None
    if not isinstance(raw, dict):
        raise InputError("a gate file is a mapping with at least `metrics`", file=file, field="metrics")
    try:
        return GateFile.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        message = str(err.get("ctx", {}).get("error", ""))
        if err["type"] == "value_error" and message.startswith("slices"):
            field, _, detail = message.partition(": ")
            raise InputError(detail, file=file, field=field) from None
        raise validation_error(exc, file=file) from None


def read_gate(path: str | Path) -> GateFile:
    p = Path(path)
    if not p.is_file():
        raise InputError("no such gate file", file=str(path), field="GATE_FILE")
    return parse_gate(p.read_text(encoding="utf-8"), str(path))
