-- The statistics of every pair of runs fct_run_pairs compares, per metric (x granularity x k), on the questions both
-- runs were scored on (fct_question_metric_scores; nothing is rescored here), B - A with run_a < run_b: the means,
-- wins / ties / losses in the metric's direction (pair_outcome), and the statistics of the per-question differences
-- - bootstrap interval, paired t-test, paired randomization test - from ONE function, paired_tests
-- (python_jobs/stats/paired_tests.py, registered into DuckDB by the project's dbt-duckdb plugin), with its
-- settings from vars run_comparison_*. The differences go in ordered by question id, so the result does not depend
-- on scan order. Judged metrics: only ok judgments are scores, and a question's score is the answer's mean over its
-- ok repeats (fct_judge_answer_scores: repeated judgments of one answer are one score, not several questions); the
-- questions both runs judged whose answer is not_applicable or failed are counted per run, and a judged metric both
-- runs judged appears even when no question has two ok scores (n_questions = 0, no statistics).
-- Which test: the rule run_comparison_tests (python_jobs/core/rules.yml), as the registered function comparison_test
-- (python_jobs/stats/unpaired_tests.py) applies it to the shared questions and each run's questions: 'paired_t', the
-- above, when the shared questions are enough; else 'welch_t' - two runs that share no (or too few) questions, as
-- two application versions' production traffic - where the means are each run's own over all its questions and the
-- interval and p come from welch_tests (a bootstrap of the difference of means, Welch's t-test), on each run's
-- scores ordered by question id; a Welch row has no wins / ties / losses (nothing is paired) and no randomization p.
-- n_a and n_b: the questions of each run the statistics used (both n_questions when paired).
-- Incremental, keyed by the pair and metric (pair_key): a pair is computed again only when its pair_version does
-- (either run's scores, or this SQL), so a build adding one run to a family computes that run's comparisons (and,
-- when it is the new best, the family's comparisons with it), and reads the scores of those runs only.

{{ config(run_incremental_config(unique_key='pair_key', post_hook='{{ run_comparisons_drop_vanished() }}')) }}
-- a warehouse built before a column was added gains it (its pairs' version changed with this SQL: all recomputed)
{{ config(on_schema_change='append_new_columns') }}

with pairs as (

    select * from {{ ref('fct_run_pairs') }}

),

pending as (

    select pairs.*
    from pairs
    {%- if is_incremental() %}
    where not exists (
        select 1 from {{ this }} as done
        where done.pair_key = pairs.pair_key and done.pair_version = pairs.pair_version
    )
    {%- endif %}

),

metrics as (

    select
        metric,
        higher_is_better
    from {{ ref('int_metric_registry') }}

),

scores as (

    select
        run_id,
        question_id,
        metric,
        granularity,
        k,
        value
    from {{ ref('fct_question_metric_scores') }}
    -- the runs of the pairs to compute, as literals: the scan reads their row groups only
    where {{ run_comparisons_pending_runs('run_id') }}

),

judgments as (

    select
        judge_run_id as run_id,
        question_id,
        metric,
        status
    from {{ ref('fct_judge_answer_scores') }}
    where {{ run_comparisons_pending_runs('judge_run_id') }}

),

paired as (

    select
        pending.pair_key,
        scores_a.question_id,
        scores_b.value - scores_a.value as diff,
        scores_a.value as value_a,
        scores_b.value as value_b
    from pending
    {{ paired_question_scores('pending', 'scores') }}

),

compared as (

    select
        paired.pair_key,
        count(*) as n_questions,
        avg(paired.value_a) as mean_a,
        avg(paired.value_b) as mean_b,
        -- B wins a question when its score is better in the metric's direction (lower is better for HAL)
        count(case when pair_outcome(paired.diff, metrics.higher_is_better) = 'win' then 1 end) as wins,
        count(case when pair_outcome(paired.diff, metrics.higher_is_better) = 'tie' then 1 end) as ties,
        count(case when pair_outcome(paired.diff, metrics.higher_is_better) = 'loss' then 1 end) as losses,
        {{ ordered_list('paired.diff', ['paired.question_id']) }} as diffs
    from paired
    inner join pending on paired.pair_key = pending.pair_key
    inner join metrics on pending.metric = metrics.metric
    group by paired.pair_key

),

sides as (

    -- each run's own questions at the pair's metric point: the unpaired test's samples and the pairing rule's counts
    select
        pending.pair_key,
        'a' as side,
        scores.question_id,
        scores.value
    from pending
    inner join scores
        on pending.run_a = scores.run_id
        and {{ same_metric_point('pending', 'scores') }}

    union all

    select
        pending.pair_key,
        'b' as side,
        scores.question_id,
        scores.value
    from pending
    inner join scores
        on pending.run_b = scores.run_id
        and {{ same_metric_point('pending', 'scores') }}

),

sizes as (

    select
        pair_key,
        count(case when side = 'a' then 1 end) as n_a,
        count(case when side = 'b' then 1 end) as n_b
    from sides
    group by pair_key

),

chosen as (

    select
        sizes.pair_key,
        sizes.n_a,
        sizes.n_b,
        comparison_test(coalesce(compared.n_questions, 0), sizes.n_a, sizes.n_b) as stat_test
    from sizes
    left join compared on sizes.pair_key = compared.pair_key

),

samples as (

    -- each run's sample of the pairs compared unpaired: its mean and its scores ordered by question id
    select
        sides.pair_key,
        sides.side,
        avg(sides.value) as sample_mean,
        {{ ordered_list('sides.value', ['sides.question_id']) }} as sample_values
    from sides
    inner join chosen on sides.pair_key = chosen.pair_key
    where chosen.stat_test = '{{ comparison_test_name('unpaired') }}'
    group by sides.pair_key, sides.side

),

welch as (

    select
        samples_a.pair_key,
        samples_a.sample_mean as mean_a,
        samples_b.sample_mean as mean_b,
        welch_tests(
            samples_a.sample_values,
            samples_b.sample_values,
            {{ var('run_comparison_resamples') }},
            {{ var('run_comparison_seed') }},
            cast({{ var('run_comparison_level') }} as double)
        ) as tests
    from samples as samples_a
    inner join samples as samples_b
        on samples_a.pair_key = samples_b.pair_key
        and samples_b.side = 'b'
    where samples_a.side = 'a'

),

tested as (

    select
        compared.pair_key,
        paired_tests(
            compared.diffs,
            {{ var('run_comparison_resamples') }},
            {{ var('run_comparison_sign_flips') }},
            {{ var('run_comparison_seed') }},
            -- a double: Spark reads 0.95 as a decimal, which the UDF's double argument does not take
            cast({{ var('run_comparison_level') }} as double)
        ) as tests
    from compared
    inner join chosen on compared.pair_key = chosen.pair_key
    where chosen.stat_test = '{{ comparison_test_name('paired') }}'

),

judge_exclusions as (

    -- the questions both judge runs judged on the metric, whatever the status: those not ok in a run are left out
    select
        pending.pair_key,
        count(case when judgments_a.status <> 'ok' then 1 end) as n_not_ok_a,
        count(case when judgments_b.status <> 'ok' then 1 end) as n_not_ok_b
    from pending
    inner join judgments as judgments_a
        on pending.run_a = judgments_a.run_id
        and pending.metric = judgments_a.metric
    inner join judgments as judgments_b
        on pending.run_b = judgments_b.run_id
        and judgments_a.question_id = judgments_b.question_id
        and judgments_a.metric = judgments_b.metric
    where pending.run_kind = 'judge'
    group by pending.pair_key

),

final as (

    select
        pending.pair_key,
        pending.pair_version,
        pending.run_a,
        pending.run_b,
        pending.run_kind,
        pending.dataset,
        pending.metric,
        pending.granularity,
        pending.k,
        chosen.stat_test,
        coalesce(compared.n_questions, 0) as n_questions,
        case when tested.pair_key is not null then compared.n_questions else coalesce(chosen.n_a, 0) end as n_a,
        case when tested.pair_key is not null then compared.n_questions else coalesce(chosen.n_b, 0) end as n_b,
        coalesce(welch.mean_a, compared.mean_a) as mean_a,
        coalesce(welch.mean_b, compared.mean_b) as mean_b,
        coalesce(welch.mean_b, compared.mean_b) - coalesce(welch.mean_a, compared.mean_a) as delta,
        coalesce(compared.wins, 0) as wins,
        coalesce(compared.ties, 0) as ties,
        coalesce(compared.losses, 0) as losses,
        coalesce({{ struct_field('tested.tests', 'ci_low') }}, {{ struct_field('welch.tests', 'ci_low') }}) as ci_low,
        coalesce(
            {{ struct_field('tested.tests', 'ci_high') }}, {{ struct_field('welch.tests', 'ci_high') }}
        ) as ci_high,
        coalesce(
            {{ struct_field('tested.tests', 'p_ttest') }}, {{ struct_field('welch.tests', 'p_ttest') }}
        ) as p_ttest,
        {{ struct_field('tested.tests', 'p_randomization') }} as p_randomization,
        {{ struct_field('tested.tests', 'randomization_exact') }} as randomization_exact,
        judge_exclusions.n_not_ok_a,
        judge_exclusions.n_not_ok_b
    from pending
    left join chosen on pending.pair_key = chosen.pair_key
    left join compared on pending.pair_key = compared.pair_key
    left join tested on pending.pair_key = tested.pair_key
    left join welch on pending.pair_key = welch.pair_key
    left join judge_exclusions on pending.pair_key = judge_exclusions.pair_key
    -- a pair with no test (a run without a scored question) is kept only for a judged metric both runs judged (its
    -- exclusions)
    where chosen.stat_test is not null or judge_exclusions.pair_key is not null

)

select * from final
