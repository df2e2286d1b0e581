-- Judge run x metric: the mean normalised score and mean raw score over ok judgments only, and how many judgments
-- were ok, not applicable and failed. not_applicable and failed rows are counted, never averaged (SPEC §4, §5).
-- all_failed marks a run's metric whose every judgment failed (no mean), with the first error (in text order) to
-- name the cause.

with scores as (

    select * from {{ ref('fct_judge_scores') }}

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
        min(case when status = 'failed' then error end) as first_error
    from scores
    group by
        judge_run_id, answer_run_id, judge_model, rubric_version, answer_model, eval_mode, dataset, metric, judge_family

)

select * from final
