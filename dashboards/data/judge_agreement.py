"""The judge agreement page's data (views/judge_agreement.py): a judge's labels against human labels, and
human labels as a rater."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from dashboards.data.published import query


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
