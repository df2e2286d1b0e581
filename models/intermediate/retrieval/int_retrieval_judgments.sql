-- The qrels of each run at three granularities: one row per run x question x granularity x judged unit.
-- A run is judged against the qrels of its own dataset (retrieval_runs.dataset = evidence.dataset), and when it
-- asked for some splits only (int_retrieval_runs.question_splits), against the qrels of those splits' questions.
--   doc:   the evidence's doc_id
--   page:  (doc_id, page_number) of evidence that names a page
--   chunk: the evidence's chunk_id (TREC / BEIR: the docno / corpus id), and for page-level qrels (FinanceBench)
--          every chunk of the run's chunker that covers a gold page of the gold document
-- relevance is graded (max over evidence rows naming the same unit); relevant means relevance > 0.

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
        dataset,
        chunker_id,
        run_version,
        question_splits
    from {{ ref('int_retrieval_runs') }}
    where {{ retrieval_runs_to_process() }}

),

evidence as (

    select
        question_id,
        dataset,
        doc_id,
        page_number,
        chunk_id,
        relevance
    from {{ ref('stg_lake__evidence') }}

),

questions as (

    select
        question_id,
        split
    from {{ ref('stg_lake__questions') }}

),

-- top-level chunks only: a parent-child retriever returns parents, so children are never units of its ranking
chunks as (

    select
        chunk_id,
        doc_id,
        chunker_id,
        page_start,
        coalesce(page_end, page_start) as page_end
    from {{ ref('stg_lake__chunks') }}
    where parent_chunk_id is null
        and page_start is not null

),

run_evidence as (

    select
        runs.run_id,
        runs.run_version,
        runs.chunker_id,
        evidence.question_id,
        evidence.doc_id,
        evidence.page_number,
        evidence.chunk_id,
        evidence.relevance
    from runs
    inner join evidence on runs.dataset = evidence.dataset
    left join questions on evidence.question_id = questions.question_id
    where runs.question_splits is null
        or list_contains(runs.question_splits, questions.split)

),

doc_judgments as (

    select
        run_id,
        run_version,
        question_id,
        'doc' as granularity,
        doc_id as unit_id,
        max(relevance) as relevance
    from run_evidence
    group by run_id, run_version, question_id, doc_id

),

page_judgments as (

    select
        run_id,
        run_version,
        question_id,
        'page' as granularity,
        doc_id || '#p' || cast(page_number as varchar) as unit_id,
        max(relevance) as relevance
    from run_evidence
    where page_number is not null
    group by run_id, run_version, question_id, doc_id, page_number

),

named_chunk_evidence as (

    select
        run_id,
        run_version,
        question_id,
        chunk_id,
        relevance
    from run_evidence
    where chunk_id is not null

),

page_covering_chunk_evidence as (

    select
        run_evidence.run_id,
        run_evidence.run_version,
        run_evidence.question_id,
        chunks.chunk_id,
        run_evidence.relevance
    from run_evidence
    inner join chunks
        on run_evidence.chunker_id = chunks.chunker_id
        and run_evidence.doc_id = chunks.doc_id
        and run_evidence.page_number between chunks.page_start and chunks.page_end
    where run_evidence.chunk_id is null
        and run_evidence.page_number is not null

),

chunk_judgments as (

    select
        run_id,
        run_version,
        question_id,
        'chunk' as granularity,
        chunk_id as unit_id,
        max(relevance) as relevance
    from (
        select * from named_chunk_evidence
        union all
        select * from page_covering_chunk_evidence
    ) as chunk_evidence
    group by run_id, run_version, question_id, chunk_id

),

final as (

    select * from doc_judgments
    union all
    select * from page_judgments
    union all
    select * from chunk_judgments

)

select * from final
