-- Judge run x metric: how far the judge agrees with itself over repeated judgments of the same answers (finrag
-- judge --repeats N; SPEC §10). Krippendorff's alpha over the answers x repeats matrix of the ok repeats' scores
-- (answers are the units, repeats the raters, a failed or not-applicable repeat a missing value), at the metric's
-- level of measurement: nominal for a discrete metric of two scale points, ordinal for a discrete metric of more,
-- interval for a continuous one (the registry's continuous, scale_min, scale_max). From the coincidence matrix, over
-- the answers with at least 2 ok repeats (the pairable units, m_u values each):
--   o_ck = sum_u n_uc (n_uk - [c = k]) / (m_u - 1),  n_c = sum_k o_ck,  n = sum_c n_c,
--   alpha = 1 - (n - 1) * sum_ck o_ck delta_ck / sum_ck n_c n_k delta_ck,
-- delta nominal [c <> k], interval (c - k)^2, ordinal (sum of n_g over the values g from c to k - (n_c + n_k) / 2)^2
-- over the values present - as the `krippendorff` package computes it. Every delta_cc is 0, so only pairs c <> k
-- enter either sum. Null when undefined: fewer than 2 pairable values, or no variation at all (expected
-- disagreement 0). The values are the raw scores: alpha is the same on the normalised scale (a linear map of it),
-- and raw scores keep the sums exact for the usual scales (whole or half points).
-- share_flipping: the share of those answers whose ok repeats straddle the metric's pass threshold
-- (fct_judge_answer_scores.straddles_threshold).

with scores as (

    select
        judge_run_id,
        question_id,
        metric,
        raw_score as value
    from {{ ref('fct_judge_scores') }}
    where status = 'ok'

),

answer_scores as (

    select * from {{ ref('fct_judge_answer_scores') }}

),

levels as (

    select
        metric,
        case
            when continuous then 'interval'
            when scale_max - scale_min = 1 then 'nominal'
            else 'ordinal'
        end as level_of_measurement
    from {{ ref('int_metric_registry') }}
    where family = 'judged'

),

unit_value_counts as (

    -- n_uc: how many ok repeats of answer u gave value c
    select
        judge_run_id,
        metric,
        question_id,
        value,
        count(*) as n_uc
    from scores
    group by judge_run_id, metric, question_id, value

),

pairable_units as (

    -- the answers with at least 2 ok repeats, and m_u
    select
        judge_run_id,
        metric,
        question_id,
        sum(n_uc) as m_u
    from unit_value_counts
    group by judge_run_id, metric, question_id
    having sum(n_uc) >= 2

),

pairable_values as (

    select
        unit_value_counts.judge_run_id,
        unit_value_counts.metric,
        unit_value_counts.question_id,
        unit_value_counts.value,
        cast(unit_value_counts.n_uc as double) as n_uc,
        cast(pairable_units.m_u as double) as m_u
    from unit_value_counts
    inner join pairable_units
        on unit_value_counts.judge_run_id = pairable_units.judge_run_id
        and unit_value_counts.metric = pairable_units.metric
        and unit_value_counts.question_id = pairable_units.question_id

),

coincidences as (

    -- o_ck for c <> k (the diagonal's distance is 0 at every level)
    select
        values_c.judge_run_id,
        values_c.metric,
        values_c.value as value_c,
        values_k.value as value_k,
        sum(values_c.n_uc * values_k.n_uc / (values_c.m_u - 1)) as o_ck
    from pairable_values as values_c
    inner join pairable_values as values_k
        on values_c.judge_run_id = values_k.judge_run_id
        and values_c.metric = values_k.metric
        and values_c.question_id = values_k.question_id
        and values_c.value <> values_k.value
    group by values_c.judge_run_id, values_c.metric, values_c.value, values_k.value

),

value_totals as (

    -- n_c over the pairable answers, and the running total up to c (the ordinal distance's sums)
    select
        judge_run_id,
        metric,
        value,
        n_c,
        sum(n_c) over (
            partition by judge_run_id, metric
            order by value
            rows between unbounded preceding and current row
        ) as n_up_to
    from (
        select
            judge_run_id,
            metric,
            value,
            sum(n_uc) as n_c
        from pairable_values
        group by judge_run_id, metric, value
    ) as value_counts

),

value_pairs as (

    -- every ordered pair of values c <> k present in a run's metric
    select
        values_c.judge_run_id,
        values_c.metric,
        levels.level_of_measurement,
        values_c.value as value_c,
        values_k.value as value_k,
        values_c.n_c,
        values_k.n_c as n_k,
        -- the ordinal distance's root: from the lower value lo to the higher hi, sum n_g = n_up_to(hi) -
        -- n_up_to(lo) + n_lo, less (n_c + n_k) / 2
        greatest(values_c.n_up_to, values_k.n_up_to) - least(values_c.n_up_to, values_k.n_up_to)
        + (case when values_c.value < values_k.value then values_c.n_c else values_k.n_c end)
        - (values_c.n_c + values_k.n_c) / 2 as ordinal_root
    from value_totals as values_c
    inner join value_totals as values_k
        on values_c.judge_run_id = values_k.judge_run_id
        and values_c.metric = values_k.metric
        and values_c.value <> values_k.value
    inner join levels on values_c.metric = levels.metric

),

distances as (

    -- delta_ck at the metric's level
    select
        judge_run_id,
        metric,
        value_c,
        value_k,
        n_c,
        n_k,
        case level_of_measurement
            when 'nominal' then cast(1 as double)
            when 'interval' then power(value_c - value_k, 2)
            else power(ordinal_root, 2)
        end as delta
    from value_pairs

),

disagreements as (

    select
        distances.judge_run_id,
        distances.metric,
        sum(coalesce(coincidences.o_ck, 0) * distances.delta) as observed,
        sum(distances.n_c * distances.n_k * distances.delta) as expected
    from distances
    left join coincidences
        on distances.judge_run_id = coincidences.judge_run_id
        and distances.metric = coincidences.metric
        and distances.value_c = coincidences.value_c
        and distances.value_k = coincidences.value_k
    group by distances.judge_run_id, distances.metric

),

value_counts as (

    select
        judge_run_id,
        metric,
        sum(n_c) as n_values
    from value_totals
    group by judge_run_id, metric

),

answers as (

    select
        judge_run_id,
        answer_run_id,
        judge_model,
        dataset,
        metric,
        judge_family,
        max(n_repeats) as n_repeats,
        count(case when n_ok >= 2 then 1 end) as n_answers,
        count(case when n_ok >= 2 and straddles_threshold then 1 end) as n_flipping,
        -- over the pairable answers whose metric has a pass threshold (straddles_threshold not null)
        avg(
            case
                when n_ok >= 2 and straddles_threshold then cast(1 as double)
                when n_ok >= 2 and not straddles_threshold then cast(0 as double)
            end
        ) as share_flipping
    from answer_scores
    group by judge_run_id, answer_run_id, judge_model, dataset, metric, judge_family

),

final as (

    select
        answers.judge_run_id,
        answers.answer_run_id,
        answers.judge_model,
        answers.dataset,
        answers.metric,
        answers.judge_family,
        levels.level_of_measurement,
        answers.n_repeats,
        answers.n_answers,
        cast(coalesce(value_counts.n_values, 0) as bigint) as n_values,
        case
            when value_counts.n_values >= 2 and disagreements.expected > 0
                then 1 - (value_counts.n_values - 1) * disagreements.observed / disagreements.expected
        end as alpha,
        answers.n_flipping,
        answers.share_flipping
    from answers
    left join levels on answers.metric = levels.metric
    left join value_counts
        on answers.judge_run_id = value_counts.judge_run_id
        and answers.metric = value_counts.metric
    left join disagreements
        on answers.judge_run_id = disagreements.judge_run_id
        and answers.metric = disagreements.metric

)

select * from final
