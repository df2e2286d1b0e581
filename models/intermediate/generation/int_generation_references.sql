-- One row per question and reference answer; numeric_gold (python_jobs/text_metrics.py) is the gold's number when
-- the reference is a numeric answer ("$1577.00", "24.26%"), else null. A table on Spark: numeric_gold is a temporary
-- function there (python_jobs/warehouse/spark_session.py), which a persistent view may not call (dbt_project.yml).

with questions as (

    select
        question_id,
        dataset,
        reference_answers
    from {{ ref('stg_lake__questions') }}
    where {{ list_size('reference_answers') }} > 0

),

references_unnested as (

    select
        question_id,
        dataset,
        {{ unnest_with_ordinal('reference_answers', 'reference_answer', 'reference_ordinal') }}
    from questions

),

final as (

    select
        question_id,
        dataset,
        cast(reference_ordinal as integer) as reference_ordinal,
        reference_answer,
        numeric_gold(reference_answer) as gold_number
    from references_unnested
    where reference_answer is not null

)

select * from final
