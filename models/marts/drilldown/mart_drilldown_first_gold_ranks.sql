-- noqa: disable=LT02
-- (indentation: lines a Jinja loop repeats cannot sit at one indent in every iteration's compiled SQL)
-- The drill-down's per-run summary of one question: for every retrieval run and question with results shown
-- (fct_retrieval_results_judged), the rank of the first gold unit at each of the rules' granularities
-- (first_gold_<granularity>) in the run's whole ranking (fct_retrieval_question_scores.first_relevant_rank at k = 0,
-- the rank RR is computed from; null when none is retrieved or the question is not judged at that granularity), and
-- the hits among the results shown and the results shown.

with shown as (

    select
        run_id,
        question_id,
        count(case when is_chunk_relevant then 1 end) as hits,
        count(*) as results
    from {{ ref('fct_retrieval_results_judged') }}
    group by run_id, question_id

),

runs as (

    select
        run_id,
        dataset
    from {{ ref('int_retrieval_runs') }}

),

first_ranks as (

    select
        run_id,
        question_id,
        {%- for granularity in granularities() %}
        min(case when granularity = '{{ granularity }}' then first_relevant_rank end) as first_gold_{{ granularity }}
        {{- "," if not loop.last }}
        {%- endfor %}
    from {{ ref('fct_retrieval_question_scores') }}
    where k = 0
    group by run_id, question_id

),

final as (

    select
        shown.run_id,
        runs.dataset,
        shown.question_id,
        {%- for granularity in granularities() %}
        cast(first_ranks.first_gold_{{ granularity }} as integer) as first_gold_{{ granularity }},
        {%- endfor %}
        shown.hits,
        shown.results
    from shown
    inner join runs on shown.run_id = runs.run_id
    left join first_ranks
        on shown.run_id = first_ranks.run_id
        and shown.question_id = first_ranks.question_id

)

select * from final
