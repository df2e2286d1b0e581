-- Is run B better than run A? Every pair of runs of one kind scored on one dataset (retrieval vs retrieval, answer
-- vs answer, judge vs judge), compared per metric (x granularity x k for retrieval) on the questions both were
-- scored on, from the one pairing of per-question scores (int_run_pair_scores, over fct_question_metric_scores;
-- nothing is rescored here): the means, their difference, wins / ties / losses, and the statistics of the
-- per-question differences b - a - bootstrap interval, paired t-test, paired randomization test - from ONE function,
-- paired_tests (python_jobs/warehouse/paired_tests.py, registered into DuckDB by the project's dbt-duckdb plugin),
-- with its settings from vars run_comparison_*. The differences go in ordered by question id, so the result does
-- not depend on scan order. Each unordered pair is computed once (run_a < run_b) and also written mirrored
-- (run_b, run_a). Which pairs: int_run_pairs, the one place the selection is made (mart_run_pair_questions lists the
-- same pairs' questions, from the same int_run_pair_scores). Wins and losses in the metric's direction:
-- macros/metrics/metric_direction.sql.
-- Judged metrics: only ok judgments are scores; the judgments of the questions both runs judged that are
-- not_applicable or failed are counted per run, and a judged metric both runs judged appears even when no question
-- has two ok scores (n_questions = 0, no statistics).

with metrics as (

    select
        metric,
        higher_is_better,
        display_order
    from {{ ref('int_metric_registry') }}

),

judgments as (

    select
        judge_run_id as run_id,
        question_id,
        metric,
        status
    from {{ ref('fct_judge_scores') }}

),

run_pairs as (

    select * from {{ ref('int_run_pairs') }}

),

paired as (

    select * from {{ ref('int_run_pair_scores') }}

),

compared as (

    select
        paired.run_a,
        paired.run_b,
        paired.metric,
        paired.granularity,
        paired.k,
        count(*) as n_questions,
        avg(paired.value_a) as mean_a,
        avg(paired.value_b) as mean_b,
        -- B wins a question when its score is better in the metric's direction (lower is better for HAL)
        count(case when {{ pair_outcome('paired.diff', 'metrics.higher_is_better') }} = 'win' then 1 end) as wins,
        count(case when {{ pair_outcome('paired.diff', 'metrics.higher_is_better') }} = 'tie' then 1 end) as ties,
        count(case when {{ pair_outcome('paired.diff', 'metrics.higher_is_better') }} = 'loss' then 1 end) as losses,
        {{ ordered_list('paired.diff', ['paired.question_id']) }} as diffs
    from paired
    inner join metrics on paired.metric = metrics.metric
    group by paired.run_a, paired.run_b, paired.metric, paired.granularity, paired.k

),

tested as (

    select
        run_a,
        run_b,
        metric,
        granularity,
        k,
        n_questions,
        mean_a,
        mean_b,
        wins,
        ties,
        losses,
        paired_tests(
            diffs,
            {{ var('run_comparison_resamples') }},
            {{ var('run_comparison_sign_flips') }},
            {{ var('run_comparison_seed') }},
            -- a double: Spark reads 0.95 as a decimal, which the UDF's double argument does not take
            cast({{ var('run_comparison_level') }} as double)
        ) as tests
    from compared

),

judge_exclusions as (

    -- the questions both judge runs judged on the metric, whatever the status: those not ok in a run are left out
    select
        run_pairs.run_a,
        run_pairs.run_b,
        judgments_a.metric,
        count(case when judgments_a.status <> 'ok' then 1 end) as n_not_ok_a,
        count(case when judgments_b.status <> 'ok' then 1 end) as n_not_ok_b
    from run_pairs
    inner join judgments as judgments_a on run_pairs.run_a = judgments_a.run_id
    inner join judgments as judgments_b
        on run_pairs.run_b = judgments_b.run_id
        and judgments_a.question_id = judgments_b.question_id
        and judgments_a.metric = judgments_b.metric
    where run_pairs.run_kind = 'judge'
    group by run_pairs.run_a, run_pairs.run_b, judgments_a.metric

),

comparisons as (

    select
        run_a,
        run_b,
        metric,
        granularity,
        k
    from tested
    union
    select
        run_a,
        run_b,
        metric,
        cast(null as string) as granularity,
        cast(null as integer) as k
    from judge_exclusions

),

one_way as (

    select
        comparisons.run_a,
        comparisons.run_b,
        run_pairs.run_kind,
        run_pairs.dataset,
        comparisons.metric,
        comparisons.granularity,
        comparisons.k,
        metrics.higher_is_better,
        metrics.display_order as metric_display_order,
        coalesce(tested.n_questions, 0) as n_questions,
        tested.mean_a,
        tested.mean_b,
        tested.mean_b - tested.mean_a as delta,
        coalesce(tested.wins, 0) as wins,
        coalesce(tested.ties, 0) as ties,
        coalesce(tested.losses, 0) as losses,
        {{ struct_field('tested.tests', 'ci_low') }} as ci_low,
        {{ struct_field('tested.tests', 'ci_high') }} as ci_high,
        {{ struct_field('tested.tests', 'p_ttest') }} as p_ttest,
        {{ struct_field('tested.tests', 'p_randomization') }} as p_randomization,
        {{ struct_field('tested.tests', 'randomization_exact') }} as randomization_exact,
        judge_exclusions.n_not_ok_a,
        judge_exclusions.n_not_ok_b
    from comparisons
    inner join run_pairs
        on comparisons.run_a = run_pairs.run_a
        and comparisons.run_b = run_pairs.run_b
    inner join metrics on comparisons.metric = metrics.metric
    left join tested
        on comparisons.run_a = tested.run_a
        and comparisons.run_b = tested.run_b
        and comparisons.metric = tested.metric
        and tested.granularity is not distinct from comparisons.granularity
        and tested.k is not distinct from comparisons.k
    left join judge_exclusions
        on comparisons.run_a = judge_exclusions.run_a
        and comparisons.run_b = judge_exclusions.run_b
        and comparisons.metric = judge_exclusions.metric
        and comparisons.granularity is null

),

holm_ranked as (

    -- Holm's step-down over the metrics of one pair at one granularity and k (the family a reader scans at once)
    select
        *,
        row_number() over (
            partition by run_a, run_b, granularity, k order by p_randomization nulls last, metric
        ) as holm_rank,
        count(p_randomization) over (partition by run_a, run_b, granularity, k) as holm_size
    from one_way

),

holm as (

    select
        *,
        case
            when p_randomization is not null then least(1.0, max((holm_size - holm_rank + 1) * p_randomization) over (
                    partition by run_a, run_b, granularity, k order by holm_rank
                    rows between unbounded preceding and current row
                ))
        end as p_holm
    from holm_ranked

),

final as (

    select
        run_a,
        run_b,
        run_kind,
        dataset,
        metric,
        granularity,
        k,
        higher_is_better,
        metric_display_order,
        n_questions,
        mean_a,
        mean_b,
        delta,
        wins,
        ties,
        losses,
        ci_low,
        ci_high,
        p_ttest,
        p_randomization,
        randomization_exact,
        p_holm,
        n_not_ok_a,
        n_not_ok_b
    from holm

    union all

    -- the same comparison seen from the other side: B - A becomes A - B (the same resamples, negated), so the
    -- interval mirrors and wins and losses swap; the two-sided p-values do not change
    select
        run_b as run_a,
        run_a as run_b,
        run_kind,
        dataset,
        metric,
        granularity,
        k,
        higher_is_better,
        metric_display_order,
        n_questions,
        mean_b as mean_a,
        mean_a as mean_b,
        mean_a - mean_b as delta,
        losses as wins,
        ties,
        wins as losses,
        -- 0 - x, not -x: no negative zero
        0.0 - ci_high as ci_low,
        0.0 - ci_low as ci_high,
        p_ttest,
        p_randomization,
        randomization_exact,
        p_holm,
        n_not_ok_b as n_not_ok_a,
        n_not_ok_a as n_not_ok_b
    from holm

)

select * from final
