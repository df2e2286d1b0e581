with source as (

    select * from {{ source('lake', 'retrieval_runs') }}

),

renamed as (

    select
        run_id,
        dataset,
        retriever,
        condition,
        k,
        embedder,
        reranker,
        chunker_id,
        params,
        config_hash,
        source,
        created_at
    from source

)

select * from renamed
