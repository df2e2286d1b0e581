-- The drill-down's retrieved chunks: every row of fct_retrieval_results_judged (the top var drilldown_depth results
-- of every run and question, with the hit marks and ranks the metrics use: never re-decided here), with the run's
-- dataset, the chunk's text (a TREC run's docno that is not a chunk of the lake has none) and whether an answer run
-- over this retrieval run put the chunk into the question's prompt (mart_drilldown_prompt_chunks). One row per run x
-- question x result position.
-- Incremental by run, like the model it shows: a run is recomputed when its version changes (its version in
-- fct_retrieval_results_judged, this model's code, and the chunks answer runs over it put into prompts:
-- drilldown_run_versions), so adding a run computes, tests and publishes that run's rows only.

{{ config(run_incremental_config(post_hook='{{ retrieval_record_runs(drilldown_run_versions()) }}')) }}
-- a warehouse built when this model was a table gains the column; its runs, none recorded, are all recomputed
{{ config(on_schema_change='append_new_columns') }}

with versions as (

    {{ drilldown_run_versions() }}

),

pending as (

    select
        run_id,
        run_version
    from versions
    -- the runs whose version the model does not hold yet (delete+insert by run replaces their rows)
    where {{ per_run_pending('versions') }}

),

results as (

    select judged.*
    from {{ ref('fct_retrieval_results_judged') }} as judged
    inner join pending on judged.run_id = pending.run_id

),

runs as (

    select
        run_id,
        dataset
    from {{ ref('int_retrieval_runs') }}

),

chunks as (

    select
        dataset,
        chunk_id,
        text
    from {{ ref('stg_lake__chunks') }}

),

prompted as (

    select distinct
        retrieval_run_id,
        question_id,
        chunk_id
    from {{ ref('mart_drilldown_prompt_chunks') }}

),

final as (

    select
        results.run_id,
        runs.dataset,
        results.question_id,
        results.rank,
        results.result_position,
        results.chunk_id,
        results.doc_id,
        results.page_start,
        results.page_end,
        results.score,
        results.is_chunk_relevant as chunk_hit,
        results.chunk_relevance,
        results.is_page_relevant as page_hit,
        results.is_doc_relevant as doc_hit,
        results.chunk_rank,
        results.page_rank,
        results.doc_rank,
        prompted.chunk_id is not null as in_prompt,
        chunks.text,
        pending.run_version
    from results
    inner join pending on results.run_id = pending.run_id
    inner join runs on results.run_id = runs.run_id
    left join chunks
        on runs.dataset = chunks.dataset
        and results.chunk_id = chunks.chunk_id
    left join prompted
        on results.run_id = prompted.retrieval_run_id
        and results.question_id = prompted.question_id
        and results.chunk_id = prompted.chunk_id

)

select * from final
