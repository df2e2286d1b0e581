-- The confusion matrix of every group mart_judge_agreement reports (grain x judge run or judge model x rubric x
-- label set x metric x answer model x eval_mode, from the same pairs: fct_judge_agreement_pairs): one row per
-- (judge class, human class) over the metric's full class list (int_judge_metric_classes), n = scored pairs in the
-- cell (0 for empty cells), so every matrix is complete and its cells sum to its agreement row's n.

with pairs as (

    select * from {{ ref('fct_judge_agreement_pairs') }}
    where is_scored

),

classes as (

    select
        metric,
        class,
        class_order
    from {{ ref('int_judge_metric_classes') }}

),

matrices as (

    select distinct
        grain,
        judge_run_id,
        label_set,
        metric,
        judge_model,
        rubric,
        answer_model,
        eval_mode
    from pairs

),

cells as (

    select
        matrices.*,
        judge_classes.class as judge_class,
        judge_classes.class_order as judge_class_order,
        human_classes.class as human_class,
        human_classes.class_order as human_class_order
    from matrices
    inner join classes as judge_classes on matrices.metric = judge_classes.metric
    inner join classes as human_classes on matrices.metric = human_classes.metric

),

counts as (

    select
        grain,
        judge_run_id,
        label_set,
        metric,
        judge_model,
        rubric,
        answer_model,
        eval_mode,
        judge_class,
        human_class,
        count(*) as n
    from pairs
    group by
        grain, judge_run_id, label_set, metric, judge_model, rubric, answer_model, eval_mode, judge_class,
        human_class

),

final as (

    select
        cells.grain,
        cells.judge_run_id,
        cells.label_set,
        cells.metric,
        cells.judge_model,
        cells.rubric,
        cells.answer_model,
        cells.eval_mode,
        cells.judge_class,
        cells.human_class,
        cells.judge_class_order,
        cells.human_class_order,
        coalesce(counts.n, 0) as n
    from cells
    left join counts
        -- the pooled grains have null keys (judge_run_id; answer_model and eval_mode overall): null matches null
        on cells.grain = counts.grain
        and counts.judge_run_id is not distinct from cells.judge_run_id
        and cells.label_set = counts.label_set
        and cells.metric = counts.metric
        and counts.judge_model is not distinct from cells.judge_model
        and counts.rubric is not distinct from cells.rubric
        and counts.answer_model is not distinct from cells.answer_model
        and counts.eval_mode is not distinct from cells.eval_mode
        and cells.judge_class = counts.judge_class
        and cells.human_class = counts.human_class

)

select * from final
