-- noqa: disable=LT02
-- (indentation: lines a Jinja loop repeats cannot sit at one indent in every iteration's compiled SQL)
-- Every per-question score of every run in one long table: retrieval (each metric at each granularity and k, for
-- the questions the run retrieved for), generation (the lexical metrics of answers that did not fail) and judged
-- (the normalised score of ok judgments only: not_applicable and failed rows are not scores). The values are the
-- fct_* models' own columns, unpivoted; nothing is recomputed here. Which columns, under which metric names: the
-- metric registry (seed metrics: retrieval and lexical families, each metric's score_column). It feeds the topic x
-- task matrix and the dashboard's run-vs-run page.

-- depends_on: {{ ref('metrics') }}

with retrieval_scores as (

    select * from {{ ref('fct_retrieval_question_scores') }}
    where question_in_run

),

retrieval_runs as (

    select
        run_id,
        dataset
    from {{ ref('int_retrieval_runs') }}

),

generation_scores as (

    select * from {{ ref('fct_generation_question_scores') }}
    where not is_failed

),

judge_scores as (

    select * from {{ ref('fct_judge_scores') }}
    where status = 'ok'

),

retrieval_long as (

    {% for column, metric in metric_columns('retrieval') %}
        select
            retrieval_scores.run_id,
            'retrieval' as run_kind,
            retrieval_runs.dataset,
            retrieval_scores.question_id,
            '{{ metric }}' as metric,
            retrieval_scores.granularity,
            retrieval_scores.k,
            cast(retrieval_scores.{{ column }} as double) as value
        from retrieval_scores
        inner join retrieval_runs using (run_id)
        where retrieval_scores.{{ column }} is not null
                {{ "union all" if not loop.last }}
    {% endfor %}

),

generation_long as (

    {% for column, metric in metric_columns('lexical') %}
        select
            run_id,
            'generation' as run_kind,
            dataset,
            question_id,
            '{{ metric }}' as metric,
            cast(null as varchar) as granularity,
            cast(null as integer) as k,
            cast({{ column }} as double) as value
        from generation_scores
        where {{ column }} is not null
                {{ "union all" if not loop.last }}
    {% endfor %}

),

judge_long as (

    select
        judge_run_id as run_id,
        'judge' as run_kind,
        dataset,
        question_id,
        metric,
        cast(null as varchar) as granularity,
        cast(null as integer) as k,
        cast(normalized_score as double) as value
    from judge_scores

),

final as (

    select * from retrieval_long
    union all
    select * from generation_long
    union all
    select * from judge_long

)

select * from final
