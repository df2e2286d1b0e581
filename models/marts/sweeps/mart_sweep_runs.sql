-- Each run of each sweep with its parameter values and its metric means: the leaderboards' run means (retrieval
-- runs: mart_retrieval_leaderboard, per metric x granularity x k; answer runs: mart_generation_leaderboard, per
-- lexical metric), the run's setting of the sweep's parameters as one label, in the grid's parameter order, whether
-- it is the sweep's baseline, and whether it is the sweep's best run on the metric (its direction from dim_metrics),
-- chosen among the runs that did not see the gold evidence: a grid over `condition` has oracle runs, upper bounds
-- (dim_runs.is_oracle_bound, marked here), never the winner.
-- A run of the sweep that has not landed (or has no score yet) has no rows.

with sweeps as (

    select * from {{ ref('stg_lake__sweeps') }}

),

sweep_runs as (

    select * from {{ ref('stg_lake__sweep_runs') }}

),

metrics as (

    select * from {{ ref('dim_metrics') }}

),

runs as (

    select
        run_id,
        is_oracle_bound
    from {{ ref('dim_runs') }}

),

run_settings as (

    select
        sweep_runs.sweep_id,
        sweep_runs.run_id,
        {{ ordered_string_agg("sweep_runs.parameter || '=' || sweep_runs.value", "', '", ['parameter_position']) }}
            as setting
    from (
        select
            sweep_runs.*,
            array_position(sweeps.parameters, sweep_runs.parameter) as parameter_position
        from sweep_runs
        inner join sweeps on sweep_runs.sweep_id = sweeps.sweep_id
    ) as sweep_runs
    group by sweep_runs.sweep_id, sweep_runs.run_id

),

retrieval_means as (

    select
        run_settings.sweep_id,
        leaderboard.run_id,
        leaderboard.metric,
        leaderboard.granularity,
        leaderboard.k,
        leaderboard.mean,
        leaderboard.n_questions
    from run_settings
    inner join sweeps on run_settings.sweep_id = sweeps.sweep_id
    inner join {{ ref('mart_retrieval_leaderboard') }} as leaderboard
        on run_settings.run_id = leaderboard.run_id
    where sweeps.kind = 'retrieval'

),

answer_means as (

    select
        run_settings.sweep_id,
        leaderboard.run_id,
        leaderboard.metric,
        cast(null as string) as granularity,
        cast(null as integer) as k,
        leaderboard.mean,
        leaderboard.n as n_questions
    from run_settings
    inner join sweeps on run_settings.sweep_id = sweeps.sweep_id
    inner join {{ ref('mart_generation_leaderboard') }} as leaderboard
        on run_settings.run_id = leaderboard.run_id
    where sweeps.kind = 'answer' and leaderboard.mean is not null

),

run_means as (

    select * from retrieval_means
    union all
    select * from answer_means

),

ranked as (

    select
        run_means.*,
        metrics.higher_is_better,
        coalesce(runs.is_oracle_bound, false) as is_oracle_bound,
        max(case when not coalesce(runs.is_oracle_bound, false) then run_means.mean end) over sweep_metric
            as highest_mean,
        min(case when not coalesce(runs.is_oracle_bound, false) then run_means.mean end) over sweep_metric
            as lowest_mean
    from run_means
    inner join metrics on run_means.metric = metrics.metric
    left join runs on run_means.run_id = runs.run_id
    window sweep_metric as (
        partition by run_means.sweep_id, run_means.metric, run_means.granularity, run_means.k
    )

),

final as (

    select
        ranked.sweep_id,
        sweeps.dataset,
        sweeps.kind,
        ranked.run_id,
        run_settings.setting,
        coalesce(ranked.run_id = sweeps.baseline_run_id, false) as is_baseline,
        ranked.metric,
        ranked.granularity,
        ranked.k,
        ranked.higher_is_better,
        ranked.mean,
        ranked.n_questions,
        ranked.is_oracle_bound,
        coalesce({{ comparable_mean('ranked.mean') }} = {{ comparable_mean(
            'case when ranked.higher_is_better then ranked.highest_mean else ranked.lowest_mean end'
        ) }}, false) and not ranked.is_oracle_bound as is_best_run
    from ranked
    inner join sweeps on ranked.sweep_id = sweeps.sweep_id
    inner join run_settings
        on ranked.sweep_id = run_settings.sweep_id
        and ranked.run_id = run_settings.run_id

)

select * from final
