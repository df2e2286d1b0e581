-- How far each judged mean can be trusted (SPEC §10): one row per judge leaderboard row (judge run x metric) and
-- calibration of it, with the judge's mean and its state, the one rule the leaderboard and judge pages, `finrag
-- report` and the demo's printout show beside the mean:
--   no_better_than_chance  the judge's agreement with human labels of the same metric (mart_judge_agreement, grain
--                          judge_run) has a kappa interval that reaches 0 or below: its verdicts carry no more than
--                          chance does, whatever it is calibrated with;
--   calibrated             a declared pairing (`finrag calibrate`) makes this metric of this judge run the
--                          predictor of a human label set's metric: the calibrated mean is PPI++'s
--                          (mart_judge_calibrated), or the human mean itself where every answer is labelled;
--   uncalibrated           neither: no human label says what the mean is worth.
-- A judged mean with several calibrations (several label sets) has a row for each; one without any has one row,
-- its calibration columns null.
-- The method reported and its fallback are the rules' calibration_methods (python_jobs/core/rules.yml): the one marked
-- `reported` (PPI++) where it has a mean, else the human labels alone (reported_calibration,
-- macros/calibration/ppi.sql: the rule mart_judge_calibrated_by_slice reports per slice too).

{%- set human_only = calibration_methods() | selectattr('lambda', 'none') | first %}

with leaderboard as (

    select
        judge_run_id,
        answer_run_id,
        judge_model,
        dataset,
        metric,
        judge_family,
        mean,
        n_ok,
        n_not_applicable,
        n_failed
    from {{ ref('mart_judge_leaderboard') }}

),

calibrations as (

    select
        predictor_run_id as judge_run_id,
        predictor as metric,
        label_set,
        human_metric,
        n_labelled,
        n_unlabelled,
        ppi_lambda,
        {{ reported_calibration() }}
    from {{ ref('mart_judge_calibrated') }}
    where predictor_family = 'judged'
        and {{ human_only['columns'] }}_mean is not null

),

agreement as (

    -- the least favourable of the judge run's agreements with human label sets on this metric
    select
        judge_run_id,
        metric,
        min_by(label_set, kappa_lower) as agreement_label_set,
        min_by(kappa, kappa_lower) as kappa,
        min(kappa_lower) as kappa_lower,
        min_by(kappa_upper, kappa_lower) as kappa_upper
    from {{ ref('mart_judge_agreement') }}
    where grain = 'judge_run'
        and kappa_lower is not null
    group by judge_run_id, metric

),

final as (

    select
        leaderboard.judge_run_id,
        leaderboard.answer_run_id,
        leaderboard.judge_model,
        leaderboard.dataset,
        leaderboard.metric,
        leaderboard.judge_family,
        leaderboard.mean,
        leaderboard.n_ok,
        leaderboard.n_not_applicable,
        leaderboard.n_failed,
        case
            when agreement.kappa_lower <= 0 then 'no_better_than_chance'
            when calibrations.calibrated_mean is not null then 'calibrated'
            else 'uncalibrated'
        end as trust_state,
        calibrations.label_set,
        calibrations.human_metric,
        calibrations.calibration_method,
        calibrations.n_labelled,
        calibrations.n_unlabelled,
        calibrations.ppi_lambda,
        calibrations.calibrated_mean,
        calibrations.calibrated_lower,
        calibrations.calibrated_upper,
        agreement.agreement_label_set,
        agreement.kappa,
        agreement.kappa_lower,
        agreement.kappa_upper
    from leaderboard
    left join calibrations
        on leaderboard.judge_run_id = calibrations.judge_run_id
        and leaderboard.metric = calibrations.metric
    left join agreement
        on leaderboard.judge_run_id = agreement.judge_run_id
        and leaderboard.metric = agreement.metric

)

select * from final
