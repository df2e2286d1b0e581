with evidence as (

    select * from {{ ref('stg_lake__evidence') }}

),

documents as (

    select
        dataset,
        doc_id,
        doc_type,
        company,
        sector,
        n_pages,
        has_content
    from {{ ref('stg_lake__documents') }}

),

final as (

    select
        evidence.question_id,
        evidence.evidence_ordinal,
        evidence.dataset,
        evidence.doc_id,
        evidence.page_number,
        evidence.chunk_id,
        evidence.relevance,
        {{ relevant('evidence.relevance') }} as is_relevant,
        evidence.evidence_text,
        documents.doc_type,
        documents.company,
        documents.sector,
        coalesce(documents.has_content, false) as doc_has_content,
        evidence.load_id,
        evidence.created_at
    from evidence
    left join documents using (dataset, doc_id)

)

select * from final
