"""The warehouse's rules (python_jobs/core/rules.yml), read once: the retrieval granularities and the slice
dimensions with their display order and labels, what makes an evidence row relevant, which pages a chunk covers,
the numeric match's tolerance, which runs are oracle bounds rather than contenders, the calibration methods, and when
two runs are compared paired or unpaired.
Python uses these; dbt uses the macros generated from the same file (macros/generated/rules.sql,
python_jobs/warehouse/dbt_codegen.py); nothing spells them a second time."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from python_jobs.core.config import project_yaml

RULES_YML = Path(__file__).with_name("rules.yml")


@dataclass(frozen=True)
class Value:
    name: str
    label: str
    crosses: tuple[str, ...] = ()  # a crossing of two slice dimensions


@dataclass(frozen=True)
class CalibrationMethod:
    name: str
    label: str
    lam: float | str | None  # "estimated" (PPI++), a fixed lambda (classic PPI: 1), None (human labels only)
    columns: str  # the prefix of its columns in mart_judge_calibrated
    reported: bool = False  # what mart_judge_trust reports where the method has a mean


@dataclass(frozen=True)
class Rules:
    granularities: tuple[Value, ...]
    slice_dimensions: tuple[Value, ...]  # columns of dim_questions
    slice_crossings: tuple[Value, ...]
    min_relevance: int
    missing_page_end: str  # the column a null page_end falls back to
    numeric_tolerance: float
    oracle_conditions: tuple[str, ...]  # retrieval conditions that see the gold evidence
    oracle_eval_modes: tuple[str, ...]  # answer eval modes whose prompt held the gold evidence
    calibration_methods: tuple[CalibrationMethod, ...]
    descriptions: dict[str, str]
    # which test compares two runs (run_comparison_tests): paired when the shared questions are at least this share
    # of the smaller run's questions, else unpaired; the names the outputs give each test
    paired_min_share: float
    paired_test: str
    unpaired_test: str

    def calibration_method(self, name: str) -> CalibrationMethod:
        """A declared calibration method by name (mart_judge_trust.calibration_method's values)."""
        found = [m for m in self.calibration_methods if m.name == name]
        if not found:
            raise KeyError(f"no calibration method {name!r} in {RULES_YML.name}")
        return found[0]

    @property
    def granularity_names(self) -> tuple[str, ...]:
        return tuple(v.name for v in self.granularities)

    @property
    def slice_dimension_names(self) -> tuple[str, ...]:
        return tuple(v.name for v in self.slice_dimensions)

    def is_relevant(self, relevance: pl.Expr) -> pl.Expr:
        """A Polars predicate: the evidence row makes its unit relevant."""
        return relevance >= self.min_relevance

    def last_page(self, page_start: pl.Expr, page_end: pl.Expr) -> pl.Expr:
        """The last page a chunk covers (null: it covers none)."""
        return page_end.fill_null({"page_start": page_start}[self.missing_page_end])

    def last_page_sql(self, page_start: str, page_end: str) -> str:
        """The same as a SQL expression over two column expressions (dbt's chunk_last_page, LanceDB filters)."""
        return f"coalesce({page_end}, {dict(page_start=page_start)[self.missing_page_end]})"


def load(path: Path = RULES_YML) -> Rules:
    raw = project_yaml(path)

    def values(key: str, part: str = "values") -> tuple[Value, ...]:
        return tuple(Value(str(v["name"]), str(v["label"]), tuple(v.get("crosses", ())))
                     for v in raw[key].get(part, []))

    missing = raw["page_coverage"]["missing_page_end"]
    if missing != "page_start":
        raise ValueError(f"{path}: page_coverage.missing_page_end must be page_start, not {missing!r}")
    methods = tuple(CalibrationMethod(str(v["name"]), str(v["label"]), v.get("lambda"), str(v["columns"]),
                                      bool(v.get("reported", False))) for v in raw["calibration_methods"]["values"])
    if sum(m.reported for m in methods) != 1 or sum(m.lam is None for m in methods) != 1:
        raise ValueError(f"{path}: calibration_methods must have one `reported` method and one without lambda "
                         "(the human labels alone)")
    return Rules(
        granularities=values("granularities"),
        slice_dimensions=values("slice_dimensions"),
        slice_crossings=values("slice_dimensions", "crossings"),
        min_relevance=int(raw["relevance"]["min_relevance"]),
        missing_page_end=missing,
        numeric_tolerance=float(raw["numeric_match"]["tolerance"]),
        oracle_conditions=tuple(str(c) for c in raw["oracle_bounds"]["conditions"]),
        oracle_eval_modes=tuple(str(m) for m in raw["oracle_bounds"]["eval_modes"]),
        calibration_methods=methods,
        descriptions={key: " ".join(str(section.get("description", "")).split()) for key, section in raw.items()},
        paired_min_share=_share(raw["run_comparison_tests"]["paired_min_share"], path),
        paired_test=str(raw["run_comparison_tests"]["paired"]),
        unpaired_test=str(raw["run_comparison_tests"]["unpaired"]),
    )


def _share(value: object, path: Path) -> float:
    share = float(value)  # type: ignore[arg-type]
    if not 0 < share <= 1:
        raise ValueError(f"{path}: run_comparison_tests.paired_min_share must be in (0, 1], not {value!r}")
    return share


RULES = load()
GRANULARITIES = RULES.granularity_names
SLICE_DIMENSIONS = RULES.slice_dimension_names
SLICE_CROSSINGS = tuple(v.name for v in RULES.slice_crossings)
