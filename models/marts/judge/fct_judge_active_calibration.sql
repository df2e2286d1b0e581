-- The calibrated mean when `finrag label-next` chose which answers people label (active statistical inference,
-- Zrnic and Candès 2024; the rule and its weights: python_jobs/labelling/design.py, which computes the same figures
-- in Python). Per calibration group of fct_judge_calibration_pairs whose label set, answer run and metric have a
-- label request (lake table label_requests, the current one): the M answers the predictor scored split into a
-- census (labelled before the request: not among its candidates) and the candidates, of which the chosen ones that
-- got a label are the n draws. With pi_i each candidate's inclusion probability and n_chosen the request's size,
-- A = n_chosen Y / pi and B = n_chosen f / pi over the draws:
--   lambda = covar_samp(A, B) / (var_samp(B) + n M_k var_pop(f over the candidates)), clipped to [0, 1];
--   total = sum(Y, census) + lambda sum(f, candidates) + mean(A) - lambda mean(B);  mean = total / M;
--   se = sqrt(lambda^2 M_k var_pop(f) + var_samp(A - lambda B) / n) / M  (Hansen-Hurwitz's variance of the draw);
-- z the normal quantile at var run_comparison_alpha, the interval cut to [0, 1] and every figure published to 12
-- decimals as mart_judge_calibrated's. A label of a candidate the draw did not choose is left out here (PPI++
-- uses it). No estimate below 2 draws. mart_judge_calibrated publishes these as its active_* columns.

with pairs as (

    select * from {{ ref('fct_judge_calibration_pairs') }}

),

requests as (

    select
        label_set,
        metric as human_metric,
        answer_run_id,
        question_id,
        inclusion_probability,
        chosen
    from {{ ref('stg_lake__label_requests') }}

),

request_sizes as (

    select
        label_set,
        human_metric,
        answer_run_id,
        count(case when chosen then 1 end) as n_chosen
    from requests
    group by label_set, human_metric, answer_run_id

),

answers as (

    select
        pairs.label_set,
        pairs.human_metric,
        pairs.answer_run_id,
        pairs.predictor,
        pairs.predictor_run_id,
        pairs.predicted_score,
        pairs.human_score,
        request_sizes.n_chosen,
        pairs.is_labelled and requests.question_id is null as is_census,
        pairs.is_labelled and coalesce(requests.chosen, false) as is_drawn,
        request_sizes.n_chosen * pairs.human_score / requests.inclusion_probability as weighted_human,
        request_sizes.n_chosen * pairs.predicted_score / requests.inclusion_probability as weighted_predicted
    from pairs
    inner join request_sizes
        on pairs.label_set = request_sizes.label_set
        and pairs.human_metric = request_sizes.human_metric
        and pairs.answer_run_id = request_sizes.answer_run_id
    left join requests
        on pairs.label_set = requests.label_set
        and pairs.human_metric = requests.human_metric
        and pairs.answer_run_id = requests.answer_run_id
        and pairs.question_id = requests.question_id

),

moments as (

    select
        label_set,
        human_metric,
        answer_run_id,
        predictor,
        predictor_run_id,
        count(*) as n_answers,
        count(case when not is_census then 1 end) as n_candidates,
        count(case when is_drawn then 1 end) as n_drawn,
        coalesce(sum(case when is_census then human_score end), 0.0) as census_sum,
        coalesce(sum(case when not is_census then predicted_score end), 0.0) as candidate_predicted_sum,
        coalesce(var_pop(case when not is_census then predicted_score end), 0.0) as candidate_predicted_var,
        avg(case when is_drawn then weighted_human end) as weighted_human_mean,
        avg(case when is_drawn then weighted_predicted end) as weighted_predicted_mean,
        var_samp(case when is_drawn then weighted_human end) as weighted_human_var,
        var_samp(case when is_drawn then weighted_predicted end) as weighted_predicted_var,
        covar_samp(
            case when is_drawn then weighted_human end, case when is_drawn then weighted_predicted end
        ) as weighted_cov
    from answers
    group by label_set, human_metric, answer_run_id, predictor, predictor_run_id

),

tuned as (

    select
        *,
        normal_quantile(1 - {{ var('run_comparison_alpha') }} / 2) as z,
        weighted_predicted_var + n_drawn * n_candidates * candidate_predicted_var as lambda_denominator
    from moments
    where n_drawn >= 2

),

estimates as (

    select
        *,
        case
            when lambda_denominator > 0
                then greatest(0.0, least(1.0, weighted_cov / lambda_denominator))
            else 0.0
        end as active_lambda
    from tuned

),

totals as (

    select
        *,
        (
            census_sum + active_lambda * candidate_predicted_sum
            + weighted_human_mean - active_lambda * weighted_predicted_mean
        ) / n_answers as active_point,
        sqrt(
            active_lambda * active_lambda * n_candidates * candidate_predicted_var
            + greatest(
                0.0,
                weighted_human_var - 2 * active_lambda * weighted_cov
                + active_lambda * active_lambda * weighted_predicted_var
            ) / n_drawn
        ) / n_answers as active_se
    from estimates

),

final as (

    select
        label_set,
        human_metric,
        answer_run_id,
        predictor,
        predictor_run_id,
        n_drawn as active_n_labelled,
        {{ comparable_mean('active_lambda') }} as active_lambda,
        {{ comparable_mean('active_point') }} as active_mean,
        {{ comparable_mean(clamp_to_scale('active_point - z * active_se', '0.0', '1.0')) }} as active_lower,
        {{ comparable_mean(clamp_to_scale('active_point + z * active_se', '0.0', '1.0')) }} as active_upper
    from totals

)

select * from final
