with source as (

    select * from {{ source('lake', 'qa_inspections') }}

),

renamed as (

    select
        inspection_run_id,
        question_id,
        inspector,
        verdict,
        score,
        reason,
        corrected_question,
        corrected_answer,
        comment,
        created_at
    from source

)

select * from renamed
