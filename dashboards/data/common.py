"""What several pages read (a function one page alone reads is in that page's module): the metric registry,
granularities and slice dimensions (dim_metrics, dim_granularities, dim_slice_dimensions), run labels (dim_runs), what
each dataset holds (mart_datasets) and how far each judged mean can be trusted (mart_judge_trust)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import polars as pl

from dashboards.data.published import column_values, in_list, query
from python_jobs.marts.trust import TRUST_COLUMNS


def metric_registry(home: Path) -> pl.DataFrame | None:
    """Every metric (dim_metrics, the published seed `metrics`): family, label, direction, pass threshold, scale,
    granularities, trec_eval names, in display order."""
    return query(home, "select * from dim_metrics order by display_order", marts=["dim_metrics"])


def metric_names(home: Path, family: str) -> list[str]:
    """The registry's metrics of one family (retrieval, lexical, evidence_overlap, judged), in display order."""
    return column_values(query(home, "select metric from dim_metrics where family = ? order by display_order", [family],
                         marts=["dim_metrics"]), "metric")


def own_granularity_metrics(home: Path) -> list[tuple[str, str, str]]:
    """(metric, granularity, label) of the retrieval metrics that exist at one granularity only (the retrieval-gap
    study's DocRec at doc and PageRec at page): shown at their own granularity whatever the page's choice."""
    frame = query(home, """
        select metric, granularities[1] as granularity, label
        from dim_metrics
        where family = 'retrieval' and len(granularities) = 1
        order by display_order
    """, marts=["dim_metrics"])
    return [] if frame is None else [tuple(r) for r in frame.rows()]


def granularities(home: Path) -> list[str]:
    """Every retrieval granularity, finest first (dim_granularities)."""
    return column_values(query(home, "select granularity from dim_granularities order by display_order",
                         marts=["dim_granularities"]), "granularity")


def slice_dimensions(home: Path, question_columns_only: bool = False) -> list[str]:
    """The slice dimensions of the by-slice marts, in display order (dim_slice_dimensions); question_columns_only:
    without the crossed ones (topic_x_task), which only the retrieval slices have."""
    return column_values(query(home, """
        select dimension from dim_slice_dimensions
        where question_column or not ?
        order by display_order
    """, [question_columns_only], marts=["dim_slice_dimensions"]), "dimension")


def slice_dimension_labels(home: Path) -> dict[str, str]:
    frame = query(home, "select dimension, label from dim_slice_dimensions order by display_order",
                  marts=["dim_slice_dimensions"])
    return {} if frame is None else dict(frame.rows())


def retrieval_ks(home: Path) -> list[int]:
    return column_values(query(home, "select distinct k from mart_retrieval_board order by k",
                         marts=["mart_retrieval_board"]), "k")


def run_labels(home: Path) -> dict[str, str]:
    """run id -> a label that says what the run is (retriever, condition, k, split, embedder; an answer run's mode,
    model and retrieval run; a judge run's model and answer run): dim_runs. Empty before a build publishes it."""
    frame = query(home, "select run_id, label from dim_runs", marts=["dim_runs"])
    return {} if frame is None else dict(frame.rows())


def oracle_bounds(home: Path) -> set[str]:
    """The runs that saw the gold evidence (dim_runs.is_oracle_bound, the rules' oracle_bounds): upper bounds a
    leaderboard draws as reference lines, never contenders for its best."""
    frame = query(home, "select run_id from dim_runs where is_oracle_bound order by run_id", marts=["dim_runs"])
    return set() if frame is None else set(frame["run_id"].to_list())


def run_label(labels: dict[str, str], run_id: str) -> str:
    """How a selector shows a run: its label, then its id (ids stay visible: links and the CLI take them)."""
    label = labels.get(run_id)
    return f"{label}  ({run_id})" if label else run_id


def dataset_counts(home: Path) -> pl.DataFrame | None:
    """What the warehouse holds per dataset (mart_datasets, what `finrag ls` prints): questions and how many have
    reference answers, documents, pages, chunks, retrieval / answer / judge runs. None before a build publishes it."""
    return query(home, "select * from mart_datasets order by dataset", marts=["mart_datasets"])


def judge_trust(home: Path, judge_run_ids: Sequence[str] | None = None, metrics: Sequence[str] | None = None,
                datasets_: Sequence[str] | None = None) -> pl.DataFrame | None:
    """How far each judged mean (judge run x metric) can be trusted (mart_judge_trust): its mean and trust_state -
    calibrated (the calibrated mean of a human label set's metric, its interval, method, n labelled and unlabelled),
    uncalibrated, or no_better_than_chance (the judge's least favourable kappa against human labels, its interval
    holding 0; calibration columns may be set too). One row per calibration; an uncalibrated mean has one row.
    Filters: judge runs, metrics, datasets (none: all)."""
    runs, run_params = in_list("judge_run_id", judge_run_ids)
    metric_filter, metric_params = in_list("metric", metrics)
    where, params = in_list("dataset", datasets_)
    return query(home, f"""
        select {", ".join(TRUST_COLUMNS)}
        from mart_judge_trust
        where {runs} and {metric_filter} and {where}
        order by dataset, judge_run_id, metric, label_set nulls first, human_metric nulls first
    """, [*run_params, *metric_params, *params], marts=["mart_judge_trust"])
