-- One row per attempted QA instance of a generation run (lake qa_generation_attempts), with its topic at every
-- level (the value is the path down to that level, 'l1/l2', as mart_retrieval_by_slice slices; English from the
-- OmniEval topic seed, the topic's own names for another tree), the LLM inspector's verdict and the human verdict the
-- question carries (import-inspection applies the latest one to the question).

with attempts as (

    select * from {{ ref('stg_lake__qa_generation_attempts') }}

),

topics as (

    select
        topic_id,
        l1_en,
        l2_en,
        l3_en
    from {{ ref('omnieval_topics') }}

),

inspections as (

    select * from {{ ref('stg_lake__qa_inspections') }}

),

llm_inspections as (

    -- the generation run's own inspector (its partition id is the generation run id)
    select
        inspection_run_id as generation_run_id,
        question_id,
        verdict as llm_verdict,
        score as llm_score
    from inspections
    where inspector <> 'human'

),

-- the human verdict each question carries: the latest human inspection, applied once, when it landed
-- (python_jobs/qa_generation/human_inspection.py)
human_verdicts as (

    select
        question_id,
        human_verdict,
        human_score,
        human_inspection_run_id
    from {{ ref('stg_lake__questions') }}
    where human_verdict is not null

),

attempt_topics as (

    select
        *,
        {{ list_element('topic_names', 1) }} as topic_l1,
        case
            when {{ list_size('topic_names') }} >= 2
                then {{ list_element('topic_names', 1) }} || '/' || {{ list_element('topic_names', 2) }}
        end as topic_l2,
        case
            when {{ list_size('topic_names') }} >= 3
                then {{ list_element('topic_names', 1) }} || '/' || {{ list_element('topic_names', 2) }}
                    || '/' || {{ list_element('topic_names', 3) }}
        end as topic_l3
    from (
        select
            *,
            {{ split_string('topic_id', '/') }} as topic_names
        from attempts
    ) as split_topics

),

final as (

    select
        attempt_topics.generation_run_id,
        attempt_topics.attempt_id,
        attempt_topics.dataset,
        attempt_topics.topic_id,
        attempt_topics.topic_l1,
        attempt_topics.topic_l2,
        attempt_topics.topic_l3,
        coalesce(topics.l1_en, {{ list_element('attempt_topics.topic_names', 1) }}) as topic_l1_en,
        case
            when {{ list_size('attempt_topics.topic_names') }} >= 2
                then coalesce(topics.l1_en, {{ list_element('attempt_topics.topic_names', 1) }})
                    || '/' || coalesce(topics.l2_en, {{ list_element('attempt_topics.topic_names', 2) }})
        end as topic_l2_en,
        case
            when {{ list_size('attempt_topics.topic_names') }} >= 3
                then coalesce(topics.l1_en, {{ list_element('attempt_topics.topic_names', 1) }})
                    || '/' || coalesce(topics.l2_en, {{ list_element('attempt_topics.topic_names', 2) }})
                    || '/' || coalesce(topics.l3_en, {{ list_element('attempt_topics.topic_names', 3) }})
        end as topic_l3_en,
        attempt_topics.task,
        attempt_topics.question_type,
        attempt_topics.status,
        attempt_topics.reason,
        attempt_topics.question_id,
        llm_inspections.llm_verdict,
        llm_inspections.llm_score,
        human_verdicts.human_verdict,
        human_verdicts.human_score,
        human_verdicts.human_inspection_run_id
    from attempt_topics
    left join topics on attempt_topics.topic_id = topics.topic_id
    left join llm_inspections
        on attempt_topics.generation_run_id = llm_inspections.generation_run_id
        and attempt_topics.question_id = llm_inspections.question_id
    left join human_verdicts on attempt_topics.question_id = human_verdicts.question_id

)

select * from final
