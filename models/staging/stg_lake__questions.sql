with source as (

    select * from {{ source('lake', 'questions') }}

),

renamed as (

    select
        question_id,
        dataset,
        split,
        question,
        reference_answers,
        task,
        topic_path,
        question_type,
        question_reasoning,
        conversation,
        source,
        meta,
        load_id,
        created_at
    from source

)

select * from renamed
