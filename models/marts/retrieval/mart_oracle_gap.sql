-- A full-corpus run beside its Oracle-Doc / Oracle-Page counterparts (the retrieval-gap study's conditions): the
-- runs with the same config_id (the whole retriever config but the condition, landed by `finrag retrieve`) and
-- condition oracle_doc / oracle_page; the newest counterpart when there are several. One row per full run x
-- granularity x metric x k with each run's mean and the gaps (oracle mean - full mean). Rebuilt in full: it reads
-- only the leaderboard.

with runs as (

    select * from {{ ref('int_retrieval_runs') }}

),

leaderboard as (

    select
        run_id,
        granularity,
        metric,
        k,
        mean,
        n_questions
    from {{ ref('mart_retrieval_leaderboard') }}

),

full_runs as (

    select * from runs
    where condition = 'full'

),

oracle_candidates as (

    select
        full_runs.run_id,
        oracle_runs.condition as oracle_condition,
        oracle_runs.run_id as oracle_run_id,
        row_number() over (
            partition by full_runs.run_id, oracle_runs.condition
            order by oracle_runs.run_created_at desc, oracle_runs.run_id desc
        ) as recency
    from full_runs
    -- the oracle conditions are the rules' oracle bounds (python_jobs/core/rules.yml); counterparts below names
    -- each one again because the mart publishes a column pair per condition (its published shape)
    inner join runs as oracle_runs
        on full_runs.config_id = oracle_runs.config_id
        and {{ oracle_bound_condition('oracle_runs.condition') }}

),

counterparts as (

    select
        run_id,
        max(case when oracle_condition = 'oracle_doc' then oracle_run_id end) as oracle_doc_run_id,
        max(case when oracle_condition = 'oracle_page' then oracle_run_id end) as oracle_page_run_id
    from oracle_candidates
    where recency = 1
    group by run_id

),

final as (

    select
        counterparts.run_id,
        full_runs.dataset,
        full_runs.retriever,
        full_means.granularity,
        full_means.metric,
        full_means.k,
        full_means.mean,
        full_means.n_questions,
        counterparts.oracle_doc_run_id,
        oracle_doc_means.mean as oracle_doc_mean,
        oracle_doc_means.n_questions as oracle_doc_n_questions,
        oracle_doc_means.mean - full_means.mean as oracle_doc_gap,
        counterparts.oracle_page_run_id,
        oracle_page_means.mean as oracle_page_mean,
        oracle_page_means.n_questions as oracle_page_n_questions,
        oracle_page_means.mean - full_means.mean as oracle_page_gap
    from counterparts
    inner join full_runs on counterparts.run_id = full_runs.run_id
    inner join leaderboard as full_means on counterparts.run_id = full_means.run_id
    left join leaderboard as oracle_doc_means
        on counterparts.oracle_doc_run_id = oracle_doc_means.run_id
        and full_means.granularity = oracle_doc_means.granularity
        and full_means.metric = oracle_doc_means.metric
        and full_means.k = oracle_doc_means.k
    left join leaderboard as oracle_page_means
        on counterparts.oracle_page_run_id = oracle_page_means.run_id
        and full_means.granularity = oracle_page_means.granularity
        and full_means.metric = oracle_page_means.metric
        and full_means.k = oracle_page_means.k

)

select * from final
