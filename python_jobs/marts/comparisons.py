"""`finrag compare --run-a A --run-b B`: is run B better than run A? Metric by metric (x granularity x k), B - A, on
the questions both runs were scored on - or, where they share no or too few (the rule run_comparison_tests of
python_jobs/core/rules.yml), on each run's own questions, unpaired; every row says its test (stat_test) and the
questions of each side (n_a, n_b).

A pair the warehouse compares (every run against its family's best and baselines, the pairs of small groups, the
named pairs: fct_run_pairs) is read from mart_run_comparison, the build's numbers. Any other pair of runs of one kind
on one dataset is computed here, on demand, from the published per-question scores (fct_question_metric_scores),
with the same functions the build calls - comparison_test (paired or unpaired: the rule run_comparison_tests),
paired_tests (bootstrap interval, paired t-test, randomization test, with the settings of vars run_comparison_*) or,
for runs that share no or too few questions (two versions' production traffic), welch_tests (a bootstrap interval
of the difference of means and Welch's t-test on each run's own questions), pair_outcome (wins / ties / losses in
the metric's direction) and tukey_hsd_p (against the family's pooled variance, mart_run_families) - registered on
the query's in-memory DuckDB; so a pair the mart holds gives the same numbers either way. An on-demand row has no
role and no Holm p (it belongs to no family of comparisons); its `source` says 'on demand'. Nothing is written: no
var, no rebuild.

The rows come in the metric registry's display order, by granularity (the rules' order, finest first) and k.
Retrieval rows are kept at the cut-offs asked for (default k = 0, the whole ranking); lexical and judged rows have
no k and are always kept.
"""

from __future__ import annotations

from collections.abc import Sequence

import duckdb
import polars as pl

from python_jobs.core.config import PROJECT_DIR, project_yaml
from python_jobs.core.errors import InputError
from python_jobs.core.rules import GRANULARITIES
from python_jobs.marts.published import published_connection, run
from python_jobs.marts.reports import query_marts
from python_jobs.stats import paired_tests, unpaired_tests

COLUMNS = ("run_a", "run_b", "run_kind", "dataset", "metric", "granularity", "k", "role", "stat_test", "n_questions",
           "n_a", "n_b", "mean_a", "mean_b", "delta", "wins", "ties", "losses", "ci_low", "ci_high", "p_ttest",
           "p_randomization", "randomization_exact", "p_holm", "p_tukey", "tied_with_best", "higher_is_better",
           "n_not_ok_a", "n_not_ok_b")
WHOLE_RANKING = 0
_KIND_NAMES = {"retrieval": "a retrieval run", "generation": "an answer run", "judge": "a judge run"}


def comparison_settings() -> dict[str, float]:
    """The statistics' settings: the vars run_comparison_* of dbt_project.yml, their one home, as the build reads."""
    variables = project_yaml(PROJECT_DIR / "dbt_project.yml")["vars"]
    return {name: variables[f"run_comparison_{name}"] for name in ("resamples", "sign_flips", "seed", "level",
                                                                     "alpha")}


# what a run id that scored_runs does not find may be: the one wording of compare's and gate's errors
NO_SCORES = "has no scores in fct_run_metric_stats (unknown run, no scored question, or no build since it landed)"


def scored_runs(run_ids: Sequence[str], con: duckdb.DuckDBPyConnection | None = None) -> dict[str, tuple[str, str]]:
    """run id -> (run kind, dataset) of the runs with scores (fct_run_metric_stats), from the published marts, or
    on `con`, a reader's published connection (python_jobs/marts/queries.py) that holds one published state."""
    marks = ", ".join("?" for _ in run_ids)
    sql = f"select distinct run_id, run_kind, dataset from fct_run_metric_stats where run_id in ({marks})"
    frame = query_marts(sql, list(run_ids)) if con is None else run(con, sql, list(run_ids))
    return {run: (kind, dataset) for run, kind, dataset in frame.iter_rows()}


def _check_pair(run_a: str, run_b: str, con: duckdb.DuckDBPyConnection) -> None:
    if run_a == run_b:
        raise InputError("run A and run B are the same run", field="run_b")
    runs = scored_runs([run_a, run_b], con)
    for flag, run_id in (("--run-a", run_a), ("--run-b", run_b)):
        if run_id not in runs:
            raise InputError(f"{flag} {run_id!r} {NO_SCORES}", field=flag.lstrip("-").replace("-", "_"))
    (kind_a, dataset_a), (kind_b, dataset_b) = runs[run_a], runs[run_b]
    if kind_a != kind_b:
        raise InputError(f"{run_a!r} is {_KIND_NAMES.get(kind_a, kind_a)} and {run_b!r} is "
                         f"{_KIND_NAMES.get(kind_b, kind_b)}: only runs of one kind are compared", field="run_b")
    if dataset_a != dataset_b:
        raise InputError(f"{run_a!r} is scored on dataset {dataset_a!r} and {run_b!r} on {dataset_b!r}: only runs of "
                         "one dataset are compared (paired on shared questions, or unpaired: two versions' traffic "
                         "ingested into one dataset)", field="run_b")


# The pairing of fct_run_comparisons (models/marts/overview/fct_run_comparisons.sql) for one pair, over the published
# marts; the statistics are the functions the build registers.
_ON_DEMAND = """
    with scores as (
        select run_id, run_kind, dataset, question_id, metric, granularity, k, value
        from fct_question_metric_scores
        where run_id in ($run_a, $run_b)
            -- the filters asked for, here: each comparison left out is a bootstrap and a randomization test saved
            and (len($metrics) = 0 or list_contains($metrics, metric))
            and ($granularity is null or granularity = $granularity)
            and (k is null or len($ks) = 0 or list_contains($ks, k))
    ),
    sides as (
        -- each run's own questions at each metric point: the pairing rule's counts and the unpaired test's samples
        select run_id = $run_b as is_b, run_kind, dataset, metric, granularity, k, question_id, value
        from scores
    ),
    sizes as (
        select run_kind, dataset, metric, granularity, k, count(case when not is_b then 1 end) as n_a,
               count(case when is_b then 1 end) as n_b
        from sides
        group by run_kind, dataset, metric, granularity, k
    ),
    paired as (
        select scores_a.run_kind, scores_a.dataset, scores_a.metric, scores_a.granularity, scores_a.k,
               scores_a.question_id, scores_a.value as value_a, scores_b.value as value_b,
               scores_b.value - scores_a.value as diff
        from scores as scores_a
        inner join scores as scores_b
            on scores_a.question_id = scores_b.question_id
            and scores_a.metric = scores_b.metric
            and scores_b.granularity is not distinct from scores_a.granularity
            and scores_b.k is not distinct from scores_a.k
        where scores_a.run_id = $run_a and scores_b.run_id = $run_b
    ),
    compared as (
        select paired.run_kind, paired.dataset, paired.metric, paired.granularity, paired.k,
               count(*) as n_questions, avg(paired.value_a) as mean_a, avg(paired.value_b) as mean_b,
               count(case when pair_outcome(paired.diff, dim_metrics.higher_is_better) = 'win' then 1 end) as wins,
               count(case when pair_outcome(paired.diff, dim_metrics.higher_is_better) = 'tie' then 1 end) as ties,
               count(case when pair_outcome(paired.diff, dim_metrics.higher_is_better) = 'loss' then 1 end) as losses,
               list(paired.diff order by paired.question_id) as diffs,
               any_value(dim_metrics.higher_is_better) as higher_is_better
        from paired
        inner join dim_metrics on paired.metric = dim_metrics.metric
        group by paired.run_kind, paired.dataset, paired.metric, paired.granularity, paired.k
    ),
    chosen as (
        select sizes.*, comparison_test(coalesce(compared.n_questions, 0), sizes.n_a, sizes.n_b) as stat_test
        from sizes
        left join compared
            on sizes.metric = compared.metric and sizes.granularity is not distinct from compared.granularity
            and sizes.k is not distinct from compared.k
    ),
    welch as (
        -- the two samples of the metric points compared unpaired, each ordered by question id
        select sides.metric, sides.granularity, sides.k,
               avg(case when not sides.is_b then sides.value end) as mean_a,
               avg(case when sides.is_b then sides.value end) as mean_b,
               welch_tests(list(sides.value order by sides.question_id) filter (where not sides.is_b),
                           list(sides.value order by sides.question_id) filter (where sides.is_b),
                           $resamples, $seed, $level) as tests
        from sides
        inner join chosen
            on sides.metric = chosen.metric and sides.granularity is not distinct from chosen.granularity
            and sides.k is not distinct from chosen.k
        where chosen.stat_test = $unpaired
        group by sides.metric, sides.granularity, sides.k
    ),
    judgments as (
        -- one row per answer (its status over its repeated judgments), as fct_run_comparisons counts them
        select judge_run_id as run_id, question_id, metric, status
        from fct_judge_answer_scores
        where judge_run_id in ($run_a, $run_b)
    ),
    judge_exclusions as (
        select judgments_a.metric,
               count(case when judgments_a.status <> 'ok' then 1 end) as n_not_ok_a,
               count(case when judgments_b.status <> 'ok' then 1 end) as n_not_ok_b
        from judgments as judgments_a
        inner join judgments as judgments_b
            on judgments_a.question_id = judgments_b.question_id and judgments_a.metric = judgments_b.metric
        where judgments_a.run_id = $run_a and judgments_b.run_id = $run_b
        group by judgments_a.metric
    ),
    tested as (
        select chosen.run_kind, chosen.dataset, chosen.metric, chosen.granularity, chosen.k, chosen.stat_test,
               coalesce(compared.n_questions, 0) as n_questions,
               case when chosen.stat_test = $unpaired then chosen.n_a else compared.n_questions end as n_a,
               case when chosen.stat_test = $unpaired then chosen.n_b else compared.n_questions end as n_b,
               coalesce(welch.mean_a, compared.mean_a) as mean_a, coalesce(welch.mean_b, compared.mean_b) as mean_b,
               coalesce(compared.wins, 0) as wins, coalesce(compared.ties, 0) as ties,
               coalesce(compared.losses, 0) as losses, dim_metrics.higher_is_better,
               case when chosen.stat_test <> $unpaired
                    then paired_tests(compared.diffs, $resamples, $sign_flips, $seed, $level) end as tests,
               welch.tests as welch_tests,
               tukey_hsd_p(stats_b.mean - stats_a.mean, families.tukey_mse, stats_a.n_questions,
                           stats_b.n_questions, families.n_runs, families.tukey_df) as p_tukey
        from chosen
        left join compared
            on chosen.metric = compared.metric and chosen.granularity is not distinct from compared.granularity
            and chosen.k is not distinct from compared.k
        left join welch
            on chosen.metric = welch.metric and chosen.granularity is not distinct from welch.granularity
            and chosen.k is not distinct from welch.k
        left join dim_metrics on chosen.metric = dim_metrics.metric
        left join fct_run_metric_stats as stats_a
            on stats_a.run_id = $run_a and chosen.metric = stats_a.metric
            and stats_a.granularity is not distinct from chosen.granularity
            and stats_a.k is not distinct from chosen.k
        left join fct_run_metric_stats as stats_b
            on stats_b.run_id = $run_b and chosen.metric = stats_b.metric
            and stats_b.granularity is not distinct from chosen.granularity
            and stats_b.k is not distinct from chosen.k
        left join mart_run_families as families
            on chosen.dataset = families.dataset and chosen.run_kind = families.run_kind
            and chosen.metric = families.metric
            and families.granularity is not distinct from chosen.granularity
            and families.k is not distinct from chosen.k
        -- a metric point where a run has no scored question has no test, and no row (as in the mart)
        where chosen.stat_test is not null
    )
    select $run_a as run_a, $run_b as run_b, tested.run_kind, tested.dataset, tested.metric, tested.granularity,
           tested.k, cast(null as varchar) as role, tested.stat_test, tested.n_questions, tested.n_a, tested.n_b,
           tested.mean_a, tested.mean_b, tested.mean_b - tested.mean_a as delta, tested.wins, tested.ties,
           tested.losses, coalesce(tested.tests.ci_low, tested.welch_tests.ci_low) as ci_low,
           coalesce(tested.tests.ci_high, tested.welch_tests.ci_high) as ci_high,
           coalesce(tested.tests.p_ttest, tested.welch_tests.p_ttest) as p_ttest, tested.tests.p_randomization,
           tested.tests.randomization_exact, cast(null as double) as p_holm, tested.p_tukey,
           false as tied_with_best, tested.higher_is_better, judge_exclusions.n_not_ok_a,
           judge_exclusions.n_not_ok_b
    from tested
    left join judge_exclusions on tested.metric = judge_exclusions.metric and tested.run_kind = 'judge'
"""


def compare_on_demand(run_a: str, run_b: str, metrics: Sequence[str] = (), granularity: str | None = None,
                      ks: Sequence[int] = ()) -> pl.DataFrame:
    """The comparisons of B with A (B - A) computed now from the published per-question scores, with the functions
    the build registers (see the module docstring): every metric, granularity and k, or those asked for (a k filters
    retrieval rows only); the columns of mart_run_comparison."""
    with published_connection(tables=()) as con:
        return _on_demand(con, run_a, run_b, metrics, granularity, ks)


def _on_demand(con: duckdb.DuckDBPyConnection, run_a: str, run_b: str, metrics: Sequence[str],
               granularity: str | None, ks: Sequence[int]) -> pl.DataFrame:
    """compare_on_demand on a published connection this module opened (so it has none of the functions yet)."""
    _check_pair(run_a, run_b, con)
    # the t-test's scipy.special loads while DuckDB reads the scores (it releases the GIL)
    paired_tests.prefetch_t_distribution()
    settings = comparison_settings()
    paired_tests.register_duckdb_functions(con, existing=())
    unpaired_tests.register_duckdb_functions(con, existing=())
    frame = run(con, _ON_DEMAND, {"unpaired": unpaired_tests.UNPAIRED,
        "run_a": run_a, "run_b": run_b, "metrics": list(metrics), "granularity": granularity,
        "ks": [int(k) for k in ks], "resamples": int(settings["resamples"]),
        "sign_flips": int(settings["sign_flips"]), "seed": int(settings["seed"]),
        "level": float(settings["level"])})
    if frame.is_empty():
        asked = metrics or granularity or ks
        raise InputError(f"{run_a!r} and {run_b!r} have no metric both were scored on"
                         + (" at the metrics, granularity and k asked for" if asked else ""), field="run_b")
    return frame


def run_comparison(run_a: str, run_b: str, metrics: Sequence[str] = (), granularity: str | None = None,
                   ks: Sequence[int] = (WHOLE_RANKING,)) -> pl.DataFrame:
    """The pair's rows, B - A, from mart_run_comparison or computed on demand (column `source`), filtered by metric,
    granularity and (retrieval rows) k, in the registry's order."""
    if granularity is not None and granularity not in GRANULARITIES:
        raise InputError(f"granularity {granularity!r} is not one of {', '.join(GRANULARITIES)}", field="granularity")
    select = ", ".join(f"comparison.{c}" for c in COLUMNS)
    with published_connection(tables=()) as con:  # one connection and one published state for the whole read
        frame = run(con, f"""
            select {select}, 'mart' as source
            from mart_run_comparison as comparison
            where comparison.run_a = ? and comparison.run_b = ?
        """, [run_a, run_b])
        if frame.is_empty():
            frame = (_on_demand(con, run_a, run_b, metrics, granularity, ks).select(*COLUMNS)
                     .with_columns(source=pl.lit("on demand")))
        order = run(con, "select metric, display_order from dim_metrics")
    frame = (frame.join(order, on="metric", how="left")
             .with_columns(pl.col("granularity").replace_strict(list(GRANULARITIES), list(range(len(GRANULARITIES))),
                                                               default=None, return_dtype=pl.Int64)
                           .alias("_granularity_order"))
             .sort("display_order", "metric", "_granularity_order", "k", nulls_last=True)
             .drop("display_order", "_granularity_order"))
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
        kept = frame.filter(pl.col("k").is_null() | pl.col("k").is_in(list(ks)))
        if kept.is_empty():
            known = sorted(set(frame["k"].drop_nulls()))
            raise InputError(f"the pair has no rows at k = {', '.join(map(str, ks))} (its cut-offs: "
                             f"{', '.join(map(str, known))})", field="k")
        frame = kept
    return frame
