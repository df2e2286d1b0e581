-- noqa: disable=LT02
-- (indentation: lines a Jinja loop repeats cannot sit at one indent in every iteration's compiled SQL)
-- Answer run x slice dimension x value x metric: mean and n (SPEC §5 slices). Dimensions come from dim_questions:
-- dataset, question_type, doc_type, task, topic levels (l1..l3), company, sector. Questions whose value for a
-- dimension is null are left out of that dimension. The metrics are the registry's lexical ones (seed metrics).

-- depends_on: {{ ref('metrics') }}

{% set metrics = metric_columns('lexical') %}
{% set dimensions = slice_dimensions() %}

with scores as (

    select * from {{ ref('fct_generation_question_scores') }}
    where not is_failed

),

questions as (

    {{ select_question_slices() }}

),

scored as (

    select
        scores.*,
        {% for dimension in dimensions %}questions.{{ dimension }} as dim_{{ dimension }}{{ "," if not loop.last }}
    {% endfor %}
    from scores
    inner join questions
        on scores.dataset = questions.question_dataset
        and scores.question_id = questions.question_id

),

sliced as (

    {% for dimension in dimensions %}
        {% for column, metric in metrics %}
            select
                run_id,
                '{{ dimension }}' as dimension,
                dim_{{ dimension }} as value,
                '{{ metric }}' as metric,
                avg({{ column }}) as mean,
                count({{ column }}) as n
            from scored
            where dim_{{ dimension }} is not null
            group by run_id, dim_{{ dimension }}
                        {{ "union all" if not loop.last }}
        {% endfor %}
                {{ "union all" if not loop.last }}
    {% endfor %}

)

select * from sliced
where n > 0
