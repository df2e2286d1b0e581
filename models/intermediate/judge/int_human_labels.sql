-- Human labels as a rater: every label of the lake with its answer run's dataset, model and mode, and the label's
-- score normalised on the metric's registry scale, as a judge's ok score is (fct_judge_scores): the seed's and the
-- metrics judge runs declared (int_metric_registry; a production evaluator's metric that people annotate too). A
-- label whose metric the registry does not know keeps a null normalised score.

with labels as (

    select
        label_set,
        answer_run_id,
        question_id,
        metric,
        raw_score,
        label,
        annotator
    from {{ ref('stg_lake__human_labels') }}

),

answer_runs as (

    select
        run_id as answer_run_id,
        dataset,
        model as answer_model,
        eval_mode
    from {{ ref('stg_lake__generation_runs') }}

),

metrics as (

    select
        metric,
        scale_min,
        scale_max
    from {{ ref('int_metric_registry') }}

),

final as (

    select
        labels.label_set,
        labels.answer_run_id,
        answer_runs.dataset,
        answer_runs.answer_model,
        answer_runs.eval_mode,
        labels.question_id,
        labels.metric,
        labels.label,
        labels.raw_score,
        (labels.raw_score - metrics.scale_min) / (metrics.scale_max - metrics.scale_min) as normalized_score,
        labels.annotator
    from labels
    left join answer_runs using (answer_run_id)
    left join metrics using (metric)

)

select * from final
