-- Mean retrieval metrics per run x granularity x metric x k. `mean` averages the questions of the qrels the run
-- retrieved for (trec_eval's default); `mean_complete` also counts the qrels questions missing from the run as 0
-- (trec_eval -c). map / mrr / ndcg / precision / recall are the means of AP@k / RR@k / nDCG@k / P@k / Recall@k;
-- k = 0 is the whole ranking (trec_eval map, recip_rank, ndcg).

{{ config(run_incremental_config(tags=['retrieval_metrics'])) }}

-- the metrics averaged (retrieval_metric_sums) are the registry's retrieval family
-- depends_on: {{ ref('metrics') }}

with runs as (

    {{ retrieval_pending_runs() }}

),

questions_without_content as (

    select * from {{ ref('int_questions_without_content') }}

),

question_scores as (

    select
        question_scores.*,
        questions_without_content.question_id is not null as gold_without_content
    from {{ ref('fct_retrieval_question_scores') }} as question_scores
    inner join runs on question_scores.run_id = runs.run_id
    left join questions_without_content
        on runs.dataset = questions_without_content.dataset
        and question_scores.question_id = questions_without_content.question_id

),

run_sums as (

    select
        run_id,
        granularity,
        k,
        {{ retrieval_metric_sums() }}
    from question_scores
    group by run_id, granularity, k

),

run_means as (

    select
        run_id,
        granularity,
        k,
        {{ retrieval_metric_means() }}
    from run_sums
    group by run_id, granularity, k

),

metric_means as (

    {{ retrieval_unpivot_means('run_means', ['run_id', 'granularity']) }}

),

final as (

    select
        metric_means.run_id,
        runs.dataset,
        runs.retriever,
        runs.condition,
        runs.source,
        metric_means.granularity,
        metric_means.metric,
        metric_means.k,
        metric_means.mean,
        metric_means.n_questions,
        metric_means.n_questions_without_content,
        metric_means.mean_complete,
        metric_means.n_questions_complete,
        runs.run_version
    from metric_means
    inner join runs on metric_means.run_id = runs.run_id

)

select * from final
