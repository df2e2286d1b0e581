-- The confusion matrix of each judge run against each human label set, per metric: one row per (judge class,
-- human class) over the metric's full class list (int_judge_metric_classes), n = scored pairs in the cell
-- (0 for empty cells), so every matrix is complete and its cells sum to mart_judge_agreement's n.

with pairs as (

    select * from {{ ref('fct_judge_human_pairs') }}
    where is_scored

),

classes as (

    select metric, class, class_order from {{ ref('int_judge_metric_classes') }}

),

matrices as (

    select distinct judge_run_id, label_set, metric, judge_model, answer_model, eval_mode from pairs

),

cells as (

    select
        matrices.judge_run_id,
        matrices.label_set,
        matrices.metric,
        matrices.judge_model,
        matrices.answer_model,
        matrices.eval_mode,
        judge_classes.class as judge_class,
        judge_classes.class_order as judge_class_order,
        human_classes.class as human_class,
        human_classes.class_order as human_class_order
    from matrices
    inner join classes as judge_classes on matrices.metric = judge_classes.metric
    inner join classes as human_classes on matrices.metric = human_classes.metric

),

counts as (

    select judge_run_id, label_set, metric, judge_class, human_class, count(*) as n
    from pairs
    group by judge_run_id, label_set, metric, judge_class, human_class

),

final as (

    select
        cells.judge_run_id,
        cells.label_set,
        cells.metric,
        cells.judge_model,
        cells.answer_model,
        cells.eval_mode,
        cells.judge_class,
        cells.human_class,
        cells.judge_class_order,
        cells.human_class_order,
        coalesce(counts.n, 0) as n
    from cells
    left join counts
        on cells.judge_run_id = counts.judge_run_id
        and cells.label_set = counts.label_set
        and cells.metric = counts.metric
        and cells.judge_class = counts.judge_class
        and cells.human_class = counts.human_class

)

select * from final
