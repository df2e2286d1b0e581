"""The QA generation page's data (views/qa_generation.py): mart_qa_generation_acceptance and
mart_qa_generation_inspection_agreement."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from dashboards.data.published import column_values, query


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
    return column_values(query(home, """
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
