-- noqa: disable=LT02
-- (indentation: lines a Jinja loop repeats cannot sit at one indent in every iteration's compiled SQL)
-- Answer run x slice dimension x value x metric: mean and n (SPEC §5 slices). Dimensions come from dim_questions:
-- dataset, question_type, doc_type, task, topic levels (l1..l3), company, sector. Questions whose value for a
-- dimension is null are left out of that dimension. The metrics are the registry's lexical ones (seed metrics).

-- depends_on: {{ ref('metrics') }}

{% set metrics = metric_columns('lexical') %}

with scores as (

    select * from {{ ref('fct_generation_question_scores') }}
    where not is_failed

),

-- one row per answer and lexical metric
metric_scores as (

    {% for column, metric in metrics %}
        select
            run_id,
            dataset,
            question_id,
            '{{ metric }}' as metric,
            {{ column }} as score
        from scores
                {{ "union all" if not loop.last }}
    {% endfor %}

),

questions as (

    {{ select_question_slices() }}

),

scored as (

    select
        metric_scores.run_id,
        metric_scores.metric,
        metric_scores.score,
        questions.*
    from metric_scores
    inner join questions
        on metric_scores.dataset = questions.question_dataset
        and metric_scores.question_id = questions.question_id

),

sliced as (

    {{ slice_unpivot('scored', ['run_id', 'metric'], 'avg(score) as mean, count(score) as n') }}

),

final as (

    select
        run_id,
        dimension,
        dimension_value as value,
        metric,
        mean,
        n
    from sliced
    where n > 0

)

select * from final
