with questions as (

    select * from {{ ref('stg_lake__questions') }}

),

gold_documents as (

    select * from {{ ref('int_question_gold_documents') }}

),

documents as (

    select
        dataset,
        doc_id,
        doc_type,
        company,
        sector,
        period
    from {{ ref('stg_lake__documents') }}

),

topics as (

    select
        topic_id,
        level as topic_level,
        l1_en,
        l2_en,
        l3_en
    from {{ ref('omnieval_topics') }}

),

tasks as (

    select
        task,
        label as task_label
    from {{ ref('tasks') }}

),

final as (

    select
        questions.question_id,
        questions.dataset,
        questions.split,
        questions.question,
        questions.reference_answers,
        questions.question_type,
        questions.question_reasoning,
        questions.task,
        tasks.task_label,
        questions.topic_path,
        -- topic levels as given by the question (zh names), and English from the seed when the path is OmniEval's
        {{ list_element('questions.topic_path', 1) }} as topic_l1,
        {{ list_element('questions.topic_path', 2) }} as topic_l2,
        {{ list_element('questions.topic_path', 3) }} as topic_l3,
        topics.l1_en as topic_l1_en,
        topics.l2_en as topic_l2_en,
        topics.l3_en as topic_l3_en,
        questions.conversation,
        questions.source,
        gold_documents.gold_doc_ids,
        gold_documents.primary_doc_id,
        coalesce(gold_documents.n_gold_docs, 0) as n_gold_docs,
        coalesce(gold_documents.n_gold_pages, 0) as n_gold_pages,
        coalesce(gold_documents.gold_without_content, false) as gold_without_content,
        documents.doc_type,
        documents.company,
        documents.sector,
        documents.period,
        questions.meta,
        questions.load_id,
        questions.created_at
    from questions
    left join gold_documents
        on questions.dataset = gold_documents.dataset
        and questions.question_id = gold_documents.question_id
    left join documents
        on gold_documents.dataset = documents.dataset
        and gold_documents.primary_doc_id = documents.doc_id
    left join topics on topics.topic_id = {{ list_join('questions.topic_path', "'/'") }}
    left join tasks using (task)

)

select * from final
