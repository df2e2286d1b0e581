"""The dashboard's data: pure functions from a warehouse home (and filters) to Polars frames.

The dashboard only reads. Every function here is a `select ... from <mart> where ... order by ...` over the marts
dbt publishes under <home>/exports/marts (the files one manifest names: python_jobs/warehouse/publishing.py), the
same published state `finrag sql`, `report`, `compare` and `ls` read - no join, no aggregate, no window, no rule of
its own (a threshold, a direction, a granularity order, a list of slice dimensions) and no read of the lake: what a
page needs is a mart (models/marts/, e.g. dim_runs, mart_run_pair_questions, the drill-down marts), and
tests/unit/test_dashboard_reads_only.py parses every query here to keep it so. Pivoting a long frame into one
column per metric, in the registry's order, is display. Besides the marts, the overview reads the stored results of
the landing validations under <home>/gx (Great Expectations' own store, not the lake).

Each query runs on its own in-memory DuckDB connection that is closed at once; the warehouse file is never opened,
so the dashboard can never hold the lock `dbt build` needs. A function returns None when a mart it needs is not
published yet (the page then says why, data.diagnose).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

EXPORTS = Path("exports") / "marts"


def home_path(home: str | os.PathLike[str] | None = None) -> Path:
    raw = home if home is not None else os.environ.get("FINRAG_HOME", "warehouse")
    return Path(raw).expanduser().resolve()


def published(home: Path) -> dict[str, list[Path]] | None:
    """Published name -> its Parquet files, from the one manifest (python_jobs/warehouse/publishing.py); None when
    nothing is published or the published state is stale (publishing_problem says which)."""
    from python_jobs.warehouse.publishing import PublishError, published_tables

    try:
        return published_tables(home)
    except PublishError:
        return None


def publishing_problem(home: Path) -> str | None:
    """Why nothing can be read (nothing published, or stale: a newer build was not published), or None."""
    from python_jobs.warehouse.publishing import PublishError, read_manifest

    try:
        read_manifest(home)
    except PublishError as exc:
        return str(exc)
    return None


def landing_validations(home: Path) -> dict[str, Any]:
    """The home's stored landing validations (Great Expectations results, python_jobs/core/validation.py): counts of
    passed and failed, the latest failed ones, and whether the Data Docs index exists."""
    from python_jobs.core.config import data_docs_dir
    from python_jobs.core.validation import stored_results

    results = stored_results(home)
    failed = [r for r in results if not r["success"]]
    return {"n": len(results), "passed": len(results) - len(failed), "failed": len(failed),
            "latest_failed": [f"{r['suite']} {r['run_name']}" for r in failed[-3:]][::-1],
            "docs_index": (data_docs_dir(home) / "index.html").exists()}


def export_manifest(home: Path) -> dict[str, Any] | None:
    """The published state's manifest (build and publish times, every model with its rows and columns); None when
    nothing is published or it is stale."""
    from python_jobs.warehouse.publishing import PublishError, read_manifest

    try:
        manifest = read_manifest(home)
    except PublishError:
        return None
    return {"build_id": manifest.build_id, "built_at": manifest.built_at.isoformat(),
            "published_at": manifest.published_at.isoformat(),
            "models": [{"name": m.name, "rows": m.rows, "columns": m.columns} for m in manifest.models.values()]}


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def query(home: Path, sql: str, params: Sequence[object] | None = None,
          marts: Iterable[str] = ()) -> pl.DataFrame | None:
    """Run `sql` over views named after the marts (the Parquet files the published manifest names). None when a
    mart is not published (or the published state is stale)."""
    views: list[str] = []
    tables = published(home)
    for name in marts:
        if tables is None or name not in tables:
            return None
        paths = ", ".join(_literal(str(f)) for f in tables[name])
        views.append(f'create view "{name}" as select * from read_parquet([{paths}], union_by_name = true)')
    con = duckdb.connect(":memory:")
    try:
        for view in views:
            con.execute(view)
        return con.sql(sql, params=list(params or [])).pl()
    finally:
        con.close()


def _in_list(column: str, values: Sequence[str] | None) -> tuple[str, list[str]]:
    """A `column in (?, ...)` filter, or no filter when values is None/empty."""
    if not values:
        return "true", []
    return f"{column} in ({', '.join('?' for _ in values)})", list(values)


def _column(frame: pl.DataFrame | None, name: str) -> list[Any]:
    return [] if frame is None else frame[name].to_list()


def _pivot_metrics(long: pl.DataFrame, index: list[str], metrics: Sequence[str]) -> pl.DataFrame:
    """Long (index..., metric, mean) rows as one row per index with a column per metric, in the given order (a
    metric without a value is a null column): display, the values are the mart's."""
    if long.is_empty():
        return long.select(index).with_columns(pl.lit(None, pl.Float64).alias(m) for m in metrics)
    wide = long.pivot(on="metric", index=index, values="mean", aggregate_function="first")
    return wide.with_columns(pl.lit(None, pl.Float64).alias(m) for m in metrics if m not in wide.columns) \
        .select(*index, *metrics)


# ---------------------------------------------------------------------------------------------------- metrics

def metric_registry(home: Path) -> pl.DataFrame | None:
    """Every metric (dim_metrics, the published seed `metrics`): family, label, direction, pass threshold, scale,
    granularities, trec_eval names, in display order."""
    return query(home, "select * from dim_metrics order by display_order", marts=["dim_metrics"])


def metric_names(home: Path, family: str) -> list[str]:
    """The registry's metrics of one family (retrieval, lexical, evidence_overlap, judged), in display order."""
    return _column(query(home, "select metric from dim_metrics where family = ? order by display_order", [family],
                         marts=["dim_metrics"]), "metric")


def metric_granularities(home: Path, metric: str) -> list[str]:
    """The granularities a metric exists at (doc_rec: doc only), as the registry lists them."""
    found = _column(query(home, "select granularities from dim_metrics where metric = ?", [metric],
                          marts=["dim_metrics"]), "granularities")
    return list(found[0] or []) if found else []


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
    return _column(query(home, "select granularity from dim_granularities order by display_order",
                         marts=["dim_granularities"]), "granularity")


def slice_dimensions(home: Path, question_columns_only: bool = False) -> list[str]:
    """The slice dimensions of the by-slice marts, in display order (dim_slice_dimensions); question_columns_only:
    without the crossed ones (topic_x_task), which only the retrieval slices have."""
    return _column(query(home, """
        select dimension from dim_slice_dimensions
        where question_column or not ?
        order by display_order
    """, [question_columns_only], marts=["dim_slice_dimensions"]), "dimension")


def slice_dimension_labels(home: Path) -> dict[str, str]:
    frame = query(home, "select dimension, label from dim_slice_dimensions order by display_order",
                  marts=["dim_slice_dimensions"])
    return {} if frame is None else dict(frame.rows())


# ---------------------------------------------------------------------------------------------------- runs

def run_labels(home: Path) -> dict[str, str]:
    """run id -> a label that says what the run is (retriever, condition, k, split, embedder; an answer run's mode,
    model and retrieval run; a judge run's model and answer run): dim_runs. Empty before a build publishes it."""
    frame = query(home, "select run_id, label from dim_runs", marts=["dim_runs"])
    return {} if frame is None else dict(frame.rows())


def run_label(labels: dict[str, str], run_id: str) -> str:
    """How a selector shows a run: its label, then its id (ids stay visible: links and the CLI take them)."""
    label = labels.get(run_id)
    return f"{label}  ({run_id})" if label else run_id


def all_runs(home: Path) -> pl.DataFrame | None:
    """Every run, newest first: kind, run id, dataset, label, created_at (dim_runs; what `finrag ls` prints)."""
    return query(home, """
        select kind, run_id, dataset, label, created_at
        from dim_runs
        order by created_at desc nulls last, run_id
    """, marts=["dim_runs"])


def run_parents(home: Path) -> dict[str, list[str]]:
    """run id -> the runs it was made from (dim_runs: an answer run's retrieval run; a judge run's answer run and
    that answer run's retrieval run), so a link naming a judge run also shows the runs behind it."""
    frame = query(home, "select run_id, answer_run_id, retrieval_run_id from dim_runs", marts=["dim_runs"])
    return {} if frame is None else {run: [p for p in parents if p] for run, *parents in frame.rows()}


def with_ancestors(parents: dict[str, list[str]], runs: Iterable[str]) -> list[str]:
    """The runs and every run they were made from, in order, each once."""
    out: list[str] = []
    todo = list(runs)
    while todo:
        run = todo.pop(0)
        if run and run not in out:
            out.append(run)
            todo.extend(parents.get(run, []))
    return out


def datasets(home: Path) -> list[str]:
    """Every dataset the last build saw (mart_datasets)."""
    return _column(query(home, "select dataset from mart_datasets order by dataset", marts=["mart_datasets"]),
                   "dataset")


def dataset_counts(home: Path) -> pl.DataFrame | None:
    """What the warehouse holds per dataset (mart_datasets, what `finrag ls` prints): questions and how many have
    reference answers, documents, pages, chunks, retrieval / answer / judge runs. None before a build publishes it."""
    return query(home, "select * from mart_datasets order by dataset", marts=["mart_datasets"])


# ---------------------------------------------------------------------------------------------------- leaderboard

def retrieval_ks(home: Path) -> list[int]:
    return _column(query(home, "select distinct k from mart_retrieval_board order by k",
                         marts=["mart_retrieval_board"]), "k")


def retrieval_granularities(home: Path, datasets_: Sequence[str] | None = None) -> list[str]:
    """The granularities at which the multi-granularity retrieval metrics (MAP, nDCG, ...) have a scored run in
    these datasets, finest first (mart_retrieval_board's board granularities): a BEIR dataset has no pages, so it
    has chunk and doc only."""
    where, params = _in_list("dataset", datasets_)
    return _column(query(home, f"""
        select distinct granularity, granularity_order
        from mart_retrieval_board
        where {where}
        order by granularity_order
    """, params, marts=["mart_retrieval_board"]), "granularity")


def retrieval_metric_by_k(home: Path, metric: str, granularity: str,
                          datasets_: Sequence[str] | None = None) -> pl.DataFrame | None:
    """Each run's mean of one metric at every k the board holds (k = 0, the whole ranking, left out) on the
    `granularity` board (a one-granularity metric, doc_rec or page_rec, is at its own there): the metric-vs-k
    curves."""
    where, params = _in_list("dataset", datasets_)
    return query(home, f"""
        select run_id, k, mean, n_questions, metric_granularity
        from mart_retrieval_board
        where metric = ? and granularity = ? and k > 0 and {where}
        order by run_id, k
    """, [metric, granularity, *params], marts=["mart_retrieval_board"])


def board_metric_granularity(home: Path, metric: str, granularity: str) -> str | None:
    """The granularity a metric's values are at on the `granularity` board (its own for doc_rec and page_rec);
    None when no run has it there."""
    found = _column(query(home, """
        select distinct metric_granularity from mart_retrieval_board
        where metric = ? and granularity = ?
        order by metric_granularity
    """, [metric, granularity], marts=["mart_retrieval_board"]), "metric_granularity")
    return found[0] if found else None


def versus_best(home: Path, run_kind: str, metric: str, granularity: str | None, k: int | None,
                datasets_: Sequence[str] | None = None) -> pl.DataFrame | None:
    """mart_run_vs_best: each run of a kind (retrieval, generation, judge) against its family's best run (one
    dataset, metric, granularity, k) at any count of runs - the best run and its mean, the difference run − best over
    the questions both were scored on with its bootstrap interval, the randomization p, that p Holm-adjusted over the
    family, Tukey's HSD p and tied_with_best; in the family's rank order."""
    where, params = _in_list("dataset", datasets_)
    return query(home, f"""
        select run_id, dataset, mean, n_questions, rank_in_family, n_runs_in_family, best_run_id, best_mean, is_best,
               n_questions_shared, delta_vs_best, ci_low, ci_high, p_randomization, p_holm, p_tukey, tied_with_best
        from mart_run_vs_best
        where run_kind = ? and metric = ? and granularity is not distinct from ? and k is not distinct from ?
          and {where}
        order by dataset, rank_in_family, run_id
    """, [run_kind, metric, granularity, k, *params], marts=["mart_run_vs_best"])


def retrieval_leaderboard(home: Path, k: int, granularity: str = "page",
                          datasets_: Sequence[str] | None = None) -> pl.DataFrame | None:
    """One row per retrieval run with a column per retrieval metric of the registry (in its display order), each
    metric's mean@k on the `granularity` board of mart_retrieval_board (a metric that exists at one granularity only,
    doc_rec at doc and page_rec at page, at its own)."""
    where, params = _in_list("dataset", datasets_)
    long = query(home, f"""
        select run_id, dataset, retriever, condition, run_n_questions as n_questions, metric, mean
        from mart_retrieval_board
        where k = ? and granularity = ? and {where}
        order by dataset, condition, retriever, run_id, metric_display_order
    """, [k, granularity, *params], marts=["mart_retrieval_board"])
    if long is None:
        return None
    return _pivot_metrics(long, ["run_id", "dataset", "retriever", "condition", "n_questions"],
                          metric_names(home, "retrieval"))


def generation_leaderboard(home: Path, datasets_: Sequence[str] | None = None) -> pl.DataFrame | None:
    """One row per answer run with a column per lexical metric of the registry (mart_generation_leaderboard), then
    each metric's own count of scored answers, n_<metric> (numeric_match counts only questions with a numeric
    gold)."""
    where, params = _in_list("dataset", datasets_)
    long = query(home, f"""
        select run_id, dataset, model, eval_mode, retrieval_run_id, n_questions, n_failed, metric, mean, n
        from mart_generation_leaderboard
        where {where}
        order by dataset, eval_mode, run_id
    """, params, marts=["mart_generation_leaderboard"])
    if long is None:
        return None
    index = ["run_id", "dataset", "model", "eval_mode", "retrieval_run_id", "n_questions", "n_failed"]
    metrics = metric_names(home, "lexical")
    if long.is_empty():
        return long.select(index).with_columns(
            *(pl.lit(None, pl.Float64).alias(m) for m in metrics), *(pl.lit(None, pl.Int64).alias(f"n_{m}")
                                                                      for m in metrics))
    # one pivot of both values: mean_<metric> and n_<metric> columns; a metric without a row is a null column
    wide = long.pivot(on="metric", index=index, values=["mean", "n"], aggregate_function="first")
    wide = wide.with_columns(*(pl.lit(None, pl.Float64).alias(f"mean_{m}") for m in metrics
                               if f"mean_{m}" not in wide.columns),
                             *(pl.lit(None, pl.Int64).alias(f"n_{m}") for m in metrics if f"n_{m}" not in wide.columns))
    return wide.select(*index, *(pl.col(f"mean_{m}").alias(m) for m in metrics), *(f"n_{m}" for m in metrics))


def judge_leaderboard(home: Path, datasets_: Sequence[str] | None = None) -> pl.DataFrame | None:
    """Long: judge run x metric with mean and the ok / not applicable / failed counts, and whether every judgment
    failed with the first error (mart_judge_leaderboard)."""
    where, params = _in_list("dataset", datasets_)
    return query(home, f"""
        select judge_run_id, answer_run_id, judge_model, answer_model, eval_mode, dataset, metric, mean, n_ok,
               n_not_applicable, n_failed, all_failed, first_error
        from mart_judge_leaderboard
        where {where}
        order by dataset, judge_run_id, metric
    """, params, marts=["mart_judge_leaderboard"])


def judge_trust(home: Path, judge_run_ids: Sequence[str] | None = None, metrics: Sequence[str] | None = None,
                datasets_: Sequence[str] | None = None) -> pl.DataFrame | None:
    """How far each judged mean (judge run x metric) can be trusted (mart_judge_trust): its mean and trust_state -
    calibrated (the calibrated mean of a human label set's metric, its interval, method, n labelled and unlabelled),
    uncalibrated, or no_better_than_chance (the judge's least favourable kappa against human labels, its interval
    holding 0; calibration columns may be set too). One row per calibration; an uncalibrated mean has one row.
    Filters: judge runs, metrics, datasets (none: all)."""
    runs, run_params = _in_list("judge_run_id", judge_run_ids)
    metric_filter, metric_params = _in_list("metric", metrics)
    where, params = _in_list("dataset", datasets_)
    return query(home, f"""
        select judge_run_id, answer_run_id, judge_model, dataset, metric, mean, n_ok, n_not_applicable, n_failed,
               trust_state, label_set,
               human_metric, calibration_method, n_labelled, n_unlabelled, ppi_lambda, calibrated_mean,
               calibrated_lower, calibrated_upper, agreement_label_set, kappa, kappa_lower, kappa_upper
        from mart_judge_trust
        where {runs} and {metric_filter} and {where}
        order by dataset, judge_run_id, metric, label_set nulls first, human_metric nulls first
    """, [*run_params, *metric_params, *params], marts=["mart_judge_trust"])


def judge_reliability(home: Path, judge_run_id: str) -> pl.DataFrame | None:
    """The judge's noise floor per metric of one judge run (mart_judge_reliability): repeats, the answers judged at
    least twice, Krippendorff's alpha of the repeats at the metric's level of measurement and the share of answers
    whose repeats straddle the pass threshold."""
    return query(home, """
        select metric, level_of_measurement, n_repeats, n_answers, alpha, n_flipping, share_flipping
        from mart_judge_reliability
        where judge_run_id = ?
        order by metric
    """, [judge_run_id], marts=["mart_judge_reliability"])


def judgment_failures(home: Path, datasets_: Sequence[str] | None = None) -> pl.DataFrame | None:
    """The judge runs and metrics whose every judgment failed (mart_judge_leaderboard.all_failed: no mean to show),
    with their counts and first error."""
    where, params = _in_list("dataset", datasets_)
    return query(home, f"""
        select judge_run_id, answer_run_id, metric, n_ok, n_failed, first_error
        from mart_judge_leaderboard
        where all_failed and {where}
        order by judge_run_id, metric
    """, params, marts=["mart_judge_leaderboard"])


# ---------------------------------------------------------------------------------------------------- heatmap

def matrix_options(home: Path) -> pl.DataFrame | None:
    """Every (run, metric, granularity, k) the topic x task matrix holds."""
    return query(home, """
        select distinct run_id, run_kind, dataset, metric, granularity, k
        from mart_topic_task_matrix
        order by run_kind, run_id, metric, granularity, k
    """, marts=["mart_topic_task_matrix"])


def matrix_topic_levels(home: Path, run_id: str) -> list[int]:
    """The topic levels the matrix has cells at for one run."""
    return _column(query(home, """
        select distinct topic_level from mart_topic_task_matrix where run_id = ? order by topic_level
    """, [run_id], marts=["mart_topic_task_matrix"]), "topic_level")


def topic_task_matrix(home: Path, run_id: str, metric: str, granularity: str | None, k: int | None,
                      topic_level: int) -> pl.DataFrame | None:
    return query(home, """
        select topic, coalesce(topic_en, topic) as topic_label, task, mean, n
        from mart_topic_task_matrix
        where run_id = ? and metric = ? and granularity is not distinct from ? and k is not distinct from ?
          and topic_level = ?
        order by topic, task
    """, [run_id, metric, granularity, k, topic_level], marts=["mart_topic_task_matrix"])


# ---------------------------------------------------------------------------------------------------- slices

def retrieval_runs(home: Path) -> pl.DataFrame | None:
    return query(home, """
        select run_id, dataset, retriever, condition from dim_runs
        where kind = 'retrieval'
        order by dataset, condition, retriever, run_id
    """, marts=["dim_runs"])


def retrieval_slices(home: Path, run_id: str, dimension: str, metric: str, granularity: str,
                     k: int) -> pl.DataFrame | None:
    """The run's means by slice value, and beside them its Oracle-Doc / Oracle-Page counterparts' means on the same
    slice (mart_retrieval_slices_with_oracle: the counterparts mart_oracle_gap pairs with the run)."""
    return query(home, """
        select dimension_value as value, mean, n_questions, oracle_doc_mean, oracle_page_mean
        from mart_retrieval_slices_with_oracle
        where run_id = ? and dimension = ? and metric = ? and granularity = ? and k = ?
        order by dimension_value
    """, [run_id, dimension, metric, granularity, k], marts=["mart_retrieval_slices_with_oracle"])


def runs_with_oracle_counterparts(home: Path) -> list[str]:
    """Full-corpus runs that mart_oracle_gap pairs with an Oracle-Doc or Oracle-Page run."""
    return _column(query(home, """
        select distinct run_id from mart_oracle_gap
        where oracle_doc_run_id is not null or oracle_page_run_id is not null
        order by run_id
    """, marts=["mart_oracle_gap"]), "run_id")


def oracle_gap(home: Path, run_id: str, metric: str, granularity: str, k: int) -> pl.DataFrame | None:
    return query(home, """
        select run_id, mean, oracle_doc_run_id, oracle_doc_mean, oracle_doc_gap,
               oracle_page_run_id, oracle_page_mean, oracle_page_gap
        from mart_oracle_gap
        where run_id = ? and metric = ? and granularity = ? and k = ?
    """, [run_id, metric, granularity, k], marts=["mart_oracle_gap"])


def generation_runs(home: Path) -> pl.DataFrame | None:
    return query(home, """
        select run_id, dataset, model, eval_mode from dim_runs
        where kind = 'answer'
        order by dataset, eval_mode, run_id
    """, marts=["dim_runs"])


def generation_slices(home: Path, run_id: str, dimension: str, metric: str) -> pl.DataFrame | None:
    return query(home, """
        select value, mean, n
        from mart_generation_by_slice
        where run_id = ? and dimension = ? and metric = ?
        order by value
    """, [run_id, dimension, metric], marts=["mart_generation_by_slice"])


# ---------------------------------------------------------------------------------------------------- run vs run

def compared_pairs(home: Path) -> pl.DataFrame | None:
    """Every (run A, run B, metric, granularity, k) mart_run_comparison compares (each pair in both orders), with
    both runs' kind and dataset, in the registry's metric order."""
    return query(home, """
        select run_a, run_b, run_kind, dataset, metric, granularity, k
        from mart_run_comparison
        order by run_kind, run_a, run_b, metric_display_order, granularity, k
    """, marts=["mart_run_comparison"])


def run_vs_run(home: Path, run_a: str, run_b: str, metric: str, granularity: str | None,
               k: int | None) -> pl.DataFrame | None:
    """mart_run_pair_questions' rows of one pair and metric: per question both runs scored, value_a, value_b, diff
    (b − a), B's outcome in the metric's direction (win / loss / tie), whether each run passes the metric's pass
    threshold in its direction (passes_a, passes_b), flipped and passes_in ('a only' / 'b only'), and the
    question's text. Flips first, then by |diff|."""
    return query(home, """
        select question_id, question, value_a, value_b, diff, outcome, passes_a, passes_b, flipped, passes_in,
               pass_threshold, higher_is_better, dataset
        from mart_run_pair_questions
        where run_a = ? and run_b = ? and metric = ? and granularity is not distinct from ?
            and k is not distinct from ?
        order by flipped desc, abs(diff) desc, question_id
    """, [run_a, run_b, metric, granularity, k], marts=["mart_run_pair_questions"])


def run_comparison(home: Path, run_a: str, run_b: str, granularity: str | None,
                   k: int | None) -> pl.DataFrame | None:
    """mart_run_comparison's rows for (run_a, run_b): every metric of the pair at this granularity and k (retrieval)
    or the lexical / judged metrics (no granularity), in the registry's display order. None before a build
    publishes the mart; empty when the mart does not compare the pair (int_run_pairs)."""
    return query(home, """
        select metric, n_questions, mean_a, mean_b, delta, ci_low, ci_high, p_ttest, p_randomization, p_holm, wins,
               ties, losses, n_not_ok_a, n_not_ok_b
        from mart_run_comparison
        where run_a = ? and run_b = ? and granularity is not distinct from ? and k is not distinct from ?
        order by metric_display_order, metric
    """, [run_a, run_b, granularity, k], marts=["mart_run_comparison"])


# ---------------------------------------------------------------------------------------------------- judge agreement

def judge_agreement(home: Path) -> pl.DataFrame | None:
    """mart_judge_agreement: n, accuracy, Cohen's kappa and its interval per grain (judge run, judge model, judge
    model overall) x label set x metric; by label set, metric and judge run."""
    return query(home, """
        select * from mart_judge_agreement
        order by label_set, metric, judge_run_id nulls last, grain, judge_model, answer_model, eval_mode
    """, marts=["mart_judge_agreement"])


AGREEMENT_KEYS = ("grain", "judge_run_id", "label_set", "metric", "judge_model", "rubric", "answer_model", "eval_mode")


def judge_confusion(home: Path, agreement_row: dict[str, Any]) -> pl.DataFrame | None:
    """The confusion counts (judge_class x human_class) of one mart_judge_agreement row: mart_judge_confusion's
    matrix with the same grain and keys (counted from the same pairs, so it sums to the row's n)."""
    where = " and ".join(f"{key} is not distinct from ?" for key in AGREEMENT_KEYS)
    return query(home, f"""
        select judge_class, human_class, n
        from mart_judge_confusion
        where {where}
        order by judge_class_order, human_class_order
    """, [agreement_row[key] for key in AGREEMENT_KEYS], marts=["mart_judge_confusion"])


def judge_disagreements(home: Path, judge_run_id: str, metric: str, label_set: str) -> pl.DataFrame | None:
    """The questions where one judge run's class differs from the human label's (mart_judge_disagreements): question,
    judge and human class and raw scores, the dataset and answer run (for the drill-down), the question's text."""
    return query(home, """
        select question_id, dataset, answer_run_id, judge_class, human_class, judge_raw_score, human_raw_score,
               human_label, question
        from mart_judge_disagreements
        where judge_run_id = ? and metric = ? and label_set = ?
        order by question_id
    """, [judge_run_id, metric, label_set], marts=["mart_judge_disagreements"])


def human_label_leaderboard(home: Path) -> pl.DataFrame | None:
    """Human labels as a rater (mart_human_label_leaderboard): per label set, answer run and metric, each label's
    count and share, and the run's mean normalised label score."""
    return query(home, """
        select label_set, answer_run_id, answer_model, eval_mode, metric, label, raw_score, n, n_labelled, share,
               mean
        from mart_human_label_leaderboard
        order by label_set, metric, mean desc, answer_run_id, raw_score desc
    """, marts=["mart_human_label_leaderboard"])


def human_label_by_slice(home: Path, label_set: str, metric: str, dimension: str) -> pl.DataFrame | None:
    """mart_human_label_by_slice's rows of one label set, metric and slice dimension."""
    return query(home, """
        select answer_run_id, value, label, raw_score, n, n_labelled, share, mean
        from mart_human_label_by_slice
        where label_set = ? and metric = ? and dimension = ?
        order by answer_run_id, value, raw_score desc
    """, [label_set, metric, dimension], marts=["mart_human_label_by_slice"])


# ---------------------------------------------------------------------------------------------------- drill-down

def questions(home: Path, dataset: str | None = None) -> pl.DataFrame | None:
    """Every question with its attributes and has_evidence (the qrels have gold for it: retrieval metrics score it;
    a BEIR dataset's queries outside the qrels have none): mart_drilldown_questions."""
    return query(home, """
        select question_id, dataset, question, reference_answers, question_type, doc_type, task, topic_l1, topic_l2,
               company, has_evidence
        from mart_drilldown_questions
        where ? is null or dataset = ?
        order by question_id
    """, [dataset, dataset], marts=["mart_drilldown_questions"])


def gold_evidence(home: Path, dataset: str, question_id: str) -> pl.DataFrame | None:
    # question ids are unique within a dataset only (TREC topic ids repeat across collections)
    return query(home, """
        select doc_id, page_number, chunk_id, relevance, evidence_text
        from fct_evidence where dataset = ? and question_id = ?
        order by evidence_ordinal
    """, [dataset, question_id], marts=["fct_evidence"])


def retrieved_chunks(home: Path, dataset: str, question_id: str) -> pl.DataFrame | None:
    """Every retrieval run's shown results for the question (mart_drilldown_results): the chunk and its full text,
    the hit marks the metrics use (never re-decided here: chunk_hit, page_hit, doc_hit and each unit's rank) and
    in_prompt (an answer run over this retrieval run put the chunk into the question's prompt)."""
    return query(home, """
        select run_id, rank, result_position, chunk_id, doc_id, page_start, page_end, score, chunk_hit,
               chunk_relevance, page_hit, doc_hit, chunk_rank, page_rank, doc_rank, in_prompt, text
        from mart_drilldown_results
        where dataset = ? and question_id = ?
        order by run_id, result_position
    """, [dataset, question_id], marts=["mart_drilldown_results"])


def first_gold_ranks(home: Path, dataset: str, question_id: str) -> pl.DataFrame | None:
    """Per retrieval run with results shown for the question (mart_drilldown_first_gold_ranks): the rank of the
    first gold unit at chunk, page and document granularity in the run's whole ranking (the rank RR is computed
    from; null: none retrieved, or the question is not judged at that granularity), then the hits among the results
    shown and the results shown."""
    return query(home, """
        select run_id, first_gold_chunk, first_gold_page, first_gold_doc, hits, results
        from mart_drilldown_first_gold_ranks
        where dataset = ? and question_id = ?
        order by run_id
    """, [dataset, question_id], marts=["mart_drilldown_first_gold_ranks"])


def prompt_chunks(home: Path, dataset: str, question_id: str) -> pl.DataFrame | None:
    """The chunks each RAG answer run put into the question's prompt (mart_drilldown_prompt_chunks, in prompt
    order): answer run, its retrieval run, chunk id, position in the prompt (1-based)."""
    return query(home, """
        select answer_run_id, retrieval_run_id, chunk_id, prompt_position
        from mart_drilldown_prompt_chunks
        where dataset = ? and question_id = ?
        order by answer_run_id, prompt_position
    """, [dataset, question_id], marts=["mart_drilldown_prompt_chunks"])


def answers(home: Path, dataset: str, question_id: str) -> pl.DataFrame | None:
    """Every answer run's answer to the question (mart_drilldown_answers: the full text, or its error) with the run's
    model, mode and retrieval run and its lexical scores, one column per lexical metric of the registry."""
    return query(home, """
        select * exclude (question_id, dataset)
        from mart_drilldown_answers
        where dataset = ? and question_id = ?
        order by run_id
    """, [dataset, question_id], marts=["mart_drilldown_answers"])


def judge_verdicts(home: Path, dataset: str, question_id: str) -> pl.DataFrame | None:
    """Every judgment of the question's answers (fct_judge_scores): judge run, answer run, metric, repeat (a judge run
    with repeated judgments has a row per repeat), status (ok / not_applicable / failed), raw and normalised score,
    the judge's rationale and, when it failed, the error; in the registry's metric order, then by repeat."""
    return query(home, """
        select answer_run_id, judge_run_id, judge_model, metric, repeat, status, raw_score, normalized_score,
            rationale, error
        from fct_judge_scores
        where dataset = ? and question_id = ?
        order by answer_run_id, judge_run_id, metric_display_order, metric, repeat
    """, [dataset, question_id], marts=["fct_judge_scores"])


# ---------------------------------------------------------------------------------------------------- costs

def llm_costs(home: Path) -> pl.DataFrame | None:
    """mart_llm_costs: per job run x purpose x model, calls, failures, retries, tokens, latency p50 / p95 and cost,
    newest job first."""
    return query(home, """
        select * from mart_llm_costs order by last_call_at desc, job_run_id, purpose, model
    """, marts=["mart_llm_costs"])


# ---------------------------------------------------------------------------------------------------- more marts

def evidence_overlap(home: Path, datasets_: Sequence[str] | None = None) -> pl.DataFrame | None:
    """mart_retrieval_evidence_overlap long: run x k x metric (the registry's evidence_overlap family, whose mart
    column is mean_<metric>) with the mean and n_questions; k = 0 (the whole ranking) left out. The unpivot is
    display: the values are the mart's."""
    metrics = metric_names(home, "evidence_overlap")
    where, params = _in_list("dataset", datasets_)
    wide = query(home, f"""
        select * from mart_retrieval_evidence_overlap where k > 0 and {where}
        order by run_id, k
    """, params, marts=["mart_retrieval_evidence_overlap"])
    if wide is None:
        return None
    present = [m for m in metrics if f"mean_{m}" in wide.columns]
    return wide.unpivot(index=["run_id", "dataset", "retriever", "condition", "k", "n_questions"],
                        on=[f"mean_{m}" for m in present], variable_name="metric", value_name="mean") \
        .with_columns(pl.col("metric").str.strip_prefix("mean_"))


def qa_generation_runs(home: Path) -> pl.DataFrame | None:
    """Every QA-generation run with its dataset and attempts (mart_qa_generation_acceptance's overall row)."""
    return query(home, """
        select generation_run_id, dataset, n_attempts
        from mart_qa_generation_acceptance
        where topic_level = 0 and task = 'all'
        order by generation_run_id
    """, marts=["mart_qa_generation_acceptance"])


def qa_topic_levels(home: Path, generation_run_id: str) -> list[int]:
    """The topic levels a QA-generation run has cells at (level 0, the overall row, left out)."""
    return _column(query(home, """
        select distinct topic_level from mart_qa_generation_acceptance
        where generation_run_id = ? and topic_level > 0
        order by topic_level
    """, [generation_run_id], marts=["mart_qa_generation_acceptance"]), "topic_level")


def qa_acceptance(home: Path, generation_run_id: str, topic_level: int) -> pl.DataFrame | None:
    """mart_qa_generation_acceptance's cells of one QA-generation run at one topic level (task 'all' left out)."""
    return query(home, """
        select topic, coalesce(topic_en, topic) as topic_label, task, n_attempts, n_failed, n_generated, n_kept,
               n_dropped, acceptance_ratio, n_human_inspected, human_acceptance_ratio
        from mart_qa_generation_acceptance
        where generation_run_id = ? and topic_level = ? and task <> 'all'
        order by topic, task
    """, [generation_run_id, topic_level], marts=["mart_qa_generation_acceptance"])


def inspection_agreement(home: Path) -> pl.DataFrame | None:
    return query(home, "select * from mart_qa_generation_inspection_agreement order by generation_run_id, task",
                 marts=["mart_qa_generation_inspection_agreement"])


def answer_file_leaderboard(home: Path) -> pl.DataFrame | None:
    return query(home, "select * from mart_answer_file_leaderboard order by dataset, judge_run_id",
                 marts=["mart_answer_file_leaderboard"])


def answer_file_scores(home: Path, judge_run_id: str) -> pl.DataFrame | None:
    return query(home, """
        select question_id, dataset, answer_run_id, correctness_status, correctness, faithfulness_status,
               faithfulness, combined_score
        from mart_answer_file_scores where judge_run_id = ?
        order by combined_score nulls first, correctness nulls first, question_id
    """, [judge_run_id], marts=["mart_answer_file_scores"])


def judge_by_slice(home: Path, judge_run_id: str, dimension: str) -> pl.DataFrame | None:
    return query(home, """
        select metric, value, mean, mean_raw, n
        from mart_judge_by_slice where judge_run_id = ? and dimension = ?
        order by metric, value
    """, [judge_run_id, dimension], marts=["mart_judge_by_slice"])


def judge_slice_dimensions(home: Path, judge_run_id: str) -> list[str]:
    return _column(query(home, """
        select distinct dimension from mart_judge_by_slice where judge_run_id = ? order by dimension
    """, [judge_run_id], marts=["mart_judge_by_slice"]), "dimension")


# ---------------------------------------------------------------------------------------------------- sweeps

def sweeps(home: Path) -> pl.DataFrame | None:
    """Every sweep with scored runs (mart_sweep_runs): sweep id, dataset, kind (retrieval or answer)."""
    return query(home, """
        select distinct sweep_id, dataset, kind from mart_sweep_runs order by dataset, sweep_id
    """, marts=["mart_sweep_runs"])


def sweep_metrics(home: Path, sweep_id: str) -> pl.DataFrame | None:
    """The (metric, granularity, k) a sweep's runs are scored on (mart_sweep_runs; granularity and k null for an
    answer sweep's lexical metrics)."""
    return query(home, """
        select distinct metric, granularity, k from mart_sweep_runs where sweep_id = ?
        order by metric, granularity, k
    """, [sweep_id], marts=["mart_sweep_runs"])


def sweep_parameter_effects(home: Path, sweep_id: str, metric: str, granularity: str | None,
                            k: int | None) -> pl.DataFrame | None:
    """mart_sweep_parameter_effects of one sweep and metric: per parameter and value, the mean over the sweep's runs
    with that value with its t-interval, n_runs, whether it is the parameter's best value, its distance to it and
    the parameter's spread; values in the grid's order."""
    return query(home, """
        select parameter, value, value_order, n_runs, mean, std_dev, ci_low, ci_high, min_mean, max_mean,
               is_best_value, delta_vs_best, parameter_spread
        from mart_sweep_parameter_effects
        where sweep_id = ? and metric = ? and granularity is not distinct from ? and k is not distinct from ?
        order by parameter, value_order
    """, [sweep_id, metric, granularity, k], marts=["mart_sweep_parameter_effects"])


def sweep_run_results(home: Path, sweep_id: str, metric: str, granularity: str | None,
                      k: int | None) -> pl.DataFrame | None:
    """mart_sweep_run_results of one sweep and metric: each run's setting and mean, whether it is the sweep's best and
    its baseline, and its comparison with its family's best run (which may be outside the sweep: interval, p_holm,
    p_tukey, tied_with_best) and with the sweep's baseline; in the family's rank order."""
    return query(home, """
        select run_id, setting, is_baseline, mean, n_questions, is_best_in_sweep, rank_in_family, n_runs_in_family,
               best_run_id, best_mean, is_best, delta_vs_best, ci_low, ci_high, p_randomization, p_holm, p_tukey,
               tied_with_best, baseline_run_id, delta_vs_baseline, baseline_ci_low, baseline_ci_high, baseline_p_holm
        from mart_sweep_run_results
        where sweep_id = ? and metric = ? and granularity is not distinct from ? and k is not distinct from ?
        order by rank_in_family nulls last, setting, run_id
    """, [sweep_id, metric, granularity, k], marts=["mart_sweep_run_results"])


# ---------------------------------------------------------------------------------------------------- empty states

def _unpublished(home: Path) -> tuple[str, str]:
    """Why nothing can be read: no build has published anything, the published state is stale (a newer build was
    not published), or it was published by a build older than the marts the dashboard reads."""
    from python_jobs.warehouse.publishing import PublishError, read_manifest

    problem = publishing_problem(home)
    if problem is None:
        return ("the published marts are from an older version of the project (mart_datasets is not among them)",
                "finrag build --all")
    try:
        read_manifest(home, check_current=False)
    except PublishError:
        return ("nothing is published in this home yet: no build has run (has anything been ingested?)",
                "finrag ingest financebench --questions Q.jsonl --documents D.jsonl --pdfs DIR  then  finrag build  "
                "(or `finrag demo`)")
    return problem, "finrag publish"


def diagnose(home: Path, what: str, datasets_: Sequence[str] | None = None) -> tuple[str, str]:
    """Why a page (section) has nothing to show, found in the published marts, and the command that fixes it:
    (reason, command). `what`: retrieval, page (page-level metrics), generation, judged, agreement, comparison,
    costs, qa_generation, sweeps, or anything else (only the home-wide causes)."""
    found = dataset_counts(home)
    if found is None:
        return _unpublished(home)
    if found.is_empty():
        return ("nothing is ingested in this home (the last build saw no dataset)",
                "finrag ingest financebench --questions Q.jsonl --documents D.jsonl --pdfs DIR  then  finrag build  "
                "(or `finrag demo`)")
    scope = found.filter(pl.col("dataset").is_in(list(datasets_))) if datasets_ else found
    names = ", ".join(scope["dataset"]) or "these datasets"
    first = scope["dataset"][0] if scope.height else "DATASET"

    def none_with(column: str) -> bool:
        return scope.filter(pl.col(column) > 0).is_empty()

    if what == "page":
        without = scope.filter(pl.col("n_pages") == 0)["dataset"].to_list()
        if without:
            return (f"{', '.join(without)} has no pages (a BEIR / TREC corpus has documents only): page-level "
                    "metrics (PageRec, page granularity) do not exist for it; pick chunk or doc",
                    "finrag ingest financebench … --pdfs DIR  (a corpus with PDF pages)")
    if what in ("retrieval", "page") and none_with("n_retrieval_runs"):
        if none_with("n_chunks") and not none_with("n_documents"):
            return (f"{names} has documents but no chunks to retrieve from",
                    f"finrag chunk --dataset {first} && finrag retrieve --retriever bm25 --dataset {first}")
        return f"no retrieval run on {names}", f"finrag retrieve --retriever bm25 --dataset {first} --k 10"
    if what == "generation":
        if none_with("n_answer_runs"):
            return (f"no answer run on {names}",
                    f"finrag answer --closed-book --dataset {first}  (or --retrieval-run RUN for RAG)")
        no_reference = scope.filter((pl.col("n_answer_runs") > 0) & (pl.col("n_with_reference") == 0))
        if no_reference.height:
            return (f"the questions of {', '.join(no_reference['dataset'])} have no reference answers, so no "
                    "lexical metric can score their answers (judged metrics can)",
                    "finrag judge --answer-run RUN --metrics correctness  (or ingest questions with answers)")
    if what in ("judged", "agreement"):
        if none_with("n_answer_runs"):
            return (f"no answer run on {names}, so nothing to judge",
                    f"finrag answer --closed-book --dataset {first}  then  finrag judge --answer-run RUN")
        if none_with("n_judge_runs"):
            return (f"no judge run on the answers of {names}",
                    "finrag judge --answer-run RUN --metrics correctness")
        failures = judgment_failures(home, datasets_)
        if failures is not None and failures.height:
            f = failures.row(0, named=True)
            return (f"every {f['metric']} judgment of {f['judge_run_id']} failed ({f['n_failed']}; first error: "
                    f"{(f['first_error'] or '?')[:160]})",
                    f"finrag judge --answer-run {f['answer_run_id']} --metrics {f['metric']}  (once the endpoint "
                    "answers; failed judgments are retried)")
        if what == "agreement":
            return ("no judge run judged an answer run that has human labels",
                    "finrag import-human-labels FILE && finrag judge --answer-run LABELLED_RUN")
    if what == "comparison":
        comparable = scope.filter((pl.col("n_retrieval_runs") > 1) | (pl.col("n_answer_runs") > 1)
                                  | (pl.col("n_judge_runs") > 1))
        if comparable.is_empty():
            return (f"no dataset of {names} has two runs of one kind to compare",
                    f"finrag retrieve --retriever dense --dataset {first}  (a second run beside an existing one)")
    if what == "costs":
        costs = llm_costs(home)
        if costs is None or costs.is_empty():
            return ("no LLM call is in the ledger (no answer, judge, HyDE or QA-generation run yet)",
                    f"finrag answer --closed-book --dataset {first}")
    if what == "qa_generation":
        runs = qa_generation_runs(home)
        if runs is None or runs.is_empty():
            return ("no QA-generation run", f"finrag generate-qa --dataset {first}")
    if what == "sweeps":
        found_sweeps = sweeps(home)
        if found_sweeps is None or found_sweeps.is_empty():
            return ("no sweep has scored runs (a sweep runs a grid of configurations: python_jobs/sweeps/grid.py)",
                    "finrag sweep GRID.yaml  then  finrag build")
    manifest = export_manifest(home)
    built = f" (built {manifest['built_at'][:19]})" if manifest else ""
    return (f"the published marts{built} hold nothing for this selection: anything landed since needs a build",
            "finrag build")
