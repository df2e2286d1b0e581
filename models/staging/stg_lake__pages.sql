with source as (

    select * from {{ source('lake', 'pages') }}

),

renamed as (

    select
        doc_id,
        dataset,
        page_number,
        text,
        load_id,
        created_at
    from source

)

select * from renamed
