-- The answer-file guideline's combined score, per (judge run, question). Aggregation (docs/judges.md): the mean of
-- the normalised correctness and faithfulness scores, (norm_correctness + norm_faithfulness) / 2 in [0, 1], defined
-- only when BOTH judgments are ok. Normalising first puts the two scales (-1..2 and -1..1) on equal footing, so each
-- metric weighs half; an incorrect (-1) or unsupported (-1) answer contributes 0 for that half, it is not dropped.
-- A question where either judgment is not_applicable or failed has no combined score (it is counted, per run, in
-- mart_answer_file_leaderboard). With repeated judgments, each metric's score is the answer's mean over its ok
-- repeats and its status the answer's (fct_judge_answer_scores), as every judged mean reads them.

with scores as (

    select * from {{ ref('fct_judge_answer_scores') }}
    where metric in ('correctness', 'faithfulness')

),

per_question as (

    select
        judge_run_id,
        answer_run_id,
        judge_model,
        answer_model,
        eval_mode,
        dataset,
        question_id,
        max(case when metric = 'correctness' then status end) as correctness_status,
        max(case when metric = 'correctness' and status = 'ok' then raw_score end) as correctness_raw,
        max(case when metric = 'correctness' and status = 'ok' then normalized_score end) as correctness,
        max(case when metric = 'faithfulness' then status end) as faithfulness_status,
        max(case when metric = 'faithfulness' and status = 'ok' then raw_score end) as faithfulness_raw,
        max(case when metric = 'faithfulness' and status = 'ok' then normalized_score end) as faithfulness
    from scores
    group by judge_run_id, answer_run_id, judge_model, answer_model, eval_mode, dataset, question_id

),

final as (

    select
        *,
        (correctness + faithfulness) / 2 as combined_score
    from per_question

)

select * from final
