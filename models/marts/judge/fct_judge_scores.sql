-- One row per judgment (judge run x question x metric x repeat) with its run, answer run and metric scale. The
-- normalised score is (raw - scale_min) / (scale_max - scale_min), the scale from the metric registry
-- (int_metric_registry: the seed and the metrics external runs declared; its judged rows; SPEC §5), for ok rows
-- only: not_applicable and failed rows carry no score (a not-applicable sentinel such as OmniEval's -1 stays in
-- raw_score as the judge gave it, and never reaches a mean). For correctness and faithfulness -1 is a real score
-- (normalised 0).
-- A judge run with repeats (finrag judge --repeats N) has a row per repeat: fct_judge_answer_scores holds each
-- answer's mean over them, which every judged mean and comparison reads; this model is the drill-down's and the
-- reliability mart's.

with judgments as (

    select * from {{ ref('stg_lake__judgments') }}

),

judge_runs as (

    select
        judge_run_id,
        answer_run_id,
        judge_model,
        rubric_version
    from {{ ref('stg_lake__judge_runs') }}

),

answer_runs as (

    select
        run_id as answer_run_id,
        dataset,
        model as answer_model,
        eval_mode,
        retrieval_run_id
    from {{ ref('stg_lake__generation_runs') }}

),

metrics as (

    select
        metric,
        judge_family,
        scale_min,
        scale_max,
        higher_is_better,
        display_order
    from {{ ref('int_metric_registry') }}
    where family = 'judged'

),

final as (

    select
        judgments.judge_run_id,
        judge_runs.answer_run_id,
        judge_runs.judge_model,
        judge_runs.rubric_version,
        -- this metric's own rubric (name@hash12), so runs judging different metric sets compare per metric
        judgments.rubric,
        judgments.question_id,
        answer_runs.dataset,
        judgments.metric,
        judgments.repeat,
        metrics.judge_family,
        judgments.status,
        judgments.raw_score,
        case
            when judgments.status = 'ok'
                then (judgments.raw_score - metrics.scale_min) / (metrics.scale_max - metrics.scale_min)
        end as normalized_score,
        metrics.higher_is_better,
        metrics.display_order as metric_display_order,
        judgments.rationale,
        judgments.error,
        answer_runs.answer_model,
        answer_runs.eval_mode,
        answer_runs.retrieval_run_id,
        judgments.created_at
    from judgments
    inner join judge_runs using (judge_run_id)
    left join answer_runs using (answer_run_id)
    left join metrics using (metric)

)

select * from final
