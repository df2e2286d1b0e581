-- fct_question_metric_scores only unpivots the per-question facts: the mean of its values over a run's questions
-- must equal that run's mean in each leaderboard. Returns the disagreeing (run, metric, ...) rows.
-- The retrieval runs compared are those the build touched (test_row_scope of fct_question_metric_scores: in a build
-- that only landed data, the runs whose version is not among those the last successful build tested; otherwise
-- every run), so adding a run compares that run, not every run; generation and judge rows, recomputed in every
-- build, are always compared.
{%- set touched = test_row_scope(ref('fct_question_metric_scores')) or 'true' %}

with long_means as (

    select
        run_id,
        run_kind,
        metric,
        granularity,
        k,
        avg(value) as mean,
        count(*) as n
    from {{ ref('fct_question_metric_scores') }}
    where run_kind != 'retrieval' or {{ touched }}
    group by run_id, run_kind, metric, granularity, k

),

leaderboard_means as (

    select
        run_id,
        'retrieval' as run_kind,
        metric,
        granularity,
        k,
        mean,
        n_questions as n
    from {{ ref('mart_retrieval_leaderboard') }}
    where mean is not null and {{ touched }}
    union all
    select
        run_id,
        'generation' as run_kind,
        metric,
        null as granularity,
        null as k,
        mean,
        n
    from {{ ref('mart_generation_leaderboard') }}
    where mean is not null
    union all
    select
        judge_run_id as run_id,
        'judge' as run_kind,
        metric,
        null as granularity,
        null as k,
        mean,
        n_ok as n
    from {{ ref('mart_judge_leaderboard') }}
    where mean is not null

)

select
    coalesce(long_means.run_id, leaderboard_means.run_id) as run_id,
    coalesce(long_means.metric, leaderboard_means.metric) as metric,
    long_means.mean as long_mean,
    leaderboard_means.mean as leaderboard_mean,
    long_means.n as long_n,
    leaderboard_means.n as leaderboard_n
from long_means
full outer join leaderboard_means
    on long_means.run_id = leaderboard_means.run_id
    and long_means.run_kind = leaderboard_means.run_kind
    and long_means.metric = leaderboard_means.metric
    and long_means.granularity is not distinct from leaderboard_means.granularity
    and long_means.k is not distinct from leaderboard_means.k
where long_means.run_id is null
    or leaderboard_means.run_id is null
    or abs(long_means.mean - leaderboard_means.mean) > 1e-9
    or long_means.n != leaderboard_means.n
