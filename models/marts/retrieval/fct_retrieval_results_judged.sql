-- The top of every run's ranking, judged at every granularity, for the dashboard's drill-down: one row per run x
-- question x result among the first var('drilldown_depth') (20) results, with the result's chunk, document,
-- pages and score, its position (the one ranking rule, macros/retrieval/retrieval_ranking.sql), and for each
-- granularity the rank of the unit the result is (chunk, doc) or covers (its best-ranked page), that unit's
-- graded relevance in the run's qrels (int_retrieval_judged_units, the one chunk-relevance rule: a chunk is
-- relevant when the evidence names it or it covers a gold page of the gold document) and whether it is relevant.
-- Ranks of documents and pages first seen within the top are the ranks int_retrieval_hits gives them; deeper
-- results are not shown (the metrics read every result). Incremental by run, like its siblings.

{{ config(run_incremental_config()) }}

with runs as (

    {{ retrieval_pending_runs() }}

),

-- inlined in both reads of the top results' cut (its key, then the results that reach it): two scans of the lake's
-- results cost less than holding every result of the run (100M results: spilled beyond the memory limit)
results as {{ not_materialized() }} (

    {{ retrieval_run_results('runs') }}

),

positioned_results as (

    {{ retrieval_top_results('results', var('drilldown_depth')) }}

),

-- the run's judged units: its dataset's qrels, of its chunker, of its splits' questions. Not materialized: each
-- granularity's left join below reads its own granularity's judgments, and DuckDB holds the smaller side of each join
-- in memory (a ranker's qrels judges a few units per question: the judgments; a pooled qrels hundreds: the shown
-- results). Holding every judgment (materialized: 7.1 GB at 100k pooled questions) or every shown unit (a filter of
-- the judgments by the shown units: 2.3 GB at 250k ranked questions, out of memory at 1M under 8 GB) costs more
run_judged as {{ not_materialized() }} (

    {{ retrieval_run_judged_units('runs') }}

),

-- whether a question's shown results are each their own document (imported TREC runs): then these documents are
-- distinct (a unit is listed once per question) and each ranks at its result's position; only the other questions
-- rank their documents by first occurrence (a window over their shown results). Not int_retrieval_hits' question
-- shape (results that are documents and cover no page, over the whole ranking): only document ranks read this one,
-- over the shown results
shown_shapes as (

    select
        run_id,
        question_id,
        bool_and(doc_id = unit_id) as documents_distinct
    from positioned_results
    group by run_id, question_id

),

shared_document_results as (

    select positioned_results.*
    from positioned_results
    inner join shown_shapes
        on positioned_results.run_id = shown_shapes.run_id
        and positioned_results.question_id = shown_shapes.question_id
    where not shown_shapes.documents_distinct

),

ranked_docs as (

    {{ retrieval_ranked_documents('shared_document_results') }}

),

ranked_pages as (

    {{ retrieval_ranked_pages('positioned_results') }}

),

-- each granularity's unit of a result is found its own way (chunk: the result; doc: its doc_id; page: the pages it
-- covers), so the judged units are joined once per granularity by name, not in a loop over granularities()
-- a result's page rank is its best-ranked page's, its page relevance the best relevance among its pages
result_pages as (

    select
        positioned_results.run_id,
        positioned_results.question_id,
        positioned_results.result_position,
        min(ranked_pages.unit_rank) as page_rank,
        max(page_judged.relevance) as page_relevance
    from positioned_results
    inner join ranked_pages
        on positioned_results.run_id = ranked_pages.run_id
        and positioned_results.question_id = ranked_pages.question_id
        and positioned_results.doc_id = ranked_pages.doc_id
        and ranked_pages.page_number
        between positioned_results.page_start
        and {{ chunk_last_page('positioned_results.page_start', 'positioned_results.page_end') }}
    left join run_judged as page_judged
        on ranked_pages.run_id = page_judged.run_id
        and ranked_pages.question_id = page_judged.question_id
        and page_judged.granularity = 'page'
        and ranked_pages.unit_id = page_judged.unit_id
    group by positioned_results.run_id, positioned_results.question_id, positioned_results.result_position

),

final as (

    select
        positioned_results.run_id,
        positioned_results.question_id,
        positioned_results.rank,
        positioned_results.result_position,
        positioned_results.unit_id as chunk_id,
        positioned_results.doc_id,
        positioned_results.page_start,
        positioned_results.page_end,
        positioned_results.score,
        -- a unit is listed once per question: a chunk ranks at its result's position
        positioned_results.result_position as chunk_rank,
        chunk_judged.relevance as chunk_relevance,
        coalesce({{ relevant('chunk_judged.relevance') }}, false) as is_chunk_relevant,
        cast(result_pages.page_rank as integer) as page_rank,
        result_pages.page_relevance,
        coalesce({{ relevant('result_pages.page_relevance') }}, false) as is_page_relevant,
        cast(case when shown_shapes.documents_distinct then positioned_results.result_position
            else ranked_docs.unit_rank
        end as integer) as doc_rank,
        doc_judged.relevance as doc_relevance,
        coalesce({{ relevant('doc_judged.relevance') }}, false) as is_doc_relevant,
        runs.run_version
    from positioned_results
    inner join runs on positioned_results.run_id = runs.run_id
    inner join shown_shapes
        on positioned_results.run_id = shown_shapes.run_id
        and positioned_results.question_id = shown_shapes.question_id
    left join ranked_docs
        on positioned_results.run_id = ranked_docs.run_id
        and positioned_results.question_id = ranked_docs.question_id
        and positioned_results.doc_id = ranked_docs.doc_id
    left join run_judged as chunk_judged
        on positioned_results.run_id = chunk_judged.run_id
        and positioned_results.question_id = chunk_judged.question_id
        and chunk_judged.granularity = 'chunk'
        and positioned_results.unit_id = chunk_judged.unit_id
    left join run_judged as doc_judged
        on positioned_results.run_id = doc_judged.run_id
        and positioned_results.question_id = doc_judged.question_id
        and doc_judged.granularity = 'doc'
        and positioned_results.doc_id = doc_judged.unit_id
    left join result_pages
        on positioned_results.run_id = result_pages.run_id
        and positioned_results.question_id = result_pages.question_id
        and positioned_results.result_position = result_pages.result_position

)

select * from final
