"""The sweeps page's data (views/sweeps.py): mart_sweep_runs, mart_sweep_parameter_effects and
mart_sweep_run_results."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from dashboards.data.published import query


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
