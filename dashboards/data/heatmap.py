"""The topic x task page's data (views/heatmap.py): mart_topic_task_matrix."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from dashboards.data.published import column_values, query


def matrix_options(home: Path) -> pl.DataFrame | None:
    """Every (run, metric, granularity, k) the topic x task matrix holds."""
    return query(home, """
        select distinct run_id, run_kind, dataset, metric, granularity, k
        from mart_topic_task_matrix
        order by run_kind, run_id, metric, granularity, k
    """, marts=["mart_topic_task_matrix"])


def matrix_topic_levels(home: Path, run_id: str) -> list[int]:
    """The topic levels the matrix has cells at for one run."""
    return column_values(query(home, """
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
