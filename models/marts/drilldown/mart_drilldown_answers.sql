-- noqa: disable=LT02
-- (indentation: lines a Jinja loop repeats cannot sit at one indent in every iteration's compiled SQL)
-- The drill-down's answers: every answer of every answer run (int_generation_answers: the full text as written, or
-- the error), with the run's model, eval mode and retrieval run, and the answer's lexical scores
-- (fct_generation_question_scores), one column per lexical metric of the registry named after the metric (seed
-- metrics, family lexical: a metric added there appears here without an edit). Null scores where the question has
-- no reference answer or the answer failed.

-- depends_on: {{ ref('metrics') }}

with answers as (

    select * from {{ ref('int_generation_answers') }}

),

scores as (

    select * from {{ ref('fct_generation_question_scores') }}

),

final as (

    select
        answers.run_id,
        answers.question_id,
        answers.dataset,
        answers.model,
        answers.eval_mode,
        answers.retrieval_run_id,
        answers.answer,
        answers.error,
        {%- for column, metric in metric_columns('lexical') %}
            scores.{{ column }}{% if column != metric %} as {{ metric }}{% endif %}{{ "," if not loop.last }}
        {%- endfor %}
    from answers
    left join scores
        on answers.run_id = scores.run_id
        and answers.question_id = scores.question_id

)

select * from final
