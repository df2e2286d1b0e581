"""The run vs run page's data (views/run_vs_run.py): mart_run_comparison and mart_run_pair_questions."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from dashboards.data.published import query


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
    publishes the mart; empty when the mart does not compare the pair (fct_run_pairs). stat_test says each row's
    test: paired, or unpaired (Welch) where the runs share no or too few questions (n_a, n_b: each side's)."""
    return query(home, """
        select metric, stat_test, n_questions, n_a, n_b, mean_a, mean_b, delta, ci_low, ci_high, p_ttest,
               p_randomization, p_holm, wins, ties, losses, n_not_ok_a, n_not_ok_b
        from mart_run_comparison
        where run_a = ? and run_b = ? and granularity is not distinct from ? and k is not distinct from ?
        order by metric_display_order, metric
    """, [run_a, run_b, granularity, k], marts=["mart_run_comparison"])
