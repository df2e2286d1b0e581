/*
  DocRec@5 / PageRec@5 of dense, dense + the trained reranker and the oracles on the FinanceBench questions whose gold
  PDF is present (the marts leave the others out of DocRec / PageRec means), with n. Read by
    finrag sql "$(cat docs/reranker_financebench.sql)" --format table
  over the published marts of a home where bench/reranker/financebench.sh ran (run `finrag build` first).
*/
with runs (run_id, method) as (

    -- the run ids are config hashes: rerunning bench/reranker/financebench.sh lands the same ids
    values
    ('financebench-dense-full-9e5e960978', 'dense'),
    ('financebench-dense-oracle_doc-acfad5b5b4', 'oracle_doc'),
    ('financebench-dense-oracle_page-40278276bf', 'oracle_page')

),

methods as (

    select
        run_id,
        method
    from runs
    union all
    -- every rerank run of the home (its id depends on the training's, which depends on the examples), by its id
    select distinct
        run_id,
        run_id as method
    from mart_retrieval_leaderboard
    where dataset = 'financebench' and run_id like 'financebench-rerank-full-%'

)

select
    methods.method,
    max(board.n_questions) as n,
    round(max(case when board.metric = 'doc_rec' then board.mean end), 3) as doc_rec_5,
    round(max(case when board.metric = 'page_rec' then board.mean end), 3) as page_rec_5
from mart_retrieval_leaderboard as board
inner join methods on board.run_id = methods.run_id
where board.k = 5 and board.metric in ('doc_rec', 'page_rec')
group by methods.method
order by methods.method
