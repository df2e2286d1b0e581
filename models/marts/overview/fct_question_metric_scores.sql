-- noqa: disable=LT02
-- (indentation: lines a Jinja loop repeats cannot sit at one indent in every iteration's compiled SQL)
-- Every per-question score of every run in one long table: retrieval (each metric at each granularity and k, for
-- the questions the run retrieved for; DocRec and PageRec without the questions whose gold documents have no
-- content, as in the leaderboards), generation (the lexical metrics of answers that did not fail) and judged
-- (the normalised score of answers judged ok only: not_applicable and failed rows are not scores; with repeated
-- judgments an answer's mean over its ok repeats, fct_judge_answer_scores, so comparisons pair per-answer means).
-- The values are the fct_* models' own columns, unpivoted; nothing is recomputed here. Which columns, under which
-- metric names: the metric registry (seed metrics: retrieval and lexical families, each metric's score_column). It
-- feeds the topic x task matrix and the dashboard's run-vs-run page.

-- Incremental (append): the pre-hook deletes the retrieval rows of runs whose version changed (the run's scores'
-- version and this model's code, so a change to the registry or to this SQL recomputes every run) and every
-- generation and judge row (small: recomputed in every build); the select adds what is missing; the post-hook
-- deletes the runs gone from the lake and records the versions the model holds (finrag_run_versions).

-- depends_on: {{ ref('metrics') }}

{{ config(run_incremental_config(upstream='fct_retrieval_question_scores')) }}

with retrieval_versions as (

    {{ upstream_run_versions(ref('fct_retrieval_question_scores')) }}

),

pending_retrieval_runs as (

    select
        retrieval_versions.run_id,
        retrieval_versions.run_version,
        runs.dataset
    from retrieval_versions
    inner join {{ ref('int_retrieval_runs') }} as runs using (run_id)
    -- the runs whose version the model does not hold yet (the pre-hook deleted the stale ones)
    where {{ per_run_pending('retrieval_versions') }}

),

retrieval_scores as (

    select * from {{ ref('fct_retrieval_question_scores') }}
    where question_in_run

),

questions_without_content as (

    select * from {{ ref('int_questions_without_content') }}

),

generation_scores as (

    select * from {{ ref('fct_generation_question_scores') }}
    where not is_failed

),

judge_scores as (

    select * from {{ ref('fct_judge_answer_scores') }}
    where status = 'ok'

),

retrieval_long as (

    {% for column, metric in metric_columns('retrieval') %}
        select
            retrieval_scores.run_id,
            'retrieval' as run_kind,
            pending_retrieval_runs.dataset,
            retrieval_scores.question_id,
            '{{ metric }}' as metric,
            retrieval_scores.granularity,
            retrieval_scores.k,
            cast(retrieval_scores.{{ column }} as double) as value,
            pending_retrieval_runs.run_version
        from retrieval_scores
        inner join pending_retrieval_runs using (run_id)
        where retrieval_scores.{{ column }} is not null
            {%- if metric in var('retrieval_exclude_without_content') %}
            and not exists (
                select 1 from questions_without_content
                where questions_without_content.dataset = pending_retrieval_runs.dataset
                    and questions_without_content.question_id = retrieval_scores.question_id
            )
            {%- endif %}
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
            cast(null as string) as granularity,
            cast(null as integer) as k,
            cast({{ column }} as double) as value,
            cast(null as string) as run_version
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
        cast(null as string) as granularity,
        cast(null as integer) as k,
        cast(normalized_score as double) as value,
        cast(null as string) as run_version
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
