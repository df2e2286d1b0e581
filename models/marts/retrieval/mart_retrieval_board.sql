-- The retrieval leaderboard as the dashboard shows it: for each run, k and board granularity (a granularity at which
-- the run has a metric that exists at several granularities: MAP, nDCG, ...), every retrieval metric of the registry
-- at that granularity, except a metric that exists at one granularity only (the retrieval-gap study's DocRec at doc,
-- PageRec at page), which is shown at its own whatever the board's. One row per run x k x board granularity x
-- metric, the mean and n_questions straight from mart_retrieval_leaderboard (nothing is rescored), with the run's
-- dataset, retriever, condition and its n_questions at k (the most questions any of its metrics counts), and the
-- registry's and dim_granularities' orders. A BEIR or TREC run has no page rows: its board granularities are chunk
-- and doc.

with leaderboard as (

    select * from {{ ref('mart_retrieval_leaderboard') }}

),

metrics as (

    select
        metric,
        display_order,
        granularities
    from {{ ref('dim_metrics') }}
    where family = 'retrieval'

),

granularities as (

    select * from {{ ref('dim_granularities') }}

),

-- a board granularity: one at which the run has a metric of several granularities
board_granularities as (

    select distinct
        leaderboard.run_id,
        leaderboard.k,
        leaderboard.granularity
    from leaderboard
    inner join metrics on leaderboard.metric = metrics.metric
    where {{ list_size('metrics.granularities') }} > 1

),

run_questions as (

    select
        run_id,
        k,
        max(n_questions) as run_n_questions
    from leaderboard
    group by run_id, k

),

-- each metric at the granularity it is shown at on a board: the board's, or its only one
shown as (

    select
        board_granularities.run_id,
        board_granularities.k,
        board_granularities.granularity,
        metrics.metric,
        metrics.display_order,
        case
            when {{ list_has('metrics.granularities', 'board_granularities.granularity') }}
                then board_granularities.granularity
            when {{ list_size('metrics.granularities') }} = 1 then {{ list_element('metrics.granularities', 1) }}
        end as metric_granularity
    from board_granularities
    cross join metrics

),

final as (

    select
        shown.run_id,
        leaderboard.dataset,
        leaderboard.retriever,
        leaderboard.condition,
        shown.k,
        shown.granularity,
        granularities.display_order as granularity_order,
        shown.metric,
        shown.display_order as metric_display_order,
        shown.metric_granularity,
        leaderboard.mean,
        leaderboard.n_questions,
        run_questions.run_n_questions
    from shown
    inner join leaderboard
        on shown.run_id = leaderboard.run_id
        and shown.k = leaderboard.k
        and shown.metric = leaderboard.metric
        and shown.metric_granularity = leaderboard.granularity
    inner join run_questions
        on shown.run_id = run_questions.run_id
        and shown.k = run_questions.k
    left join granularities on shown.granularity = granularities.granularity

)

select * from final
