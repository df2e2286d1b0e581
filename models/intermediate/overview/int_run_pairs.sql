-- Which pairs of runs are compared, once for every model that compares them (mart_run_comparison, its statistics;
-- mart_run_pair_questions, its questions): pairs of runs of one kind (retrieval vs retrieval, answer vs answer,
-- judge vs judge) scored on one dataset in fct_question_metric_scores, each unordered pair once (run_a < run_b).
-- Every pair of a (dataset, run kind) that has at most var run_comparison_max_runs runs, and the pairs var
-- run_comparison_pairs names (either order), whatever the group's size. The cap keeps the build's cost bounded:
-- pairs grow with the square of the runs, each pair of retrieval runs is ~190 comparisons (metric x granularity x
-- k), and each comparison costs resamples + sign flips passes over its questions; 10 runs are 45 pairs.

{%- set named_pairs = var('run_comparison_pairs', []) or [] %}

with runs as (

    select
        run_id,
        run_kind,
        dataset,
        count(*) over (partition by run_kind, dataset) as runs_in_group
    from (
        select distinct
            run_id,
            run_kind,
            dataset
        from {{ ref('fct_question_metric_scores') }}
    ) as scored_runs

),

{% if named_pairs %}
named_pairs as (

    -- var run_comparison_pairs, each pair in either order
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

run_pairs as (

    select
        runs_a.run_id as run_a,
        runs_b.run_id as run_b,
        runs_a.run_kind,
        runs_a.dataset
    from runs as runs_a
    inner join runs as runs_b
        on runs_a.run_kind = runs_b.run_kind
        and runs_a.dataset = runs_b.dataset
        and runs_a.run_id < runs_b.run_id
    {% if named_pairs %}
    left join named_pairs
        on runs_a.run_id = named_pairs.run_a
        and runs_b.run_id = named_pairs.run_b
    {% endif %}
    where
        runs_a.runs_in_group <= {{ var('run_comparison_max_runs') }}
    {% if named_pairs %}
        or named_pairs.run_a is not null
    {% endif %}

)

select * from run_pairs
