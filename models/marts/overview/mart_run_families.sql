-- The reference of every family of runs (one dataset, run kind, metric, granularity, k) that fct_run_metric_stats
-- summarises: its best run - the highest mean, or the lowest where lower is better (the registry's higher_is_better),
-- ties to the run scored on more questions, then to the smaller run id - and what Tukey's HSD needs of the family:
-- its runs, their questions in all, and the pooled within-run variance (the family's summed squared deviations over
-- its questions less runs, as scipy.stats.tukey_hsd and ranx's compare(stat_test="tukey") compute it).
-- The best run is a contender: a run that saw the gold evidence (dim_runs.is_oracle_bound: an oracle condition, or an
-- answer / judge run built on one) is an upper bound, never the best; a family of bounds alone has no best run.
-- Bounds stay in the family's Tukey figures (its runs, scores and pooled variance): they are compared with the best
-- like any run.

with stats as (

    select * from {{ ref('fct_run_metric_stats') }}

),

runs as (

    select
        run_id,
        is_oracle_bound
    from {{ ref('dim_runs') }}

),

metrics as (

    select
        metric,
        higher_is_better
    from {{ ref('int_metric_registry') }}

),

ranked as (

    select
        stats.*,
        metrics.higher_is_better,
        coalesce(runs.is_oracle_bound, false) as is_oracle_bound,
        row_number() over (
            partition by stats.dataset, stats.run_kind, stats.metric, stats.granularity, stats.k
            order by
                -- contenders first: the first row is a bound only when the family has nothing else
                case when coalesce(runs.is_oracle_bound, false) then 1 else 0 end asc,
                case when metrics.higher_is_better then {{ comparable_mean('stats.mean') }} end desc nulls last,
                case when not metrics.higher_is_better then {{ comparable_mean('stats.mean') }} end asc nulls last,
                stats.n_questions desc,
                stats.run_id asc
        ) as rank_in_family
    from stats
    inner join metrics on stats.metric = metrics.metric
    left join runs on stats.run_id = runs.run_id
    where stats.mean is not null

),

families as (

    select
        dataset,
        run_kind,
        metric,
        granularity,
        k,
        any_value(higher_is_better) as higher_is_better,
        max(case when rank_in_family = 1 and not is_oracle_bound then run_id end) as best_run_id,
        max(case when rank_in_family = 1 and not is_oracle_bound then mean end) as best_mean,
        count(*) as n_runs,
        count(case when is_oracle_bound then 1 end) as n_oracle_bound_runs,
        sum(n_questions) as n_scores,
        sum(sum_squared_deviations) as sum_squared_deviations
    from ranked
    group by dataset, run_kind, metric, granularity, k

),

final as (

    select
        dataset,
        run_kind,
        metric,
        granularity,
        k,
        higher_is_better,
        best_run_id,
        best_mean,
        n_runs,
        n_oracle_bound_runs,
        n_scores,
        n_scores - n_runs as tukey_df,
        case when n_scores > n_runs then sum_squared_deviations / (n_scores - n_runs) end as tukey_mse
    from families

)

select * from final
