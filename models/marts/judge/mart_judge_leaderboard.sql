-- Judge run x metric: the mean normalised score and mean raw score over the answers whose judgment is ok, and how
-- many answers were ok, not applicable and failed. not_applicable and failed are counted, never averaged (SPEC §4,
-- §5). An answer is fct_judge_answer_scores' row: with repeats (finrag judge --repeats N), the mean of its ok repeats,
-- so every answer weighs once (SPEC §10); without, its one judgment, as before. all_failed marks a run's metric whose
-- every answer failed (no mean), with the first error (in text order) to name the cause.

with scores as (

    select * from {{ ref('fct_judge_answer_scores') }}

),

final as (

    select
        judge_run_id,
        answer_run_id,
        judge_model,
        rubric_version,
        answer_model,
        eval_mode,
        dataset,
        metric,
        judge_family,
        avg(case when status = 'ok' then normalized_score end) as mean,
        avg(case when status = 'ok' then raw_score end) as mean_raw,
        count(case when status = 'ok' then 1 end) as n_ok,
        count(case when status = 'not_applicable' then 1 end) as n_not_applicable,
        count(case when status = 'failed' then 1 end) as n_failed,
        count(*) as n_judged,
        -- what a reader names when there is no mean because no judgment succeeded
        count(case when status = 'ok' then 1 end) = 0
        and count(case when status = 'failed' then 1 end) > 0 as all_failed,
        min(first_error) as first_error,
        max(n_repeats) as n_repeats
    from scores
    group by
        judge_run_id, answer_run_id, judge_model, rubric_version, answer_model, eval_mode, dataset, metric, judge_family

)

select * from final
