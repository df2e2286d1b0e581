-- Which runs are really the best? One row per run and family of runs (one dataset, run kind, metric, granularity, k;
-- a sweep of a hundred runs is a family per metric): the run's mean over its questions, its rank, the family's best
-- run, and the run's comparison with it from mart_run_comparison (role 'best'): the difference on the questions
-- both were scored on with its bootstrap interval, the paired t-test and randomization p, that p Holm-adjusted over
-- every run compared with the best, Tukey's HSD p, and tied_with_best - the runs Tukey's HSD (family-wise error over
-- all pairs, at var run_comparison_alpha) cannot tell from the best; the best run itself is tied with itself. The
-- best is never an oracle bound (mart_run_families); bounds are listed, marked is_oracle_bound, with their
-- comparison against the best - how far above it the upper bound lies. A run that shares no or too few questions
-- with the best (another application version's traffic) is compared unpaired: stat_test says which test.

with stats as (

    select * from {{ ref('fct_run_metric_stats') }}
    where mean is not null

),

references_ as (

    select * from {{ ref('mart_run_families') }}

),

runs as (

    select
        run_id,
        is_oracle_bound
    from {{ ref('dim_runs') }}

),

versus_best as (

    select * from {{ ref('mart_run_comparison') }}
    where role = 'best'

),

final as (

    select
        stats.dataset,
        stats.run_kind,
        stats.metric,
        stats.granularity,
        stats.k,
        stats.run_id,
        stats.n_questions,
        stats.mean,
        rank() over (
            partition by stats.dataset, stats.run_kind, stats.metric, stats.granularity, stats.k
            order by {{ comparable_mean(
                'case when references_.higher_is_better then stats.mean else 0.0 - stats.mean end'
            ) }} desc
        ) as rank_in_family,
        references_.n_runs as n_runs_in_family,
        references_.higher_is_better,
        references_.best_run_id,
        references_.best_mean,
        coalesce(stats.run_id = references_.best_run_id, false) as is_best,
        coalesce(runs.is_oracle_bound, false) as is_oracle_bound,
        versus_best.stat_test,
        versus_best.n_questions as n_questions_shared,
        versus_best.delta as delta_vs_best,
        versus_best.ci_low,
        versus_best.ci_high,
        versus_best.p_ttest,
        versus_best.p_randomization,
        versus_best.p_holm,
        versus_best.p_tukey,
        coalesce(stats.run_id = references_.best_run_id, false)
        or coalesce(versus_best.tied_with_best, false) as tied_with_best
    from stats
    inner join references_
        on stats.dataset = references_.dataset
        and stats.run_kind = references_.run_kind
        and {{ same_metric_point('stats', 'references_') }}
    left join runs on stats.run_id = runs.run_id
    left join versus_best
        on references_.best_run_id = versus_best.run_a
        and stats.run_id = versus_best.run_b
        and {{ same_metric_point('stats', 'versus_best') }}

)

select * from final
