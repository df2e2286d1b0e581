with documents as (

    select * from {{ ref('stg_lake__documents') }}

),

doc_types as (

    select
        doc_type,
        label as doc_type_label
    from {{ ref('doc_types') }}

),

page_counts as (

    select
        dataset,
        doc_id,
        count(*) as n_pages_extracted
    from {{ ref('stg_lake__pages') }}
    group by dataset, doc_id

),

-- only the evidence of the documents listed here is counted (a pooled TREC qrels of a dataset without documents
-- judges millions of docnos that no row here would read)
evidence_counts as (

    select
        evidence.dataset,
        evidence.doc_id,
        count(*) as n_evidence,
        count(distinct evidence.question_id) as n_questions
    from {{ ref('stg_lake__evidence') }} as evidence
    where exists (
            select 1
            from documents
            where
                evidence.dataset = documents.dataset
                and evidence.doc_id = documents.doc_id
        )
    group by evidence.dataset, evidence.doc_id

),

final as (

    select
        documents.doc_id,
        documents.dataset,
        documents.title,
        documents.company,
        documents.doc_type,
        doc_types.doc_type_label,
        documents.period,
        documents.sector,
        documents.language,
        documents.source_uri,
        documents.has_content,
        documents.n_pages,
        documents.n_unreadable_pages,
        coalesce(page_counts.n_pages_extracted, 0) as n_pages_extracted,
        coalesce(evidence_counts.n_evidence, 0) as n_evidence,
        coalesce(evidence_counts.n_questions, 0) as n_questions,
        documents.content_sha256,
        documents.load_id,
        documents.created_at
    from documents
    left join doc_types using (doc_type)
    left join page_counts using (dataset, doc_id)
    left join evidence_counts using (dataset, doc_id)

)

select * from final
