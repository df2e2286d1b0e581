-- Every run's rankings at three granularities, with each unit's qrels relevance: one row per
-- run x question x granularity x retrieved unit.
--   result_position: position in the run's result list (macro retrieval_result_positions, the one ranking rule).
--       Our runs: by rank. Imported TREC runs: trec_eval's rule, score descending then doc id descending (the
--       file's rank column is ignored); a TREC-source run without scores falls back to its rank (its line order).
--   chunk: the result's chunk_id (the docno for TREC runs); a unit listed twice keeps its first position.
--   doc:   docs ranked by their first occurrence in the result list.
--   page:  a result covers pages page_start..page_end of its doc; pages ranked by first occurrence, then page
--          number within one result. Results without pages have no page units.
-- unit_rank is the 1-based rank at the granularity; first_result_position is the position of the first result
-- that holds the unit (DocRec@k / PageRec@k count units within the top-k *results*).

{{
    config(
        materialized='incremental',
        unique_key='run_id',
        incremental_strategy='delete+insert',
        post_hook="{{ retrieval_drop_vanished_runs() }}",
    )
}}

with runs as (

    select
        run_id,
        run_version,
        ranks_by_score
    from {{ ref('int_retrieval_runs') }}
    where {{ retrieval_runs_to_process() }}

),

results as (

    select
        run_id,
        question_id,
        rank,
        chunk_id,
        doc_id,
        page_start,
        page_end,
        score
    from {{ ref('stg_lake__retrieval_results') }}
    where {{ retrieval_runs_to_process() }}

),

-- the ranking rule lives in one macro (fct_retrieval_results_judged positions results with it too)
positioned_results as (

    {{ retrieval_result_positions('runs', 'results') }}

),

chunk_units as (

    select
        run_id,
        run_version,
        question_id,
        'chunk' as granularity,
        chunk_unit_id as unit_id,
        min(result_position) as first_result_position,
        min(doc_id) as doc_id,
        cast(null as integer) as page_number
    from positioned_results
    group by run_id, run_version, question_id, chunk_unit_id

),

doc_units as (

    select
        run_id,
        run_version,
        question_id,
        'doc' as granularity,
        doc_id as unit_id,
        min(result_position) as first_result_position,
        doc_id,
        cast(null as integer) as page_number
    from positioned_results
    group by run_id, run_version, question_id, doc_id

),

covered_pages as (

    select
        run_id,
        run_version,
        question_id,
        doc_id,
        result_position,
        unnest(generate_series(page_start, page_end)) as page_number
    from positioned_results
    where page_start is not null

),

page_units as (

    select
        run_id,
        run_version,
        question_id,
        'page' as granularity,
        doc_id || '#p' || cast(page_number as varchar) as unit_id,
        min(result_position) as first_result_position,
        doc_id,
        cast(page_number as integer) as page_number
    from covered_pages
    group by run_id, run_version, question_id, doc_id, page_number

),

units as (

    select * from chunk_units
    union all
    select * from doc_units
    union all
    select * from page_units

),

ranked_units as (

    select
        run_id,
        run_version,
        question_id,
        granularity,
        unit_id,
        cast(row_number() over (
            partition by run_id, question_id, granularity
            order by first_result_position, page_number
        ) as integer) as unit_rank,
        cast(first_result_position as integer) as first_result_position,
        doc_id,
        page_number
    from units

),

judgments as (

    select
        run_id,
        question_id,
        granularity,
        unit_id,
        relevance
    from {{ ref('int_retrieval_judgments') }}
    where {{ retrieval_runs_to_process() }}

),

final as (

    select
        ranked_units.run_id,
        ranked_units.run_version,
        ranked_units.question_id,
        ranked_units.granularity,
        ranked_units.unit_id,
        ranked_units.unit_rank,
        ranked_units.first_result_position,
        ranked_units.doc_id,
        ranked_units.page_number,
        judgments.relevance
    from ranked_units
    left join judgments
        on ranked_units.run_id = judgments.run_id
        and ranked_units.question_id = judgments.question_id
        and ranked_units.granularity = judgments.granularity
        and ranked_units.unit_id = judgments.unit_id

)

select * from final
