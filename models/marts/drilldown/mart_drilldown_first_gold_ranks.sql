-- noqa: disable=LT02
-- (indentation: lines a Jinja loop repeats cannot sit at one indent in every iteration's compiled SQL)
-- The drill-down's per-run summary of one question: for every retrieval run and question with results shown
-- (fct_retrieval_results_judged), the rank of the first gold unit at each of the rules' granularities
-- (first_gold_<granularity>) in the run's whole ranking (fct_retrieval_question_scores.first_relevant_rank at k = 0,
-- the rank RR is computed from; null when none is retrieved or the question is not judged at that granularity), and
-- the hits among the results shown and the results shown.
-- Incremental by run: a run is recomputed when its version in either model it reads or this model's code changes
-- (first_gold_run_versions), so adding a run reads, tests and publishes that run's rows only.

{{ config(run_incremental_config(post_hook='{{ retrieval_record_runs(first_gold_run_versions()) }}')) }}
-- a warehouse built when this model was a table gains the column; its runs, none recorded, are all recomputed
{{ config(on_schema_change='append_new_columns') }}

with versions as (

    {{ first_gold_run_versions() }}

),

pending as (

    select
        run_id,
        run_version
    from versions
    -- the runs whose version the model does not hold yet (delete+insert by run replaces their rows)
    where {{ per_run_pending('versions') }}

),

shown as (

    select
        judged.run_id,
        judged.question_id,
        count(case when judged.is_chunk_relevant then 1 end) as hits,
        count(*) as results
    from {{ ref('fct_retrieval_results_judged') }} as judged
    inner join pending on judged.run_id = pending.run_id
    group by judged.run_id, judged.question_id

),

runs as (

    select
        run_id,
        dataset
    from {{ ref('int_retrieval_runs') }}

),

first_ranks as (

    select
        scores.run_id,
        scores.question_id,
        {%- for granularity in granularities() %}
        min(case when scores.granularity = '{{ granularity }}' then scores.first_relevant_rank end)
            as first_gold_{{ granularity }}
        {{- "," if not loop.last }}
        {%- endfor %}
    from {{ ref('fct_retrieval_question_scores') }} as scores
    inner join pending on scores.run_id = pending.run_id
    where scores.k = 0
    group by scores.run_id, scores.question_id

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
        shown.results,
        pending.run_version
    from shown
    inner join pending on shown.run_id = pending.run_id
    inner join runs on shown.run_id = runs.run_id
    left join first_ranks
        on shown.run_id = first_ranks.run_id
        and shown.question_id = first_ranks.question_id

)

select * from final
