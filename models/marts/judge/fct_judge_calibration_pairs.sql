-- One row per answer a declared calibration can use: every pairing of calibration_pairings (a human label set's
-- metric and a predictor metric, `finrag calibrate`) x every answer run the label set labels x every answer of that
-- run the predictor scored, with the predicted score and, where the set labels the answer, the human's. Both on the
-- registry's normalised [0, 1] scale. A lexical predictor is the answer run's own score (predictor_run_id = the
-- answer run); a judged one is each judge run's over it (predictor_run_id = the judge run), each answer's mean over
-- its repeats, as fct_question_metric_scores holds every per-answer score. A human label off the scale (a
-- not-applicable label) labels nothing. mart_judge_calibrated aggregates it.

with pairings as (

    select
        label_set,
        human_metric,
        predictor,
        predictor_family
    from {{ ref('stg_lake__calibration_pairings') }}

),

human_labels as (

    select
        label_set,
        metric as human_metric,
        answer_run_id,
        question_id,
        normalized_score as human_score
    from {{ ref('int_human_labels') }}
    where normalized_score between 0 and 1

),

labelled_runs as (

    select distinct
        label_set,
        human_metric,
        answer_run_id
    from human_labels

),

judge_runs as (

    select
        judge_run_id,
        answer_run_id
    from {{ ref('stg_lake__judge_runs') }}

),

answer_scores as (

    select
        run_id,
        run_kind,
        dataset,
        question_id,
        metric,
        value
    from {{ ref('fct_question_metric_scores') }}
    where run_kind in ('generation', 'judge')

),

predictions as (

    -- a generation run's score predicts for the run itself (lexical), a judge run's for the answer run it judged
    select
        coalesce(judge_runs.answer_run_id, answer_scores.run_id) as answer_run_id,
        answer_scores.run_id as predictor_run_id,
        case when answer_scores.run_kind = 'generation' then 'lexical' else 'judged' end as predictor_family,
        answer_scores.dataset,
        answer_scores.question_id,
        answer_scores.metric as predictor,
        answer_scores.value as predicted_score
    from answer_scores
    left join judge_runs
        on answer_scores.run_kind = 'judge'
        and answer_scores.run_id = judge_runs.judge_run_id
    where answer_scores.run_kind = 'generation'
        or judge_runs.judge_run_id is not null

),

final as (

    select
        pairings.label_set,
        pairings.human_metric,
        pairings.predictor,
        pairings.predictor_family,
        labelled_runs.answer_run_id,
        predictions.predictor_run_id,
        predictions.dataset,
        predictions.question_id,
        predictions.predicted_score,
        human_labels.human_score,
        human_labels.human_score is not null as is_labelled
    from pairings
    inner join labelled_runs
        on pairings.label_set = labelled_runs.label_set
        and pairings.human_metric = labelled_runs.human_metric
    inner join predictions
        on labelled_runs.answer_run_id = predictions.answer_run_id
        and pairings.predictor = predictions.predictor
        and pairings.predictor_family = predictions.predictor_family
    left join human_labels
        on labelled_runs.label_set = human_labels.label_set
        and labelled_runs.human_metric = human_labels.human_metric
        and predictions.answer_run_id = human_labels.answer_run_id
        and predictions.question_id = human_labels.question_id

)

select * from final
