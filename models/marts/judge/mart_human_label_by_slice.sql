-- noqa: disable=LT02
-- (indentation: lines a Jinja loop repeats cannot sit at one indent in every iteration's compiled SQL)
-- Human labels by slice: FinanceBench's headline shares (Correct / Incorrect / Refusal) per label set, answer run,
-- metric and question slice (the rules' slice dimensions: question type, doc type, company, ...), with the slice's
-- mean normalised label score. Questions whose value for a dimension is null are left out of that dimension.

with labels as (

    select * from {{ ref('int_human_labels') }}

),

questions as (

    {{ select_question_slices() }}

),

labelled as (

    select
        labels.label_set,
        labels.answer_run_id,
        labels.metric,
        labels.label,
        labels.raw_score,
        labels.normalized_score,
        questions.*
    from labels
    inner join questions
        on labels.dataset = questions.question_dataset
        and labels.question_id = questions.question_id

),

sliced as (

    {{ slice_unpivot('labelled', ['label_set', 'answer_run_id', 'metric', 'label'],
                     'any_value(raw_score) as raw_score, count(*) as n, sum(normalized_score) as normalized_sum, '
                     ~ 'count(normalized_score) as n_normalized') }}

),

slice_totals as (

    select
        label_set,
        answer_run_id,
        metric,
        dimension,
        dimension_value as value,
        label,
        raw_score,
        n,
        sum(n) over (partition by label_set, answer_run_id, metric, dimension, dimension_value) as n_labelled,
        sum(normalized_sum) over (partition by label_set, answer_run_id, metric, dimension, dimension_value)
        / sum(n_normalized) over (partition by label_set, answer_run_id, metric, dimension, dimension_value) as mean
    from sliced

),

final as (

    select
        label_set,
        answer_run_id,
        metric,
        dimension,
        value,
        label,
        raw_score,
        n,
        cast(n_labelled as bigint) as n_labelled,
        n / n_labelled as share,
        mean
    from slice_totals

)

select * from final
