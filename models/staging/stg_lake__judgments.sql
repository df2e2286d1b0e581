with source as (

    select * from {{ source('lake', 'judgments') }}

),

renamed as (

    select
        judge_run_id,
        question_id,
        metric,
        raw_score,
        rationale,
        status,
        error,
        created_at
    from source

)

select * from renamed
