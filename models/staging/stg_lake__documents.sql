with source as (

    select * from {{ source('lake', 'documents') }}

),

renamed as (

    select
        doc_id,
        dataset,
        title,
        company,
        doc_type,
        period,
        sector,
        language,
        source_uri,
        n_pages,
        content_sha256,
        has_content,
        load_id,
        created_at
    from source

)

select * from renamed
