with source as (

    select * from {{ source('lake', 'evidence') }}

),

renamed as (

    select
        question_id,
        evidence_ordinal,
        dataset,
        doc_id,
        page_number,
        chunk_id,
        relevance,
        evidence_text,
        load_id,
        created_at
    from source

)

select * from renamed
