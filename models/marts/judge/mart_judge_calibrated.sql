-- noqa: disable=LT02
-- (indentation: lines a Jinja loop repeats cannot sit at one indent in every iteration's compiled SQL)
-- Prediction-powered means (SPEC §10): per answer run x predictor (and its run) x human label set's metric, the mean
-- a person would give, from the n answers the set labels and the predictor's scores of all of them: the human-only
-- mean, PPI++ (lambda estimated) and classic PPI (lambda = 1), each with its interval, as ppi_py computes them. The
-- formulas are macros/calibration/ppi.sql's (their one home, which mart_judge_calibrated_by_slice applies per
-- stratum); the methods, their lambdas and their columns' prefixes are the rules' calibration_methods
-- (python_jobs/core/rules.yml, through its generated macro): ppi_* is PPI++, ppi_classic_* classic PPI, human_* the
-- human labels alone; a method added there gets its columns here.
-- active_*: the inverse-probability-weighted mean where `finrag label-next` chose the labelled answers, computed in
-- fct_judge_active_calibration and joined here (null without a label request).

with pairs as (

    select * from {{ ref('fct_judge_calibration_pairs') }}

),

active as (

    select * from {{ ref('fct_judge_active_calibration') }}

),

moments as (

    select
        label_set,
        human_metric,
        answer_run_id,
        predictor,
        predictor_family,
        predictor_run_id,
        dataset,
        {{ ppi_moments() }}
    from pairs
    group by label_set, human_metric, answer_run_id, predictor, predictor_family, predictor_run_id, dataset

),

tuned as (

    select
        *,
        {{ ppi_tuning() }}
    from moments

),

estimates as (

    select
        *,
        {{ ppi_estimates() }}
    from tuned

),

final as (

    -- published to 12 decimals (comparable_mean): the engines' sums differ in their last bits, not in a figure
    select
        label_set,
        human_metric,
        answer_run_id,
        predictor,
        predictor_family,
        predictor_run_id,
        dataset,
        n_labelled,
        n_unlabelled,
        {{ comparable_mean('predictor_mean') }} as predictor_mean,
        {{ ppi_published() }}
    from estimates

),

with_active as (

    -- where label-next chose the labelled answers: its weighted mean beside the others (fct_judge_active_calibration)
    select
        final.*,
        active.active_n_labelled,
        active.active_lambda,
        active.active_mean,
        active.active_lower,
        active.active_upper
    from final
    left join active
        on final.label_set = active.label_set
        and final.human_metric = active.human_metric
        and final.predictor = active.predictor
        and final.predictor_run_id = active.predictor_run_id

)

select * from with_active
