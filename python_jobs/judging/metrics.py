"""The judged metrics and their scales: the `judged` rows of the metric registry, seeds/metrics.csv.

The registry lists every metric of the warehouse once (retrieval, lexical, evidence overlap, judged); dbt reads the
same file (fct_judge_scores normalises with its scales, dim_metrics publishes it), so the judge, the human-label
import and the marts cannot disagree on a scale. Only the judged rows are read here; the judged-only columns
(judge_family, na_value, needs_passages, needs_numeric_reference, continuous) are required on them.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from python_jobs.core.config import PROJECT_DIR

SEED = PROJECT_DIR / "seeds" / "metrics.csv"
JUDGED = "judged"  # the registry family read here


# the answer-file guideline: only the first 300 words of an answer and the first 10 passages are judged
ANSWER_FILE_WORDS = 300


MAX_PASSAGES = 10


@dataclass(frozen=True)
class MetricSpec:
    metric: str
    judge_family: str  # omnieval / answer_file: whose rubric (the answer-file metrics see only 300 words)
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
            return f"a number in [{fmt_number(self.scale_min)}, {fmt_number(self.scale_max)}]"
        return "one of " + ", ".join(fmt_number(v) for v in range(int(self.scale_min), int(self.scale_max) + 1))

    def on_scale(self, value: float) -> bool:
        if not math.isfinite(value) or not self.scale_min <= value <= self.scale_max:
            return False
        return self.continuous or float(value).is_integer()

    def normalize(self, raw: float) -> float:
        return (raw - self.scale_min) / (self.scale_max - self.scale_min)


def fmt_number(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else str(v)


def _bool(text: str, where: str) -> bool:
    if text.strip().lower() not in ("true", "false"):
        raise ValueError(f"{where}: expected true/false, got {text!r}")
    return text.strip().lower() == "true"


@lru_cache(maxsize=4)
def load_metrics(path: Path = SEED) -> dict[str, MetricSpec]:
    """The registry's judged metrics by name, in the registry's order."""
    out: dict[str, MetricSpec] = {}
    with open(path, newline="") as fh:
        for i, r in enumerate(csv.DictReader(fh), start=2):
            if r["family"] != JUDGED:
                continue
            where = f"{path.name} line {i}"
            if not r["judge_family"].strip():
                raise ValueError(f"{where}: a judged metric needs its judge_family")
            spec = MetricSpec(
                metric=r["metric"], judge_family=r["judge_family"], label=r["label"], scale_min=float(r["scale_min"]),
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
