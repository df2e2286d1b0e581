-- What the lake holds per dataset, one row each: questions (not dropped) and how many have a reference answer,
-- documents, pages, chunks, and its retrieval, answer and judge runs (dim_runs; a judge run counts in its answer
-- run's dataset). A dataset is here when any of them has a row of it (a TREC-only dataset, qrels and runs without
-- queries, too). What `finrag ls` prints and the dashboard's overview and empty states read.

with questions as (

    select
        dataset,
        count(*) as n_questions,
        count(case when {{ list_size('reference_answers') }} > 0 then 1 end) as n_with_reference
    from {{ ref('stg_lake__questions') }}
    where split is null or split <> 'dropped'
    group by dataset

),

documents as (

    select
        dataset,
        count(*) as n_documents
    from {{ ref('stg_lake__documents') }}
    group by dataset

),

pages as (

    select
        dataset,
        count(*) as n_pages
    from {{ ref('stg_lake__pages') }}
    group by dataset

),

chunks as (

    select
        dataset,
        count(*) as n_chunks
    from {{ ref('stg_lake__chunks') }}
    group by dataset

),

evidence as (

    select distinct dataset
    from {{ ref('stg_lake__evidence') }}

),

runs as (

    select
        dataset,
        count(case when kind = 'retrieval' then 1 end) as n_retrieval_runs,
        count(case when kind = 'answer' then 1 end) as n_answer_runs,
        count(case when kind = 'judge' then 1 end) as n_judge_runs
    from {{ ref('dim_runs') }}
    where dataset is not null
    group by dataset

),

datasets as (

    select dataset from questions
    union
    select dataset from documents
    union
    select dataset from chunks
    union
    select dataset from evidence
    union
    select dataset from runs

),

final as (

    select
        datasets.dataset,
        coalesce(questions.n_questions, 0) as n_questions,
        coalesce(questions.n_with_reference, 0) as n_with_reference,
        coalesce(documents.n_documents, 0) as n_documents,
        coalesce(pages.n_pages, 0) as n_pages,
        coalesce(chunks.n_chunks, 0) as n_chunks,
        coalesce(runs.n_retrieval_runs, 0) as n_retrieval_runs,
        coalesce(runs.n_answer_runs, 0) as n_answer_runs,
        coalesce(runs.n_judge_runs, 0) as n_judge_runs
    from datasets
    left join questions on datasets.dataset = questions.dataset
    left join documents on datasets.dataset = documents.dataset
    left join pages on datasets.dataset = pages.dataset
    left join chunks on datasets.dataset = chunks.dataset
    left join runs on datasets.dataset = runs.dataset

)

select * from final
