with source as (

    select * from {{ source('lake', 'judge_runs') }}

),

renamed as (

    select
        judge_run_id,
        answer_run_id,
        judge_model,
        rubric_version,
        metrics,
        params,
        created_at
    from source

)

select * from renamed
