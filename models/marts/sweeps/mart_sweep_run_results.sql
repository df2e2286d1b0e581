-- Each run of each sweep on each metric with how it stands: its setting and mean (mart_sweep_runs), its comparison
-- with the best run of its family - the dataset's runs of its kind on the metric, granularity and k, in the sweep or
-- not (mart_run_vs_best: difference, bootstrap interval, Holm-adjusted p, Tukey's HSD p, tied_with_best) - and with
-- the sweep's baseline run (mart_run_comparison, the pair in the order baseline, run). What the dashboard's sweep
-- page lists: the join is here so the page only selects.

with sweep_runs as (

    select * from {{ ref('mart_sweep_runs') }}

),

sweeps as (

    select
        sweep_id,
        baseline_run_id
    from {{ ref('stg_lake__sweeps') }}

),

versus_best as (

    select * from {{ ref('mart_run_vs_best') }}

),

versus_baseline as (

    -- any role: a baseline that is also the family's best has its rows as 'best'
    select * from {{ ref('mart_run_comparison') }}

),

final as (

    select
        sweep_runs.sweep_id,
        sweep_runs.dataset,
        sweep_runs.kind,
        sweep_runs.run_id,
        sweep_runs.setting,
        sweep_runs.is_baseline,
        sweep_runs.metric,
        sweep_runs.granularity,
        sweep_runs.k,
        sweep_runs.higher_is_better,
        sweep_runs.mean,
        sweep_runs.n_questions,
        sweep_runs.is_best_run as is_best_in_sweep,
        versus_best.rank_in_family,
        versus_best.n_runs_in_family,
        versus_best.best_run_id,
        versus_best.best_mean,
        versus_best.is_best,
        versus_best.delta_vs_best,
        versus_best.ci_low,
        versus_best.ci_high,
        versus_best.p_randomization,
        versus_best.p_holm,
        versus_best.p_tukey,
        coalesce(versus_best.tied_with_best, false) as tied_with_best,
        sweeps.baseline_run_id,
        versus_baseline.delta as delta_vs_baseline,
        versus_baseline.ci_low as baseline_ci_low,
        versus_baseline.ci_high as baseline_ci_high,
        versus_baseline.p_holm as baseline_p_holm
    from sweep_runs
    inner join sweeps on sweep_runs.sweep_id = sweeps.sweep_id
    left join versus_best
        on sweep_runs.run_id = versus_best.run_id
        and {{ same_metric_point('sweep_runs', 'versus_best') }}
    left join versus_baseline
        on sweeps.baseline_run_id = versus_baseline.run_a
        and sweep_runs.run_id = versus_baseline.run_b
        and {{ same_metric_point('sweep_runs', 'versus_baseline') }}

)

select * from final
