-- Each run's score summary per metric (x granularity x k for retrieval) over the questions it was scored on, from
-- the one long table of per-question scores (fct_question_metric_scores): n_questions, the mean and the sum of
-- squared deviations from it. Every comparison of a family of runs (one dataset, run kind, metric, granularity, k)
-- starts here: its best run, and Tukey's HSD, whose pooled within-run variance is the family's summed squared
-- deviations over its questions less runs (mart_run_comparison).

-- Incremental (append) as fct_question_metric_scores is: a retrieval run is summarised again when its version there
-- or this SQL changes (macros/metrics/question_metric_scores.sql), generation and judge runs in every build; so a
-- build adding one run reads that run's scores only.

-- the post-hook deletes the runs gone from the lake: depends_on: {{ ref('int_retrieval_runs') }}

{{ config(run_incremental_config(upstream='fct_question_metric_scores')) }}

with retrieval_versions as (

    {{ upstream_run_versions(ref('fct_question_metric_scores')) }}

),

pending_retrieval_runs as (

    select
        run_id,
        run_version
    from retrieval_versions
    -- the runs whose version the model does not hold yet (the pre-hook deleted the stale ones)
    where {{ per_run_pending('retrieval_versions') }}

),

scores as (

    select * from {{ ref('fct_question_metric_scores') }}

),

pending_scores as (

    select
        scores.run_id,
        scores.run_kind,
        scores.dataset,
        scores.metric,
        scores.granularity,
        scores.k,
        scores.value,
        pending_retrieval_runs.run_version
    from scores
    inner join pending_retrieval_runs on scores.run_id = pending_retrieval_runs.run_id
    where scores.run_kind = 'retrieval'
    union all
    select
        run_id,
        run_kind,
        dataset,
        metric,
        granularity,
        k,
        value,
        cast(null as string) as run_version
    from scores
    where run_kind <> 'retrieval'

),

final as (

    select
        run_id,
        run_kind,
        dataset,
        metric,
        granularity,
        k,
        count(*) as n_questions,
        avg(value) as mean,
        -- the sum of squared deviations from the run's mean: var_samp x (n - 1), 0 for one question
        coalesce(var_samp(value), 0.0) * (count(*) - 1) as sum_squared_deviations,
        any_value(run_version) as run_version
    from pending_scores
    group by run_id, run_kind, dataset, metric, granularity, k

)

select * from final
