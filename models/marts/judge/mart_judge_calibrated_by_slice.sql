-- noqa: disable=LT02
-- (indentation: lines a Jinja loop repeats cannot sit at one indent in every iteration's compiled SQL)
-- Calibrated means per slice (stratified PPI, Fisch et al. 2024): a calibration of mart_judge_calibrated (answer run x
-- predictor and its run x human label set's metric) per slice dimension, as
--   grain 'stratum':    each value h of the dimension (the stratum: its answers' questions have that value), with
--                       the human-only, PPI++ (its own lambda_h) and classic PPI means and intervals computed on the
--                       stratum's answers alone - the same formulas as the overall rows (macros/calibration/ppi.sql),
--                       so each equals ppi_py on that stratum's data;
--   grain 'stratified': the combined mean sum_h w_h theta_h with w_h = N_h / N (N_h the stratum's answers, labelled
--                       or not; N the answers of the strata it combines), its variance sum_h w_h^2 se_h^2, and the
--                       normal interval from it, per method.
-- A stratum with fewer than 2 labelled answers is reported (its counts, the predictor's mean, why) and not calibrated:
-- no mean, no interval, and the combination leaves it out; the stratified row says how many strata it left out and
-- `share`, the fraction of the calibration's answers its combined mean speaks for (answers whose question has no
-- value for the dimension are in no stratum, so outside the share too). A stratum whose every answer is labelled has
-- no PPI (as overall) and enters each PPI method's combination with its human mean and standard error (PPI with
-- lambda 0: the labels are the answer). The reported columns (calibration_method, calibrated_*) are the rule
-- mart_judge_trust reports overall (reported_calibration): PPI++ where it has a mean, else the human labels alone.

{#- a calibration's keys; its dataset (the answer run's) is carried as answer_dataset (`dataset` is a dimension) -#}
{%- set calibration = ['label_set', 'human_metric', 'answer_run_id', 'predictor', 'predictor_family',
                       'predictor_run_id'] %}
{%- set keys = calibration + ['dataset'] %}
{%- set estimated = ppi_estimated_lambda() %}

with pairs as (

    select * from {{ ref('fct_judge_calibration_pairs') }}

),

questions as (

    {{ select_question_slices() }}

),

sliced_pairs as (

    select
        {%- for key in calibration %}
        pairs.{{ key }},
        {%- endfor %}
        pairs.dataset as answer_dataset,
        pairs.is_labelled,
        pairs.predicted_score,
        pairs.human_score,
        -- every answer of the calibration, whatever its slice values: what `share` is a fraction of
        count(*) over (
            partition by {{ calibration | join(', ') }}
        ) as n_answers,
        {%- for dimension in slice_dimensions() %}
        questions.{{ dimension }}{{ ',' if not loop.last }}
        {%- endfor %}
    from pairs
    left join questions
        on pairs.dataset = questions.question_dataset
        and pairs.question_id = questions.question_id

),

strata_moments as (

    {%- set indent = ',\n                ' %}
    {%- set measures = ppi_moments() ~ indent ~ 'max(n_answers) as n_answers'
                       ~ indent ~ 'max(answer_dataset) as answer_dataset' %}
    {{ slice_unpivot('sliced_pairs', calibration, measures) }}

),

strata as (

    select
        {{ calibration | join(', ') }},
        answer_dataset as dataset,
        dimension,
        dimension_value as value,
        n_labelled,
        n_unlabelled,
        predictor_mean,
        predictor_var,
        human_mean,
        human_var,
        labelled_predictor_mean,
        labelled_predictor_var,
        human_predictor_cov,
        unlabelled_predictor_mean,
        unlabelled_predictor_var,
        n_answers,
        n_labelled >= 2 as is_calibrated
    from strata_moments

),

tuned as (

    select
        *,
        {{ ppi_tuning() }}
    from strata

),

estimates as (

    select
        *,
        {{ ppi_estimates() }}
    from tuned

),

weighted as (

    select
        *,
        case when is_calibrated then cast(n_labelled + n_unlabelled as double) / sum(
            case when is_calibrated then n_labelled + n_unlabelled end
        ) over (partition by {{ keys | join(', ') }}, dimension) end as weight
    from estimates

),

strata_rows as (

    select
        {{ keys | join(', ') }},
        dimension,
        'stratum' as grain,
        value,
        n_labelled,
        n_unlabelled,
        cast(null as bigint) as n_strata,
        cast(null as bigint) as n_strata_excluded,
        cast(n_labelled + n_unlabelled as double) / n_answers as share,
        weight,
        predictor_mean,
        case when not is_calibrated then 'fewer than 2 labelled answers' end as not_calibrated_reason,
        z,
        {{ estimated }},
        case when is_calibrated then human_mean end as human_mean,
        human_se,
        {%- for method in ppi_methods() %}
        {{ method['columns'] }}_point,
        {{ method['columns'] }}_se{{ ',' if not loop.last }}
        {%- endfor %}
    from weighted

),

stratified_rows as (

    -- sum_h w_h theta_h and sqrt(sum_h w_h^2 se_h^2) over the calibrated strata (weight null on the others); a
    -- stratum without a PPI mean (every answer labelled) enters with its human mean and standard error
    select
        {{ keys | join(', ') }},
        dimension,
        'stratified' as grain,
        cast(null as string) as value,
        cast(sum(case when is_calibrated then n_labelled else 0 end) as bigint) as n_labelled,
        cast(sum(case when is_calibrated then n_unlabelled else 0 end) as bigint) as n_unlabelled,
        count(*) as n_strata,
        count(case when not is_calibrated then 1 end) as n_strata_excluded,
        sum(case when is_calibrated then n_labelled + n_unlabelled else 0 end)
        / max(cast(n_answers as double)) as share,
        cast(null as double) as weight,
        sum(weight * predictor_mean) as predictor_mean,
        case when count(weight) = 0 then 'no stratum has 2 labelled answers' end as not_calibrated_reason,
        max(z) as z,
        cast(null as double) as {{ estimated }},
        sum(weight * human_mean) as human_mean,
        sqrt(sum(weight * weight * human_se * human_se)) as human_se,
        {%- for method in ppi_methods() %}
        {%- set name = method['columns'] %}
        sum(weight * case when {{ name }}_se is not null then {{ name }}_point else human_mean end)
            as {{ name }}_point,
        sqrt(sum(weight * weight * coalesce({{ name }}_se * {{ name }}_se, human_se * human_se)))
            as {{ name }}_se{{ ',' if not loop.last }}
        {%- endfor %}
    from weighted
    group by {{ keys | join(', ') }}, dimension

),

estimated as (

    select * from strata_rows
    union all
    select * from stratified_rows

),

published as (

    -- published to 12 decimals (comparable_mean): the engines' sums differ in their last bits, not in a figure
    select
        {{ keys | join(', ') }},
        dimension,
        grain,
        value,
        n_labelled,
        n_unlabelled,
        n_strata,
        n_strata_excluded,
        {{ comparable_mean('share') }} as share,
        {{ comparable_mean('weight') }} as weight,
        not_calibrated_reason,
        {{ comparable_mean('predictor_mean') }} as predictor_mean,
        {{ ppi_published() }}
    from estimated

),

final as (

    select
        *,
        {{ reported_calibration() }}
    from published

)

select * from final
