-- How many units each run retrieved per question at each granularity (P@k divides by the units retrieved when fewer
-- than k; P over the whole ranking by all of them; trec_eval's num_ret): one row per run x question x granularity.
--   chunk: the results (a unit is listed once per question)
--   doc:   the distinct documents (the results, when each result is its own document: imported TREC runs)
--   page:  the distinct pages the results cover (none for results without pages)
-- Incremental by run, like int_retrieval_hits.

{{ config(run_incremental_config(tags=['retrieval_metrics'])) }}

with pending as (

    {{ retrieval_runs_to_process() }}

),

-- inlined in its two readers: the second (results of questions whose results share documents) is pruned whole
-- for runs whose results are each their own document (imported TREC runs)
results as {{ not_materialized() }} (

    select
        results.run_id,
        results.question_id,
        results.chunk_id,
        results.doc_id,
        results.page_start,
        {{ chunk_last_page('results.page_start', 'results.page_end') }} as page_end
    from {{ ref('stg_lake__retrieval_results') }} as results
    inner join pending on results.run_id = pending.run_id

),

question_shapes as (

    select
        run_id,
        question_id,
        count(*) as n_results,
        bool_and(doc_id = chunk_id and page_start is null) as results_are_documents
    from results
    group by run_id, question_id

),

-- distinct documents and pages, counted only where results share them (a count(distinct) over every result costs
-- more than the rest of the model)
repeated_results as (

    select results.*
    from results
    inner join question_shapes using (run_id, question_id)
    where not question_shapes.results_are_documents

),

repeated_doc_counts as (

    select
        run_id,
        question_id,
        count(distinct doc_id) as n_docs
    from repeated_results
    group by run_id, question_id

),

covered_pages as (

    select
        run_id,
        question_id,
        doc_id,
        {{ unnest_series('page_start', 'page_end') }} as page_number
    from repeated_results
    where page_start is not null

),

page_counts as (

    select
        run_id,
        question_id,
        count(distinct {{ page_unit_id('doc_id', 'page_number') }}) as n_pages
    from covered_pages
    group by run_id, question_id

),

-- one branch per granularity, not a loop over granularities(): each counts its units its own way (the results, their
-- distinct documents, the pages they cover)
depths as (

    select
        run_id,
        question_id,
        'chunk' as granularity,
        n_results as n_retrieved
    from question_shapes
    union all
    select
        question_shapes.run_id,
        question_shapes.question_id,
        'doc' as granularity,
        case when question_shapes.results_are_documents then question_shapes.n_results
            else repeated_doc_counts.n_docs
        end as n_retrieved
    from question_shapes
    left join repeated_doc_counts using (run_id, question_id)
    union all
    select
        run_id,
        question_id,
        'page' as granularity,
        n_pages as n_retrieved
    from page_counts

),

final as (

    select
        depths.run_id,
        depths.question_id,
        depths.granularity,
        cast(depths.n_retrieved as integer) as n_retrieved,
        pending.run_version
    from depths
    inner join pending on depths.run_id = pending.run_id

)

select * from final
