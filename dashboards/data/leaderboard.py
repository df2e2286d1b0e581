"""The leaderboard page's data (views/leaderboard.py): the retrieval, generation and judge boards, each run
against its family's best, the metric-vs-k curves and evidence overlap."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import polars as pl

from dashboards.data.common import metric_names
from dashboards.data.published import column_values, in_list, query


def datasets(home: Path) -> list[str]:
    """Every dataset the last build saw (mart_datasets)."""
    return column_values(query(home, "select dataset from mart_datasets order by dataset", marts=["mart_datasets"]),
                   "dataset")


def retrieval_granularities(home: Path, datasets_: Sequence[str] | None = None) -> list[str]:
    """The granularities at which the multi-granularity retrieval metrics (MAP, nDCG, ...) have a scored run in
    these datasets, finest first (mart_retrieval_board's board granularities): a BEIR dataset has no pages, so it
    has chunk and doc only."""
    where, params = in_list("dataset", datasets_)
    return column_values(query(home, f"""
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
    where, params = in_list("dataset", datasets_)
    return query(home, f"""
        select run_id, k, mean, n_questions, metric_granularity
        from mart_retrieval_board
        where metric = ? and granularity = ? and k > 0 and {where}
        order by run_id, k
    """, [metric, granularity, *params], marts=["mart_retrieval_board"])


def board_metric_granularity(home: Path, metric: str, granularity: str) -> str | None:
    """The granularity a metric's values are at on the `granularity` board (its own for doc_rec and page_rec);
    None when no run has it there."""
    found = column_values(query(home, """
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
    family, Tukey's HSD p and tied_with_best, and whether the run is an oracle bound (never the best); in the family's
    rank order."""
    where, params = in_list("dataset", datasets_)
    return query(home, f"""
        select run_id, dataset, mean, n_questions, rank_in_family, n_runs_in_family, best_run_id, best_mean, is_best,
               is_oracle_bound, n_questions_shared, delta_vs_best, ci_low, ci_high, p_randomization, p_holm, p_tukey,
               tied_with_best
        from mart_run_vs_best
        where run_kind = ? and metric = ? and granularity is not distinct from ? and k is not distinct from ?
          and {where}
        order by dataset, rank_in_family, run_id
    """, [run_kind, metric, granularity, k, *params], marts=["mart_run_vs_best"])


def _pivot_metrics(long: pl.DataFrame, index: list[str], metrics: Sequence[str]) -> pl.DataFrame:
    """Long (index..., metric, mean) rows as one row per index with a column per metric, in the given order (a
    metric without a value is a null column): display, the values are the mart's."""
    if long.is_empty():
        return long.select(index).with_columns(pl.lit(None, pl.Float64).alias(m) for m in metrics)
    wide = long.pivot(on="metric", index=index, values="mean", aggregate_function="first")
    return wide.with_columns(pl.lit(None, pl.Float64).alias(m) for m in metrics if m not in wide.columns) \
        .select(*index, *metrics)


def retrieval_leaderboard(home: Path, k: int, granularity: str = "page",
                          datasets_: Sequence[str] | None = None) -> pl.DataFrame | None:
    """One row per retrieval run with a column per retrieval metric of the registry (in its display order), each
    metric's mean@k on the `granularity` board of mart_retrieval_board (a metric that exists at one granularity only,
    doc_rec at doc and page_rec at page, at its own)."""
    where, params = in_list("dataset", datasets_)
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
    where, params = in_list("dataset", datasets_)
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
    where, params = in_list("dataset", datasets_)
    return query(home, f"""
        select judge_run_id, answer_run_id, judge_model, answer_model, eval_mode, dataset, metric, mean, n_ok,
               n_not_applicable, n_failed, all_failed, first_error
        from mart_judge_leaderboard
        where {where}
        order by dataset, judge_run_id, metric
    """, params, marts=["mart_judge_leaderboard"])


def evidence_overlap(home: Path, datasets_: Sequence[str] | None = None) -> pl.DataFrame | None:
    """mart_retrieval_evidence_overlap long: run x k x metric (the registry's evidence_overlap family, whose mart
    column is mean_<metric>) with the mean and n_questions; k = 0 (the whole ranking) left out. The unpivot is
    display: the values are the mart's."""
    metrics = metric_names(home, "evidence_overlap")
    where, params = in_list("dataset", datasets_)
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
