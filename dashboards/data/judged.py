"""The judged answers page's data (views/judged.py): the answer-file scores, the judge's noise floor, its scores by
slice and its calibrated means by slice."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from dashboards.data.published import column_values, query
from python_jobs.marts.trust import SLICE_TRUST_COLUMNS


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
    return column_values(query(home, """
        select distinct dimension from mart_judge_by_slice where judge_run_id = ? order by dimension
    """, [judge_run_id], marts=["mart_judge_by_slice"]), "dimension")


def judge_calibration_by_slice(home: Path, judge_run_id: str, dimension: str) -> pl.DataFrame | None:
    """The judge run's calibrated means per stratum of the dimension and the strata combined (stratified PPI++:
    mart_judge_calibrated_by_slice), per metric it predicts and human label set; strata under 2 labels with their
    reason. Empty where no calibration makes the judge run a predictor."""
    return query(home, f"""
        select {", ".join(SLICE_TRUST_COLUMNS)}
        from mart_judge_calibrated_by_slice
        where predictor_run_id = ? and predictor_family = 'judged' and dimension = ?
        order by predictor, label_set, human_metric, grain desc, value
    """, [judge_run_id, dimension], marts=["mart_judge_calibrated_by_slice"])
