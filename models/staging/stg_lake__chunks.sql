with source as (

    select * from {{ source('lake', 'chunks') }}

),

renamed as (

    select
        chunk_id,
        doc_id,
        dataset,
        chunker_id,
        ordinal,
        page_start,
        page_end,
        char_start,
        char_end,
        n_tokens,
        text,
        parent_chunk_id,
        load_id,
        created_at
    from source

)

select * from renamed
