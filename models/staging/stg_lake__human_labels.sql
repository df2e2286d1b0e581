with source as (

    select * from {{ source('lake', 'human_labels') }}

),

renamed as (

    select
        label_set,
        answer_run_id,
        question_id,
        metric,
        raw_score,
        label,
        annotator,
        created_at
    from source

)

select * from renamed
