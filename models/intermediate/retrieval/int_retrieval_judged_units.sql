-- The qrels of every dataset at three granularities: one row per question x granularity x judged unit, with its
-- graded relevance (max over the evidence rows naming the same unit; relevant as macro `relevant` says). Computed once
-- per dataset, not per run: a run is judged against its dataset's rows, of its chunker (page-covering chunks) and,
-- when it asked for some splits, of those splits' questions (int_retrieval_hits, fct_retrieval_question_scores).
--   doc:   the evidence's doc_id
--   page:  (doc_id, page_number) of evidence that names a page
--   chunk: the evidence's chunk_id (TREC / BEIR: the docno / corpus id), and for page-level qrels (FinanceBench)
--          every top-level chunk that covers a gold page of the gold document (chunker_id says whose chunk it is;
--          null for chunks the evidence names, which every run of the dataset is judged by)

-- a table, not a view: every retrieval model of every run reads it, and the qrels change only when a dataset is
-- re-landed (the build then rebuilds it with its inputs)
{{ config(materialized='table', tags=['retrieval_metrics']) }}

with evidence as (

    select
        evidence.dataset,
        evidence.question_id,
        questions.split,
        evidence.doc_id,
        evidence.page_number,
        evidence.chunk_id,
        evidence.relevance
    from {{ ref('stg_lake__evidence') }} as evidence
    left join {{ ref('stg_lake__questions') }} as questions
        on evidence.dataset = questions.dataset
        and evidence.question_id = questions.question_id

),

-- top-level chunks only: a parent-child retriever returns parents, so children are never units of its ranking
chunks as (

    select
        dataset,
        chunk_id,
        doc_id,
        chunker_id,
        page_start,
        {{ chunk_last_page('page_start', 'page_end') }} as page_end
    from {{ ref('stg_lake__chunks') }}
    where parent_chunk_id is null
        and page_start is not null

),

-- one CTE per granularity, not a loop over granularities(): each takes its units from the evidence its own way (the
-- document, the page, the named chunk or the chunks covering a gold page)
doc_units as (

    select
        dataset,
        cast(null as string) as chunker_id,
        question_id,
        split,
        'doc' as granularity,
        doc_id as unit_id,
        max(relevance) as relevance
    from evidence
    group by dataset, question_id, split, doc_id

),

page_units as (

    select
        dataset,
        cast(null as string) as chunker_id,
        question_id,
        split,
        'page' as granularity,
        {{ page_unit_id('doc_id', 'page_number') }} as unit_id,
        max(relevance) as relevance
    from evidence
    where page_number is not null
    group by dataset, question_id, split, doc_id, page_number

),

named_chunk_units as (

    select
        dataset,
        cast(null as string) as chunker_id,
        question_id,
        split,
        'chunk' as granularity,
        chunk_id as unit_id,
        max(relevance) as relevance
    from evidence
    where chunk_id is not null
    group by dataset, question_id, split, chunk_id

),

page_covering_chunk_units as (

    select
        evidence.dataset,
        chunks.chunker_id,
        evidence.question_id,
        evidence.split,
        'chunk' as granularity,
        chunks.chunk_id as unit_id,
        max(evidence.relevance) as relevance
    from evidence
    inner join chunks
        on evidence.dataset = chunks.dataset
        and evidence.doc_id = chunks.doc_id
        and evidence.page_number between chunks.page_start and chunks.page_end
    where evidence.chunk_id is null
        and evidence.page_number is not null
    group by evidence.dataset, chunks.chunker_id, evidence.question_id, evidence.split, chunks.chunk_id

),

final as (

    select * from doc_units
    union all
    select * from page_units
    union all
    select * from named_chunk_units
    union all
    select * from page_covering_chunk_units

)

select * from final
