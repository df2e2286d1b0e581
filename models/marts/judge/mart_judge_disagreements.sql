-- Where a judge run and the humans disagree: the scored pairs of fct_judge_human_pairs (both a judge class and a
-- human class) whose classes differ, with the question's text (dim_questions, joined on dataset and question id:
-- ids are unique within a dataset only). The judge-agreement page lists them and links each to the drill-down.

with pairs as (

    select * from {{ ref('fct_judge_human_pairs') }}
    where is_scored and judge_class <> human_class

),

questions as (

    select
        dataset,
        question_id,
        question
    from {{ ref('dim_questions') }}

),

final as (

    select
        pairs.judge_run_id,
        pairs.label_set,
        pairs.metric,
        pairs.question_id,
        pairs.dataset,
        pairs.answer_run_id,
        pairs.judge_class,
        pairs.human_class,
        pairs.judge_raw_score,
        pairs.human_raw_score,
        pairs.human_label,
        questions.question
    from pairs
    left join questions
        on pairs.dataset = questions.dataset
        and pairs.question_id = questions.question_id

)

select * from final
