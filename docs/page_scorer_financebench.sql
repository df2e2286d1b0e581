/*
  DocRec@5 / PageRec@5 of each method on the FinanceBench questions whose gold PDF is present, overall and by
  question type and doc type, with n per cell. The marts leave the questions whose gold document has no content
  out of DocRec / PageRec means (n_questions_without_content counts them), so these are exactly those questions.
  Read by
    finrag sql "$(cat docs/page_scorer_financebench.sql)" --format table
  over the published marts (run `finrag build` first).
*/
with runs (run_id, method) as (

    -- the run ids are config hashes: rerunning the commands of docs/page_scorer.md lands the same ids
    values
    ('financebench-dense-full-9e5e960978', 'dense'),
    ('financebench-hybrid-full-11ad98a493', 'hybrid'),
    ('financebench-page_scorer-full-b3f965c272', 'page_scorer'),
    ('financebench-page_scorer-full-92bd25fae3', 'page_scorer untrained'),
    ('financebench-dense-oracle_doc-acfad5b5b4', 'oracle_doc'),
    ('financebench-dense-oracle_page-40278276bf', 'oracle_page')

),

means as (

    select
        'all' as slice,
        'all' as slice_value,
        run_id,
        metric,
        mean,
        n_questions
    from mart_retrieval_leaderboard
    where k = 5 and metric in ('doc_rec', 'page_rec')
    union all
    select
        dimension as slice,
        dimension_value as slice_value,
        run_id,
        metric,
        mean,
        n_questions
    from mart_retrieval_by_slice
    where
        k = 5 and metric in ('doc_rec', 'page_rec')
        and dimension in ('question_type', 'doc_type')

)

select
    means.slice,
    means.slice_value,
    runs.method,
    max(means.n_questions) as n,
    round(max(case when means.metric = 'doc_rec' then means.mean end), 3) as doc_rec_5,
    round(max(case when means.metric = 'page_rec' then means.mean end), 3) as page_rec_5
from means
inner join runs on means.run_id = runs.run_id
group by means.slice, means.slice_value, runs.method
order by
    case means.slice when 'all' then 0 when 'question_type' then 1 else 2 end,
    means.slice_value,
    list_position(
        ['dense', 'hybrid', 'page_scorer untrained', 'page_scorer', 'oracle_doc', 'oracle_page'], runs.method
    )
