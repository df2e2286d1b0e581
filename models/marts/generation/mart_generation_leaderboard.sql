-- noqa: disable=LT02
-- (indentation: lines a Jinja loop repeats cannot sit at one indent in every iteration's compiled SQL)
-- Answer run x lexical metric: mean over the run's scored questions and n (questions scored). Failed answers are
-- excluded from the means and counted (n_failed); numeric_match is averaged over questions with a numeric gold.
-- The lexical metrics, and the fct_generation_question_scores column holding each, are the metric registry's
-- (seed metrics, family lexical): a metric added there appears here without an edit.

-- depends_on: {{ ref('metrics') }}

with scores as (

    select * from {{ ref('fct_generation_question_scores') }}

),

runs as (

    select
        run_id,
        model,
        eval_mode,
        dataset,
        retrieval_run_id,
        count(*) as n_questions,
        count(*) filter (where is_failed) as n_failed
    from scores
    group by run_id, model, eval_mode, dataset, retrieval_run_id

),

metric_means as (

    {% for column, metric in metric_columns('lexical') %}
        select
            run_id,
            '{{ metric }}' as metric,
            avg({{ column }}) as mean,
            count({{ column }}) as n
        from scores
        group by run_id
                {{ "union all" if not loop.last }}
    {% endfor %}

),

final as (

    select
        runs.run_id,
        runs.model,
        runs.eval_mode,
        runs.dataset,
        runs.retrieval_run_id,
        -- from the run's eval mode, not from a missing retrieval run: FinanceBench's oracle, inContext and
        -- store runs read documents without a retrieval run of ours (closed_book here, closedBook there)
        lower(replace(runs.eval_mode, '_', '')) = 'closedbook' as is_closed_book,
        metric_means.metric,
        metric_means.mean,
        metric_means.n,
        runs.n_questions,
        runs.n_failed
    from metric_means
    inner join runs using (run_id)

)

select * from final
