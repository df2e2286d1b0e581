with source as (

    select * from {{ source('lake', 'llm_calls') }}

),

renamed as (

    select
        request_hash,
        batch_id,
        model,
        purpose,
        request,
        response,
        prompt_tokens,
        completion_tokens,
        latency_ms,
        cost_usd,
        error,
        attempts,
        created_at
    from source

)

select * from renamed
