-- A run's means by question slice with its Oracle-Doc / Oracle-Page counterparts' means on the same slice beside
-- them (the retrieval-gap study's conditions, slice by slice): every row of mart_retrieval_by_slice, and for a run
-- mart_oracle_gap pairs with counterparts (same config, condition oracle_doc / oracle_page; the newest when there
-- are several) their mean of the same metric, granularity, k and slice value. Null where the run has no counterpart
-- or the counterpart has no question in the slice. The dashboard's slices page selects its rows.

with slices as (

    select
        run_id,
        dimension,
        dimension_value,
        granularity,
        metric,
        k,
        mean,
        n_questions
    from {{ ref('mart_retrieval_by_slice') }}

),

runs as (

    select
        run_id,
        dataset
    from {{ ref('int_retrieval_runs') }}

),

counterparts as (

    select distinct
        run_id,
        oracle_doc_run_id,
        oracle_page_run_id
    from {{ ref('mart_oracle_gap') }}

),

final as (

    select
        slices.run_id,
        runs.dataset,
        slices.dimension,
        slices.dimension_value,
        slices.granularity,
        slices.metric,
        slices.k,
        slices.mean,
        slices.n_questions,
        counterparts.oracle_doc_run_id,
        oracle_doc.mean as oracle_doc_mean,
        oracle_doc.n_questions as oracle_doc_n_questions,
        counterparts.oracle_page_run_id,
        oracle_page.mean as oracle_page_mean,
        oracle_page.n_questions as oracle_page_n_questions
    from slices
    inner join runs on slices.run_id = runs.run_id
    left join counterparts on slices.run_id = counterparts.run_id
    left join slices as oracle_doc
        on counterparts.oracle_doc_run_id = oracle_doc.run_id
        and slices.dimension = oracle_doc.dimension
        and slices.dimension_value = oracle_doc.dimension_value
        and slices.granularity = oracle_doc.granularity
        and slices.metric = oracle_doc.metric
        and slices.k = oracle_doc.k
    left join slices as oracle_page
        on counterparts.oracle_page_run_id = oracle_page.run_id
        and slices.dimension = oracle_page.dimension
        and slices.dimension_value = oracle_page.dimension_value
        and slices.granularity = oracle_page.granularity
        and slices.metric = oracle_page.metric
        and slices.k = oracle_page.k

)

select * from final
