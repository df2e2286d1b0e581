-- Human labels as a rater with its own leaderboard (FinanceBench's headline table): per label set, answer run and
-- metric, each label's count and share of the run's labels (Correct / Incorrect / Refusal of 150), beside the run's
-- mean normalised score over its labels, as the judge leaderboard shows a judge's.

with labels as (

    select * from {{ ref('int_human_labels') }}

),

per_label as (

    select
        label_set,
        answer_run_id,
        metric,
        label,
        any_value(raw_score) as raw_score,
        count(*) as n
    from labels
    group by label_set, answer_run_id, metric, label

),

per_run as (

    select
        label_set,
        answer_run_id,
        metric,
        any_value(dataset) as dataset,
        any_value(answer_model) as answer_model,
        any_value(eval_mode) as eval_mode,
        count(*) as n_labelled,
        avg(normalized_score) as mean,
        avg(raw_score) as mean_raw
    from labels
    group by label_set, answer_run_id, metric

),

final as (

    select
        per_run.label_set,
        per_run.answer_run_id,
        per_run.dataset,
        per_run.answer_model,
        per_run.eval_mode,
        per_run.metric,
        per_label.label,
        per_label.raw_score,
        per_label.n,
        per_run.n_labelled,
        cast(per_label.n as double) / per_run.n_labelled as share,
        per_run.mean,
        per_run.mean_raw
    from per_label
    inner join per_run
        on per_label.label_set = per_run.label_set
        and per_label.answer_run_id = per_run.answer_run_id
        and per_label.metric = per_run.metric

)

select * from final
