"""`finrag compare --run-a A --run-b B`: is run B better than run A? The rows of mart_run_comparison for the pair,
read from the warehouse the last `dbt build` wrote (read-only, closed at once).

Nothing is computed here: the means, the difference, the bootstrap interval and both p-values are the mart's (the
statistics are defined once, in python_jobs/warehouse/paired_tests.py, and run inside dbt). The rows come in the metric
registry's display order (dim_metrics), by granularity (the rules' order, finest first) and k. Retrieval rows are kept
at the cut-offs asked for (default k = 0, the whole ranking); lexical and judged rows have no k and are always kept.
When the pair has no rows, the error says why: an unknown run, runs of different kinds or datasets, or a pair of a group
larger than var run_comparison_max_runs that var run_comparison_pairs does not name.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from python_jobs.core.errors import InputError
from python_jobs.core.rules import GRANULARITIES
from python_jobs.warehouse.reports import query_marts

COLUMNS = ("run_a", "run_b", "run_kind", "dataset", "metric", "granularity", "k", "n_questions", "mean_a", "mean_b",
           "delta", "wins", "ties", "losses", "ci_low", "ci_high", "p_ttest", "p_randomization", "p_holm",
           "randomization_exact", "higher_is_better", "n_not_ok_a", "n_not_ok_b")
WHOLE_RANKING = 0
_KIND_NAMES = {"retrieval": "a retrieval run", "generation": "an answer run", "judge": "a judge run"}


def _runs(run_ids: Sequence[str]) -> dict[str, tuple[str, str]]:
    """run id -> (run kind, dataset) of the runs with per-question scores."""
    marks = ", ".join("?" for _ in run_ids)
    frame = query_marts(f"select distinct run_id, run_kind, dataset from fct_question_metric_scores "
                        f"where run_id in ({marks})", list(run_ids))
    return {run: (kind, dataset) for run, kind, dataset in frame.iter_rows()}


def _why_not_compared(run_a: str, run_b: str) -> str:
    if run_a == run_b:
        return "run A and run B are the same run"
    runs = _runs([run_a, run_b])
    for flag, run in (("--run-a", run_a), ("--run-b", run_b)):
        if run not in runs:
            return (f"{flag} {run!r} has no per-question scores in fct_question_metric_scores (unknown run, no "
                    "scored question, or `finrag build` not run since)")
    (kind_a, dataset_a), (kind_b, dataset_b) = runs[run_a], runs[run_b]
    if kind_a != kind_b:
        return (f"{run_a!r} is {_KIND_NAMES.get(kind_a, kind_a)} and {run_b!r} is {_KIND_NAMES.get(kind_b, kind_b)}: "
                "only runs of one kind are compared")
    if dataset_a != dataset_b:
        return f"{run_a!r} is scored on dataset {dataset_a!r} and {run_b!r} on {dataset_b!r}: no shared questions"
    shared = query_marts("select count(*) as n from (select question_id from fct_question_metric_scores "
                         "where run_id = ? intersect select question_id from fct_question_metric_scores "
                         "where run_id = ?)",
                         [run_a, run_b])["n"][0]
    if not shared:
        return f"{run_a!r} and {run_b!r} share no scored question"
    group = query_marts("select count(distinct run_id) as n from fct_question_metric_scores "
                        "where run_kind = ? and dataset = ?", [kind_a, dataset_a])["n"][0]
    return (f"the pair is not in mart_run_comparison: dataset {dataset_a!r} has {group} runs of this kind, and every "
            "pair is compared only up to var run_comparison_max_runs; name this pair in var run_comparison_pairs "
            f"(dbt_project.yml, or `finrag build --vars '{{run_comparison_pairs: [[{run_a}, {run_b}]]}}'`) and build")


def run_comparison(run_a: str, run_b: str, metrics: Sequence[str] = (), granularity: str | None = None,
                   ks: Sequence[int] = (WHOLE_RANKING,)) -> pl.DataFrame:
    """The mart's rows for (run_a, run_b), B - A, filtered by metric, granularity and (retrieval rows) k."""
    if granularity is not None and granularity not in GRANULARITIES:
        raise InputError(f"granularity {granularity!r} is not one of {', '.join(GRANULARITIES)}", field="granularity")
    select = ", ".join(f"comparison.{c}" for c in COLUMNS)
    frame = query_marts(f"""
        select {select}
        from mart_run_comparison as comparison
        left join dim_metrics using (metric)
        where comparison.run_a = ? and comparison.run_b = ?
        order by dim_metrics.display_order, comparison.metric,
                 array_position(?, comparison.granularity), comparison.k
    """, [run_a, run_b, list(GRANULARITIES)])
    if frame.is_empty():
        raise InputError(f"no comparison of {run_a!r} with {run_b!r}: {_why_not_compared(run_a, run_b)}",
                         field="run_b")
    for name, values, column in (("metric", metrics, "metric"), ("granularity", [granularity] if granularity else [],
                                                                   "granularity")):
        missing = sorted(set(values) - set(frame[column].drop_nulls()))
        if missing:
            known = ", ".join(frame[column].drop_nulls().unique(maintain_order=True))
            raise InputError(f"the pair has no {name} {', '.join(map(repr, missing))} (it has: {known})", field=name)
    if metrics:
        frame = frame.filter(pl.col("metric").is_in(list(metrics)))
    if granularity:
        frame = frame.filter(pl.col("granularity") == granularity)
    if ks:
        frame = frame.filter(pl.col("k").is_null() | pl.col("k").is_in(list(ks)))
        if frame.is_empty():
            known = sorted(set(query_marts("select distinct k from mart_run_comparison where run_a = ? and run_b = ? "
                                           "and k is not null", [run_a, run_b])["k"]))
            raise InputError(f"the pair has no rows at k = {', '.join(map(str, ks))} (its cut-offs: "
                             f"{', '.join(map(str, known))})", field="k")
    return frame
