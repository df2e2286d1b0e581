with source as (

    select * from {{ source('lake', 'answers') }}

),

renamed as (

    select
        run_id,
        question_id,
        answer,
        prompt,
        context_chunk_ids,
        passages,
        prompt_tokens,
        completion_tokens,
        latency_ms,
        cost_usd,
        error,
        created_at
    from source

)

select * from renamed
