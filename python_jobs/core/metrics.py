"""The judged metrics and their scales: the `judged` rows of the metric registry, seeds/metrics.csv.

The registry lists every metric of the warehouse once (retrieval, lexical, evidence overlap, judged); dbt reads the
same file (fct_judge_scores normalises with its scales, dim_metrics publishes it), so the judge, the human-label
import and the marts cannot disagree on a scale. Only the judged rows are read here; the judged-only columns
(judge_family, na_value, needs_passages, needs_numeric_reference, continuous) are required on them.
"""

from __future__ import annotations

import csv
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from python_jobs.core.config import PROJECT_DIR

SEED = PROJECT_DIR / "seeds" / "metrics.csv"
JUDGED = "judged"  # the registry family read here
# judge families whose scores come from another tool's files (`finrag ingest ragas|deepeval`), never from `finrag
# judge`: the seed declares the metrics of theirs the project knows, with the tool's own name in source_name
EXTERNAL_FAMILIES = ("ragas", "deepeval")


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
    source_name: str | None = None  # an external metric's name as its tool writes it

    @property
    def external(self) -> bool:
        return self.judge_family in EXTERNAL_FAMILIES

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


def external_metric_name(tool: str, source_name: str) -> str:
    """The registry name of a tool's metric: `<tool>_<its name in lower case, each run of other characters one
    underscore>` (DeepEval's `Correctness [GEval]` -> deepeval_correctness_geval, Ragas' `rouge_score(mode=fmeasure)`
    -> ragas_rouge_score_mode_fmeasure)."""
    slug = re.sub(r"[^a-z0-9]+", "_", source_name.lower()).strip("_")
    return f"{tool}_{slug}" if slug else ""


@lru_cache(maxsize=8)
def load_metrics(path: Path = SEED, external: bool = False) -> dict[str, MetricSpec]:
    """The registry's judged metrics by name, in the registry's order: the project's own (what `finrag judge` and
    human labels judge), with `external` also the Ragas and DeepEval metrics it knows."""
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
                description=r["description"], source_name=r["source_name"] or None)
            if spec.scale_max <= spec.scale_min or (spec.na_value is not None
                                                    and spec.scale_min <= spec.na_value <= spec.scale_max):
                raise ValueError(f"{where}: bad scale (max must exceed min; na_value must lie off the scale)")
            if spec.external and spec.metric != external_metric_name(spec.judge_family, spec.source_name or ""):
                raise ValueError(f"{where}: an external metric is named <tool>_<its source_name slug>: "
                                 f"{external_metric_name(spec.judge_family, spec.source_name or '')}")
            if external or not spec.external:
                out[spec.metric] = spec
    return out
