with source as (

    select * from {{ source('lake', 'retrieval_results') }}

),

renamed as (

    select
        run_id,
        question_id,
        rank,
        chunk_id,
        doc_id,
        page_start,
        page_end,
        score,
        created_at
    from source

)

select * from renamed
