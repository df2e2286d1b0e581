-- DocRec@5 / PageRec@5 on the FinanceBench questions whose gold PDF is present (the primary gold document has
-- content), per method, overall and by question type and doc type, with n per cell. Read by
--   finrag sql "$(cat docs/page_scorer_financebench.sql)" --format table
-- over the published marts (run `finrag build` first).
with runs(run_id, method) as (

    -- the run ids are config hashes: rerunning the commands of docs/page_scorer.md lands the same ids
    values
        ('financebench-dense-full-9e5e960978', 'dense'),
        ('financebench-hybrid-full-11ad98a493', 'hybrid'),
        ('financebench-page_scorer-full-b3f965c272', 'page_scorer'),
        ('financebench-page_scorer-full-92bd25fae3', 'page_scorer untrained'),
        ('financebench-dense-oracle_doc-acfad5b5b4', 'oracle_doc'),
        ('financebench-dense-oracle_page-40278276bf', 'oracle_page')

),

questions as (

    select q.question_id, q.question_type, q.doc_type
    from dim_questions as q
    inner join dim_documents as d on d.doc_id = q.primary_doc_id
    where q.dataset = 'financebench' and d.has_content

),

scores as (

    select
        runs.method,
        s.question_id,
        max(case when s.granularity = 'doc' then s.doc_rec end) as doc_rec,
        max(case when s.granularity = 'page' then s.page_rec end) as page_rec
    from fct_retrieval_question_scores as s
    inner join runs using (run_id)
    where s.k = 5 and s.granularity in ('doc', 'page')
    group by all

),

sliced as (

    select
        case when grouping(questions.question_type) = 0 then 'question_type'
             when grouping(questions.doc_type) = 0 then 'doc_type' else 'all' end as slice,
        coalesce(questions.question_type, questions.doc_type, 'all') as value,
        scores.method,
        count(*) as n,
        round(avg(scores.doc_rec), 3) as doc_rec_5,
        round(avg(scores.page_rec), 3) as page_rec_5
    from scores
    inner join questions using (question_id)
    group by grouping sets ((scores.method), (scores.method, questions.question_type),
                            (scores.method, questions.doc_type))

)

select * from sliced
order by case slice when 'all' then 0 when 'question_type' then 1 else 2 end, value, method
