-- Judge run: the answer-file guideline's scores per run. mean_combined is the mean of the per-question combined
-- score (mart_answer_file_scores: mean of normalised correctness and faithfulness, both ok) over the questions that
-- have one (n_combined); mean_correctness / mean_faithfulness are each metric's own mean over its ok judgments
-- (the same as mart_judge_leaderboard's), so a closed-book run still gets its correctness.

with question_scores as (

    select * from {{ ref('mart_answer_file_scores') }}

),

final as (

    select
        judge_run_id,
        answer_run_id,
        judge_model,
        answer_model,
        eval_mode,
        dataset,
        count(*) as n_questions,
        avg(combined_score) as mean_combined,
        count(combined_score) as n_combined,
        avg(correctness) as mean_correctness,
        count(correctness) as n_correctness_ok,
        avg(faithfulness) as mean_faithfulness,
        count(faithfulness) as n_faithfulness_ok
    from question_scores
    group by judge_run_id, answer_run_id, judge_model, answer_model, eval_mode, dataset

)

select * from final
