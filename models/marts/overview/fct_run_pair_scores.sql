-- The per-question scores of every compared pair of runs side by side, once for every model that reads them
-- (mart_run_pair_questions): for each pair of fct_run_pairs compared question by question (run_a < run_b) and each
-- metric (x granularity x k) both runs were scored on, every question both scored, with
-- both values and their difference b - a, from fct_question_metric_scores (nothing is rescored here). Both runs are
-- on one dataset, so question_id alone names the question within the pair.

with run_pairs as (

    select * from {{ ref('fct_run_pairs') }}
    -- question by question only for the pairs of small groups and the named ones: a sweep's hundred runs against
    -- their best are compared in fct_run_comparisons, not listed here question by question
    where is_group_pair

),

pair_runs as (

    select run_pairs.run_a as run_id from run_pairs
    union all
    select run_pairs.run_b as run_id from run_pairs

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
    -- only the pairs' runs: past var run_comparison_max_runs there are none, and without this semi-join DuckDB
    -- hashes every run's scores for an empty join (5 s at 20 runs of 5,000 questions, growing with the runs)
    where run_id in (select pair_runs.run_id from pair_runs)

),

paired as (

    select
        run_pairs.run_a,
        run_pairs.run_b,
        run_pairs.run_kind,
        run_pairs.dataset,
        scores_a.metric,
        scores_a.granularity,
        scores_a.k,
        scores_a.question_id,
        scores_a.value as value_a,
        scores_b.value as value_b,
        scores_b.value - scores_a.value as diff
    from run_pairs
    inner join scores as scores_a
        on run_pairs.run_a = scores_a.run_id
        and {{ same_metric_point('run_pairs', 'scores_a') }}
    inner join scores as scores_b
        on run_pairs.run_b = scores_b.run_id
        and scores_a.question_id = scores_b.question_id
        and {{ same_metric_point('scores_a', 'scores_b') }}

)

select * from paired
