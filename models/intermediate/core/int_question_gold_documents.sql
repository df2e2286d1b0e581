-- The gold documents of each question (from the qrels), one primary document for slicing by doc attributes, and
-- whether none of them has content (no retriever can return a gold unit of such a question).

with chunked_documents as (

    select distinct
        dataset,
        doc_id
    from {{ ref('stg_lake__chunks') }}

),

-- content: text in the lake, as pages (documents.has_content) or as chunks landed without pages
documents as (

    select
        documents.dataset,
        documents.doc_id,
        documents.has_content or chunked_documents.doc_id is not null as has_content
    from {{ ref('stg_lake__documents') }} as documents
    left join chunked_documents
        on documents.dataset = chunked_documents.dataset
        and documents.doc_id = chunked_documents.doc_id

),

relevant_evidence as (

    select
        evidence.dataset,
        evidence.question_id,
        evidence.doc_id,
        evidence.page_number,
        documents.has_content
    from {{ ref('stg_lake__evidence') }} as evidence
    left join documents
        on evidence.dataset = documents.dataset
        and evidence.doc_id = documents.doc_id
    where {{ relevant('evidence.relevance') }}

),

gold_documents as (

    select
        dataset,
        question_id,
        {{ ordered_list('doc_id', ['doc_id'], distinct=true) }} as gold_doc_ids,
        min(doc_id) as primary_doc_id,
        count(distinct doc_id) as n_gold_docs,
        count(distinct doc_id || '#' || coalesce(cast(page_number as string), '')) filter (
            where page_number is not null
        ) as n_gold_pages,
        -- a gold document the lake does not list (TREC qrels without a corpus) is not known to lack content
        bool_and(coalesce(not has_content, false)) as gold_without_content
    from relevant_evidence
    group by dataset, question_id

)

select * from gold_documents
