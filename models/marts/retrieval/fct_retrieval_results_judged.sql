-- Every retrieval result judged at every granularity: one row per run x question x result, with the result's
-- chunk, document, pages and score, its position in the run's ranking (the one ranking rule, macro
-- retrieval_result_positions, as int_retrieval_ranked_units ranks), and for each granularity the rank of the unit
-- the result is (chunk, doc) or covers (its best-ranked page), that unit's graded relevance and whether it is
-- relevant (relevance > 0). Relevance is read from int_retrieval_ranked_units, whose judgments are
-- int_retrieval_judgments': a chunk is relevant when the evidence names it or it covers a gold page of the gold
-- document. Nothing is re-derived here, so the dashboard's drill-down marks exactly what the metrics count.
-- Incremental per run, like its siblings: a run is recomputed when its run_version changes.

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

positioned_results as (

    {{ retrieval_result_positions('runs', 'results') }}

),

ranked_units as (

    select
        run_id,
        question_id,
        granularity,
        unit_id,
        unit_rank,
        doc_id,
        page_number,
        relevance
    from {{ ref('int_retrieval_ranked_units') }}
    where {{ retrieval_runs_to_process() }}

),

chunk_units as (

    select * from ranked_units
    where granularity = 'chunk'

),

doc_units as (

    select * from ranked_units
    where granularity = 'doc'

),

page_units as (

    select * from ranked_units
    where granularity = 'page'

),

-- a result covers pages page_start..page_end of its document: its page rank is its best-ranked page's, its page
-- relevance the best relevance among them (a result without pages covers none)
result_pages as (

    select
        positioned_results.run_id,
        positioned_results.question_id,
        positioned_results.result_position,
        min(page_units.unit_rank) as page_rank,
        max(page_units.relevance) as page_relevance
    from positioned_results
    inner join page_units
        on positioned_results.run_id = page_units.run_id
        and positioned_results.question_id = page_units.question_id
        and positioned_results.doc_id = page_units.doc_id
        and page_units.page_number between positioned_results.page_start and positioned_results.page_end
    group by positioned_results.run_id, positioned_results.question_id, positioned_results.result_position

),

final as (

    select
        positioned_results.run_id,
        positioned_results.question_id,
        positioned_results.rank,
        cast(positioned_results.result_position as integer) as result_position,
        positioned_results.chunk_id,
        positioned_results.doc_id,
        positioned_results.page_start,
        positioned_results.page_end,
        positioned_results.score,
        chunk_units.unit_rank as chunk_rank,
        chunk_units.relevance as chunk_relevance,
        coalesce(chunk_units.relevance > 0, false) as is_chunk_relevant,
        result_pages.page_rank,
        result_pages.page_relevance,
        coalesce(result_pages.page_relevance > 0, false) as is_page_relevant,
        doc_units.unit_rank as doc_rank,
        doc_units.relevance as doc_relevance,
        coalesce(doc_units.relevance > 0, false) as is_doc_relevant,
        positioned_results.run_version
    from positioned_results
    left join chunk_units
        on positioned_results.run_id = chunk_units.run_id
        and positioned_results.question_id = chunk_units.question_id
        and positioned_results.chunk_unit_id = chunk_units.unit_id
    left join doc_units
        on positioned_results.run_id = doc_units.run_id
        and positioned_results.question_id = doc_units.question_id
        and positioned_results.doc_id = doc_units.doc_id
    left join result_pages
        on positioned_results.run_id = result_pages.run_id
        and positioned_results.question_id = result_pages.question_id
        and positioned_results.result_position = result_pages.result_position

)

select * from final
