-- The gold documents of each question (from the qrels), and one primary document for slicing by doc attributes.

with relevant_evidence as (

    select
        question_id,
        doc_id,
        page_number
    from {{ ref('stg_lake__evidence') }}
    where relevance > 0

),

gold_documents as (

    select
        question_id,
        list(distinct doc_id order by doc_id) as gold_doc_ids,
        min(doc_id) as primary_doc_id,
        count(distinct doc_id) as n_gold_docs,
        count(distinct doc_id || '#' || coalesce(cast(page_number as varchar), '')) filter (
            where page_number is not null
        ) as n_gold_pages
    from relevant_evidence
    group by question_id

)

select * from gold_documents
