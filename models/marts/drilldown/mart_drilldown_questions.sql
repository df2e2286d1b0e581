-- The drill-down's question list: every question with the attributes the page shows and whether the qrels have
-- gold for it (has_evidence: retrieval metrics score it; a BEIR dataset's queries outside the qrels have none).
-- Keyed by (dataset, question_id): ids are unique within a dataset only.

with questions as (

    select * from {{ ref('dim_questions') }}

),

gold as (

    select distinct
        dataset,
        question_id
    from {{ ref('stg_lake__evidence') }}

),

final as (

    select
        questions.question_id,
        questions.dataset,
        questions.question,
        questions.reference_answers,
        questions.question_type,
        questions.doc_type,
        questions.task,
        questions.topic_l1,
        questions.topic_l2,
        questions.company,
        gold.question_id is not null as has_evidence
    from questions
    left join gold
        on questions.dataset = gold.dataset
        and questions.question_id = gold.question_id

)

select * from final
