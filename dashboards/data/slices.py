"""The slices page's data (views/slices.py): retrieval and answer runs' means by slice, with the Oracle-Doc /
Oracle-Page counterparts."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from dashboards.data.published import column_values, query


def metric_granularities(home: Path, metric: str) -> list[str]:
    """The granularities a metric exists at (doc_rec: doc only), as the registry lists them."""
    found = column_values(query(home, "select granularities from dim_metrics where metric = ?", [metric],
                          marts=["dim_metrics"]), "granularities")
    return list(found[0] or []) if found else []


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
    return column_values(query(home, """
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
