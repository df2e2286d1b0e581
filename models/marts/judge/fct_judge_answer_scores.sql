-- One row per answer and judged metric of a judge run (judge run x question x metric): the answer's judgments over
-- its repeats (finrag judge --repeats N; a Ragas / DeepEval file with repeated samples; one repeat otherwise). Its
-- score is the mean of its ok repeats' normalised scores (SPEC §10: comparisons use per-answer means): every judged
-- mean and comparison reads this model, never the repeats (fct_judge_scores), so an answer weighs once whatever its
-- repeats. With one repeat a row is its judgment: the same status and scores. The spread of the ok repeats (sample
-- sd, min, max) and whether they straddle the metric's pass threshold (the registry's pass_threshold in its
-- direction, macro passes_threshold, on the normalised scale) say how far the judge agrees with itself;
-- mart_judge_reliability sums them up per run and metric.

with scores as (

    select * from {{ ref('fct_judge_scores') }}

),

thresholds as (

    select
        metric,
        pass_threshold
    from {{ ref('int_metric_registry') }}
    where family = 'judged'

),

repeats as (

    select
        scores.judge_run_id,
        scores.answer_run_id,
        scores.judge_model,
        scores.rubric_version,
        scores.rubric,
        scores.question_id,
        scores.dataset,
        scores.metric,
        scores.judge_family,
        scores.higher_is_better,
        scores.metric_display_order,
        scores.answer_model,
        scores.eval_mode,
        scores.retrieval_run_id,
        scores.status,
        scores.error,
        scores.created_at,
        case when scores.status = 'ok' then scores.raw_score end as ok_raw_score,
        case when scores.status = 'not_applicable' then scores.raw_score end as sentinel_raw_score,
        case when scores.status = 'ok' then scores.normalized_score end as ok_score,
        case
            when scores.status = 'ok'
                then {{ passes_threshold('scores.normalized_score', 'thresholds.pass_threshold',
                                         'scores.higher_is_better') }}
        end as passes
    from scores
    left join thresholds on scores.metric = thresholds.metric

),

per_answer as (

    select
        judge_run_id,
        answer_run_id,
        judge_model,
        rubric_version,
        rubric,
        question_id,
        dataset,
        metric,
        judge_family,
        higher_is_better,
        metric_display_order,
        answer_model,
        eval_mode,
        retrieval_run_id,
        count(*) as n_repeats,
        count(case when status = 'ok' then 1 end) as n_ok,
        count(case when status = 'not_applicable' then 1 end) as n_not_applicable,
        count(case when status = 'failed' then 1 end) as n_failed,
        avg(ok_score) as normalized_score,
        avg(ok_raw_score) as ok_raw_score,
        max(sentinel_raw_score) as sentinel_raw_score,
        stddev_samp(ok_score) as ok_score_sd,
        min(ok_score) as min_score,
        max(ok_score) as max_score,
        count(case when passes then 1 end) as n_passing,
        count(case when not passes then 1 end) as n_not_passing,
        min(case when status = 'failed' then error end) as first_error,
        max(created_at) as created_at
    from repeats
    group by
        judge_run_id, answer_run_id, judge_model, rubric_version, rubric, question_id, dataset, metric, judge_family,
        higher_is_better, metric_display_order, answer_model, eval_mode, retrieval_run_id

),

final as (

    select
        judge_run_id,
        answer_run_id,
        judge_model,
        rubric_version,
        rubric,
        question_id,
        dataset,
        metric,
        judge_family,
        -- the answer's status: ok when a repeat scored it, else not_applicable when a repeat found the metric not
        -- applicable, else failed (every repeat failed); with one repeat, the judgment's own
        case
            when n_ok > 0 then 'ok'
            when n_not_applicable > 0 then 'not_applicable'
            else 'failed'
        end as status,
        n_repeats,
        n_ok,
        n_not_applicable,
        n_failed,
        normalized_score,
        -- the ok repeats' mean; without one, the not-applicable sentinel the judge gave (as fct_judge_scores keeps it)
        case when n_ok > 0 then ok_raw_score else sentinel_raw_score end as raw_score,
        case when n_ok >= 2 then ok_score_sd end as sd_score,
        min_score,
        max_score,
        -- null without an ok repeat or without a pass threshold (a metric an external run declared)
        case
            when n_passing > 0 and n_not_passing > 0 then true
            when n_passing + n_not_passing > 0 then false
        end as straddles_threshold,
        first_error,
        higher_is_better,
        metric_display_order,
        answer_model,
        eval_mode,
        retrieval_run_id,
        created_at
    from per_answer

)

select * from final
