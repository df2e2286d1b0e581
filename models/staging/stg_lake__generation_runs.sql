with source as (

    select * from {{ source('lake', 'generation_runs') }}

),

renamed as (

    select
        run_id,
        dataset,
        retrieval_run_id,
        model,
        eval_mode,
        prompt_template,
        params,
        created_at
    from source

)

select * from renamed
