-- Every judge-human pair (fct_judge_human_pairs) at each grain agreement is reported at, one row per grain x pair:
-- the one set of pairs that mart_judge_agreement (agreement_stats) and mart_judge_confusion both count, so a
-- confusion matrix always sums to its agreement row's n. Grains (column `grain`):
-- - judge_run: one judge run x label set x metric (judge_run_id set);
-- - judge_model: judge model x the metric's rubric x label set x metric x eval_mode x answer model, pooled across
--   judge runs (judge_run_id null); an answer judged by several runs of the same model and rubric counts once, with
--   its latest judgment (a re-judged answer must not weigh twice);
-- - judge_model_overall: the same pooled over every eval_mode and answer model (eval_mode, answer_model null).

with pairs as (

    select * from {{ ref('fct_judge_human_pairs') }}

),

latest_pairs as (

    select *
    from pairs
    qualify row_number() over (
            partition by judge_model, rubric, label_set, answer_run_id, question_id, metric
            order by judged_at desc, judge_run_id desc
        ) = 1

),

final as (

    select
        'judge_run' as grain,
        judge_run_id,
        label_set,
        metric,
        judge_model,
        rubric,
        answer_model,
        eval_mode,
        answer_run_id,
        question_id,
        is_scored,
        judge_class,
        human_class
    from pairs
    union all
    select
        'judge_model' as grain,
        cast(null as string) as judge_run_id,
        label_set,
        metric,
        judge_model,
        rubric,
        answer_model,
        eval_mode,
        answer_run_id,
        question_id,
        is_scored,
        judge_class,
        human_class
    from latest_pairs
    union all
    select
        'judge_model_overall' as grain,
        cast(null as string) as judge_run_id,
        label_set,
        metric,
        judge_model,
        rubric,
        cast(null as string) as answer_model,
        cast(null as string) as eval_mode,
        answer_run_id,
        question_id,
        is_scored,
        judge_class,
        human_class
    from latest_pairs

)

select * from final
