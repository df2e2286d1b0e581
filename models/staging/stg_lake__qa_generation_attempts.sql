with source as (

    select * from {{ source('lake', 'qa_generation_attempts') }}

),

renamed as (

    select
        generation_run_id,
        attempt_id,
        dataset,
        topic_id,
        task,
        question_type,
        status,
        reason,
        question_id,
        chunk_ids,
        created_at
    from source

)

select * from renamed
