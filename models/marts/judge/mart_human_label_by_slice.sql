-- noqa: disable=LT02
-- (indentation: lines a Jinja loop repeats cannot sit at one indent in every iteration's compiled SQL)
-- Human labels by slice: FinanceBench's headline shares (Correct / Incorrect / Refusal) per label set, answer run,
-- metric and question slice (the rules' slice dimensions: question type, doc type, company, ...), with the slice's
-- mean normalised label score. Questions whose value for a dimension is null are left out of that dimension.

{% set dimensions = slice_dimensions() %}

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
        {% for dimension in dimensions %}questions.{{ dimension }} as dim_{{ dimension }}{{ "," if not loop.last }}
        {% endfor %}
    from labels
    inner join questions
        on labels.dataset = questions.question_dataset
        and labels.question_id = questions.question_id

),

sliced as (

    {% for dimension in dimensions %}
        select
            label_set,
            answer_run_id,
            metric,
            '{{ dimension }}' as dimension,
            dim_{{ dimension }} as value,
            label,
            any_value(raw_score) as raw_score,
            count(*) as n,
            sum(count(*)) over (partition by label_set, answer_run_id, metric, dim_{{ dimension }}) as n_labelled,
            sum(sum(normalized_score)) over (partition by label_set, answer_run_id, metric, dim_{{ dimension }})
                / sum(count(normalized_score)) over (partition by label_set, answer_run_id, metric, dim_{{ dimension }})
                as mean
        from labelled
        where dim_{{ dimension }} is not null
        group by label_set, answer_run_id, metric, dim_{{ dimension }}, label
                {{ "union all" if not loop.last }}
    {% endfor %}

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
    from sliced

)

select * from final
