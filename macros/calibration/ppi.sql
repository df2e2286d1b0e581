{#- Prediction-powered means (SPEC §10), the one home of their formulas: mart_judge_calibrated applies them per answer
    run x predictor x human metric, mart_judge_calibrated_by_slice per stratum (slice value) of the same groups.
    As ppi_py computes them (Angelopoulos, Duchi and Zrnic 2023), Y the human scores of the labelled answers, Yhat
    the predictor's scores of the same answers, Yhat_u its scores of the N unlabelled ones:
      human-only (classical_mean_ci): mean(Y) +/- z sd_pop(Y) / sqrt(n);
      PPI with power tuning lambda: lambda mean(Yhat_u) + mean(Y - lambda Yhat),
        +/- z sqrt(lambda^2 var_pop(Yhat_u) / N + var_pop(Y - lambda Yhat) / n); PPI++ estimates
        lambda = cov_pop(Y, Yhat) / ((1 + n / N) var_samp(all predictions)), clipped to [0, 1] (ppi_mean_ci,
        lam=None); classic PPI takes lambda = 1;
    z the normal quantile at var run_comparison_alpha, two-sided. var_pop(Y - lambda Yhat) is expanded into the
    moments so each group is one pass. A predictor without variation gets lambda 0 (any lambda gives the human-only
    interval then; ppi_py divides by zero). No interval below 2 labelled answers; no PPI without an unlabelled one
    (every answer labelled: the human mean is the answer). The methods, their lambdas and their columns' prefixes
    are the rules' calibration_methods (python_jobs/core/rules.yml, through its generated macro). -#}

{#- The calibration methods of the PPI family (those with a lambda), in the rules' order. -#}
{% macro ppi_methods() -%}
    {{ return(calibration_methods() | rejectattr('lambda', 'none') | list) }}
{%- endmacro %}

{#- The column of the lambda PPI++ estimates (ppi_lambda). -#}
{% macro ppi_estimated_lambda() -%}
    {{ return((ppi_methods() | selectattr('lambda', 'equalto', 'estimated') | first)['columns'] ~ '_lambda') }}
{%- endmacro %}

{#- The moments every estimate is made of, as aggregates over rows of fct_judge_calibration_pairs (is_labelled,
    predicted_score, human_score) for a select grouped by the calibration's keys (and a stratum). -#}
{% macro ppi_moments() -%}
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
{%- endmacro %}

{#- Over ppi_moments() rows: z and PPI++'s estimated lambda (null where there is no PPI). -#}
{% macro ppi_tuning() -%}
normal_quantile(1 - {{ var('run_comparison_alpha') }} / 2) as z,
        case
            when n_labelled >= 2 and n_unlabelled >= 1 and predictor_var > 0
                then greatest(0.0, least(1.0, human_predictor_cov / (
                    (1 + cast(n_labelled as double) / n_unlabelled) * predictor_var
                )))
            when n_labelled >= 2 and n_unlabelled >= 1 then 0.0
        end as {{ ppi_estimated_lambda() }}
{%- endmacro %}

{#- Over ppi_tuning() rows: human_se and each PPI method's <columns>_point and <columns>_se (its standard error;
    null where it has no interval). -#}
{% macro ppi_estimates() -%}
{%- set estimated = ppi_estimated_lambda() -%}
case when n_labelled >= 2 then sqrt(human_var / n_labelled) end as human_se,
        {%- for method in ppi_methods() %}
        {%- set name = method['columns'] %}
        {%- set lam = estimated if method['lambda'] == 'estimated' else (method['lambda'] | float | string) %}
        {{ lam }} * unlabelled_predictor_mean + human_mean - {{ lam }} * labelled_predictor_mean as {{ name }}_point,
        case when {{ estimated }} is not null then sqrt(
            {{ lam }} * {{ lam }} * unlabelled_predictor_var / n_unlabelled
            + greatest(0.0, human_var + {{ lam }} * {{ lam }} * labelled_predictor_var
                - 2 * {{ lam }} * human_predictor_cov) / n_labelled
        ) end as {{ name }}_se{{ ',' if not loop.last }}
        {%- endfor %}
{%- endmacro %}

{#- The published estimates over rows holding z, human_mean, human_se, the estimated lambda and each PPI method's
    _point and _se, published to 12 decimals (comparable_mean: the engines' sums differ in their last bits, not in a
    figure): human_mean with its interval, ppi_lambda, then per PPI method <columns>_mean, _lower, _upper and
    _effective_gain. Every interval is cut to the normalised scale [0, 1] (clamp_to_scale); inside it the ends equal
    ppi_py's. -#}
{% macro ppi_published() -%}
{{ comparable_mean('human_mean') }} as human_mean,
        {{ comparable_mean(clamp_to_scale('human_mean - z * human_se', '0.0', '1.0')) }} as human_lower,
        {{ comparable_mean(clamp_to_scale('human_mean + z * human_se', '0.0', '1.0')) }} as human_upper,
        {{ comparable_mean(ppi_estimated_lambda()) }} as {{ ppi_estimated_lambda() }},
        {%- for method in ppi_methods() %}
        {%- set name = method['columns'] %}
        {{ comparable_mean('case when ' ~ name ~ '_se is not null then ' ~ name ~ '_point end') }} as {{ name }}_mean,
        {{ comparable_mean(clamp_to_scale(name ~ '_point - z * ' ~ name ~ '_se', '0.0', '1.0')) }} as {{ name }}_lower,
        {{ comparable_mean(clamp_to_scale(name ~ '_point + z * ' ~ name ~ '_se', '0.0', '1.0')) }} as {{ name }}_upper,
        -- how many labelled answers the human-only interval would need to be as narrow: (its width / this one)^2
        {{ comparable_mean('case when ' ~ name ~ '_se > 0 then (human_se / ' ~ name ~ '_se) * (human_se / '
            ~ name ~ '_se) end') }} as {{ name }}_effective_gain{{ ',' if not loop.last }}
        {%- endfor %}
{%- endmacro %}

{#- The method a calibration reports (mart_judge_trust, mart_judge_calibrated_by_slice), over published rows: the
    rules' method marked `reported` (PPI++) where it has a mean, else the human labels alone - calibrated_mean,
    calibrated_lower, calibrated_upper and calibration_method (null where neither has a mean). -#}
{% macro reported_calibration() -%}
{%- set methods = calibration_methods() %}
{%- set reported = methods | selectattr('reported') | first %}
{%- set human_only = methods | selectattr('lambda', 'none') | first %}
{%- set best, human = reported['columns'], human_only['columns'] -%}
coalesce({{ best }}_mean, {{ human }}_mean) as calibrated_mean,
        case when {{ best }}_mean is not null then {{ best }}_lower else {{ human }}_lower end as calibrated_lower,
        case when {{ best }}_mean is not null then {{ best }}_upper else {{ human }}_upper end as calibrated_upper,
        case
            when {{ best }}_mean is not null then '{{ reported["name"] }}'
            when {{ human }}_mean is not null then '{{ human_only["name"] }}'
        end as calibration_method
{%- endmacro %}
