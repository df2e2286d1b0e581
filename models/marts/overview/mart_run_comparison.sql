-- Is run B better than run A? Every pair fct_run_pairs compares (each run against its family's best and against each
-- baseline, at any count of runs; every pair of a small group; the named pairs), per metric (x granularity x k),
-- from fct_run_comparisons (the statistics, computed once per pair) in both orders: B - A, the interval mirrored and
-- wins and losses swapped in the other order. Beside the statistics:
-- - role: why the row is here - 'best' (run_a is the family's best: the row says how far run_b is from it),
--   'baseline' (run_a is a declared baseline), 'pair' (a pair of a small group, or named);
-- - p_holm: the randomization p (a comparison's Welch t p where the runs are compared unpaired, stat_test 'welch_t':
--   it has no randomization p) Holm-adjusted over the family's comparisons of the same role - every run against the
--   best, every run against one baseline, or every pair of the group - so a sweep of a hundred runs keeps its
--   family-wise error at the level asked;
-- - p_tukey: Tukey's HSD p of the pair within its family of runs (scipy.stats.tukey_hsd, as ranx's compare(
--   stat_test="tukey") computes it: each run's own mean and questions, the family's pooled variance,
--   mart_run_families), which controls the family-wise error over all pairs at once; tied_with_best: a 'best' row
--   whose p_tukey is above var run_comparison_alpha.

{%- set HOLM_P = 'coalesce(p_randomization, p_ttest)' %}

with comparisons as (

    select * from {{ ref('fct_run_comparisons') }}

),

pairs as (

    select * from {{ ref('fct_run_pairs') }}

),

stats as (

    select * from {{ ref('fct_run_metric_stats') }}

),

references_ as (

    select * from {{ ref('mart_run_families') }}

),

metrics as (

    select
        metric,
        higher_is_better,
        display_order
    from {{ ref('int_metric_registry') }}

),

one_way as (

    select
        comparisons.*,
        pairs.best_run_id,
        pairs.baseline_run_id,
        pairs.is_group_pair
    from comparisons
    inner join pairs on comparisons.pair_key = pairs.pair_key

),

both_ways as (

    select
        pair_key,
        run_a,
        run_b,
        run_kind,
        dataset,
        metric,
        granularity,
        k,
        stat_test,
        n_questions,
        n_a,
        n_b,
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
        n_not_ok_a,
        n_not_ok_b,
        best_run_id,
        baseline_run_id,
        is_group_pair,
        true as is_canonical
    from one_way

    union all

    -- the same comparison seen from the other side: B - A becomes A - B (the same resamples, negated), so the
    -- interval mirrors and wins and losses swap; the two-sided p-values do not change
    select
        pair_key,
        run_b as run_a,
        run_a as run_b,
        run_kind,
        dataset,
        metric,
        granularity,
        k,
        stat_test,
        n_questions,
        n_b as n_a,
        n_a as n_b,
        mean_b as mean_a,
        mean_a as mean_b,
        -- 0 - x, not -x: no negative zero
        0.0 - delta as delta,
        losses as wins,
        ties,
        wins as losses,
        0.0 - ci_high as ci_low,
        0.0 - ci_low as ci_high,
        p_ttest,
        p_randomization,
        randomization_exact,
        n_not_ok_b as n_not_ok_a,
        n_not_ok_a as n_not_ok_b,
        best_run_id,
        baseline_run_id,
        is_group_pair,
        false as is_canonical
    from one_way

),

roled as (

    select
        both_ways.*,
        case
            when both_ways.run_a = both_ways.best_run_id then 'best'
            when both_ways.run_a = both_ways.baseline_run_id then 'baseline'
            when both_ways.is_group_pair then 'pair'
        end as role
    from both_ways

),

-- Holm's step-down over one reference's comparisons: every run against the family's best, or against one baseline
holm_reference as (

    {{ holm_step_down(
        'roled',
        keys=['pair_key', 'role', 'run_a'],
        family=['dataset', 'run_kind', 'metric', 'granularity', 'k', 'role', 'run_a'],
        tie_break=['run_b'],
        p=HOLM_P,
        where="role in ('best', 'baseline')",
    ) }}

),

-- ... and over every pair of a small group (or named), each pair once
holm_pairs as (

    {{ holm_step_down(
        'roled',
        keys=['pair_key'],
        family=['dataset', 'run_kind', 'metric', 'granularity', 'k'],
        tie_break=['run_a', 'run_b'],
        p=HOLM_P,
        where='is_group_pair and is_canonical',
    ) }}

),

tukey as (

    select
        roled.pair_key,
        roled.run_a,
        tukey_hsd_p(
            stats_b.mean - stats_a.mean, references_.tukey_mse, stats_a.n_questions, stats_b.n_questions,
            references_.n_runs, references_.tukey_df
        ) as p_tukey
    from roled
    inner join stats as stats_a
        on roled.run_a = stats_a.run_id
        and {{ same_metric_point('roled', 'stats_a') }}
    inner join stats as stats_b
        on roled.run_b = stats_b.run_id
        and {{ same_metric_point('roled', 'stats_b') }}
    inner join references_
        on roled.dataset = references_.dataset
        and roled.run_kind = references_.run_kind
        and {{ same_metric_point('roled', 'references_') }}

),

final as (

    select
        roled.run_a,
        roled.run_b,
        roled.run_kind,
        roled.dataset,
        roled.metric,
        roled.granularity,
        roled.k,
        metrics.higher_is_better,
        metrics.display_order as metric_display_order,
        roled.role,
        roled.stat_test,
        roled.n_questions,
        roled.n_a,
        roled.n_b,
        roled.mean_a,
        roled.mean_b,
        roled.delta,
        roled.wins,
        roled.ties,
        roled.losses,
        roled.ci_low,
        roled.ci_high,
        roled.p_ttest,
        roled.p_randomization,
        roled.randomization_exact,
        case roled.role when 'pair' then holm_pairs.p_holm else holm_reference.p_holm end as p_holm,
        tukey.p_tukey,
        roled.role = 'best' and coalesce(tukey.p_tukey > {{ var('run_comparison_alpha') }}, false) as tied_with_best,
        roled.n_not_ok_a,
        roled.n_not_ok_b
    from roled
    inner join metrics on roled.metric = metrics.metric
    left join holm_reference
        on roled.pair_key = holm_reference.pair_key
        and roled.role = holm_reference.role
        and roled.run_a = holm_reference.run_a
    left join holm_pairs on roled.pair_key = holm_pairs.pair_key
    left join tukey
        on roled.pair_key = tukey.pair_key
        and roled.run_a = tukey.run_a

)

select * from final
