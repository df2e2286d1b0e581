-- noqa: disable=LT02
-- (indentation: lines a Jinja loop repeats cannot sit at one indent in every iteration's compiled SQL)
-- Prediction-powered means (SPEC §10): per answer run x predictor (and its run) x human label set's metric, the mean
-- a person would give, from the n answers the set labels and the predictor's scores of all of them. As ppi_py
-- computes them (Angelopoulos, Duchi and Zrnic 2023), Y the human scores of the labelled answers, Yhat the
-- predictor's scores of the same answers, Yhat_u its scores of the N unlabelled ones:
--   human-only (classical_mean_ci): mean(Y) +/- z sd_pop(Y) / sqrt(n);
--   PPI with power tuning lambda: lambda mean(Yhat_u) + mean(Y - lambda Yhat),
--     +/- z sqrt(lambda^2 var_pop(Yhat_u) / N + var_pop(Y - lambda Yhat) / n); PPI++ estimates
--     lambda = cov_pop(Y, Yhat) / ((1 + n / N) var_samp(all predictions)), clipped to [0, 1] (ppi_mean_ci,
--     lam=None); classic PPI takes lambda = 1;
-- z the normal quantile at var run_comparison_alpha, two-sided. Every interval is cut to the normalised scale
-- [0, 1] (clamp_to_scale); inside it the ends equal ppi_py's (to the 12 decimals every figure is published
-- to). var_pop(Y - lambda Yhat) is expanded into the moments so each group is one pass. A predictor without
-- variation gets lambda 0 (any lambda gives the human-only interval then; ppi_py divides by zero). No interval below
-- 2 labelled answers; no PPI without an unlabelled one (every answer labelled: the human mean is the answer).
-- The methods, their lambdas and their columns' prefixes are the rules' calibration_methods
-- (python_jobs/core/rules.yml, through its generated macro): ppi_* is PPI++, ppi_classic_* classic PPI, human_* the
-- human labels alone; a method added there gets its columns here.
-- active_*: the inverse-probability-weighted mean where `finrag label-next` chose the labelled answers, computed in
-- fct_judge_active_calibration and joined here (null without a label request).

{%- set ppi_methods = calibration_methods() | rejectattr('lambda', 'none') | list %}
{%- set estimated = (ppi_methods | selectattr('lambda', 'equalto', 'estimated') | first)['columns'] ~ '_lambda' %}

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
        count(case when is_labelled then 1 end) as n_labelled,
        count(case when not is_labelled then 1 end) as n_unlabelled,
        avg(predicted_score) as predictor_mean,
        var_samp(predicted_score) as predictor_var,
        avg(human_score) as human_mean,
        var_pop(human_score) as human_var,
        avg(case when is_labelled then predicted_score end) as labelled_predictor_mean,
        var_pop(case when is_labelled then predicted_score end) as labelled_predictor_var,
        covar_pop(human_score, case when is_labelled then predicted_score end) as human_predictor_cov,
        avg(case when not is_labelled then predicted_score end) as unlabelled_predictor_mean,
        var_pop(case when not is_labelled then predicted_score end) as unlabelled_predictor_var
    from pairs
    group by label_set, human_metric, answer_run_id, predictor, predictor_family, predictor_run_id, dataset

),

tuned as (

    select
        *,
        normal_quantile(1 - {{ var('run_comparison_alpha') }} / 2) as z,
        case
            when n_labelled >= 2 and n_unlabelled >= 1 and predictor_var > 0
                then greatest(0.0, least(1.0, human_predictor_cov / (
                    (1 + cast(n_labelled as double) / n_unlabelled) * predictor_var
                )))
            when n_labelled >= 2 and n_unlabelled >= 1 then 0.0
        end as {{ estimated }}
    from moments

),

estimates as (

    select
        *,
        case when n_labelled >= 2 then sqrt(human_var / n_labelled) end as human_se,
        {%- for method in ppi_methods %}
        {%- set name = method['columns'] %}
        {%- set lam = estimated if method['lambda'] == 'estimated' else (method['lambda'] | float | string) %}
        {{ lam }} * unlabelled_predictor_mean + human_mean - {{ lam }} * labelled_predictor_mean as {{ name }}_point,
        case when {{ estimated }} is not null then sqrt(
            {{ lam }} * {{ lam }} * unlabelled_predictor_var / n_unlabelled
            + greatest(0.0, human_var + {{ lam }} * {{ lam }} * labelled_predictor_var
                - 2 * {{ lam }} * human_predictor_cov) / n_labelled
        ) end as {{ name }}_se{{ ',' if not loop.last }}
        {%- endfor %}
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
        {{ comparable_mean('human_mean') }} as human_mean,
        {{ comparable_mean(clamp_to_scale('human_mean - z * human_se', '0.0', '1.0')) }} as human_lower,
        {{ comparable_mean(clamp_to_scale('human_mean + z * human_se', '0.0', '1.0')) }} as human_upper,
        {{ comparable_mean(estimated) }} as {{ estimated }},
        {%- for method in ppi_methods %}
        {%- set name = method['columns'] %}
        {{ comparable_mean('case when ' ~ name ~ '_se is not null then ' ~ name ~ '_point end') }} as {{ name }}_mean,
        {{ comparable_mean(clamp_to_scale(name ~ '_point - z * ' ~ name ~ '_se', '0.0', '1.0')) }} as {{ name }}_lower,
        {{ comparable_mean(clamp_to_scale(name ~ '_point + z * ' ~ name ~ '_se', '0.0', '1.0')) }} as {{ name }}_upper,
        -- how many labelled answers the human-only interval would need to be as narrow: (its width / this one)^2
        {{ comparable_mean('case when ' ~ name ~ '_se > 0 then (human_se / ' ~ name ~ '_se) * (human_se / '
            ~ name ~ '_se) end') }} as {{ name }}_effective_gain{{ ',' if not loop.last }}
        {%- endfor %}
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
