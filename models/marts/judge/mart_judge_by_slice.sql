-- noqa: disable=LT02
-- (indentation: lines a Jinja loop repeats cannot sit at one indent in every iteration's compiled SQL)
-- Judge run x slice dimension x value x metric: mean normalised (and raw) score over the answers whose judgment is
-- ok, and n (SPEC §5 slices). An answer's score is its mean over its ok repeats (fct_judge_answer_scores), so an
-- answer weighs once whatever its repeats. Dimensions come from dim_questions, as in mart_generation_by_slice:
-- dataset, question_type, doc_type, task, topic levels (l1..l3), company, sector. Questions whose value for a
-- dimension is null are left out of it.

with scores as (

    select * from {{ ref('fct_judge_answer_scores') }}
    where status = 'ok'

),

questions as (

    {{ select_question_slices() }}

),

scored as (

    select
        scores.judge_run_id,
        scores.metric,
        scores.normalized_score,
        scores.raw_score,
        questions.*
    from scores
    inner join questions
        on scores.dataset = questions.question_dataset
        and scores.question_id = questions.question_id

),

sliced as (

    {{ slice_unpivot('scored', ['judge_run_id', 'metric'],
                     'avg(normalized_score) as mean, avg(raw_score) as mean_raw, count(*) as n') }}

),

final as (

    select
        judge_run_id,
        dimension,
        dimension_value as value,
        metric,
        mean,
        mean_raw,
        n
    from sliced

)

select * from final
