-- The relevant units each run retrieved: one row per run x question x granularity x unit that is relevant (macro
-- relevant) that the run ranked, with the unit's rank at its granularity and the position of the first result holding
-- it (DocRec@k and PageRec@k count units within the top-k *results*). Only what the metrics need is kept: relevant
-- hits, not
-- every ranked unit (int_retrieval_depths counts the units retrieved).
--   ranking: macros/retrieval/retrieval_ranking.sql (our runs by rank; imported TREC runs by trec_eval's rule)
--   chunk:   the result's chunk (a TREC docno); a unit is listed once per question (the contract's key), so its
--            rank is its result's position: 1 + the results that precede it, counted once per matching result
--            (not once per granularity) instead of sorting every result
--   doc:     docs ranked by their first occurrence in the result list. A question whose results are each their own
--            document (imported TREC runs) ranks documents as it ranks results, so the same count gives the rank;
--            other questions (chunk runs, several chunks per document) rank their results with a window.
--   page:    a result covers pages page_start..page_end of its doc; pages ranked by first occurrence, then page
--            number within one result. Results without pages have no page units.
-- Incremental by run: a run is recomputed when its version changes (macros/retrieval/retrieval_versions.sql).

{{ config(run_incremental_config(tags=['retrieval_metrics'])) }}

with runs as (

    {{ retrieval_pending_runs() }}

),

-- inlined in each of its reads: a scan of the lake's results per read costs less than holding every result of the
-- run (100M results: spilled beyond the memory limit)
results as {{ not_materialized() }} (

    {{ retrieval_run_results('runs') }}

),

-- the run's relevant units: its dataset's qrels, of its chunker (page-covering chunks), of its splits' questions;
-- only the relevant judgments are read (a pooled qrels judges hundreds of documents per question, a few relevant)
relevant as (

    {{ retrieval_run_judged_units('runs', only_relevant=true) }}

),

-- whether every result of the question is its own document (and covers no page): then documents rank as results do
question_shapes as (

    select
        run_id,
        question_id,
        bool_and(doc_id = unit_id and page_start is null) as results_are_documents
    from results
    group by run_id, question_id

),

-- the granularities are named here, not looped over: the rule is granularity-specific (a result IS a chunk, and a
-- document only when it is its own result; pages and repeated documents are ranked by their own branches below)
-- ---- results that are relevant units themselves: chunks, and the documents of questions whose results are documents
-- each such result is positioned once (1 + the results that precede it), whatever granularities it is a unit of
matched_results as (

    select
        results.run_id,
        results.question_id,
        results.unit_id,
        results.score_key,
        results.rank,
        results.ranks_by_score
    from results
    where exists (
            select 1
            from relevant
            where
                results.run_id = relevant.run_id
                and results.question_id = relevant.question_id
                and results.unit_id = relevant.unit_id
                and relevant.granularity in ('chunk', 'doc')
        )

),

positioned_matches as (

    select
        hit.run_id,
        hit.question_id,
        hit.unit_id,
        1 + count(other.unit_id) as result_position
    from matched_results as hit
    -- the precedence test sits in the join condition, so only the preceding results are joined
    left join results as other
        on hit.run_id = other.run_id
        and hit.question_id = other.question_id
        and {{ retrieval_precedes('hit.ranks_by_score', 'other', 'hit') }}
    group by hit.run_id, hit.question_id, hit.unit_id

),

positioned_unit_hits as (

    select
        positioned_matches.run_id,
        positioned_matches.question_id,
        relevant.granularity,
        positioned_matches.unit_id,
        relevant.relevance,
        positioned_matches.result_position
    from positioned_matches
    inner join relevant
        on positioned_matches.run_id = relevant.run_id
        and positioned_matches.question_id = relevant.question_id
        and positioned_matches.unit_id = relevant.unit_id
        and relevant.granularity in ('chunk', 'doc')
    inner join question_shapes
        on positioned_matches.run_id = question_shapes.run_id
        and positioned_matches.question_id = question_shapes.question_id
    where relevant.granularity = 'chunk' or question_shapes.results_are_documents

),

-- ---- questions with repeated documents or pages: their results positioned by a window (chunk runs are small)
positioned_results as (

    select
        results.*,
        row_number() over (
            partition by results.run_id, results.question_id
            order by
                {{ retrieval_rank_order(
                    'results.ranks_by_score', 'results.score_key', 'results.unit_id', 'results.rank'
                ) }}
        ) as result_position
    from results
    inner join question_shapes using (run_id, question_id)
    where not question_shapes.results_are_documents

),

ranked_docs as (

    {{ retrieval_ranked_documents('positioned_results') }}

),

ranked_pages as (

    {{ retrieval_ranked_pages('positioned_results') }}

),

-- ---- every hit, with its unit's rank and first result position
chunk_and_result_doc_hits as (

    -- a chunk, or a document that is its own result, ranks at its result's position
    select
        run_id,
        question_id,
        granularity,
        unit_id,
        result_position as unit_rank,
        result_position as first_result_position,
        relevance
    from positioned_unit_hits

),

repeated_doc_hits as (

    select
        ranked_docs.run_id,
        ranked_docs.question_id,
        'doc' as granularity,
        ranked_docs.doc_id as unit_id,
        ranked_docs.unit_rank,
        ranked_docs.first_result_position,
        relevant.relevance
    from ranked_docs
    inner join relevant
        on ranked_docs.run_id = relevant.run_id
        and ranked_docs.question_id = relevant.question_id
        and relevant.granularity = 'doc'
        and ranked_docs.doc_id = relevant.unit_id

),

page_hits as (

    select
        ranked_pages.run_id,
        ranked_pages.question_id,
        'page' as granularity,
        ranked_pages.unit_id,
        ranked_pages.unit_rank,
        ranked_pages.first_result_position,
        relevant.relevance
    from ranked_pages
    inner join relevant
        on ranked_pages.run_id = relevant.run_id
        and ranked_pages.question_id = relevant.question_id
        and relevant.granularity = 'page'
        and ranked_pages.unit_id = relevant.unit_id

),

hits as (

    select * from chunk_and_result_doc_hits
    union all
    select * from repeated_doc_hits
    union all
    select * from page_hits

),

final as (

    select
        hits.run_id,
        hits.question_id,
        hits.granularity,
        hits.unit_id,
        cast(hits.unit_rank as integer) as unit_rank,
        cast(hits.first_result_position as integer) as first_result_position,
        hits.relevance,
        runs.run_version
    from hits
    inner join runs on hits.run_id = runs.run_id

)

select * from final
