-- Which pairs of runs are compared, per family of runs (one dataset, run kind, metric, granularity, k), once for
-- every model that compares them (fct_run_comparisons, the statistics; mart_run_comparison; mart_run_pair_questions,
-- the questions): each unordered pair once (run_a < run_b), with why -
-- - every run against the family's best run (mart_run_families), at any count of runs;
-- - every run against each baseline of its dataset and kind: the runs var run_comparison_baselines names and the
--   baseline run of every sweep (lake sweeps);
-- - every pair of a (dataset, run kind) with at most var run_comparison_max_runs runs, and the pairs var
--   run_comparison_pairs names (either order) whatever the group's size: these are also compared question by
--   question (mart_run_pair_questions).
-- Pairs grow with the runs, not with their square, past the cap. pair_version changes when either run's scores or
-- the code fct_run_comparisons computes them with (its SQL and everything upstream of it, its macros and vars -
-- run_comparison_resamples, ... - and the Python functions it calls: its code_fingerprint) do: what
-- fct_run_comparisons recomputes (a generation or judge run, summarised in every build, has the
-- build's version, so its pairs are compared again in every build).

-- A table, not a view: pair_version calls the registered function sql_function_version, and Spark refuses a
-- persistent view over a session's temporary function.
{{ config(materialized='table') }}

{%- set named_pairs = var('run_comparison_pairs', []) or [] %}
{%- set baselines = var('run_comparison_baselines', []) or [] %}

with stats as (

    select
        run_id,
        run_kind,
        dataset,
        metric,
        granularity,
        k,
        coalesce(run_version, '{{ invocation_id }}') as run_version
    from {{ ref('fct_run_metric_stats') }}
    where mean is not null

),

references_ as (

    select * from {{ ref('mart_run_families') }}

),

declared_baselines as (

    select
        dataset,
        baseline_run_id as run_id
    from {{ ref('stg_lake__sweeps') }}
    where baseline_run_id is not null
    {%- for run in baselines %}
    union
    select
        cast(null as string) as dataset,
        '{{ run | replace("'", "''") }}' as run_id
    {%- endfor %}

),

group_sizes as (

    select
        dataset,
        run_kind,
        count(distinct run_id) as n_runs
    from stats
    group by dataset, run_kind

),

{% if named_pairs %}
named_pairs as (

    {% for pair in named_pairs %}
    {%- set first = "'" ~ pair[0] | replace("'", "''") ~ "'" %}
    {%- set second = "'" ~ pair[1] | replace("'", "''") ~ "'" %}
    select
        least({{ first }}, {{ second }}) as run_a,
        greatest({{ first }}, {{ second }}) as run_b
    {{ "union" if not loop.last }}
    {% endfor %}

),
{% endif %}

candidates as (

    -- every run against its family's best
    select
        references_.best_run_id as reference_run,
        stats.run_id as other_run,
        stats.run_kind,
        stats.dataset,
        stats.metric,
        stats.granularity,
        stats.k,
        'best' as reason
    from stats
    inner join references_
        on stats.dataset = references_.dataset
        and stats.run_kind = references_.run_kind
        and {{ same_metric_point('stats', 'references_') }}
    where stats.run_id <> references_.best_run_id

    union all

    -- every run against each baseline of its family
    select
        baseline_stats.run_id as reference_run,
        stats.run_id as other_run,
        stats.run_kind,
        stats.dataset,
        stats.metric,
        stats.granularity,
        stats.k,
        'baseline' as reason
    from stats
    inner join stats as baseline_stats
        on stats.dataset = baseline_stats.dataset
        and stats.run_kind = baseline_stats.run_kind
        and {{ same_metric_point('stats', 'baseline_stats') }}
        and stats.run_id <> baseline_stats.run_id
    inner join declared_baselines
        on baseline_stats.run_id = declared_baselines.run_id
        and (declared_baselines.dataset is null or baseline_stats.dataset = declared_baselines.dataset)

    union all

    -- every pair of a small group, and the named pairs
    select
        stats_a.run_id as reference_run,
        stats_b.run_id as other_run,
        stats_a.run_kind,
        stats_a.dataset,
        stats_a.metric,
        stats_a.granularity,
        stats_a.k,
        'group' as reason
    from stats as stats_a
    inner join stats as stats_b
        on stats_a.dataset = stats_b.dataset
        and stats_a.run_kind = stats_b.run_kind
        and {{ same_metric_point('stats_a', 'stats_b') }}
        and stats_a.run_id < stats_b.run_id
    inner join group_sizes
        on stats_a.dataset = group_sizes.dataset
        and stats_a.run_kind = group_sizes.run_kind
    {% if named_pairs %}
    left join named_pairs
        on stats_a.run_id = named_pairs.run_a
        and stats_b.run_id = named_pairs.run_b
    {% endif %}
    where group_sizes.n_runs <= {{ var('run_comparison_max_runs') }}
    {% if named_pairs %}
        or named_pairs.run_a is not null
    {% endif %}

),

pairs as (

    select
        least(reference_run, other_run) as run_a,
        greatest(reference_run, other_run) as run_b,
        run_kind,
        dataset,
        metric,
        granularity,
        k,
        max(case when reason = 'best' then reference_run end) as best_run_id,
        max(case when reason = 'baseline' then reference_run end) as baseline_run_id,
        max(case when reason = 'group' then 1 else 0 end) = 1 as is_group_pair
    from candidates
    group by
        least(reference_run, other_run),
        greatest(reference_run, other_run),
        run_kind,
        dataset,
        metric,
        granularity,
        k

),

final as (

    select
        pairs.*,
        md5(
            pairs.run_a || '|' || pairs.run_b || '|' || pairs.metric || '|' || coalesce(pairs.granularity, '') || '|'
            || coalesce(cast(pairs.k as string), '')
        ) as pair_key,
        md5(
            {{ code_fingerprint('model.' ~ project_name ~ '.fct_run_comparisons') }}
            || '|' || stats_a.run_version || '|' || stats_b.run_version
        ) as pair_version
    from pairs
    inner join stats as stats_a
        on pairs.run_a = stats_a.run_id
        and {{ same_metric_point('pairs', 'stats_a') }}
    inner join stats as stats_b
        on pairs.run_b = stats_b.run_id
        and {{ same_metric_point('pairs', 'stats_b') }}

)

select * from final
