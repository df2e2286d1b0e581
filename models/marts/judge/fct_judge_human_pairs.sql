-- One row per judged answer that has a human label for the same answer and metric (joined on answer_run_id,
-- question_id, metric), per label set, with both raw scores mapped to agreement classes by int_judge_metric_classes.
-- The judge's side is the answer's (fct_judge_answer_scores): with repeated judgments the mean of its ok repeats'
-- raw scores, classed like any score between scale points (the nearest point, halves up), so a noisy judge is
-- compared with the humans once per answer, by its mean verdict. is_scored: the answer's judgment is ok and the
-- human label is on the scale (a human not-applicable label has no class). Only scored pairs enter agreement; the
-- others are counted in mart_judge_agreement.

with judge_scores as (

    select * from {{ ref('fct_judge_answer_scores') }}

),

human_labels as (

    select
        label_set,
        answer_run_id,
        question_id,
        metric,
        raw_score,
        label
    from {{ ref('stg_lake__human_labels') }}

),

classes as (

    select * from {{ ref('int_judge_metric_classes') }}

),

paired as (

    select
        judge_scores.judge_run_id,
        judge_scores.answer_run_id,
        judge_scores.judge_model,
        judge_scores.rubric,
        judge_scores.answer_model,
        judge_scores.eval_mode,
        judge_scores.dataset,
        human_labels.label_set,
        judge_scores.question_id,
        judge_scores.metric,
        judge_scores.status as judge_status,
        judge_scores.raw_score as judge_raw_score,
        human_labels.raw_score as human_raw_score,
        human_labels.label as human_label,
        judge_scores.created_at as judged_at
    from judge_scores
    inner join human_labels
        on judge_scores.answer_run_id = human_labels.answer_run_id
        and judge_scores.question_id = human_labels.question_id
        and judge_scores.metric = human_labels.metric

),

final as (

    select
        paired.*,
        judge_classes.class as judge_class,
        human_classes.class as human_class,
        judge_classes.class is not null and human_classes.class is not null as is_scored
    from paired
    left join classes as judge_classes
        on paired.metric = judge_classes.metric
        and paired.judge_status = 'ok'
        and paired.judge_raw_score >= judge_classes.lower_bound
        and paired.judge_raw_score < judge_classes.upper_bound
    left join classes as human_classes
        on paired.metric = human_classes.metric
        and paired.human_raw_score >= human_classes.lower_bound
        and paired.human_raw_score < human_classes.upper_bound

)

select * from final
